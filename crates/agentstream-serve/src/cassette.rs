//! Cassettes: exchanges with a real provider, recorded by the proxy
//! ([`Server::proxy`](crate::Server::proxy)) and answered again by
//! [`Server::replay`](crate::Server::replay), as plain files a team
//! commits and reviews.
//!
//! # The format
//!
//! A cassette directory holds one directory per exchange, named by its
//! number in recording order (`0000`, `0001`, …; a recorder starts after
//! the highest number there and creates each directory and file
//! exclusively, never through a symlink, so two recorders on one
//! directory never write into the same cassette), each with six files:
//!
//! | file | holds |
//! |---|---|
//! | `request.json` | `{"api", "method", "path", "query", "headers", "model", "stream", "context", "options"}`: the request's route, its query (`null` without one; Gemini's `key` parameter and other secrets redacted) and headers with every secret replaced by `"[redacted]"` (see [`is_secret_header`]; Gemini's `x-goog-api-key` included), and the body decoded into Pi's context and options (the form replay matches on) |
//! | `request.body` | the request body byte for byte |
//! | `response.json` | `{"status", "headers"}`: the status and the headers that matter (content type, request ids, rate limits; not the connection's); `"cut": true` when the exchange ended before the upstream's answer did (see below) |
//! | `response.body` | the response body byte for byte |
//! | `response.body.lengths` | the sizes of the pieces the body arrived in, one per line |
//! | `response.body.times` | when each piece arrived, in milliseconds since the request was sent, one per line (absent from cassettes recorded before it existed: they replay without pauses) |
//!
//! `response.body` with its `.lengths` sidecar is the format of `agentstream
//! chat --record-raw`. `agentstream decode DIR/0000` reads it in the
//! protocol the `path` in `request.json` names, and so does the library's
//! `agentstream_wire::replay::Recording::from_cassette` (for a
//! `ReplayModel`; `Recording::from_cassette_files` also reads
//! `response.json`, so a cut exchange replays cut), so one recording
//! drives a Rust test and a Python one.
//! `agentstream decode` prints the final message: that is a script turn
//! for `agentstream serve`, to edit by hand.
//!
//! An exchange is **cut** when the client left before the answer ended or
//! the upstream's body broke off (a connection reset, a chunked body
//! without its end): the recorder writes `"cut": true` into
//! `response.json`, and replay sends the recorded pieces and then breaks
//! the body off the same way (the connection is closed without the
//! body's end), rather than presenting a partial answer as complete. A
//! cassette without `cut` (every one recorded before it existed) is
//! complete.
//!
//! Replay opens every file beneath the cassette directory's handle (the
//! `agentstream-beneath` crate, as the agent's file tools do): a symlink
//! is followed only while it stays inside, and a FIFO, device or socket
//! is refused without blocking; the error names the cassette's file.
//!
//! At startup replay reads only each cassette's `request.json` and
//! `response.json`, into an index for matching, and opens (without
//! reading) its body; a body is read when it is played: up to 1 MiB read
//! whole and kept in a cache of at most 64 MiB, a larger one streamed
//! from disk (see `cassette/player.rs` and `cassette/body.rs`). A file
//! changed or removed after startup is an HTTP 500 naming it when its
//! cassette is played (or, once the body has started, the body breaks
//! off), never an answer from the old file; so are lengths that do not
//! add up to the body, found when it is first played.
//!
//! # Failed exchanges, pace and redaction
//!
//! The proxy records whatever the upstream answers: a 4xx/5xx with its
//! headers (`retry-after`, rate limits) and body, a stream that ends in
//! the provider's error event, a stream cut mid-body (`"cut": true`),
//! each piece with its arrival time in `response.body.times`. Replay
//! answers each the same way; [`Server::replay_speed`](crate::ServerBuilder::replay_speed)
//! (`serve --replay-speed X`) sends the pieces at the recorded pace
//! (`1`), faster (`2`) or as fast as possible (`0`, the default). A
//! cassette recorded before the times were plays without pauses.
//!
//! [`ServerBuilder::redact`](crate::ServerBuilder::redact) (`serve
//! --record DIR --redact REGEX`) replaces each match of a [`Redactor`]'s
//! patterns with [`REDACTED_BODY`] in the request and response bodies,
//! every string of `request.json` and the request log, before anything
//! is written.
//!
//! # Looking at a directory
//!
//! [`list`] (`agentstream cassette ls DIR`) says what each cassette is;
//! [`closest`] (`agentstream cassette diff DIR REQUEST.json`) finds the
//! cassette closest to a request body of any API ([`detect_api`] tells
//! which by its shape) and every difference of their contexts by JSON
//! path, the same comparison a replay without a match names the first
//! difference of. A cassette of a call that did not stream is read by
//! `agentstream decode` and `ReplayModel` from its whole answer.
//!
//! All four protocols are recorded, replayed and read back this way: Chat
//! Completions, Anthropic Messages, OpenAI Responses (`/v1/responses`)
//! and Gemini (`models/{model}:streamGenerateContent`, `:generateContent`).
//!
//! # Matching
//!
//! A request is decoded into Pi's context (so two SDKs that serialize the
//! same conversation differently match the same cassette) and matched by
//! [`Match`]: the whole context, the last message only, or strict
//! recording order. Among several matches the first not yet used is
//! played (the last match once all are used).
//!
//! # Cross-dialect replay
//!
//! When no cassette of the request's own API matches (by default; never
//! with [`Match::Order`], nor on a miss that `--upstream` records), a
//! cassette recorded against another API answers it when their contexts
//! are the same less what one API carries and another does not: thinking
//! blocks and every signature; the assistant messages' `api`,
//! `provider`, `model`, `usage`, `stopReason`, `responseId` and
//! `timestamp`; a tool result's `toolName`; a single text block against
//! the same text as a string. The recorded body is decoded to Pi's events
//! by the projector of its API and written by the client's API encoder, so
//! an exchange recorded on Anthropic answers the OpenAI SDK with the same
//! text, tool calls (names, arguments, ids where the client's API has
//! them: a Responses client reads `ID|ITEM`, a Gemini client names calls
//! itself) and stop reason. What does not cross: signatures and thinking
//! signatures, the recorded headers, response ids, usage fields the
//! client's API has no place for, and a failed exchange's status (it
//! answers as the model error it decodes to). Only streamed recordings
//! cross.
//!
//! # No match
//!
//! A request with no match in any API gets HTTP 400
//! ([`EXHAUSTED_STATUS`](crate::EXHAUSTED_STATUS), which the official
//! SDKs do not retry) in the provider's error shape, OpenAI `code`
//! [`CASSETTE_UNMATCHED_CODE`](crate::CASSETTE_UNMATCHED_CODE), naming the
//! closest cassette of its own API and the first point where the contexts
//! differ.

