//! A call's [`ThinkingLevel`] on Chat
//! Completions, as pi-ai's `streamSimpleOpenAICompletions` sends it: the
//! level is clamped to the model's supported levels (`Off` means no
//! effort), then written in the endpoint's [`ThinkingFormat`], only for a
//! model that reasons:
//!
//! | format | with an effort `E` | without |
//! |---|---|---|
//! | `openai` | `reasoning_effort: E` (with [`Compat::reasoning_effort`]) | `reasoning_effort` = the map's `off` name, if it has one |
//! | `openrouter` | `reasoning: {effort: E}` | `reasoning: {effort: "none"}` (the map's `off` name; nothing when the map marks `off` unsupported) |
//! | `deepseek` | `thinking: {type: "enabled"}`, `reasoning_effort: E` | `thinking: {type: "disabled"}` |
//! | `zai`, `qwen` | `enable_thinking: true` | `enable_thinking: false` |
//! | `qwen-chat-template` | `chat_template_kwargs: {enable_thinking: true, preserve_thinking: true}` | the same with `false` |
//!
//! `E` is the model's level map's name for the level, else Pi's. This
//! applies when the call sets a level, or when it describes its model
//! ([`thinking_model`](agentstream::model::StreamOptions::thinking_model))
//! and sets no older [`reasoning_effort`](agentstream::model::StreamOptions::reasoning_effort)
//! (pi-ai's `stream` sends the "without" column then).

use alloc::string::String;

use agentstream::model::{StreamOptions, ThinkingLevel};
use serde_json::{json, Map, Value};

use super::request::Compat;

/// How a Chat Completions endpoint takes reasoning settings (pi-ai's
/// `thinkingFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ThinkingFormat {
    /// OpenAI's `reasoning_effort`.
    #[default]
    OpenAi,
    /// OpenRouter's `reasoning: {effort}`.
    OpenRouter,
    /// DeepSeek's `thinking: {type}` with `reasoning_effort`.
    DeepSeek,
    /// Z.ai's `enable_thinking`.
    Zai,
    /// Qwen's `enable_thinking`.
    Qwen,
    /// `chat_template_kwargs: {enable_thinking, preserve_thinking}`.
    QwenChatTemplate,
}

impl ThinkingFormat {
    /// The format pi-ai names `name` (`openai`, `openrouter`, `deepseek`,
    /// `zai`, `qwen`, `qwen-chat-template`), if any.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "openai" => Self::OpenAi,
            "openrouter" => Self::OpenRouter,
            "deepseek" => Self::DeepSeek,
            "zai" => Self::Zai,
            "qwen" => Self::Qwen,
            "qwen-chat-template" => Self::QwenChatTemplate,
            _ => return None,
        })
    }

    /// The format pi-ai detects for a `provider` and `base_url`
    /// (`detectCompat`): DeepSeek, Z.ai, OpenRouter, else OpenAI's.
    pub fn detect(provider: &str, base_url: &str) -> Self {
        if provider == "deepseek" || base_url.contains("deepseek.com") {
            Self::DeepSeek
        } else if provider == "zai" || base_url.contains("api.z.ai") {
            Self::Zai
        } else if provider == "openrouter" || base_url.contains("openrouter.ai") {
            Self::OpenRouter
        } else {
            Self::OpenAi
        }
    }
}

