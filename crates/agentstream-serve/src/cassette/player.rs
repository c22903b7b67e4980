//! Replay's index of a cassette directory, and how a request picks its
//! cassette.
//!
//! At startup the server reads each cassette's `request.json` and
//! `response.json` and keeps only what matching and the answer's head
//! need: the protocol, `stream`, the status and headers, the cut mark,
//! 128-bit keyed hashes of the context and of its last message (random
//! keys per server, so nobody can make two contexts collide), a 64-bit
//! hash per message (to find the closest cassette for a request without
//! one) and a stamp of each file. Bodies are only opened, to refuse what
//! is not a regular file beneath the directory; they are read when
//! played (see [`body`]). A request finds its candidates in
//! a hash map instead of scanning every cassette.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::path::Path;
use std::sync::Mutex;

use agentstream::message::Context;
use agentstream::model::ModelStream;
use serde_json::Value;

use agentstream_wire::server::ApiError;
use agentstream_wire::Api;

use crate::limits::{CASSETTE_UNMATCHED_CODE, EXHAUSTED_STATUS};

use super::body::{self, Cache, Recorded, Stamp, Stamps};
use super::diff::{first_difference, short};
use super::{each_cassette, CassetteDir, CassetteError, KeepRequest, Match, Skipped};

/// A 128-bit hash: two keyed 64-bit hashes.
type Key = (u64, u64);

/// The most cassettes read again from disk to name the closest one to a
/// request without a match (those sharing the most leading messages with
/// it).
const CLOSEST: usize = 64;

/// What the index keeps of one cassette.
#[derive(Debug)]
pub(crate) struct Entry {
    /// Its directory's name.
    pub(crate) name: Box<str>,
    api: Api,
    /// `stream` in `request.json`.
    stream: Option<bool>,
    /// The response's status.
    pub(crate) status: u16,
    /// The response's headers, as recorded.
    pub(crate) headers: Vec<(String, String)>,
    /// Whether the exchange was cut.
    pub(crate) cut: bool,
    /// The hash of the context, and of its last message.
    context: Key,
    last: Key,
    /// The hash of each message.
    messages: Box<[u64]>,
    /// The hash of the context as every API decodes it (see
    /// [`cross`](super::cross)).
    neutral: Key,
    stamps: Stamps,
}

/// The hashers of one server (keys drawn when it starts).
#[derive(Debug, Default)]
struct Hashing {
    a: RandomState,
    b: RandomState,
}

impl Hashing {
    fn key(&self, value: Option<&Value>) -> Key {
        (self.one(&self.a, value), self.one(&self.b, value))
    }

    fn one(&self, state: &RandomState, value: Option<&Value>) -> u64 {
        let mut hasher = state.build_hasher();
        match value {
            None => 0u8.hash(&mut hasher),
            Some(value) => {
                1u8.hash(&mut hasher);
                hash_value(value, &mut hasher);
            }
        }
        hasher.finish()
    }

    fn messages(&self, context: &Value) -> Box<[u64]> {
        messages(context)
            .iter()
            .map(|m| self.one(&self.a, Some(m)))
            .collect()
    }
}

/// Hashes `value` so that two values that are equal (`==`) hash alike:
/// object keys in sorted order (their order does not make two objects
/// differ), `0.0` as `-0.0`.
fn hash_value(value: &Value, hasher: &mut impl Hasher) {
    match value {
        Value::Null => 0u8.hash(hasher),
        Value::Bool(b) => (1u8, b).hash(hasher),
        Value::Number(n) => {
            if let Some(n) = n.as_u64() {
                (2u8, n).hash(hasher);
            } else if let Some(n) = n.as_i64() {
                (3u8, n).hash(hasher);
            } else {
                let n = n.as_f64().unwrap_or_default();
                (4u8, if n == 0.0 { 0 } else { n.to_bits() }).hash(hasher);
            }
        }
        Value::String(s) => (5u8, s).hash(hasher),
        Value::Array(items) => {
            (6u8, items.len()).hash(hasher);
            for item in items {
                hash_value(item, hasher);
            }
        }
        Value::Object(fields) => {
            (7u8, fields.len()).hash(hasher);
            let mut sorted: Vec<(&String, &Value)> = fields.iter().collect();
            sorted.sort_unstable_by(|x, y| x.0.cmp(y.0));
            for (key, item) in sorted {
                key.hash(hasher);
                hash_value(item, hasher);
            }
        }
    }
}

