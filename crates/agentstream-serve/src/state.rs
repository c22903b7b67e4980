//! The server's state, shared by every connection: how it answers, its
//! limits, and the calls so far (numbered and recorded).

use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use bytes::Bytes;

use crate::cassette::Player;
pub(crate) use crate::lanes::Calls;
use crate::lanes::Lane;
use crate::limits::{EXHAUSTED_STATUS, UNMATCHED_CODE};
use crate::log::{Kept, Line};
use crate::proxy::Proxy;
use crate::route::Target;
use crate::rules::Facts;
use agentstream_wire::server::ApiError;
use agentstream_wire::server::DecodedRequest;
use serde_json::{json, Value};

/// How a server answers; shared by every connection.
pub(crate) struct State {
    /// A call no rule or turn answers gets [`State::unmatched`].
    pub(crate) strict: bool,
    pub(crate) chunks: usize,
    pub(crate) delay: Duration,
    pub(crate) pings: bool,
    /// The seed of jitter and chaos.
    pub(crate) seed: u64,
    /// The server's chaos, unless a request's header replaces it.
    pub(crate) chaos: crate::chaos::Chaos,
    /// What chaos injected, by test id and call number.
    pub(crate) injected: Mutex<crate::chaos::Ledger>,
    pub(crate) model_name: String,
    pub(crate) max_request_bytes: usize,
    /// The bytes of request bodies being read, across all connections,
    /// and their bound.
    pub(crate) buffered: AtomicUsize,
    pub(crate) max_buffered: usize,
    pub(crate) body_timeout: Duration,
    /// Whether each request's line is written as it arrives (for the
    /// `--requests` file), instead of when the log is read.
    pub(crate) lines_at_once: bool,
    /// What is redacted from the raw bodies the request log keeps.
    pub(crate) redactor: crate::cassette::Redactor,
    pub(crate) source: Source,
    /// The lanes (the server's and each test id's) and the request log.
    pub(crate) calls: Mutex<Calls>,
    /// Whether any lane's script has rules ([`Calls::ruled`], read
    /// without the lock).
    pub(crate) ruled: std::sync::atomic::AtomicBool,
    /// A replaying server's test ids seen: the cassettes of `DIR/<ID>`,
    /// or `None` where there is no such subdirectory.
    pub(crate) test_players: Mutex<HashMap<String, Option<Arc<Player>>>>,
    /// Plain scripted turns that answered more than once, kept as
    /// templates of their answers.
    pub(crate) templates: crate::template::Templates,
}

/// Where the answers come from.
pub(crate) enum Source {
    /// The model, with the script's steps.
    Model,
    /// An upstream endpoint, through the recording proxy.
    Upstream(Proxy),
    /// Recorded cassettes.
    Replay(Player),
    /// Recorded cassettes, and for a request none matches the upstream,
    /// through the recording proxy into the same directory (record on
    /// miss).
    ReplayOrRecord(Box<Misses>),
}

/// A replay that records what it misses.
pub(crate) struct Misses {
    /// The directory's index, indexed again after each exchange saved.
    pub(crate) player: RwLock<Arc<Player>>,
    pub(crate) proxy: Proxy,
}

impl Misses {
    /// The index as it stands.
    pub(crate) fn player(&self) -> Arc<Player> {
        self.player
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Indexes the directory again, with the cassette just saved (the
    /// cassettes played stay played); on failure the index stays as it
    /// was and the error is said on stderr.
    pub(crate) fn reload(&self) {
        match self.player().reloaded() {
            Ok(player) => {
                *self.player.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(player);
            }
            Err(error) => eprintln!(
                "agentstream replay: cannot index the cassette just recorded: {}",
                error.report()
            ),
        }
    }
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("model_name", &self.model_name)
            .finish_non_exhaustive()
    }
}

impl State {
    pub(crate) fn calls(&self) -> MutexGuard<'_, Calls> {
        // A panic elsewhere while holding the lock leaves consistent data.
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the log keeps of a request, given its call number.
    pub(crate) fn keeping(
        &self,
        test: Option<&str>,
        target: &Target,
        body: &[u8],
        request: &DecodedRequest,
    ) -> impl FnOnce(usize) -> Kept {
        let kept = if self.redactor.is_empty() {
            if self.lines_at_once {
                Ok(Line::with_raw(target.api, request, test, Some(body)))
            } else {
                Err((target.decoding(), Bytes::copy_from_slice(body)))
            }
        } else {
            // Redacted before it is kept; the decoded request is decoded
            // again from the redacted body, so neither holds a match.
            let body = self.redactor.bytes(body);
            match target.decode(&body) {
                Ok(redacted) if self.lines_at_once => {
                    Ok(Line::with_raw(target.api, &redacted, test, Some(&body)))
                }
                _ => Err((target.decoding(), Bytes::copy_from_slice(&body))),
            }
        };
        move |call| match kept {
            Ok((line, tail)) => Kept::Raw {
                line: line.numbered(call),
                tail,
            },
            Err((route, body)) => Kept::Body { call, route, body },
        }
    }

    /// Records a request answered without the model (by the upstream or
    /// a cassette); its call number.
    pub(crate) fn record(
        &self,
        test: Option<&str>,
        target: &Target,
        body: &[u8],
        request: &DecodedRequest,
    ) -> Result<usize, ApiError> {
        let kept = self.keeping(test, target, body, request);
        Ok(self.calls().number(test, kept)?.next - 1)
    }