use std::path::Path;

use agentstream::message::Context;
use serde_json::Value;

use agentstream_wire::Api;

mod body;
mod cross;
mod diff;
mod dir;
mod inspect;
mod pace;
mod pieces;
mod player;
mod redact;
mod redact_frames;
mod redact_pieces;
mod writer;

pub use dir::CassetteError;
use dir::{not_a_cassette, CassetteDir};
pub use inspect::{closest, detect_api, list, Closest, DiffLine, Listing};
pub use pieces::{parse_times, PieceLengths};
pub(crate) use redact::headers_json;
pub use redact::{is_secret_header, Redactor, MAX_MATCH_WINDOW, REDACTED, REDACTED_BODY};

pub(crate) use body::Recorded;
pub(crate) use player::{Entry, Player};
pub(crate) use writer::{length_line, next_number, response_json, Writer};

/// How [`Server::replay`](crate::Server::replay) picks a cassette.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Match {
    /// The cassette whose context (system prompt, messages, tools) is the
    /// request's.
    #[default]
    Exact,
    /// The cassette whose last message is the request's last message.
    LastMessage,
    /// Call *k* gets cassette *k*, whose context must be the request's.
    Order,
}

/// One recorded exchange.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Cassette {
    /// Its directory's name.
    pub name: String,
    /// The protocol of the request.
    pub api: Api,
    /// `request.json`.
    pub request: Value,
    /// The request decoded into Pi's context.
    pub context: Context,
    /// The response's status.
    pub status: u16,
    /// The response's headers, as recorded.
    pub headers: Vec<(String, String)>,
    /// The response body.
    pub body: Vec<u8>,
    /// The sizes of the pieces the body arrived in.
    pub lengths: PieceLengths,
    /// Whether the exchange was cut (`"cut": true` in `response.json`):
    /// replay breaks the body off after its pieces, as it ended live.
    pub cut: bool,
    /// When each piece arrived, in milliseconds since the request was
    /// sent (`response.body.times`); `None` for a cassette recorded
    /// before the times were (or read by [`from_files`](Self::from_files)).
    pub times: Option<Vec<u64>>,
}