/// The cassettes a replaying server answers from.
pub(crate) struct Player {
    dir: CassetteDir,
    entries: Vec<Entry>,
    /// The cassettes of each protocol, `stream` and key (the context's,
    /// or its last message's with [`Match::LastMessage`]), in order.
    by_key: HashMap<(Api, Option<bool>, Key), Vec<u32>>,
    /// The cassettes of each neutral context, whatever their API (not
    /// with [`Match::Order`]).
    by_neutral: HashMap<Key, Vec<u32>>,
    hashing: Hashing,
    mode: Match,
    used: Mutex<(Vec<bool>, usize)>,
    cache: Cache,
    /// The replay speed: `0` as fast as possible, `1` at the recorded
    /// pace, `2` twice as fast (see [`with_speed`](Self::with_speed)).
    speed: f64,
}

impl std::fmt::Debug for Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Player")
            .field("dir", &self.dir.path)
            .field("cassettes", &self.entries.len())
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl Player {
    /// Indexes the cassettes in `dir` (see the [module documentation](self)),
    /// and names the entries that are not cassettes.
    ///
    /// # Errors
    /// As [`Cassette::load_dir`](super::Cassette::load_dir): the directory
    /// cannot be read, or a cassette cannot (a file missing or malformed,
    /// outside the directory or not a regular file).
    pub(crate) fn load(dir: &Path, mode: Match) -> Result<(Self, Vec<Skipped>), CassetteError> {
        let dir = CassetteDir::open(dir)?;
        let hashing = Hashing::default();
        let (entries, skipped) = each_cassette(&dir, |name| index(&dir, &hashing, name))?;
        let mut by_key: HashMap<_, Vec<u32>> = HashMap::new();
        let mut by_neutral: HashMap<_, Vec<u32>> = HashMap::new();
        if mode != Match::Order {
            for (k, entry) in entries.iter().enumerate() {
                let key = match mode {
                    Match::LastMessage => entry.last,
                    _ => entry.context,
                };
                let k = u32::try_from(k).map_err(|_| {
                    CassetteError::new(&dir.path, "more than 4,294,967,295 cassettes")
                })?;
                by_key
                    .entry((entry.api, entry.stream, key))
                    .or_default()
                    .push(k);
                by_neutral.entry(entry.neutral).or_default().push(k);
            }
        }
        let used = vec![false; entries.len()];
        let player = Self {
            dir,
            entries,
            by_key,
            by_neutral,
            hashing,
            mode,
            used: Mutex::new((used, 0)),
            cache: Cache::default(),
            speed: 0.0,
        };
        Ok((player, skipped))
    }

    /// The player replaying at `speed` (`0`, the default, as fast as
    /// possible; `1` at the pace the pieces arrived when recorded; `2`
    /// twice as fast); a speed that is not finite and positive is `0`.
    pub(crate) fn with_speed(mut self, speed: f64) -> Self {
        self.set_speed(speed);
        self
    }

    /// Sets the speed, as [`with_speed`](Self::with_speed) does.
    pub(crate) fn set_speed(&mut self, speed: f64) {
        self.speed = if speed.is_finite() && speed > 0.0 {
            speed
        } else {
            0.0
        };
    }

    /// The cassettes of the subdirectory `name` (a test id's), played as
    /// this directory's are; `None` when there is no such directory
    /// (a symlink is never followed).
    ///
    /// # Errors
    /// As [`load`](Self::load).
    pub(crate) fn subdir(&self, name: &str) -> Result<Option<Self>, CassetteError> {
        let path = self.dir.path.join(name);
        if !crate::lanes::is_real_dir(&path) {
            return Ok(None);
        }
        Self::load(&path, self.mode).map(|(player, _)| Some(player.with_speed(self.speed)))
    }

    /// The directory indexed again (with the cassettes recorded since),
    /// each cassette that was already played still marked played, and
    /// the order mode's count kept.
    ///
    /// # Errors
    /// As [`load`](Self::load).
    pub(crate) fn reloaded(&self) -> Result<Self, CassetteError> {
        let (player, _) = Self::load(&self.dir.path, self.mode)?;
        let player = player.with_speed(self.speed);
        {
            let old = self.used.lock().unwrap_or_else(|e| e.into_inner());
            let mut new = player.used.lock().unwrap_or_else(|e| e.into_inner());
            let played: std::collections::HashSet<&str> = self
                .entries
                .iter()
                .zip(old.0.iter())
                .filter(|(_, &used)| used)
                .map(|(entry, _)| &*entry.name)
                .collect();
            for (entry, used) in player.entries.iter().zip(new.0.iter_mut()) {
                *used = played.contains(&*entry.name);
            }
            new.1 = old.1;
        }
        Ok(player)
    }

    /// The cassette for a request of `api` with `context` and its body,
    /// or the error naming the closest one (or the cassette's file that
    /// changed since the server started).
    pub(crate) fn pick(
        &self,
        api: Api,
        stream: bool,
        context: &Context,
    ) -> Result<(&Entry, Recorded), ApiError> {
        let wanted = serde_json::to_value(context).unwrap_or(Value::Null);
        let found = {
            let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
            let (used, next) = &mut *used;
            let found = match self.mode {
                Match::Order => Some(*next).filter(|&k| {
                    self.entries.get(k).is_some_and(|entry| {
                        entry.api == api
                            && entry.stream == Some(stream)
                            && entry.context == self.hashing.key(Some(&wanted))
                    })
                }),
                mode => {
                    let key = match mode {
                        Match::LastMessage => self.hashing.key(last_message(&wanted)),
                        _ => self.hashing.key(Some(&wanted)),
                    };
                    let matching = self
                        .by_key
                        .get(&(api, Some(stream), key))
                        .map_or(&[][..], Vec::as_slice);
                    matching
                        .iter()
                        .map(|&k| k as usize)
                        .find(|&k| !used[k])
                        .or(matching.last().map(|&k| k as usize))
                }
            };
            match found {
                Some(k) => {
                    used[k] = true;
                    *next += 1;
                    Ok(k)
                }
                None => Err(*next),
            }
        };
        match found {
            Ok(k) => {
                let entry = &self.entries[k];
                let answer = body::play(
                    &self.dir,
                    &self.cache,
                    k,
                    &entry.name,
                    &entry.stamps,
                    entry.cut,
                    self.speed,
                )
                .map_err(|error| {
                    ApiError::new(500, format!("agentstream replay: {}", error.report()))
                })?;
                Ok((entry, answer))
            }
            // Not retried by the SDKs: asking again cannot find a
            // cassette that is not there.
            Err(next) => Err(
                ApiError::new(EXHAUSTED_STATUS, self.mismatch(api, &wanted, next))
                    .with_code(CASSETTE_UNMATCHED_CODE),
            ),
        }
    }

    /// The events of a cassette of another API than `api` whose neutral
    /// context is `context`'s (see [`cross`](super::cross)): the first
    /// unplayed, else the last; `None` when there is none (or the mode is
    /// [`Match::Order`]).
    pub(crate) fn cross(
        &self,
        api: Api,
        context: &Context,
        options: agentstream::model::StreamOptions,
    ) -> Option<Result<ModelStream, ApiError>> {
        if self.mode == Match::Order {
            return None;
        }
        let wanted = serde_json::to_value(context).unwrap_or(Value::Null);
        let key = self.hashing.key(Some(&super::cross::neutral(&wanted)));
        let k = {
            let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
            let (used, next) = &mut *used;
            let candidates: Vec<usize> = self
                .by_neutral
                .get(&key)?
                .iter()
                .map(|&k| k as usize)
                .filter(|&k| self.entries[k].api != api)
                .collect();
            let k = candidates
                .iter()
                .copied()
                .find(|&k| !used[k])
                .or(candidates.last().copied())?;
            used[k] = true;
            *next += 1;
            k
        };
        Some(super::cross::events_of(
            &self.dir,
            &self.entries[k].name,
            context,
            options,
        ))
    }

    /// The context of cassette `k` as JSON, read again from its
    /// `request.json` (`None` when it can no longer be read).
    fn context_of(&self, k: usize) -> Option<Value> {
        let name = &self.entries[k].name;
        let (request, _) = read_checked(&self.dir, name, "request.json").ok()?;
        let head = super::parse_head(
            &self.dir.path.join(&**name),
            &request,
            b"{\"status\": 200}",
            KeepRequest::WithoutContext,
        )
        .ok()?;
        serde_json::to_value(&head.context).ok()
    }

    /// The message of a request without a cassette.
    fn mismatch(&self, api: Api, wanted: &Value, next: usize) -> String {
        let mode = match self.mode {
            Match::Exact => "exact context",
            Match::LastMessage => "last message",
            Match::Order => "recording order",
        };
        let head = format!(
            "agentstream replay: no cassette in {} matches this request (match: {mode})",
            self.dir.path.display()
        );
        let mut candidates: Vec<usize> = match self.mode {
            Match::Order if next >= self.entries.len() => {
                return format!(
                    "{head}: call {next} is past the last of {} cassettes",
                    self.entries.len()
                )
            }
            Match::Order => vec![next],
            _ => (0..self.entries.len())
                .filter(|&k| self.entries[k].api == api)
                .collect(),
        };
        if candidates.len() > CLOSEST {
            // Those sharing the most leading messages with the request;
            // only they are read again.
            let wanted = self.hashing.messages(wanted);
            let shared = |k: usize| {
                let messages = &self.entries[k].messages;
                messages
                    .iter()
                    .zip(wanted.iter())
                    .take_while(|(a, b)| a == b)
                    .count()
            };
            candidates.sort_by_key(|&k| (std::cmp::Reverse(shared(k)), k));
            candidates.truncate(CLOSEST);
            candidates.sort_unstable();
        }
        let closest = candidates
            .iter()
            .filter_map(|&k| Some((k, self.context_of(k)?)))
            .map(|(k, context)| (k, first_difference(&context, wanted, "$".into())))
            .max_by_key(|(k, d)| (d.as_ref().map_or(usize::MAX, |d| d.common), usize::MAX - k));
        match closest {
            Some((k, Some(difference))) => format!(
                "{head}; the closest is {}: at {} the cassette has {} and the request has {}",
                self.entries[k].name,
                difference.path,
                short(difference.recorded.as_ref()),
                short(difference.requested.as_ref()),
            ),
            Some((k, None)) => format!(
                "{head}; {} has this context but its {} was already played",
                self.entries[k].name, "turn"
            ),
            None => format!("{head}: it holds no {} cassette", api.pi_api()),
        }
    }
}

