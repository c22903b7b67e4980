//! Which thinking levels a catalogue model supports: the core's
//! [`ThinkingModel`] rules over the model's reasoning flag and level map.

pub use agentstream::model::ThinkingLevel;
use agentstream::model::ThinkingModel;

use crate::Model;

impl Model {
    /// What the model says about reasoning, for a call's
    /// [`StreamOptions::thinking_model`](agentstream::model::StreamOptions::thinking_model):
    /// its reasoning flag, level map and output limit.
    pub fn thinking_model(&self) -> ThinkingModel {
        ThinkingModel::new(
            self.reasoning,
            self.thinking_level_map,
            (self.max_tokens > 0).then_some(self.max_tokens),
        )
    }
}

/// The levels `model` supports, from `Off` up.
///
/// ```
/// use agentstream_models::{get_model, supported_thinking_levels, ThinkingLevel};
///
/// let gpt4o = get_model("openai", "gpt-4o").unwrap();
/// assert_eq!(supported_thinking_levels(gpt4o).collect::<Vec<_>>(), [ThinkingLevel::Off]);
/// ```
pub fn supported_thinking_levels(model: &Model) -> impl Iterator<Item = ThinkingLevel> + '_ {
    ThinkingLevel::ALL
        .into_iter()
        .filter(move |l| model.thinking_model().supports(*l))
}

/// The supported level nearest `level` (pi-ai's `clampThinkingLevel`): the
/// level itself if supported, else the next supported one above it, else
/// the nearest below, else `Off`.
///
/// ```
/// use agentstream_models::{clamp_thinking_level, get_model, ThinkingLevel};
///
/// let gpt4o = get_model("openai", "gpt-4o").unwrap();
/// assert_eq!(clamp_thinking_level(gpt4o, ThinkingLevel::High), ThinkingLevel::Off);
/// ```
pub fn clamp_thinking_level(model: &Model, level: ThinkingLevel) -> ThinkingLevel {
    model.thinking_model().clamp(level)
}
