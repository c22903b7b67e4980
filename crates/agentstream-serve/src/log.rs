//! The calls a server records: each request decoded into Pi's context and
//! options, kept in a bounded in-memory log for `GET /v1/requests` and
//! [`Server::requests`](crate::Server::requests), and appended to the
//! `--requests` file as it arrives.
//!
//! The memory log keeps a request's body as it came and writes its JSON
//! line only when the log is read (a call decodes its request once, for
//! the model, and never serializes it back unless asked to). A server
//! writing a `--requests` file writes each line as the request arrives
//! and keeps the line.
//!
//! The memory log holds at most [`MAX_KEPT_REQUESTS`] requests and
//! [`MAX_KEPT_BYTES`] bytes of them (both configurable; a request counts
//! the bytes kept for it, its body or its line): past either, the oldest
//! requests are dropped and counted
//! ([`Server::dropped_requests`](crate::Server::dropped_requests), the
//! `agentstream-dropped-requests` header of `GET /v1/requests`). The file
//! keeps everything.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::sync::Arc;

use agentstream::message::Context;
use bytes::{Buf, Bytes};
use serde::Serialize;
use serde_json::{json, Value};

use crate::route::Decoding;
use agentstream_wire::server::options_json;
use agentstream_wire::server::DecodedRequest;
use agentstream_wire::Api;

/// The most requests the memory log keeps by default.
pub const MAX_KEPT_REQUESTS: usize = 10_000;

/// The most bytes of requests (each request's body, or its JSON line when
/// the server also writes a `--requests` file) the memory log keeps by
/// default: 64 MiB.
pub const MAX_KEPT_BYTES: usize = 64 << 20;

/// One call as the server received it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The call's number, from 0, in arrival order.
    pub call: usize,
    /// The protocol it spoke.
    pub api: Api,
    /// The request's `model`.
    pub model: String,
    /// Whether it asked for a stream.
    pub stream: bool,
    /// The request decoded into Pi's context.
    pub context: Context,
    /// The call's options as [`options_json`] writes them: the token
    /// limit, temperature, `top_p`, stop sequences, tool choice,
    /// reasoning effort, thinking budget and response format the request
    /// asked for (an empty object when it set none).
    pub options: Value,
    /// The test id it came with (the
    /// [`TEST_HEADER`](crate::TEST_HEADER)), if any.
    pub test: Option<String>,
    /// The body as received, when asked for (`GET /v1/requests?raw=1`, a
    /// `--requests` line): its JSON, or a string if it was not JSON.
    pub raw: Option<Value>,
}

impl RecordedRequest {
    /// `{"call", "api", "model", "stream", "context", "options",
    /// "test"?, "raw"?}`, the line `--requests` writes and an element of
    /// `GET /v1/requests` (see the [crate's schema](crate#the-request-log)).
    pub fn to_json(&self) -> Value {
        let mut line = json!({
            "call": self.call,
            "api": self.api.pi_api(),
            "model": self.model,
            "stream": self.stream,
            "context": self.context,
            "options": self.options,
        });
        if let Some(test) = &self.test {
            line["test"] = Value::String(test.clone());
        }
        if let Some(raw) = &self.raw {
            line["raw"] = raw.clone();
        }
        line
    }

    /// Reads back a line the log wrote; `None` for anything else.
    pub(crate) fn from_line(line: &[u8]) -> Option<Self> {
        let Value::Object(mut object) = serde_json::from_slice(line).ok()? else {
            return None;
        };
        let api = object
            .get("api")
            .and_then(Value::as_str)
            .and_then(Api::from_pi_api)
            .unwrap_or(Api::OpenAi);
        Some(Self {
            call: usize::try_from(object.get("call")?.as_u64()?).ok()?,
            api,
            model: object.get("model")?.as_str()?.to_owned(),
            stream: object.get("stream")?.as_bool()?,
            context: Context::from_value(object.remove("context")?).ok()?,
            options: object.remove("options").unwrap_or_else(|| json!({})),
            test: object
                .remove("test")
                .and_then(|t| t.as_str().map(str::to_owned)),
            raw: object.remove("raw"),
        })
    }
}

/// The bytes a line's buffer starts with.
const LINE_CAPACITY: usize = 512;

/// A request's JSON line without its call number, written before the
/// call is numbered (outside the calls' lock): serialized straight from
/// the decoded request, never through a JSON tree, after
/// [`NUMBER_ROOM`] bytes kept free for the number.
pub(crate) struct Line(Vec<u8>);