/// The bytes of cassette `name`'s file `leaf`, with its stamp.
pub(super) fn read_checked(
    dir: &CassetteDir,
    name: &str,
    leaf: &str,
) -> Result<(Vec<u8>, Stamp), CassetteError> {
    use std::io::Read;
    let relative = format!("{name}/{leaf}");
    let path = dir.path.join(&relative);
    let (mut file, size) = dir.file(&relative)?;
    let stamp = Stamp::of(&file).map_err(|e| CassetteError::io(&path, e))?;
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|e| CassetteError::io(&path, e))?;
    Ok((bytes, stamp))
}

/// The index entry of cassette `name` in `dir`: its `request.json` and
/// `response.json` read, its body and lengths only opened.
fn index(dir: &CassetteDir, hashing: &Hashing, name: &str) -> Result<Entry, CassetteError> {
    let (request, request_stamp) = read_checked(dir, name, "request.json")?;
    let (response, response_stamp) = read_checked(dir, name, "response.json")?;
    let stamp = |leaf: &str| -> Result<Option<Stamp>, CassetteError> {
        let relative = format!("{name}/{leaf}");
        match dir.file(&relative) {
            Ok((file, _)) => Stamp::of(&file)
                .map(Some)
                .map_err(|e| CassetteError::io(&dir.path.join(&relative), e)),
            Err(error) if error.is_not_found() && leaf.ends_with(".lengths") => Ok(None),
            Err(error) => Err(error),
        }
    };
    let body = stamp("response.body")?;
    let lengths = stamp("response.body.lengths")?;
    let head = super::parse_head(
        &dir.path.join(name),
        &request,
        &response,
        KeepRequest::WithoutContext,
    )?;
    let context = serde_json::to_value(&head.context).unwrap_or(Value::Null);
    let stamps = Stamps {
        request: request_stamp,
        response: response_stamp,
        // Found above (or the error returned).
        body: body.unwrap_or(request_stamp),
        lengths,
    };
    Ok(Entry {
        name: name.into(),
        api: head.api,
        stream: head.request.get("stream").and_then(Value::as_bool),
        status: head.status,
        headers: head.headers,
        cut: head.cut,
        context: hashing.key(Some(&context)),
        last: hashing.key(last_message(&context)),
        messages: hashing.messages(&context),
        neutral: hashing.key(Some(&super::cross::neutral(&context))),
        stamps,
    })
}

fn messages(context: &Value) -> &[Value] {
    context
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

fn last_message(context: &Value) -> Option<&Value> {
    messages(context).last()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_hash_alike_whatever_their_key_order() {
        let hashing = Hashing::default();
        let a: Value =
            serde_json::from_str(r#"{"a": 1, "b": [0.0, {"x": -1, "y": "s"}]}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"b": [-0.0, {"y": "s", "x": -1}], "a": 1}"#).unwrap();
        assert_eq!(a, b);
        assert_eq!(hashing.key(Some(&a)), hashing.key(Some(&b)));
        for other in [
            json!({"a": 1.0, "b": [0.0, {"x": -1, "y": "s"}]}),
            json!({"a": 1}),
            json!(null),
        ] {
            assert_ne!(a, other);
            assert_ne!(hashing.key(Some(&a)), hashing.key(Some(&other)), "{other}");
        }
        assert_ne!(hashing.key(None), hashing.key(Some(&json!(null))));
    }
}
