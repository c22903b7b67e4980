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
//! directory never write into the same cassette), each with five files:
//!
//! | file | holds |
//! |---|---|
//! | `request.json` | `{"api", "method", "path", "query", "headers", "model", "stream", "context", "options"}`: the request's route, its query (`null` without one; Gemini's `key` parameter and other secrets redacted) and headers with every secret replaced by `"[redacted]"` (see [`is_secret_header`]; Gemini's `x-goog-api-key` included), and the body decoded into Pi's context and options (the form replay matches on) |
//! | `request.body` | the request body byte for byte |
//! | `response.json` | `{"status", "headers"}`: the status and the headers that matter (content type, request ids, rate limits; not the connection's); `"cut": true` when the exchange ended before the upstream's answer did (see below) |
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
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agentstream::message::Context;
use agentstream_beneath::{
    create_dir, create_file, list_dir, open_file, Refusal, Resolver, RootDir,
};
use bytes::Bytes;
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
    /// Whether the exchange was cut (`"cut": true` in `response.json`):
    /// replay breaks the body off after its pieces, as it ended live.
    pub cut: bool,
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

impl CassetteError {
    /// The file at `path` was not opened: outside the directory, not a
    /// regular file, or the system's error.
    fn refused(path: &Path, refusal: Refusal) -> Self {
        match refusal {
            Refusal::Io(source) => Self::io(path, source),
            refusal => Self::new(path, refusal.to_string()),
        }
    }
}

/// A cassette directory, opened once: every file of its cassettes is
/// opened beneath this handle, never through a symlink that leads out of
/// it, and only when it is a regular file (a FIFO or a device is refused
/// without blocking).
pub(crate) struct CassetteDir {
    root: RootDir,
    path: PathBuf,
}

impl CassetteDir {
    /// Opens `dir` (following symlinks: the user chose it).
    pub(crate) fn open(dir: &Path) -> Result<Self, CassetteError> {
        Ok(Self {
            root: RootDir::open(dir).map_err(|e| CassetteError::io(dir, e))?,
            path: dir.to_owned(),
        })
    }

    /// The bytes of the regular file at `relative` beneath the directory.
    fn read(&self, relative: &str) -> Result<Vec<u8>, CassetteError> {
        let path = self.path.join(relative);
        let (mut file, size) = open_file(&self.root, relative, Resolver::best())
            .map_err(|refusal| CassetteError::refused(&path, refusal))?;
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        file.read_to_end(&mut bytes)
            .map_err(|e| CassetteError::io(&path, e))?;
        Ok(bytes)
    }

    /// The names of the entries that may be cassettes (directories, and
    /// symlinks, which are resolved beneath the directory when opened),
    /// and those of the others (files, FIFOs, sockets, devices), which
    /// cannot be.
    fn entries(&self) -> Result<(Vec<String>, Vec<String>), CassetteError> {
        let (mut names, mut others) = (Vec::new(), Vec::new());
        list_dir(&self.root, ".", Resolver::best(), |mut name| {
            if name.ends_with('/') || name.ends_with('@') {
                name.pop();
                names.push(name);
            } else {
                others.push(name);
            }
        })
        .map_err(|refusal| CassetteError::refused(&self.path, refusal))?;
        Ok((names, others))
    }
}

