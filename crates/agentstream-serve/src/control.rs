//! Control at run time: `POST /v1/script` (replace or extend the script of
//! the server or of one test id) and `POST /v1/reset` (rewind them and
//! clear their requests), on a scripted server.

use std::collections::HashMap;

use hyper::http::request::Parts;
use hyper::{Response, StatusCode};
use serde_json::{json, value::RawValue, Value};

use agentstream::message::DecodeError;
use agentstream_wire::server::ApiError;
use agentstream_wire::Api;

use crate::full_script::Script;
use crate::response::{error_response, json_response, Body};
use crate::script::ServeTurn;
use crate::state::{Source, State};

/// The lines of a JSON text's elements, in text order: for error
/// messages that name the line where a bad element starts.
#[derive(Debug, Clone)]
pub struct LineCursor<'t> {
    text: &'t str,
    line: usize,
    scanned: usize,
}

impl<'t> LineCursor<'t> {
    /// A cursor at the start of `text`, whose first line is `first_line`.
    pub fn new(text: &'t str, first_line: usize) -> Self {
        Self {
            text,
            line: first_line,
            scanned: 0,
        }
    }

    /// The line `element` starts on. `element` is a slice of the text
    /// (as a borrowed [`RawValue`] is) at or after the ones asked about
    /// before; anything else counts no further lines.
    pub fn line_of(&mut self, element: &str) -> usize {
        // `element` borrows from the text: its address gives its offset.
        let offset = (element.as_ptr() as usize)
            .saturating_sub(self.text.as_ptr() as usize)
            .min(self.text.len());
        let newlines = self
            .text
            .as_bytes()
            .get(self.scanned..offset)
            .map_or(0, |skipped| skipped.iter().filter(|&&b| b == b'\n').count());
        self.line += newlines;
        self.scanned = self.scanned.max(offset);
        self.line
    }
}

/// A script's text parsed as `agentstream serve SCRIPT` parses its file:
/// a JSON array of elements, or an object `{"rules", "turns"}`.
///
/// # Errors
/// `LINE: error: WHAT` (what the CLI prints after the file's name):
/// the line of the bad element (1 for the object form) and its JSON path,
/// or the line and column of the JSON error.
pub fn parse_script(text: &str) -> Result<Script, String> {
    let at = |line: usize, text: String| format!("{line}: error: {text}");
    let decode = |line: usize, base: &str, error: &DecodeError| {
        let path = error.path();
        let path = match path.strip_prefix('$') {
            Some(rest) => format!("{base}{rest}"),
            None => path,
        };
        at(line, format!("{path}: {}", error.reason()))
    };
    if text.trim_start().starts_with('{') {
        let value: Value =
            serde_json::from_str(text).map_err(|e| at(e.line(), format!("invalid JSON: {e}")))?;
        return Script::from_value(value).map_err(|e| decode(1, "$", &e));
    }
    if !text.trim_start().starts_with('[') {
        return Err(at(1, "$: expected a JSON array of turns".into()));
    }
    let json_error = |line: usize, e: &serde_json::Error| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = match full.strip_suffix(&suffix) {
            Some(message) => format!("{message} (column {})", e.column()),
            None => full,
        };
        at(line, format!("invalid JSON: {message}"))
    };
    let elements: Vec<&RawValue> =
        serde_json::from_str(text).map_err(|e| json_error(e.line().max(1), &e))?;
    let mut lines = LineCursor::new(text, 1);
    let mut turns = Vec::with_capacity(elements.len());
    // Elements written alike are decoded once and share their message (a
    // long script often repeats its turns; a copy costs a few pointers).
    let mut decoded: HashMap<&str, ServeTurn> = HashMap::new();
    for (index, raw) in elements.into_iter().enumerate() {
        let raw = raw.get();
        if let Some(turn) = decoded.get(raw) {
            turns.push(turn.clone());
            continue;
        }
        let line = lines.line_of(raw);
        let value: Value = serde_json::from_str(raw).map_err(|e| json_error(line, &e))?;
        let turn =
            ServeTurn::from_value(value).map_err(|e| decode(line, &format!("$[{index}]"), &e))?;
        decoded.insert(raw, turn.clone());
        turns.push(turn);
    }
    Ok(Script {
        rules: Vec::new(),
        turns,
    })
}

/// The answer of a control route on a server that plays no script.
fn not_scripted(api: Api, shared: &State, what: &str) -> Option<Response<Body>> {
    let source = match shared.source {
        Source::Model => return None,
        Source::Upstream(_) => "a recording proxy (--upstream)",
        Source::Replay(_) | Source::ReplayOrRecord(_) => "a replaying server (--replay)",
    };
    let message = format!("{what} needs a scripted server; this one is {source}");
    Some(error_response(api, &ApiError::new(409, message)))
}

/// `POST /v1/script[?append=1]`: the body (a script, as the CLI's file)
/// replaces, or extends, the script of `test`'s lane (the server's for
/// `None`, which new test ids then start from).
pub(crate) fn post_script(
    shared: &State,
    api: Api,
    parts: &Parts,
    test: Option<&str>,
    body: &[u8],
) -> Response<Body> {
    if let Some(refused) = not_scripted(api, shared, "POST /v1/script") {
        return refused;
    }
    let append = parts
        .uri
        .query()
        .is_some_and(|query| query.split('&').any(|pair| pair == "append=1"));
    let text = match std::str::from_utf8(body) {
        Ok(text) => text,
        Err(_) => {
            let error = ApiError::new(400, "the script is not UTF-8");
            return error_response(api, &error);
        }
    };
    let script = match parse_script(text) {
        Ok(script) => script,
        Err(message) => return error_response(api, &ApiError::new(400, message)),
    };
    let mut calls = shared.calls();
    if !calls.set_script(test, script, append) {
        let message = "this server's model was given as code, not as a script: it cannot be extended; POST the whole script";
        return error_response(api, &ApiError::new(409, message));
    }
    if calls.ruled {
        shared
            .ruled
            .store(true, std::sync::atomic::Ordering::Release);
    }
    let play = &calls.lane(test).play;
    let answer = json!({
        "test": test,
        "rules": play.rules.len(),
        "turns": play.ordered_len(),
        "appended": append,
    });
    json_response(StatusCode::OK, answer)
}

/// `POST /v1/reset`: rewinds `test`'s lane (every lane for `None`) and
/// clears its requests.
pub(crate) fn post_reset(shared: &State, api: Api, test: Option<&str>) -> Response<Body> {
    if let Some(refused) = not_scripted(api, shared, "POST /v1/reset") {
        return refused;
    }
    match shared.calls().reset(test) {
        Some(cleared) => json_response(
            StatusCode::OK,
            json!({"test": test, "reset": true, "clearedRequests": cleared}),
        ),
        None => {
            let message = "this server's model was given as code, not as a script: it cannot be rewound; POST /v1/script first";
            error_response(api, &ApiError::new(409, message))
        }
    }
}