/// The bytes before a line's fields where [`Line::numbered`] writes
/// `{"call":N,` (at most 30 bytes for a `usize`), so the line is never
/// copied to put its number in front.
const NUMBER_ROOM: usize = 32;

#[derive(Serialize)]
struct Fields<'a> {
    api: &'a str,
    model: &'a str,
    stream: bool,
    context: &'a Context,
    options: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    test: Option<&'a str>,
}

impl Line {
    /// The line of `request`, without a test id or its body.
    #[cfg(test)]
    pub(crate) fn new(api: Api, request: &DecodedRequest) -> Self {
        Self::with_raw(api, request, None, None).0
    }

    /// The line of `request`, with its test id and, when given, its body
    /// as received (`"raw"`, always the last field); with the length of
    /// the `,"raw":…}` ending it (0 without), so it can be cut off (see
    /// [`Kept::Raw`]).
    pub(crate) fn with_raw(
        api: Api,
        request: &DecodedRequest,
        test: Option<&str>,
        raw: Option<&[u8]>,
    ) -> (Self, usize) {
        let fields = Fields {
            api: api.pi_api(),
            model: &request.model,
            stream: request.stream,
            context: &request.context,
            options: options_json(&request.options),
            test,
        };
        // Room for a short conversation at once, not a series of regrowths.
        let mut line = Vec::with_capacity(LINE_CAPACITY);
        line.resize(NUMBER_ROOM, b' ');
        // Serializing plain data into memory cannot fail; the fields are
        // an object, so the line goes on with `{`.
        if serde_json::to_writer(&mut line, &fields).is_err() || line.len() == NUMBER_ROOM {
            return (Self::empty(), 0);
        }
        let mut tail = 0;
        if let Some(body) = raw {
            line.pop();
            let start = line.len();
            line.extend_from_slice(RAW_KEY);
            write_raw(&mut line, body);
            line.push(b'}');
            tail = line.len() - start;
        }
        (Self(line), tail)
    }

    /// A line with no fields: `{"call": index}` once numbered.
    pub(crate) fn empty() -> Self {
        let mut line = vec![b' '; NUMBER_ROOM];
        line.extend_from_slice(b"{}");
        Self(line)
    }

    /// The whole line: `{"call": index, ...the fields}`, written in place
    /// of the fields' `{` and the free room before it.
    pub(crate) fn numbered(self, index: usize) -> Bytes {
        let mut line = self.0;
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(index).as_bytes();
        let empty = line[NUMBER_ROOM..] == *b"{}";
        // `{"call":` and the digits, then `,` over the fields' `{` (or,
        // with no fields, `}` after the number).
        let end = NUMBER_ROOM + 1 - usize::from(empty);
        let start = end - (b"{\"call\":".len() + digits.len() + 1);
        let prefix = &mut line[start..end];
        let (open, rest) = prefix.split_at_mut(8);
        open.copy_from_slice(b"{\"call\":");
        let (number, comma) = rest.split_at_mut(digits.len());
        number.copy_from_slice(digits);
        comma[0] = if empty { b'}' } else { b',' };
        // Cut in place: slicing would share the buffer through a new
        // allocation.
        line.truncate(if empty { end } else { line.len() });
        let mut line = Bytes::from(line);
        line.advance(start);
        line
    }
}

/// The key of a line's `raw` field, with the comma before it.
const RAW_KEY: &[u8] = b",\"raw\":";

/// Writes a body as received as one line of JSON: its JSON (written
/// again without line breaks when it has any), or a string of its bytes
/// (invalid UTF-8 replaced) if it is not JSON.
fn write_raw(line: &mut Vec<u8>, body: &[u8]) {
    let one_line = !body.iter().any(|&b| b == b'\n' || b == b'\r');
    match serde_json::from_slice::<&serde_json::value::RawValue>(body) {
        Ok(raw) if one_line => line.extend_from_slice(raw.get().trim().as_bytes()),
        _ => {
            let written = match serde_json::from_slice::<Value>(body) {
                Ok(value) => serde_json::to_writer(&mut *line, &value),
                Err(_) => serde_json::to_writer(&mut *line, &String::from_utf8_lossy(body)),
            };
            if written.is_err() {
                line.extend_from_slice(b"null");
            }
        }
    }
}