/// The files of one exchange but its body, as bytes, for
/// [`Cassette::from_files`] (see the [module documentation](self)).
#[derive(Debug, Clone, Copy)]
pub struct CassetteFiles<'a> {
    /// `request.json`.
    pub request_json: &'a [u8],
    /// `response.json`.
    pub response_json: &'a [u8],
    /// `response.body.lengths`; `None` when there is none (the body is
    /// one piece).
    pub lengths: Option<&'a [u8]>,
}

/// What [`Cassette::load_dir`] read from a cassette directory.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Loaded {
    /// The cassettes, in the order of their numbers.
    pub cassettes: Vec<Cassette>,
    /// The entries that are not cassettes, in the same order.
    pub skipped: Vec<Skipped>,
}

/// An entry of a cassette directory that was not loaded, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skipped {
    /// The entry's name in the directory.
    pub name: String,
    /// Why it is not a cassette (`not a directory`, `no request.json in
    /// it`).
    pub reason: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.name, self.reason)
    }
}

impl Cassette {
    /// Reads the exchange in `dir` (see the [module documentation](self)):
    /// each file opened beneath `dir`, never through a symlink that leads
    /// out of it, and only when it is a regular file.
    ///
    /// # Errors
    /// A file missing, malformed, outside `dir` or not a regular file.
    pub fn load(dir: &Path) -> Result<Self, CassetteError> {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self::load_from(&CassetteDir::open(dir)?, ".", name)
    }

    /// Reads the exchange in `relative` beneath `dir`, named `name`.
    fn load_from(dir: &CassetteDir, relative: &str, name: String) -> Result<Self, CassetteError> {
        let file = |leaf: &str| format!("{relative}/{leaf}");
        let request = dir.read(&file("request.json"))?;
        let response = dir.read(&file("response.json"))?;
        let body = dir.read(&file("response.body"))?;
        let lengths = match dir.read(&file("response.body.lengths")) {
            Ok(text) => Some(text),
            // Without the sidecar, the body is one piece.
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e),
        };
        let files = CassetteFiles {
            request_json: &request,
            response_json: &response,
            lengths: lengths.as_deref(),
        };
        let mut cassette = Self::parse(&dir.path.join(relative), name, files, body)?;
        cassette.times = match dir.read(&file("response.body.times")) {
            Ok(text) => Some(pieces::parse_times(&text).ok_or_else(|| {
                CassetteError::new(
                    &dir.path.join(file("response.body.times")),
                    "not one count of milliseconds per line",
                )
            })?),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e),
        };
        Ok(cassette)
    }

    /// Reads an exchange from its files' bytes: what [`load`](Self::load)
    /// does once the files are read, for files that come from elsewhere
    /// (an archive, a fuzzer). `dir` names the files in errors; its last
    /// component is the cassette's name.
    ///
    /// # Errors
    /// A file malformed (not JSON, a field missing or of the wrong type,
    /// lengths that do not add up to the body).
    pub fn from_files(
        dir: &Path,
        files: CassetteFiles<'_>,
        body: Vec<u8>,
    ) -> Result<Self, CassetteError> {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self::parse(dir, name, files, body)
    }

    fn parse(
        dir: &Path,
        name: String,
        files: CassetteFiles<'_>,
        body: Vec<u8>,
    ) -> Result<Self, CassetteError> {
        let head = parse_head(
            dir,
            files.request_json,
            files.response_json,
            KeepRequest::Whole,
        )?;
        let lengths = match files.lengths {
            Some(text) => PieceLengths::parse(text, body.len()).ok_or_else(|| {
                CassetteError::new(
                    &dir.join("response.body.lengths"),
                    "the lengths do not add up to the body",
                )
            })?,
            None => PieceLengths::one(body.len()),
        };
        Ok(Self {
            name,
            api: head.api,
            request: head.request,
            context: head.context,
            status: head.status,
            headers: head.headers,
            body,
            lengths,
            cut: head.cut,
            times: None,
        })
    }

    /// Reads every exchange in `dir` (each entry with a `request.json`),
    /// in the order of their numbers (`9999` before `10000`; names that
    /// are not numbers last, by their text). Every file is opened beneath `dir`,
    /// never through a symlink that leads out of it, and only when it is
    /// a regular file.
    ///
    /// # Errors
    /// The directory cannot be read, or one exchange cannot (see
    /// [`Cassette::load`]); the error names the file.
    pub fn load_all(dir: &Path) -> Result<Vec<Self>, CassetteError> {
        Ok(Self::load_dir(dir)?.cassettes)
    }

    /// Reads every exchange in `dir` as [`load_all`](Self::load_all)
    /// does, and names the entries it passed over (a file, or a directory
    /// without a `request.json`), so a cassette that was meant to play is
    /// never left out unsaid.
    ///
    /// # Errors
    /// As [`load_all`](Self::load_all).
    pub fn load_dir(dir: &Path) -> Result<Loaded, CassetteError> {
        let dir = CassetteDir::open(dir)?;
        let (cassettes, skipped) =
            each_cassette(&dir, |name| Self::load_from(&dir, name, name.to_owned()))?;
        Ok(Loaded { cassettes, skipped })
    }

    /// The body in the pieces it arrived in.
    pub fn pieces(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let mut at = 0;
        self.lengths.iter().map(move |n| {
            let piece = &self.body[at..at + n];
            at += n;
            piece
        })
    }
}

