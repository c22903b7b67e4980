//! The serve script: `play`'s turns plus HTTP-level failures.
//!
//! A script is a JSON array. Each element is one call, in arrival order:
//!
//! - **a turn, as `agentstream play` reads it**: an assistant message in
//!   Pi's JSON (`api`, `provider`, `model`, `usage` and `timestamp` may be
//!   left out), a plain string (a text turn), or a failure
//!   `{"stopReason": "error"|"aborted", "errorMessage", "partialText"?}`
//!   (sent after HTTP 200 as the provider's mid-stream error event);
//! - **`{"httpError": {"status", "message", "type"?, "code"?, "param"?,
//!   "retryAfter"?, "headers"?, "body"?}}`**: the call is answered with
//!   that status, the provider's error body (`type` defaults by status, see
//!   [`ApiError::error_type_for`]; `body` replaces the rendered body
//!   verbatim) and the provider's error headers (see
//!   [`error_headers`](crate::error_headers)); `retryAfter`, a string or a
//!   number, is sent as `Retry-After` (and as Gemini's `RetryInfo`);
//!   `headers`, an object of names to strings or numbers, adds or replaces
//!   headers (not the body's framing: `content-length`,
//!   `transfer-encoding`, `connection`…). The model is not called: no turn
//!   is used up;
//! - **`{"turn": TURN, "streamError": {"message", "type"?}, "afterEvents":
//!   N}`**: TURN streams, and after its first N SSE events the provider's
//!   error event is sent and the body ends (no `[DONE]` /
//!   `message_stop`);
//! - **`{"turn": TURN, "cutAfterEvents": N}`**: TURN streams, and after N
//!   SSE events the connection is closed mid-body.
//!
//! The N events are counted as the encoder writes them (Bedrock's:
//! event-stream messages), before a turn's quirks regroup them; an event
//! a quirk holds at that point is written before the error or the cut.
//! - **`{"byRequest": [{"ifContains": TEXT, "turn": TURN}, …]}`**: the
//!   turn depends on the request: the first alternative whose `ifContains`
//!   occurs in the text of the request's last message (the user's words, or
//!   the tool result the agent sent back) is played; an alternative without
//!   `ifContains` always matches. When none matches, the call gets HTTP 400
//!   (not retried by the SDKs) with the message [`NO_MATCH_MESSAGE`] (no turn is used up either way:
//!   the element is one call).
//!
//! Any element with a turn (a message, a text given as an object, a
//! wrapped turn, `byRequest`) may also carry `"timing"` (see
//! [`timing`](crate::timing)) and `"quirks"` (see
//! [`quirks`](crate::quirks)) beside its own keys; they shape its stream
//! (a non-streaming answer is written at once, unchanged).
//!
//! A non-streaming request hit by `streamError` gets HTTP 500 with that
//! error; one hit by `cutAfterEvents` gets its connection closed before
//! any response.
//!
//! # Turns that depend on the request
//!
//! Call *k* gets element *k*, in arrival order; a `byRequest` element
//! picks its turn by the text of the request's last message. Anything more
//! is Rust: give [`Server::builder`](crate::Server::builder) any
//! [`Model`](agentstream::model::Model) (for example a `ScriptedModel`
//! whose steps are `ScriptStep::reply` functions of the context), and every
//! call goes through its `stream` with the decoded context.

use agentstream::message::{ContentBlock, Context, DecodeError, Message, UserContent};
use agentstream::model::{ErrorReason, ScriptStep, ScriptedTurn};
use serde_json::{Map, Value};

use agentstream_wire::server::ApiError;

use crate::manner::Manner;
use crate::matching::count;

/// What the server does with one call, besides asking the model.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// The model answers; its events are sent as they come.
    Model,
    /// The model answers; after `after_events` SSE events, `error` is sent
    /// as the provider's error event and the body ends.
    StreamError {
        /// SSE events sent before the error.
        after_events: usize,
        /// The error event's type and message.
        error: ApiError,
    },
    /// The model answers; after `after_events` SSE events the connection
    /// is closed.
    Cut {
        /// SSE events sent before the cut.
        after_events: usize,
    },
    /// The call gets this HTTP error; the model is not called.
    Http(ApiError),
}