/// A request as the memory log keeps it.
#[derive(Debug, Clone)]
pub(crate) enum Kept {
    /// Its JSON line, written when it came (the unit tests' lines: the
    /// server keeps [`Kept::Raw`]).
    #[cfg_attr(not(test), allow(dead_code))]
    Line(Bytes),
    /// Its JSON line with its body as received (`raw`, the last field),
    /// written when it came: `tail` is the length of `,"raw":…}` at its
    /// end, cut off when the line is read without it.
    Raw { line: Bytes, tail: usize },
    /// Its body as it came (a copy: never a slice pinning a connection's
    /// read buffer), written as its line when the log is read.
    Body {
        call: usize,
        route: Decoding,
        body: Bytes,
    },
}

impl Kept {
    /// The bytes the log holds for the request.
    fn len(&self) -> usize {
        match self {
            Self::Line(line) | Self::Raw { line, .. } => line.len(),
            Self::Body { route, body, .. } => body.len() + route.held(),
        }
    }

    /// The bytes writing its line decodes (0 for a line kept whole).
    pub(crate) fn to_decode(&self) -> usize {
        match self {
            Self::Line(_) | Self::Raw { .. } => 0,
            Self::Body { body, .. } => body.len(),
        }
    }

    /// The request's JSON line, without a test id or its body.
    #[cfg(test)]
    pub(crate) fn line(&self) -> Bytes {
        self.line_as(None, false)
    }

    /// The request's JSON line, for a request of `test`, with its body
    /// as received when `raw`.
    pub(crate) fn line_as(&self, test: Option<&str>, raw: bool) -> Bytes {
        match self {
            Self::Line(line) => line.clone(),
            Self::Raw { line, .. } if raw => line.clone(),
            Self::Raw { line, tail } => {
                let mut cut = Vec::with_capacity(line.len() - tail + 1);
                cut.extend_from_slice(&line[..line.len() - tail]);
                cut.push(b'}');
                cut.into()
            }
            Self::Body { call, route, body } => {
                // The body was decoded when it came, so it decodes again
                // to the same request; the number alone if it did not.
                let line = match route.decode(body) {
                    Ok(request) => {
                        Line::with_raw(route.api, &request, test, raw.then_some(&body[..])).0
                    }
                    Err(_) => Line::empty(),
                };
                line.numbered(*call)
            }
        }
    }
}

/// Where recorded requests go.
pub(crate) struct RequestLog {
    /// Each request kept, with its test id.
    kept: VecDeque<(Option<Arc<str>>, Kept)>,
    bytes: usize,
    max_count: usize,
    max_bytes: usize,
    dropped: usize,
    file: Option<File>,
}

impl RequestLog {
    pub(crate) fn new(max_count: usize, max_bytes: usize, file: Option<File>) -> Self {
        Self {
            kept: VecDeque::new(),
            bytes: 0,
            max_count,
            max_bytes,
            dropped: 0,
            file,
        }
    }

    /// Records a request (its line written to the file, if any); drops
    /// the oldest requests past the bounds. A request larger than the
    /// byte bound alone is not kept in memory at all.
    pub(crate) fn push(&mut self, test: Option<Arc<str>>, request: Kept) -> std::io::Result<()> {
        if let Some(file) = &mut self.file {
            let line = request.line_as(test.as_deref(), true);
            // One write per call, so a test reading the file mid-run sees
            // every call so far, each line whole.
            let mut whole = Vec::with_capacity(line.len() + 1);
            whole.extend_from_slice(&line);
            whole.push(b'\n');
            file.write_all(&whole)?;
        }
        self.bytes += request.len();
        self.kept.push_back((test, request));
        while self.kept.len() > self.max_count || self.bytes > self.max_bytes {
            let Some((_, old)) = self.kept.pop_front() else {
                break;
            };
            self.bytes -= old.len();
            self.dropped += 1;
        }
        Ok(())
    }