/// Writes the call's thinking into `body`; `false` when the call is not
/// one this mapping covers (the older `reasoning_effort` applies).
pub(super) fn apply(
    compat: Compat,
    options: &StreamOptions,
    body: &mut Map<String, Value>,
) -> bool {
    let covered = options.thinking.is_some()
        || (options.thinking_model.is_some() && options.reasoning_effort.is_none());
    if !covered {
        return false;
    }
    let traits = options.thinking_model.unwrap_or_default();
    if !traits.reasoning {
        return true;
    }
    let effort = options
        .clamped_thinking()
        .filter(|l| *l != ThinkingLevel::Off)
        .map(|l| traits.effort(l).unwrap_or(l.as_str()));
    let on = effort.is_some();
    match compat.thinking_format {
        ThinkingFormat::Zai | ThinkingFormat::Qwen => {
            body.insert("enable_thinking".into(), Value::Bool(on));
        }
        ThinkingFormat::QwenChatTemplate => {
            body.insert(
                "chat_template_kwargs".into(),
                json!({"enable_thinking": on, "preserve_thinking": true}),
            );
        }
        ThinkingFormat::DeepSeek => {
            let kind = if on { "enabled" } else { "disabled" };
            body.insert("thinking".into(), json!({ "type": kind }));
            if let Some(effort) = effort {
                body.insert("reasoning_effort".into(), Value::from(effort));
            }
        }
        ThinkingFormat::OpenRouter => {
            let effort = match (effort, traits.mapped(ThinkingLevel::Off)) {
                (Some(effort), _) => Some(effort),
                (None, Some(None)) => None,
                (None, Some(Some(off))) => Some(off),
                (None, None) => Some("none"),
            };
            if let Some(effort) = effort {
                body.insert("reasoning".into(), json!({ "effort": effort }));
            }
        }
        ThinkingFormat::OpenAi => {
            let effort = effort.or_else(|| traits.mapped(ThinkingLevel::Off).flatten());
            if let (true, Some(effort)) = (compat.reasoning_effort, effort) {
                body.insert("reasoning_effort".into(), Value::from(effort));
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream::model::ThinkingModel;

    fn body(format: ThinkingFormat, options: &StreamOptions) -> Value {
        let mut body = Map::new();
        let compat = Compat {
            thinking_format: format,
            ..Compat::default()
        };
        apply(compat, options, &mut body);
        Value::Object(body)
    }

    #[test]
    fn each_format_spells_a_level_and_off() {
        let high = StreamOptions::default().with_thinking(ThinkingLevel::High);
        let off = StreamOptions::default().with_thinking(ThinkingLevel::Off);
        let cases = [
            (
                ThinkingFormat::OpenAi,
                json!({"reasoning_effort": "high"}),
                json!({}),
            ),
            (
                ThinkingFormat::OpenRouter,
                json!({"reasoning": {"effort": "high"}}),
                json!({"reasoning": {"effort": "none"}}),
            ),
            (
                ThinkingFormat::DeepSeek,
                json!({"thinking": {"type": "enabled"}, "reasoning_effort": "high"}),
                json!({"thinking": {"type": "disabled"}}),
            ),
            (
                ThinkingFormat::Zai,
                json!({"enable_thinking": true}),
                json!({"enable_thinking": false}),
            ),
            (
                ThinkingFormat::Qwen,
                json!({"enable_thinking": true}),
                json!({"enable_thinking": false}),
            ),
            (
                ThinkingFormat::QwenChatTemplate,
                json!({"chat_template_kwargs": {"enable_thinking": true, "preserve_thinking": true}}),
                json!({"chat_template_kwargs": {"enable_thinking": false, "preserve_thinking": true}}),
            ),
        ];
        for (format, on, none) in cases {
            assert_eq!(body(format, &high), on, "{format:?}");
            assert_eq!(body(format, &off), none, "{format:?}");
        }
    }

    #[test]
    fn xhigh_is_clamped_and_plain_models_get_nothing() {
        let xhigh = StreamOptions::default().with_thinking(ThinkingLevel::Xhigh);
        assert_eq!(
            body(ThinkingFormat::OpenAi, &xhigh),
            json!({"reasoning_effort": "high"})
        );
        let plain = xhigh.with_thinking_model(ThinkingModel::new(false, None, None));
        assert_eq!(body(ThinkingFormat::DeepSeek, &plain), json!({}));
        assert_eq!(
            ThinkingFormat::parse("qwen-chat-template"),
            Some(ThinkingFormat::QwenChatTemplate)
        );
        assert_eq!(
            ThinkingFormat::detect("x", "https://api.deepseek.com"),
            ThinkingFormat::DeepSeek
        );
    }
}