/// The message of a call whose `byRequest` element has no alternative
/// matching the request (answered with HTTP 500).
pub const NO_MATCH_MESSAGE: &str =
    "no byRequest alternative matches the text of the request's last message";

/// One alternative of a `byRequest` element.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Alternative {
    /// Played when the text of the request's last message contains this;
    /// always when `None`.
    pub if_contains: Option<String>,
    /// The turn played.
    pub turn: ScriptedTurn,
}

/// One element of a serve script: the turn the model plays (none for an
/// HTTP error), or the alternatives it picks from by the request, and
/// what the server does around it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServeTurn {
    /// The model's turn.
    pub turn: Option<ScriptedTurn>,
    /// A `byRequest` element's alternatives (then `turn` is `None`).
    pub alternatives: Vec<Alternative>,
    /// The server's part.
    pub step: Step,
    /// Its timing and quirks (see [`timing`](crate::timing) and
    /// [`quirks`](crate::quirks)).
    pub(crate) manner: Manner,
}

impl ServeTurn {
    /// Parses one script element (see the module documentation).
    ///
    /// ```
    /// use agentstream_serve::{ServeTurn, Step};
    /// use serde_json::json;
    ///
    /// let turn = ServeTurn::from_value(json!({"httpError": {"status": 429,
    ///     "message": "slow down", "retryAfter": 2}})).unwrap();
    /// let Step::Http(error) = &turn.step else { panic!() };
    /// assert_eq!((error.status, error.retry_after.as_deref()), (429, Some("2")));
    /// assert!(turn.turn.is_none());
    /// ```
    ///
    /// # Errors
    /// A [`DecodeError`] naming the JSON path of the bad value.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let Value::Object(mut object) = value else {
            return ScriptedTurn::from_value(value).map(Self::plain);
        };
        let manner = Manner::take(&mut object)?;
        let element = Self::from_object(object)?;
        if !manner.is_plain() && element.turn.is_none() && element.alternatives.is_empty() {
            return Err(DecodeError::new(
                "\"timing\" and \"quirks\" need a turn to write, not an httpError",
            ));
        }
        Ok(element.with_manner(manner))
    }

    /// This element written with `manner`.
    fn with_manner(mut self, manner: Manner) -> Self {
        self.manner = manner;
        self
    }

    fn from_object(mut object: Map<String, Value>) -> Result<Self, DecodeError> {
        if let Some(http) = object.remove("httpError") {
            alone(&object, "httpError")?;
            let error = http_error(http).map_err(|e| e.within_key("httpError"))?;
            return Ok(Self::without_turn(Vec::new(), Step::Http(error)));
        }
        if let Some(alternatives) = object.remove("byRequest") {
            alone(&object, "byRequest")?;
            let alternatives = by_request(alternatives).map_err(|e| e.within_key("byRequest"))?;
            return Ok(Self::without_turn(alternatives, Step::Model));
        }
        let Some(turn) = object.remove("turn") else {
            return ScriptedTurn::from_value(Value::Object(object)).map(Self::plain);
        };
        let turn = ScriptedTurn::from_value(turn).map_err(|e| e.within_key("turn"))?;
        let step = if let Some(n) = object.remove("cutAfterEvents") {
            Step::Cut {
                after_events: count(n).map_err(|e| e.within_key("cutAfterEvents"))?,
            }
        } else if let Some(error) = object.remove("streamError") {
            let error = stream_error(error).map_err(|e| e.within_key("streamError"))?;
            let after = object
                .remove("afterEvents")
                .ok_or_else(|| DecodeError::new("missing field \"afterEvents\""))?;
            Step::StreamError {
                after_events: count(after).map_err(|e| e.within_key("afterEvents"))?,
                error,
            }
        } else {
            return Err(DecodeError::new(
                "a wrapped turn needs \"cutAfterEvents\" or \"streamError\" with \"afterEvents\"",
            ));
        };
        if let Some(key) = object.keys().next() {
            return Err(DecodeError::new("unknown field in a wrapped turn").within_key(key));
        }
        Ok(Self {
            turn: Some(turn),
            alternatives: Vec::new(),
            step,
            manner: Manner::default(),
        })
    }

    fn without_turn(alternatives: Vec<Alternative>, step: Step) -> Self {
        Self {
            turn: None,
            alternatives,
            step,
            manner: Manner::default(),
        }
    }

    fn plain(turn: ScriptedTurn) -> Self {
        Self {
            turn: Some(turn),
            alternatives: Vec::new(),
            step: Step::Model,
            manner: Manner::default(),
        }
    }

    /// What the model plays for this element: its turn, a function of the
    /// request picking one of its alternatives, or nothing (an HTTP
    /// error).
    pub fn model_step(&self) -> Option<ScriptStep> {
        // The turns copied, not the server's step, which is dropped.
        let turns = Self {
            turn: self.turn.clone(),
            alternatives: self.alternatives.clone(),
            step: Step::Model,
            manner: Manner::default(),
        };
        turns.into_parts(ScriptStep::from).0
    }

    /// The model's step (as [`model_step`](Self::model_step), its turn
    /// made a step by `step`) and the server's, taken apart without
    /// copying the turns.
    pub(crate) fn into_parts(
        self,
        step: impl FnOnce(ScriptedTurn) -> ScriptStep,
    ) -> (Option<ScriptStep>, Step) {
        let model = if self.alternatives.is_empty() {
            self.turn.map(step)
        } else {
            Some(by_request_step(self.alternatives))
        };
        (model, self.step)
    }
}

