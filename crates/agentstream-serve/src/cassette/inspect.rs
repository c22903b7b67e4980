//! A cassette directory looked at from outside a server: what each
//! cassette is ([`list`], for `agentstream cassette ls`) and which one a
//! request comes closest to, with every difference ([`closest`], for
//! `agentstream cassette diff`).

use std::path::Path;

use serde_json::{json, Value};

use agentstream_wire::Api;

use super::diff::{differences, first_difference, short};
use super::{each_cassette, parse_head, CassetteDir, CassetteError, KeepRequest, Skipped};

/// The longest first user text a [`Listing`] keeps, in characters.
const FIRST_TEXT_CHARS: usize = 60;

/// One cassette as `agentstream cassette ls` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listing {
    /// Its directory's name (`0000`).
    pub name: String,
    /// The protocol of the request.
    pub api: Api,
    /// The model the request named (`request.json`'s `model`).
    pub model: Option<String>,
    /// The response's status.
    pub status: u16,
    /// Whether the call streamed (`None`: `request.json` does not say).
    pub stream: Option<bool>,
    /// Whether the exchange was cut.
    pub cut: bool,
    /// The text of the conversation's first user message, cut at 60
    /// characters (with `…`).
    pub first_user_text: Option<String>,
}

impl Listing {
    /// The listing as JSON: `{"name", "api", "model", "status", "stream",
    /// "cut", "firstUserText"}`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({"name": self.name, "api": self.api.pi_api(), "model": self.model,
            "status": self.status, "stream": self.stream, "cut": self.cut,
            "firstUserText": self.first_user_text})
    }
}

/// The text of the first user message of a context as JSON (its content
/// when a string, else its text blocks joined), cut short.
fn first_user_text(context: &Value) -> Option<String> {
    let message = context
        .get("messages")?
        .as_array()?
        .iter()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    let text = match message.get("content")? {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => return None,
    };
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(match text.char_indices().nth(FIRST_TEXT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    })
}

/// A cassette's `request.json` and `response.json`, parsed.
struct Head {
    name: String,
    api: Api,
    request: Value,
    context: Value,
    status: u16,
    cut: bool,
}

fn heads(dir: &Path) -> Result<(Vec<Head>, Vec<Skipped>), CassetteError> {
    let dir = CassetteDir::open(dir)?;
    each_cassette(&dir, |name| {
        let request = dir.read(&format!("{name}/request.json"))?;
        let response = dir.read(&format!("{name}/response.json"))?;
        let head = parse_head(
            &dir.path.join(name),
            &request,
            &response,
            KeepRequest::Whole,
        )?;
        Ok(Head {
            name: name.to_owned(),
            api: head.api,
            context: serde_json::to_value(&head.context).unwrap_or(Value::Null),
            request: head.request,
            status: head.status,
            cut: head.cut,
        })
    })
}

/// Every cassette in `dir`, in recording order, and the entries that are
/// not cassettes.
///
/// # Errors
/// The directory cannot be read, or a cassette's `request.json` or
/// `response.json` cannot (the error names the file).
pub fn list(dir: &Path) -> Result<(Vec<Listing>, Vec<Skipped>), CassetteError> {
    let (heads, skipped) = heads(dir)?;
    let listings = heads
        .into_iter()
        .map(|head| Listing {
            first_user_text: first_user_text(&head.context),
            model: head
                .request
                .get("model")
                .and_then(Value::as_str)
                .map(str::to_owned),
            stream: head.request.get("stream").and_then(Value::as_bool),
            name: head.name,
            api: head.api,
            status: head.status,
            cut: head.cut,
        })
        .collect();
    Ok((listings, skipped))
}

