//! Cassettes: exchanges with a real provider, recorded by the proxy
//! ([`Server::proxy`](crate::Server::proxy)) and answered again by
//! [`Server::replay`](crate::Server::replay), as plain files a team
//! commits and reviews.
//!
//! # The format
//!
//! A cassette directory holds one directory per exchange, named by its
//! number in recording order (`0000`, `0001`, …), each with five files:
//!
//! | file | holds |
//! |---|---|
//! | `request.json` | `{"api", "method", "path", "query", "headers", "model", "stream", "context", "options"}`: the request's route, its query (`null` without one; Gemini's `key` parameter and other secrets redacted) and headers with every secret replaced by `"[redacted]"` (see [`is_secret_header`]; Gemini's `x-goog-api-key` included), and the body decoded into Pi's context and options (the form replay matches on) |
//! | `request.body` | the request body byte for byte |
//! | `response.json` | `{"status", "headers"}`: the status and the headers that matter (content type, request ids, rate limits; not the connection's) |
//! | `response.body` | the response body byte for byte |
//! | `response.body.lengths` | the sizes of the pieces the body arrived in, one per line |
//!
//! `response.body` with its `.lengths` sidecar is the format of `agentstream
//! chat --record-raw`. `agentstream decode DIR/0000` reads it in the
//! protocol the `path` in `request.json` names, and so does the library's
//! `agentstream_wire::replay::Recording::from_cassette` (for a
//! `ReplayModel`), so one recording drives a Rust test and a Python one.
//! `agentstream decode` prints the final message: that is a script turn
//! for `agentstream serve`, to edit by hand.
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
//! played (the last match once all are used). A request with no match
//! gets HTTP 500 in the provider's error shape, naming the closest
//! cassette and the first point where the contexts differ.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use agentstream::message::Context;
use serde_json::{json, Map, Value};

use agentstream_wire::server::ApiError;
use agentstream_wire::Api;

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

/// The header value written for a secret.
pub const REDACTED: &str = "[redacted]";

/// Whether a header's value is a secret never written to a cassette: the
/// wire crate's [secret headers](agentstream_wire::options::is_secret_header)
/// (`Authorization`, `x-api-key`, `api-key`, any name with `key`,
/// `token`, `secret` or `auth`) and cookies.
pub fn is_secret_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    agentstream_wire::options::is_secret_header(&name) || name.contains("cookie")
}

/// Headers as a JSON object (a repeated header's values joined by `, `),
/// secrets redacted.
pub(crate) fn headers_json<'a>(headers: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Value {
    let mut object = Map::new();
    for (name, value) in headers {
        let value = if is_secret_header(name) {
            REDACTED.to_owned()
        } else {
            String::from_utf8_lossy(value).into_owned()
        };
        match object.get_mut(name) {
            Some(Value::String(joined)) => {
                joined.push_str(", ");
                joined.push_str(&value);
            }
            _ => {
                object.insert(name.to_owned(), Value::String(value));
            }
        }
    }
    Value::Object(object)
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
    pub lengths: Vec<usize>,
}

/// A cassette that cannot be read.
#[derive(Debug)]
pub struct CassetteError {
    path: PathBuf,
    message: String,
    source: Option<io::Error>,
}

impl CassetteError {
    fn new(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            message: message.into(),
            source: None,
        }
    }

    fn io(path: &Path, source: io::Error) -> Self {
        Self {
            path: path.to_owned(),
            message: "cannot read".into(),
            source: Some(source),
        }
    }
}

impl std::fmt::Display for CassetteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for CassetteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

fn read(path: &Path) -> Result<Vec<u8>, CassetteError> {
    fs::read(path).map_err(|e| CassetteError::io(path, e))
}

fn read_json(path: &Path) -> Result<Value, CassetteError> {
    serde_json::from_slice(&read(path)?)
        .map_err(|e| CassetteError::new(path, format!("not JSON: {e}")))
}