/// The step of a `byRequest` element: the first alternative whose text
/// occurs in the request's last message.
fn by_request_step(alternatives: Vec<Alternative>) -> ScriptStep {
    ScriptStep::reply(move |context| {
        let text = last_text(context);
        alternatives
            .iter()
            .find(|a| {
                a.if_contains
                    .as_ref()
                    .is_none_or(|t| text.contains(t.as_str()))
            })
            .map_or_else(
                || ScriptedTurn::failure(ErrorReason::Error, NO_MATCH_MESSAGE),
                |a| a.turn.clone(),
            )
    })
}

/// The text of the context's last message: a user's text blocks, a tool
/// result's text, an assistant's text.
fn last_text(context: &Context) -> String {
    let texts = |blocks: &[ContentBlock]| -> String {
        blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect()
    };
    match context.messages.last() {
        Some(Message::User(user)) => match &user.content {
            UserContent::Text(text) => text.clone(),
            UserContent::Blocks(blocks) => texts(blocks),
        },
        Some(Message::ToolResult(result)) => texts(&result.content),
        Some(Message::Assistant(message)) => texts(&message.content),
        _ => String::new(),
    }
}

fn by_request(value: Value) -> Result<Vec<Alternative>, DecodeError> {
    let Value::Array(items) = value else {
        return Err(DecodeError::new(
            "expected an array of {\"ifContains\"?, \"turn\"}",
        ));
    };
    if items.is_empty() {
        return Err(DecodeError::new("expected at least one alternative"));
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let Value::Object(mut object) = item else {
                return Err(
                    DecodeError::new("expected an object {\"ifContains\"?, \"turn\"}")
                        .within_index(i),
                );
            };
            let if_contains = text(&object, "ifContains").map_err(|e| e.within_index(i))?;
            let turn = object
                .remove("turn")
                .ok_or_else(|| DecodeError::new("missing field \"turn\"").within_index(i))?;
            let turn =
                ScriptedTurn::from_value(turn).map_err(|e| e.within_key("turn").within_index(i))?;
            object.remove("ifContains");
            if let Some(key) = object.keys().next() {
                return Err(DecodeError::new("unknown field in an alternative")
                    .within_key(key)
                    .within_index(i));
            }
            Ok(Alternative { if_contains, turn })
        })
        .collect()
}

