//! Thinking levels (pi-ai's `ThinkingLevel` with `off`) and which of them a
//! model supports.

use crate::Model;

/// How hard a reasoning model should think, from `Off` to `Xhigh`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ThinkingLevel {
    /// No reasoning.
    Off,
    /// The least reasoning.
    Minimal,
    /// Little reasoning.
    Low,
    /// Medium reasoning.
    Medium,
    /// Much reasoning.
    High,
    /// The most reasoning; only where the model's level map lists it.
    Xhigh,
}

impl ThinkingLevel {
    /// Every level, from `Off` to `Xhigh`.
    pub const ALL: [Self; 6] = [
        Self::Off,
        Self::Minimal,
        Self::Low,
        Self::Medium,
        Self::High,
        Self::Xhigh,
    ];

    /// pi-ai's name for the level (`"off"`, …, `"xhigh"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
        }
    }

    /// The level named `name` (pi-ai's spelling), if any.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

/// Whether `model` supports `level`, as pi-ai's
/// `getSupportedThinkingLevels` decides: a model that does not reason
/// supports only `Off`; otherwise every level its map does not mark
/// unsupported, `Xhigh` only where the map gives it a value.
fn supports(model: &Model, level: ThinkingLevel) -> bool {
    if !model.reasoning {
        return level == ThinkingLevel::Off;
    }
    match model.thinking_level_value(level) {
        Some(None) => false,
        Some(Some(_)) => true,
        None => level != ThinkingLevel::Xhigh,
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
        .filter(move |l| supports(model, *l))
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
    let all = ThinkingLevel::ALL;
    let at = all.iter().position(|l| *l == level).unwrap_or(0);
    all[at..]
        .iter()
        .chain(all[..at].iter().rev())
        .copied()
        .find(|l| supports(model, *l))
        .unwrap_or(ThinkingLevel::Off)
}