impl Cassette {
    /// Reads the exchange in `dir` (see the [module documentation](self)).
    ///
    /// # Errors
    /// A file missing or malformed.
    pub fn load(dir: &Path) -> Result<Self, CassetteError> {
        let request = read_json(&dir.join("request.json"))?;
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
                    &dir.join("request.json"),
                    format!("\"api\" must be one of {}", names.join(", ")),
                ));
            }
        };
        let context = Context::from_value(request.get("context").cloned().unwrap_or(Value::Null))
            .map_err(|e| {
            CassetteError::new(&dir.join("request.json"), format!("context: {e}"))
        })?;
        let response_path = dir.join("response.json");
        let response = read_json(&response_path)?;
        let status = response
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .filter(|s| (100..=599).contains(s))
            .ok_or_else(|| {
                CassetteError::new(&response_path, "\"status\" must be an HTTP status")
            })?;
        let headers = response
            .get("headers")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect();
        let body = read(&dir.join("response.body"))?;
        let lengths_path = dir.join("response.body.lengths");
        let lengths = match fs::read_to_string(&lengths_path) {
            Ok(text) => parse_lengths(&text, body.len()).ok_or_else(|| {
                CassetteError::new(&lengths_path, "the lengths do not add up to the body")
            })?,
            // Without the sidecar, the body is one piece.
            Err(e) if e.kind() == io::ErrorKind::NotFound => vec![body.len()],
            Err(e) => return Err(CassetteError::io(&lengths_path, e)),
        };
        Ok(Self {
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            api,
            request,
            context,
            status,
            headers,
            body,
            lengths,
        })
    }

    /// Reads every exchange in `dir`, in the order of their names.
    ///
    /// # Errors
    /// The directory cannot be read, or one exchange cannot (see
    /// [`Cassette::load`]).
    pub fn load_all(dir: &Path) -> Result<Vec<Self>, CassetteError> {
        let mut dirs: Vec<PathBuf> = fs::read_dir(dir)
            .map_err(|e| CassetteError::io(dir, e))?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.join("request.json").is_file())
            .collect();
        dirs.sort();
        dirs.iter().map(|d| Self::load(d)).collect()
    }

    /// The body in the pieces it arrived in.
    pub fn pieces(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let mut at = 0;
        self.lengths.iter().map(move |&n| {
            let piece = &self.body[at..at + n];
            at += n;
            piece
        })
    }
}

fn parse_lengths(text: &str, total: usize) -> Option<Vec<usize>> {
    let lengths: Vec<usize> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    (lengths.iter().try_fold(0usize, |a, n| a.checked_add(*n)) == Some(total)).then_some(lengths)
}

/// A cassette being written by the proxy: the request and the response's
/// head at once, then each piece of the body as it arrives, before the
/// client gets it (so a client that has read an answer finds it saved).
pub(crate) struct Writer {
    body: fs::File,
    lengths: fs::File,
}

impl Writer {
    /// Creates `dir/name` with the request's files and `response.json`.
    pub(crate) fn begin(
        dir: &Path,
        name: &str,
        request: &Value,
        request_body: &[u8],
        status: u16,
        headers: Value,
    ) -> io::Result<Self> {
        let dir = dir.join(name);
        fs::create_dir_all(&dir)?;
        let pretty = |value: &Value| {
            let mut text = serde_json::to_vec_pretty(value).unwrap_or_default();
            text.push(b'\n');
            text
        };
        fs::write(dir.join("request.json"), pretty(request))?;
        fs::write(dir.join("request.body"), request_body)?;
        fs::write(
            dir.join("response.json"),
            pretty(&json!({"status": status, "headers": headers})),
        )?;
        Ok(Self {
            body: fs::File::create(dir.join("response.body"))?,
            lengths: fs::File::create(dir.join("response.body.lengths"))?,
        })
    }

    /// Appends one piece of the body.
    pub(crate) fn piece(&mut self, piece: &[u8]) -> io::Result<()> {
        use std::io::Write;
        self.body.write_all(piece)?;
        writeln!(self.lengths, "{}", piece.len())
    }
}

/// The cassettes a replaying server answers from.
pub(crate) struct Player {
    dir: String,
    cassettes: Vec<Cassette>,
    /// The contexts as JSON, compared with the requests'.
    contexts: Vec<Value>,
    mode: Match,
    used: Mutex<(Vec<bool>, usize)>,
}

impl Player {
    pub(crate) fn new(dir: &Path, cassettes: Vec<Cassette>, mode: Match) -> Self {
        let contexts = cassettes
            .iter()
            .map(|c| serde_json::to_value(&c.context).unwrap_or(Value::Null))
            .collect();
        let used = vec![false; cassettes.len()];
        Self {
            dir: dir.display().to_string(),
            cassettes,
            contexts,
            mode,
            used: Mutex::new((used, 0)),
        }
    }