/// Fails on any field left in `object` beside the one named `beside`.
fn alone(object: &Map<String, Value>, beside: &str) -> Result<(), DecodeError> {
    match object.keys().next() {
        Some(key) => {
            Err(DecodeError::new(format!("unknown field beside {beside}")).within_key(key))
        }
        None => Ok(()),
    }
}

fn text(object: &Map<String, Value>, key: &str) -> Result<Option<String>, DecodeError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => {
            Err(DecodeError::new(format!("expected a string, found {other}")).within_key(key))
        }
    }
}

fn stream_error(value: Value) -> Result<ApiError, DecodeError> {
    let Value::Object(object) = value else {
        return Err(DecodeError::new(
            "expected an object {\"message\", \"type\"?}",
        ));
    };
    let message =
        text(&object, "message")?.ok_or_else(|| DecodeError::new("missing field \"message\""))?;
    let mut error = ApiError::new(500, message);
    error.error_type = text(&object, "type")?;
    Ok(error)
}

fn http_error(value: Value) -> Result<ApiError, DecodeError> {
    let Value::Object(object) = value else {
        return Err(DecodeError::new(
            "expected an object {\"status\", \"message\", ...}",
        ));
    };
    let status = object
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (400..=599).contains(s))
        .ok_or_else(|| {
            DecodeError::new("expected an HTTP error status from 400 to 599").within_key("status")
        })?;
    let message = text(&object, "message")?.unwrap_or_default();
    let mut error = ApiError::new(status, message);
    error.error_type = text(&object, "type")?;
    error.code = text(&object, "code")?;
    error.param = text(&object, "param")?;
    error.retry_after = match object.get("retryAfter") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::String(s)) if !s.contains(['\r', '\n']) => Some(s.clone()),
        Some(other) => {
            return Err(
                DecodeError::new(format!("expected a string or a number, found {other}"))
                    .within_key("retryAfter"),
            )
        }
    };
    error.body = object.get("body").cloned();
    if let Some(headers) = object.get("headers") {
        error.headers = extra_headers(headers).map_err(|e| e.within_key("headers"))?;
    }
    Ok(error)
}