/// A cassette but its body: what its `request.json` and `response.json`
/// say.
struct Head {
    api: Api,
    /// `request.json`, without its `"context"` unless it was kept (see
    /// [`parse_head`]).
    request: Value,
    context: Context,
    status: u16,
    headers: Vec<(String, String)>,
    cut: bool,
}

/// Whether [`parse_head`] keeps `request.json` whole: a [`Cassette`]
/// gives it whole; the replay index needs only the decoded context, so
/// the context is moved out of the parsed JSON rather than copied.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeepRequest {
    Whole,
    WithoutContext,
}

/// Reads a cassette's `request.json` and `response.json` (the cassette's
/// directory `dir` names them in errors).
fn parse_head(
    dir: &Path,
    request_json: &[u8],
    response_json: &[u8],
    keep: KeepRequest,
) -> Result<Head, CassetteError> {
    let path = |leaf: &str| dir.join(leaf);
    let json = |bytes: &[u8], leaf: &str| -> Result<Value, CassetteError> {
        serde_json::from_slice(bytes)
            .map_err(|e| CassetteError::new(&path(leaf), format!("not JSON: {e}")))
    };
    let mut request = json(request_json, "request.json")?;
    let api = match request
        .get("api")
        .and_then(Value::as_str)
        .and_then(Api::from_pi_api)
    {
        Some(api) => api,
        None => {
            let names: Vec<String> = Api::ALL
                .iter()
                .map(|a| format!("\"{}\"", a.pi_api()))
                .collect();
            return Err(CassetteError::new(
                &path("request.json"),
                format!("\"api\" must be one of {}", names.join(", ")),
            ));
        }
    };
    let context = match keep {
        KeepRequest::Whole => request.get("context").cloned(),
        KeepRequest::WithoutContext => request.get_mut("context").map(Value::take),
    };
    let context = Context::from_value(context.unwrap_or(Value::Null))
        .map_err(|e| CassetteError::new(&path("request.json"), format!("context: {e}")))?;
    let response_path = path("response.json");
    let response = json(response_json, "response.json")?;
    let status = response
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        // What an upstream may answer (HTTP's three digits, as hyper
        // reads them), so whatever the proxy recorded plays back.
        .filter(|s| (100..=999).contains(s))
        .ok_or_else(|| CassetteError::new(&response_path, "\"status\" must be an HTTP status"))?;
    let headers = response
        .get("headers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
        .collect();
    let cut = match response.get("cut") {
        None => false,
        Some(Value::Bool(cut)) => *cut,
        Some(_) => {
            return Err(CassetteError::new(
                &response_path,
                "\"cut\" must be true or false",
            ))
        }
    };
    Ok(Head {
        api,
        request,
        context,
        status,
        headers,
        cut,
    })
}

/// Calls `load` on each entry of `dir` that may be a cassette, in the
/// order of their numbers, and names those that are not (a file, or a
/// directory without a `request.json`).
fn each_cassette<T>(
    dir: &CassetteDir,
    mut load: impl FnMut(&str) -> Result<T, CassetteError>,
) -> Result<(Vec<T>, Vec<Skipped>), CassetteError> {
    let (mut names, others) = dir.entries()?;
    names.sort_by(|a, b| recording_order(a, b));
    let mut skipped: Vec<Skipped> = others
        .into_iter()
        .map(|name| Skipped {
            reason: "not a directory".into(),
            name,
        })
        .collect();
    let mut loaded = Vec::with_capacity(names.len());
    for name in names {
        match load(&name) {
            Ok(cassette) => loaded.push(cassette),
            Err(error) if not_a_cassette(&error) && error.path.ends_with("request.json") => {
                skipped.push(Skipped {
                    reason: "no request.json in it".into(),
                    name,
                });
            }
            Err(error) => return Err(error),
        }
    }
    skipped.sort_by(|a, b| recording_order(&a.name, &b.name));
    Ok((loaded, skipped))
}

/// The order of cassettes: numbered names by their number (`9999` before
/// `10000`, which a plain sort puts first), then any other name by its
/// text.
fn recording_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn number(name: &str) -> Option<&str> {
        (!name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()))
            .then(|| name.trim_start_matches('0'))
    }
    match (number(a), number(b)) {
        (Some(x), Some(y)) => (x.len(), x, a).cmp(&(y.len(), y, b)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// The number a cassette's name holds, when it is all ASCII digits.
fn cassette_number(name: &str) -> Option<usize> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cassettes_are_in_the_order_of_their_numbers() {
        let mut names = ["10000", "x", "1001", "9999", "0002", "002", "10", "a"];
        names.sort_by(|a, b| recording_order(a, b));
        assert_eq!(
            names,
            ["0002", "002", "10", "1001", "9999", "10000", "a", "x"]
        );
    }

    /// Found by the `proxy_upstream` fuzz target: an upstream answering
    /// 799 was recorded, and then replay refused the whole directory.
    #[test]
    fn every_status_an_upstream_can_send_loads_back() {
        let request = br#"{"api":"openai-completions","context":{"messages":[]}}"#;
        for status in [100, 599, 600, 799, 999] {
            let (response, lengths) =
                crate::proxy::recorded_answer(status, &[], &[b"data: x\n\n"], false).unwrap();
            let files = CassetteFiles {
                request_json: request,
                response_json: &response,
                lengths: Some(&lengths),
            };
            let cassette =
                Cassette::from_files(Path::new("d/0000"), files, b"data: x\n\n".to_vec()).unwrap();
            assert_eq!((cassette.status, cassette.name.as_str()), (status, "0000"));
        }
        assert!(crate::proxy::recorded_answer(1000, &[], &[], false).is_none());
        let files = CassetteFiles {
            request_json: request,
            response_json: br#"{"status": 1000}"#,
            lengths: None,
        };
        let error = Cassette::from_files(Path::new("d/0000"), files, Vec::new()).unwrap_err();
        assert!(
            error.to_string().contains("d/0000/response.json"),
            "{error}"
        );
    }

    #[test]
    fn lengths_must_add_up() {
        let lengths = |text: &[u8], total| {
            PieceLengths::parse(text, total).map(|l| l.iter().collect::<Vec<_>>())
        };
        assert_eq!(lengths(b"1\n2\n\n", 3), Some(vec![1, 2]));
        assert_eq!(lengths(b"1\n", 3), None);
        assert_eq!(lengths(b"x\n", 1), None);
    }
}