    /// The cassette for a request of `api` with `context`, or the error
    /// naming the closest one.
    pub(crate) fn pick(
        &self,
        api: Api,
        stream: bool,
        context: &Context,
    ) -> Result<&Cassette, ApiError> {
        let wanted = serde_json::to_value(context).unwrap_or(Value::Null);
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        let (used, next) = &mut *used;
        let same = |k: usize| -> bool {
            self.cassettes[k].api == api
                && self.cassettes[k]
                    .request
                    .get("stream")
                    .and_then(Value::as_bool)
                    == Some(stream)
                && match self.mode {
                    Match::LastMessage => last_message(&self.contexts[k]) == last_message(&wanted),
                    _ => self.contexts[k] == wanted,
                }
        };
        let found = match self.mode {
            Match::Order => Some(*next).filter(|&k| k < self.cassettes.len() && same(k)),
            _ => {
                let matching: Vec<usize> = (0..self.cassettes.len()).filter(|&k| same(k)).collect();
                matching
                    .iter()
                    .copied()
                    .find(|&k| !used[k])
                    .or(matching.last().copied())
            }
        };
        if let Some(k) = found {
            used[k] = true;
            *next += 1;
            return Ok(&self.cassettes[k]);
        }
        Err(ApiError::new(500, self.mismatch(api, &wanted, *next)))
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
            self.dir
        );
        let candidates: Vec<usize> = match self.mode {
            Match::Order if next >= self.cassettes.len() => {
                return format!(
                    "{head}: call {next} is past the last of {} cassettes",
                    self.cassettes.len()
                )
            }
            Match::Order => vec![next],
            _ => (0..self.cassettes.len())
                .filter(|&k| self.cassettes[k].api == api)
                .collect(),
        };
        let closest = candidates
            .iter()
            .map(|&k| (k, first_difference(&self.contexts[k], wanted, "$".into())))
            .max_by_key(|(k, d)| (d.as_ref().map_or(usize::MAX, |d| d.common), usize::MAX - k));
        match closest {
            Some((k, Some(difference))) => format!(
                "{head}; the closest is {}: at {} the cassette has {} and the request has {}",
                self.cassettes[k].name,
                difference.path,
                short(difference.recorded.as_ref()),
                short(difference.requested.as_ref()),
            ),
            Some((k, None)) => format!(
                "{head}; {} has this context but its {} was already played",
                self.cassettes[k].name, "turn"
            ),
            None => format!("{head}: it holds no {} cassette", api.pi_api()),
        }
    }
}

fn last_message(context: &Value) -> Option<&Value> {
    context
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
}

/// Where two contexts first differ.
struct Difference {
    path: String,
    /// How much of them is the same before it (the leading messages, then
    /// the leading fields), to pick the closest cassette.
    common: usize,
    recorded: Option<Value>,
    requested: Option<Value>,
}

fn first_difference(recorded: &Value, requested: &Value, path: String) -> Option<Difference> {
    if recorded == requested {
        return None;
    }
    let differ = |path: String, common| Difference {
        path,
        common,
        recorded: Some(recorded.clone()),
        requested: Some(requested.clone()),
    };
    match (recorded, requested) {
        (Value::Array(a), Value::Array(b)) => {
            let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            match (a.get(common), b.get(common)) {
                (Some(x), Some(y)) => {
                    first_difference(x, y, format!("{path}[{common}]")).map(|mut d| {
                        d.common += common << 16;
                        d
                    })
                }
                (x, y) => Some(Difference {
                    path: format!("{path}[{common}]"),
                    common: common << 16,
                    recorded: x.cloned(),
                    requested: y.cloned(),
                }),
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            // The conversation is what differs most often: look there first.
            keys.sort_by_key(|k| *k != "messages");
            for (same, key) in keys.into_iter().enumerate() {
                let here = format!("{path}.{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => {
                        if let Some(mut d) = first_difference(x, y, here) {
                            d.common += same;
                            return Some(d);
                        }
                    }
                    (x, y) => {
                        return Some(Difference {
                            path: here,
                            common: same,
                            recorded: x.cloned(),
                            requested: y.cloned(),
                        })
                    }
                }
            }
            None
        }
        _ => Some(differ(path, 0)),
    }
}

/// A value for a message: its JSON, cut at 120 characters; `nothing` when
/// absent.
fn short(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "nothing".into();
    };
    let text = value.to_string();
    match text.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_difference_is_named() {
        let a = json!({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "a"}]});
        let b = json!({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "b"}]});
        let d = first_difference(&a, &b, "$".into()).unwrap();
        assert_eq!(d.path, "$.messages[1].content");
        assert_eq!(
            (d.recorded, d.requested),
            (Some(json!("a")), Some(json!("b")))
        );
        let c = json!({"messages": [{"role": "user", "content": "hi"}], "systemPrompt": "x"});
        let d = first_difference(&a, &c, "$".into()).unwrap();
        assert_eq!((d.path.as_str(), d.requested), ("$.messages[1]", None));
        assert!(first_difference(&a, &a, "$".into()).is_none());
    }

    #[test]
    fn secrets_are_redacted() {
        for name in [
            "Authorization",
            "x-api-key",
            "api-key",
            "X-Goog-Api-Key",
            "x-auth-token",
        ] {
            assert!(is_secret_header(name), "{name}");
        }
        assert!(!is_secret_header("content-type"));
        let headers = headers_json([("authorization", &b"Bearer sk-1"[..]), ("accept", b"*/*")]);
        assert_eq!(headers, json!({"authorization": REDACTED, "accept": "*/*"}));
    }

    #[test]
    fn lengths_must_add_up() {
        assert_eq!(parse_lengths("1\n2\n\n", 3), Some(vec![1, 2]));
        assert_eq!(parse_lengths("1\n", 3), None);
        assert_eq!(parse_lengths("x\n", 1), None);
    }
}