    /// Appends `line` (one JSON object) to the requests file, if any.
    pub(crate) fn append_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        match &mut self.file {
            Some(file) => {
                let mut whole = Vec::with_capacity(line.len() + 1);
                whole.extend_from_slice(line);
                whole.push(b'\n');
                file.write_all(&whole)
            }
            None => Ok(()),
        }
    }

    /// The requests of `test` kept (those without a test id for
    /// `None`), oldest first.
    pub(crate) fn snapshot(&self, test: Option<&str>) -> Vec<Kept> {
        self.kept
            .iter()
            .filter(|(id, _)| id.as_deref() == test)
            .map(|(_, kept)| kept.clone())
            .collect()
    }

    /// Forgets the requests of one test id (`Some(None)`: those without
    /// one), or all of them (`None`); how many.
    pub(crate) fn clear(&mut self, which: Option<Option<&str>>) -> usize {
        let before = self.kept.len();
        match which {
            None => {
                self.kept.clear();
                self.bytes = 0;
            }
            Some(test) => {
                let mut bytes = self.bytes;
                self.kept.retain(|(id, kept)| {
                    let keep = id.as_deref() != test;
                    if !keep {
                        bytes -= kept.len();
                    }
                    keep
                });
                self.bytes = bytes;
            }
        }
        before - self.kept.len()
    }

    /// How many requests were dropped from memory so far.
    pub(crate) fn dropped(&self) -> usize {
        self.dropped
    }

    /// The bytes kept in memory.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(call: usize, text: &str) -> Bytes {
        let body = json!({"messages": [{"role": "user", "content": text}], "temperature": 0.5});
        let decoded = agentstream_wire::openai::decode::decode_request(&body).unwrap();
        Line::new(Api::OpenAi, &decoded).numbered(call)
    }

    #[test]
    fn lines_read_back() {
        let back = RecordedRequest::from_line(&line(7, "hi")).unwrap();
        assert_eq!((back.call, back.options), (7, json!({"temperature": 0.5})));
        assert_eq!(back.context.messages.len(), 1);
    }

    #[test]
    fn numbers_go_first_in_the_room_before_the_fields() {
        for call in [0, 7, 10, 123_456, usize::MAX] {
            let line = line(call, "hi");
            let prefix = format!("{{\"call\":{call},\"api\":\"openai-completions\",");
            assert!(line.starts_with(prefix.as_bytes()), "{line:?}");
            assert_eq!(RecordedRequest::from_line(&line).unwrap().call, call);
        }
        let mut empty = vec![b' '; NUMBER_ROOM];
        empty.extend_from_slice(b"{}");
        assert_eq!(&Line(empty).numbered(42)[..], br#"{"call":42}"#);
    }

    #[test]
    fn the_log_keeps_the_newest_within_both_bounds() {
        let mut log = RequestLog::new(3, 10_000, None);
        for k in 0..5 {
            log.push(None, Kept::Line(line(k, "x"))).unwrap();
        }
        let calls: Vec<usize> = log
            .snapshot(None)
            .iter()
            .map(|kept| RecordedRequest::from_line(&kept.line()).unwrap().call)
            .collect();
        assert_eq!((calls, log.dropped()), (vec![2, 3, 4], 2));

        let big = "y".repeat(400);
        let mut log = RequestLog::new(100, 1_000, None);
        for k in 0..5 {
            log.push(None, Kept::Line(line(k, &big))).unwrap();
        }
        assert!(log.bytes() <= 1_000, "{}", log.bytes());
        assert_eq!(log.snapshot(None).len() + log.dropped(), 5);
        let last = log.snapshot(None).last().unwrap().line();
        assert_eq!(RecordedRequest::from_line(&last).unwrap().call, 4);
        // Alone larger than the bound: not kept.
        log.push(None, Kept::Line(line(5, &"z".repeat(2_000))))
            .unwrap();
        assert_eq!((log.snapshot(None).len(), log.dropped()), (0, 6));
    }

    #[test]
    fn a_body_is_written_as_the_line_of_its_request() {
        let body = json!({"model": "m", "stream": true, "max_tokens": 9,
            "messages": [{"role": "user", "content": "a \"b\" é"}]});
        let cases = [
            (
                crate::route::Target::of("/v1/chat/completions", None).unwrap(),
                body.clone(),
            ),
            (
                crate::route::Target::of("/v1/messages", None).unwrap(),
                body,
            ),
            (
                crate::route::Target::of("/v1beta/models/g:streamGenerateContent", None).unwrap(),
                json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
            ),
        ];
        for (target, body) in cases {
            let body = Bytes::from(body.to_string());
            let request = target.decode(&body).unwrap();
            let eager = Line::new(target.api, &request).numbered(3);
            let kept = Kept::Body {
                call: 3,
                route: target.decoding(),
                body,
            };
            assert_eq!(kept.line(), eager);
            assert!(RecordedRequest::from_line(&eager).is_some());
        }
        // A body that no longer decodes keeps its number.
        let kept = Kept::Body {
            call: 4,
            route: crate::route::Target::of("/v1/chat/completions", None)
                .unwrap()
                .decoding(),
            body: Bytes::from_static(b"{"),
        };
        assert_eq!(&kept.line()[..], br#"{"call":4}"#);
    }
}
