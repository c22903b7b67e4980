//! A call's [`ThinkingLevel`] on the Messages API, as pi-ai's
//! `streamSimpleAnthropic` sends it:
//!
//! - `Off` on a reasoning model: `thinking: {"type": "disabled"}`.
//! - A level on the adaptive-thinking models (ids naming Opus 4.6 or 4.7,
//!   or Sonnet 4.6): `thinking: {"type": "adaptive", "display":
//!   "summarized"}` and `output_config: {"effort": E}`, `E` the model's
//!   level map's name for the level, else `low` for `minimal` and `low`,
//!   `medium`, or `high`.
//! - A level on the other models: budget thinking, `thinking: {"type":
//!   "enabled", "budget_tokens": B, "display": "summarized"}`, with
//!   `max_tokens` and `B` from
//!   [`ThinkingModel::budget_max_tokens`] (pi-ai's
//!   `adjustMaxTokensForThinking`).
//! - With any level but `Off`, `temperature` is not sent (the API refuses
//!   it with thinking). A model that does not reason gets no `thinking`
//!   field.
//!
//! Without a level, the older [`thinking_budget`](StreamOptions::thinking_budget)
//! / [`reasoning_effort`](StreamOptions::reasoning_effort) options apply
//! (see [`request`](super::request)).

use agentstream::model::{StreamOptions, ThinkingLevel, ThinkingModel};
use serde_json::{json, Value};

/// The beta pi-ai asks for on models without adaptive thinking.
pub const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";

/// Whether `model` thinks adaptively (pi-ai's `supportsAdaptiveThinking`).
pub fn adaptive(model: &str) -> bool {
    [
        "opus-4-6",
        "opus-4.6",
        "opus-4-7",
        "opus-4.7",
        "sonnet-4-6",
        "sonnet-4.6",
    ]
    .iter()
    .any(|family| model.contains(family))
}

/// What a thinking level adds to a body.
pub(super) struct Plan {
    /// The `thinking` field, if any.
    pub thinking: Option<Value>,
    /// `output_config.effort`, if any.
    pub effort: Option<&'static str>,
    /// The `max_tokens` sent.
    pub max_tokens: u64,
    /// Whether `temperature` may be sent.
    pub temperature: bool,
}

/// The plan of the call's level, `None` when the call sets none;
/// `max_tokens` is the limit before any raise.
pub(super) fn plan(model: &str, options: &StreamOptions, max_tokens: u64) -> Option<Plan> {
    let level = options.thinking?;
    let traits = options.thinking_model.unwrap_or_default();
    let mut plan = Plan {
        thinking: None,
        effort: None,
        max_tokens,
        temperature: level == ThinkingLevel::Off,
    };
    if level == ThinkingLevel::Off {
        plan.thinking = traits.reasoning.then(|| json!({"type": "disabled"}));
        return Some(plan);
    }
    if adaptive(model) {
        plan.effort = Some(effort(&traits, level));
        plan.thinking = traits
            .reasoning
            .then(|| json!({"type": "adaptive", "display": "summarized"}));
        return Some(plan);
    }
    let (max, budget) = traits.budget_max_tokens(max_tokens, level)?;
    plan.max_tokens = max;
    let budget = if budget == 0 { 1024 } else { budget };
    plan.thinking = traits
        .reasoning
        .then(|| json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"}));
    Some(plan)
}

/// The adaptive effort of `level` (pi-ai's `mapThinkingLevelToEffort`).
fn effort(traits: &ThinkingModel, level: ThinkingLevel) -> &'static str {
    if let Some(Some(name)) = traits.mapped(level) {
        return name;
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(level: ThinkingLevel) -> StreamOptions {
        StreamOptions::default()
            .with_thinking(level)
            .with_thinking_model(ThinkingModel::new(true, None, Some(64000)))
    }

    #[test]
    fn adaptive_models_send_an_effort_and_keep_max_tokens() {
        let plan = plan("claude-opus-4-7", &options(ThinkingLevel::Minimal), 1024).unwrap();
        assert_eq!(plan.effort, Some("low"));
        assert_eq!(plan.max_tokens, 1024);
        assert_eq!(
            plan.thinking,
            Some(json!({"type": "adaptive", "display": "summarized"}))
        );
        assert!(!plan.temperature);
    }

    #[test]
    fn budget_models_raise_max_tokens() {
        let plan = plan("claude-sonnet-4-5", &options(ThinkingLevel::Medium), 1024).unwrap();
        assert_eq!(plan.max_tokens, 9216);
        assert_eq!(
            plan.thinking,
            Some(json!({"type": "enabled", "budget_tokens": 8192, "display": "summarized"}))
        );
    }

    #[test]
    fn off_disables_thinking_on_reasoning_models_only() {
        let off = plan("claude-sonnet-4-5", &options(ThinkingLevel::Off), 1024).unwrap();
        assert_eq!(off.thinking, Some(json!({"type": "disabled"})));
        assert!(off.temperature);
        let plain = StreamOptions::default()
            .with_thinking(ThinkingLevel::Off)
            .with_thinking_model(ThinkingModel::new(false, None, None));
        assert_eq!(
            plan("claude-3-5-haiku", &plain, 1024).unwrap().thinking,
            None
        );
        assert!(plan("m", &StreamOptions::default(), 1024).is_none());
    }
}