/// Whether a cassette's `request.json` was not found: the entry is not a
/// cassette (a directory without one, or a symlink to a file).
fn not_a_cassette(error: &CassetteError) -> bool {
    error.source.as_ref().is_some_and(|e| {
        matches!(
            e.kind(),
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
        )
    })
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
            Err(e) if e.source.as_ref().map(io::Error::kind) == Some(io::ErrorKind::NotFound) => {
                None
            }
            Err(e) => return Err(e),
        };
        let files = CassetteFiles {
            request_json: &request,
            response_json: &response,
            lengths: lengths.as_deref(),
        };
        Self::parse(&dir.path.join(relative), name, files, body)
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
        let path = |leaf: &str| dir.join(leaf);
        let json = |bytes: &[u8], leaf: &str| -> Result<Value, CassetteError> {
            serde_json::from_slice(bytes)
                .map_err(|e| CassetteError::new(&path(leaf), format!("not JSON: {e}")))
        };
        let request = json(files.request_json, "request.json")?;
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
        let context =
            Context::from_value(request.get("context").cloned().unwrap_or(Value::Null))
                .map_err(|e| CassetteError::new(&path("request.json"), format!("context: {e}")))?;
        let response_path = path("response.json");
        let response = json(files.response_json, "response.json")?;
        let status = response
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            // What an upstream may answer (HTTP's three digits, as hyper
            // reads them), so whatever the proxy recorded plays back.
            .filter(|s| (100..=999).contains(s))
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
        let lengths = match files.lengths {
            Some(text) => {
                parse_lengths(&String::from_utf8_lossy(text), body.len()).ok_or_else(|| {
                    CassetteError::new(
                        &path("response.body.lengths"),
                        "the lengths do not add up to the body",
                    )
                })?
            }
            None => vec![body.len()],
        };
        Ok(Self {
            name,
            api,
            request,
            context,
            status,
            headers,
            body,
            lengths,
            cut,
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
        let (mut names, others) = dir.entries()?;
        names.sort_by(|a, b| recording_order(a, b));
        let mut skipped: Vec<Skipped> = others
            .into_iter()
            .map(|name| Skipped {
                reason: "not a directory".into(),
                name,
            })
            .collect();
        let mut cassettes = Vec::with_capacity(names.len());
        for name in names {
            match Self::load_from(&dir, &name, name.clone()) {
                Ok(cassette) => cassettes.push(cassette),
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
        Ok(Loaded { cassettes, skipped })
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
    /// `response.json`, kept open to mark the exchange cut.
    response: fs::File,
    head: Value,
}

/// `response.json` for the response's `head` (`{"status", "headers"}`,
/// and `"cut"` once cut), as the recorder writes it.
pub(crate) fn response_json(head: &Value) -> Vec<u8> {
    let mut text = serde_json::to_vec_pretty(head).unwrap_or_default();
    text.push(b'\n');
    text
}

/// The line of `response.body.lengths` for a piece of `length` bytes.
pub(crate) fn length_line(length: usize) -> String {
    format!("{length}\n")
}

/// The number after the highest all-digit name in `dir` (`0` when there
/// is none): where a recorder's numbering starts, so a cassette deleted
/// before the last is never numbered again.
pub(crate) fn next_number(dir: &RootDir) -> io::Result<usize> {
    let mut next = 0usize;
    list_dir(dir, ".", Resolver::best(), |mut name| {
        if name.ends_with(['/', '@']) {
            name.pop();
        }
        if let Some(number) = cassette_number(&name) {
            next = next.max(number.saturating_add(1));
        }
    })?;
    Ok(next)
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

impl Writer {
    /// Creates the next cassette in `dir` with the request's files and
    /// `response.json`, and returns it with its name. The cassette's
    /// directory takes the first number from `next` that no entry has
    /// (created exclusively, so two recorders on one directory never
    /// share one), and every file is created exclusively in it, never
    /// through a symlink.
    pub(crate) fn begin(
        dir: &RootDir,
        next: &AtomicUsize,
        request: &Value,
        request_body: &[u8],
        status: u16,
        headers: Value,
    ) -> io::Result<(Self, String)> {
        use std::io::Write;
        let (cassette, name) = loop {
            let name = format!("{:04}", next.fetch_add(1, Ordering::Relaxed));
            match create_dir(dir, &name) {
                Ok(cassette) => break (cassette, name),
                // Taken: by a cassette of another recorder, or anything
                // else someone put there. The next number is tried; each
                // entry is passed over at most once.
                Err(Refusal::Io(e)) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(refusal) => return Err(refusal.into()),
            }
        };
        let pretty = |value: &Value| {
            let mut text = serde_json::to_vec_pretty(value).unwrap_or_default();
            text.push(b'\n');
            text
        };
        let write = |file: &str, bytes: &[u8]| -> io::Result<()> {
            create_file(&cassette, file)?.write_all(bytes)
        };
        write("request.json", &pretty(request))?;
        write("request.body", request_body)?;
        let head = json!({"status": status, "headers": headers});
        let mut response = create_file(&cassette, "response.json")?;
        response.write_all(&response_json(&head))?;
        let writer = Self {
            body: create_file(&cassette, "response.body")?,
            lengths: create_file(&cassette, "response.body.lengths")?,
            response,
            head,
        };
        Ok((writer, name))
    }

    /// Appends one piece of the body.
    pub(crate) fn piece(&mut self, piece: &[u8]) -> io::Result<()> {
        use std::io::Write;
        self.body.write_all(piece)?;
        self.lengths.write_all(length_line(piece.len()).as_bytes())
    }

    /// Marks the exchange cut: `response.json` is written again (through
    /// the handle it was created with) with `"cut": true`.
    pub(crate) fn cut(&mut self) -> io::Result<()> {
        use std::io::{Seek, Write};
        self.head["cut"] = Value::Bool(true);
        self.response.set_len(0)?;
        self.response.rewind()?;
        self.response.write_all(&response_json(&self.head))
    }
}

/// A cassette's body in the pieces it arrived in, held once and shared by
/// every request that plays it (cloning it clones two handles).
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    body: Bytes,
    /// Moved, not copied, from the cassette (a copy would double what a
    /// body in 1-byte pieces costs while the server starts).
    lengths: Arc<Vec<usize>>,
}

impl Recorded {
    /// The number of pieces.
    pub(crate) fn len(&self) -> usize {
        self.lengths.len()
    }

    /// Piece `k` (of [`len`](Self::len)), which starts at byte `at` of
    /// the body: a view of the body, not a copy.
    pub(crate) fn piece(&self, k: usize, at: usize) -> Bytes {
        self.body.slice(at..at + self.lengths[k])
    }
}

/// The cassettes a replaying server answers from.
pub(crate) struct Player {
    dir: String,
    /// The cassettes, their bodies and lengths moved to `answers`.
    cassettes: Vec<Cassette>,
    answers: Vec<Recorded>,
    /// The contexts as JSON, compared with the requests'.
    contexts: Vec<Value>,
    mode: Match,
    used: Mutex<(Vec<bool>, usize)>,
}

impl Player {
    pub(crate) fn new(dir: &Path, mut cassettes: Vec<Cassette>, mode: Match) -> Self {
        let answers = cassettes
            .iter_mut()
            .map(|c| Recorded {
                body: Bytes::from(std::mem::take(&mut c.body)),
                lengths: Arc::new(std::mem::take(&mut c.lengths)),
            })
            .collect();
        let contexts = cassettes
            .iter()
            .map(|c| serde_json::to_value(&c.context).unwrap_or(Value::Null))
            .collect();
        let used = vec![false; cassettes.len()];
        Self {
            dir: dir.display().to_string(),
            cassettes,
            answers,
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
    ) -> Result<(&Cassette, &Recorded), ApiError> {
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
            return Ok((&self.cassettes[k], &self.answers[k]));
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
            "x-password",
            "x-signature",
            "x-auth",
            "apikey",
            "x-amz-security-token",
            "x-client-credential",
        ] {
            assert!(is_secret_header(name), "{name}");
        }
        assert!(!is_secret_header("content-type"));
        let headers = headers_json([("authorization", &b"Bearer sk-1"[..]), ("accept", b"*/*")]);
        assert_eq!(headers, json!({"authorization": REDACTED, "accept": "*/*"}));
    }

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
        assert_eq!(parse_lengths("1\n2\n\n", 3), Some(vec![1, 2]));
        assert_eq!(parse_lengths("1\n", 3), None);
        assert_eq!(parse_lengths("x\n", 1), None);
    }
}