/// An `httpError`'s `"headers"`: an object of header names to strings (or
/// numbers), each a valid HTTP header, none of the server's own framing
/// ([`reserved`](crate::error_headers::reserved)).
fn extra_headers(value: &Value) -> Result<Vec<(String, String)>, DecodeError> {
    let Value::Object(headers) = value else {
        return Err(DecodeError::new(
            "expected an object of header names to values",
        ));
    };
    let mut out = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        let named = |message: String| DecodeError::new(message).within_key(name);
        let lower = name.to_ascii_lowercase();
        if hyper::header::HeaderName::from_bytes(lower.as_bytes()).is_err() {
            return Err(named(format!("{name:?} is not an HTTP header name")));
        }
        if crate::error_headers::reserved(&lower) {
            return Err(named(format!("{name} is the server's to set")));
        }
        let value = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            other => {
                return Err(named(format!(
                    "expected a string or a number, found {other}"
                )))
            }
        };
        if hyper::header::HeaderValue::from_str(&value).is_err() {
            return Err(named(format!("{value:?} is not an HTTP header value")));
        }
        out.push((lower, value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MESSAGE: &str = r#"{"role": "assistant", "content": [{"type": "text", "text": "hi"}],
        "api": "scripted", "provider": "scripted", "model": "scripted",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": 0}"#;

    fn message() -> Value {
        serde_json::from_str(MESSAGE).unwrap()
    }

    #[test]
    fn every_form_parses() {
        assert_eq!(ServeTurn::from_value(message()).unwrap().step, Step::Model);
        let failure = json!({"stopReason": "error", "errorMessage": "boom"});
        assert_eq!(ServeTurn::from_value(failure).unwrap().step, Step::Model);
        let cut = ServeTurn::from_value(json!({"turn": message(), "cutAfterEvents": 2})).unwrap();
        assert_eq!(cut.step, Step::Cut { after_events: 2 });
        let error = ServeTurn::from_value(json!({"turn": message(), "afterEvents": 1,
            "streamError": {"message": "Overloaded", "type": "overloaded_error"}}))
        .unwrap();
        let Step::StreamError {
            after_events: 1,
            error,
        } = error.step
        else {
            panic!()
        };
        assert_eq!(error.error_type.as_deref(), Some("overloaded_error"));
    }

    #[test]
    fn by_request_picks_by_the_last_message() {
        let element = ServeTurn::from_value(json!({"byRequest": [
            {"ifContains": "weather", "turn": message()},
            {"turn": {"stopReason": "error", "errorMessage": "fallback"}},
        ]}))
        .unwrap();
        assert_eq!(
            (element.turn.is_none(), element.alternatives.len()),
            (true, 2)
        );
        assert_eq!(
            element.alternatives[0].if_contains.as_deref(),
            Some("weather")
        );
        assert!(element.alternatives[1].if_contains.is_none());
        assert_eq!(element.step, Step::Model);
        let mut context =
            Context::from_messages([agentstream::message::user("the weather?").into()]);
        assert_eq!(last_text(&context), "the weather?");
        context
            .messages
            .push(agentstream::message::user("other").into());
        assert_eq!(last_text(&context), "other");
        assert!(element.model_step().is_some());
    }

    #[test]
    fn bad_elements_name_their_path() {
        for (value, path) in [
            (json!({"httpError": {"status": 200}}), "$.httpError.status"),
            (json!({"httpError": {"status": 500}, "x": 1}), "$.x"),
            (
                json!({"turn": message(), "cutAfterEvents": -1}),
                "$.cutAfterEvents",
            ),
            (
                json!({"turn": {"role": "user"}, "cutAfterEvents": 1}),
                "$.turn.role",
            ),
            (
                json!({"turn": message(), "streamError": {}}),
                "$.streamError",
            ),
            (
                json!({"httpError": {"status": 503, "retryAfter": "1\r\nX: y"}}),
                "$.httpError.retryAfter",
            ),
            (
                json!({"httpError": {"status": 429, "headers": {"x-a": "1\r\nX: y"}}}),
                "$.httpError.headers[\"x-a\"]",
            ),
            (
                json!({"httpError": {"status": 429, "headers": {"bad name": "1"}}}),
                "$.httpError.headers[\"bad name\"]",
            ),
            (
                json!({"httpError": {"status": 429, "headers": {"Content-Length": "1"}}}),
                "$.httpError.headers[\"Content-Length\"]",
            ),
            (
                json!({"httpError": {"status": 429, "headers": {"x-a": true}}}),
                "$.httpError.headers[\"x-a\"]",
            ),
            (
                json!({"httpError": {"status": 429, "headers": ["x-a"]}}),
                "$.httpError.headers",
            ),
            (json!({"byRequest": []}), "$.byRequest"),
            (
                json!({"byRequest": [{"ifContains": 1, "turn": message()}]}),
                "$.byRequest[0].ifContains",
            ),
            (
                json!({"byRequest": [{"ifContains": "x"}]}),
                "$.byRequest[0]",
            ),
            (
                json!({"byRequest": [{"turn": {"role": "user"}}]}),
                "$.byRequest[0].turn.role",
            ),
            (
                json!({"byRequest": [{"turn": message(), "if": "x"}]}),
                "$.byRequest[0].if",
            ),
            (
                json!({"byRequest": [{"turn": message()}], "turn": 1}),
                "$.turn",
            ),
        ] {
            let error = ServeTurn::from_value(value.clone()).unwrap_err();
            assert_eq!(error.path(), path, "{value}: {error}");
        }
    }
}