/// The protocol of a request body as a client sends it, from its shape:
/// `contents` is Gemini; `input` is Responses; `messages` is Anthropic
/// when the body has `max_tokens` and a top-level `system` or no
/// `system`/`developer`/`tool` message, else Chat Completions. `None`
/// for anything else.
#[must_use]
pub fn detect_api(body: &Value) -> Option<Api> {
    let body = body.as_object()?;
    if body.contains_key("contents") {
        return Some(Api::Gemini);
    }
    if body.contains_key("input") {
        return Some(Api::Responses);
    }
    let messages = body.get("messages")?.as_array()?;
    let openai_roles = messages.iter().any(|m| {
        matches!(
            m.get("role").and_then(Value::as_str),
            Some("system" | "developer" | "tool")
        )
    });
    let anthropic = body.contains_key("max_tokens")
        && !body.contains_key("max_completion_tokens")
        && (body.contains_key("system") || !openai_roles);
    Some(if anthropic {
        Api::Anthropic
    } else {
        Api::OpenAi
    })
}

/// One difference between a cassette's context and a request's.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DiffLine {
    /// Where, as a JSON path into the context (`$.messages[1].content`).
    pub path: String,
    /// The cassette's value there (JSON, cut at 120 characters), or
    /// `nothing`.
    pub recorded: String,
    /// The request's value there, the same way.
    pub requested: String,
}

/// The cassette closest to a request, and how they differ.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Closest {
    /// The cassette's directory name.
    pub name: String,
    /// Every difference between its context and the request's, in order
    /// (messages first); empty when the request matches it exactly.
    pub differences: Vec<DiffLine>,
}

/// The cassette in `dir` closest to the request `body` of `api` (decoded
/// into Pi's context as replay decodes it): among the cassettes of the
/// same protocol (of any, when there is none), the one whose context
/// shares the most with the request's (as a replay's mismatch names
/// it); `None` when `dir` holds no cassette.
///
/// # Errors
/// The directory or a cassette cannot be read, or the body is not a
/// request of `api`, said in the message.
pub fn closest(dir: &Path, api: Api, body: &[u8]) -> Result<Option<Closest>, String> {
    let decoded = agentstream_wire::server::decode_body(api, Some(("request", false)), body)
        .map_err(|e| {
            format!(
                "the request is not a {} request: {}",
                api.pi_api(),
                e.message
            )
        })?;
    let wanted = serde_json::to_value(&decoded.context).unwrap_or(Value::Null);
    let (heads, _) = heads(dir).map_err(|e| e.report())?;
    let same: Vec<&Head> = heads.iter().filter(|h| h.api == api).collect();
    let candidates = if same.is_empty() {
        heads.iter().collect()
    } else {
        same
    };
    let best = candidates
        .iter()
        .enumerate()
        .max_by_key(|(k, head)| {
            let common = first_difference(&head.context, &wanted, "$".into())
                .map_or(usize::MAX, |d| d.common);
            (common, usize::MAX - k)
        })
        .map(|(_, head)| *head);
    Ok(best.map(|head| {
        let mut found = Vec::new();
        differences(&head.context, &wanted, "$".into(), &mut found);
        Closest {
            name: head.name.clone(),
            differences: found
                .into_iter()
                .map(|d| DiffLine {
                    path: d.path,
                    recorded: short(d.recorded.as_ref()),
                    requested: short(d.requested.as_ref()),
                })
                .collect(),
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_is_told_by_the_body_shape() {
        let cases = [
            (json!({"contents": []}), Some(Api::Gemini)),
            (json!({"model": "m", "input": "hi"}), Some(Api::Responses)),
            (
                json!({"model": "m", "max_tokens": 9, "messages": []}),
                Some(Api::Anthropic),
            ),
            (
                json!({"model": "m", "max_tokens": 9, "messages": [{"role": "system", "content": "s"}]}),
                Some(Api::OpenAi),
            ),
            (json!({"model": "m", "messages": []}), Some(Api::OpenAi)),
            (json!({"model": "m"}), None),
            (json!([1]), None),
        ];
        for (body, api) in cases {
            assert_eq!(detect_api(&body), api, "{body}");
        }
    }

    #[test]
    fn the_first_user_text_is_cut_short() {
        let context =
            json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "a\nb"}]}]});
        assert_eq!(first_user_text(&context).as_deref(), Some("a b"));
        let long = "x".repeat(100);
        let context = json!({"messages": [{"role": "user", "content": long}]});
        assert_eq!(
            first_user_text(&context).unwrap().chars().count(),
            FIRST_TEXT_CHARS + 1
        );
        assert_eq!(first_user_text(&json!({"messages": []})), None);
    }
}