    /// The error of a call no rule or turn answers, under `--strict`:
    /// the nearest rule and its first difference.
    pub(crate) fn unmatched(&self, request: &DecodedRequest, lane: &Lane) -> ApiError {
        let play = &lane.play;
        let turns = match play.ordered_len() {
            0 => "the script has no ordered turns".to_owned(),
            1 => "its one ordered turn was played".to_owned(),
            n => format!("its {n} ordered turns were all played"),
        };
        let message = if play.rules.is_empty() {
            format!("agentstream serve (strict): no turn answers this request: {turns}")
        } else {
            let facts = Facts::of(request);
            let nearest = play
                .rules
                .nearest(&facts, &lane.rule_counts)
                .unwrap_or_default();
            format!(
                "agentstream serve (strict): no rule or turn answers this request ({turns}); nearest rule {nearest}"
            )
        };
        ApiError::new(EXHAUSTED_STATUS, message).with_code(UNMATCHED_CODE)
    }

    /// `GET /v1/unused`: the rules that never answered and the ordered
    /// elements no call reached.
    pub(crate) fn unused(&self, test: Option<&str>) -> Value {
        let mut calls = self.calls();
        let lane = calls.lane(test);
        let rules = lane.play.rules.unused(&lane.rule_counts);
        let turns: Vec<usize> = (lane.ordered..lane.play.ordered_len()).collect();
        json!({"rules": rules, "turns": turns})
    }

    /// The cassettes a request of `test` replays from: `DIR/<ID>`'s when
    /// that subdirectory exists (indexed the first time the id is seen),
    /// else `player`'s.
    pub(crate) fn test_player(
        &self,
        player: &Player,
        test: &str,
    ) -> Result<Option<Arc<Player>>, ApiError> {
        let name = crate::lanes::cassette_subdir(test)?;
        let mut players = self.test_players.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = players.get(name) {
            return Ok(found.clone());
        }
        let loaded = player
            .subdir(name)
            .map_err(|e| ApiError::new(500, format!("agentstream replay: {}", e.report())))?
            .map(Arc::new);
        players.insert(name.to_owned(), loaded.clone());
        Ok(loaded)
    }

    /// What chaos injected in the calls of `test`, copied.
    pub(crate) fn chaos_snapshot(&self, test: Option<&str>) -> crate::chaos::Ledger {
        let ledger = self.injected.lock().unwrap_or_else(|e| e.into_inner());
        ledger.of_test(test)
    }

    /// Notes what chaos did to call `call` of `test`: in the ledger
    /// `GET /v1/requests` reads, and as a line of the requests file.
    pub(crate) fn note_chaos(
        &self,
        test: Option<&str>,
        call: usize,
        injected: crate::chaos::Injected,
    ) {
        if injected.0.is_empty() {
            return;
        }
        let mut line = json!({"call": call, "chaos": injected.to_json()});
        if let Some(test) = test {
            line["test"] = json!(test);
        }
        // The file is best effort here, as the stream is already answered.
        let _ = self.calls().log.append_line(line.to_string().as_bytes());
        let mut ledger = self.injected.lock().unwrap_or_else(|e| e.into_inner());
        ledger.note(test, call, injected);
    }

    /// Where a record-on-miss server answers a call of `test` from:
    /// without a test id, the directory's index and its proxy (`None`:
    /// the server's own); with one, the cassettes of `DIR/<ID>` (created
    /// empty if need be) and the proxy recording into it.
    pub(crate) fn miss_lane(
        &self,
        misses: &Misses,
        test: Option<&str>,
    ) -> Result<(Arc<Player>, Option<Arc<Proxy>>), ApiError> {
        let Some(test) = test else {
            return Ok((misses.player(), None));
        };
        let name = crate::lanes::cassette_subdir(test)?;
        // The proxy first: it creates `DIR/<ID>`, so the lane's index
        // is that directory's (empty the first time), never the server's.
        let proxy = misses
            .proxy
            .for_test(name)
            .map_err(|e| ApiError::new(500, format!("agentstream serve cannot record: {e}")))?;
        let mut players = self.test_players.lock().unwrap_or_else(|e| e.into_inner());
        let player = match players.get(name) {
            Some(Some(player)) => player.clone(),
            _ => {
                let loaded = misses
                    .player()
                    .subdir(name)
                    .map_err(|e| ApiError::new(500, format!("agentstream replay: {}", e.report())))?
                    .map(Arc::new)
                    .ok_or_else(|| {
                        ApiError::new(500, format!("agentstream replay: no directory {name}"))
                    })?;
                players.insert(name.to_owned(), Some(loaded.clone()));
                loaded
            }
        };
        Ok((player, Some(proxy)))
    }

    /// Indexes again the cassettes a record-on-miss server just recorded
    /// into: the directory's, or those of `test`'s `DIR/<ID>` (the
    /// cassettes played stay played); on failure the index stays as it
    /// was and the error is said on stderr.
    pub(crate) fn reload_misses(&self, misses: &Misses, test: Option<&str>) {
        let Some(name) = test.and_then(|t| crate::lanes::cassette_subdir(t).ok()) else {
            misses.reload();
            return;
        };
        let mut players = self.test_players.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(Some(player)) = players.get(name) {
            match player.reloaded() {
                Ok(player) => {
                    players.insert(name.to_owned(), Some(Arc::new(player)));
                }
                Err(error) => eprintln!(
                    "agentstream replay: cannot index the cassette just recorded: {}",
                    error.report()
                ),
            }
        }
    }

    /// The requests of `test` kept (those without a test id for `None`),
    /// oldest first, and how many requests were dropped.
    pub(crate) fn kept(&self, test: Option<&str>) -> (Vec<Kept>, usize) {
        let calls = self.calls();
        (calls.log.snapshot(test), calls.log.dropped())
    }
}
