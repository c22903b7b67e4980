//! Thinking levels (pi-ai's `ThinkingLevel` with Pi's `off`) and what a
//! model says about them ([`ThinkingModel`]): which levels it supports and
//! how its provider names them. The request builders of the wire crate map
//! a call's [`StreamOptions::thinking`](super::StreamOptions::thinking)
//! onto each API as pi-ai's `streamSimple` does.

use serde::{Deserialize, Serialize};

/// How hard a reasoning model should think, from `Off` to `Xhigh`. Its
/// JSON is Pi's: `"off"`, `"minimal"`, `"low"`, `"medium"`, `"high"`,
/// `"xhigh"`.
///
/// ```
/// use agentstream::model::ThinkingLevel;
/// assert_eq!(ThinkingLevel::parse("xhigh"), Some(ThinkingLevel::Xhigh));
/// assert_eq!(serde_json::to_string(&ThinkingLevel::Medium).unwrap(), "\"medium\"");
/// assert!(ThinkingLevel::Low < ThinkingLevel::High);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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

    /// Pi's name for the level (`"off"`, …, `"xhigh"`).
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

    /// The level named `name` (Pi's spelling), if any.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// pi-ai's default thinking budget in tokens for the level
    /// (`adjustMaxTokensForThinking`: minimal 1024, low 2048, medium 8192,
    /// high 16384; `Xhigh` counts as `High`, `Off` has none).
    pub const fn default_budget(self) -> Option<u64> {
        match self {
            Self::Off => None,
            Self::Minimal => Some(1024),
            Self::Low => Some(2048),
            Self::Medium => Some(8192),
            Self::High | Self::Xhigh => Some(16384),
        }
    }
}

/// A model's thinking-level map (pi-ai's `thinkingLevelMap`): per level,
/// the provider's name for it, or `None` where the level is unsupported.
/// Levels it does not list keep their own name.
pub type ThinkingLevelMap = &'static [(ThinkingLevel, Option<&'static str>)];

/// What a model says about reasoning, as a catalogue describes it: whether
/// it reasons, its thinking-level map, and its output token limit (the cap
/// of pi-ai's `adjustMaxTokensForThinking`). A call without one is read as
/// [`ThinkingModel::default`]: a reasoning model with no map and no limit.
///
/// ```
/// use agentstream::model::{ThinkingLevel, ThinkingModel};
///
/// let plain = ThinkingModel::new(false, None, None);
/// assert_eq!(plain.clamp(ThinkingLevel::High), ThinkingLevel::Off);
/// static MAP: [(ThinkingLevel, Option<&str>); 2] =
///     [(ThinkingLevel::Minimal, None), (ThinkingLevel::Xhigh, Some("max"))];
/// let rich = ThinkingModel::new(true, Some(&MAP), None);
/// assert_eq!(rich.clamp(ThinkingLevel::Minimal), ThinkingLevel::Low);
/// assert_eq!(rich.effort(ThinkingLevel::Xhigh), Some("max"));
/// assert_eq!(ThinkingModel::default().clamp(ThinkingLevel::Xhigh), ThinkingLevel::High);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThinkingModel {
    /// Whether the model reasons at all (pi-ai's `reasoning`).
    pub reasoning: bool,
    /// The thinking-level map, if the model has one.
    pub level_map: Option<ThinkingLevelMap>,
    /// The model's output token limit (pi-ai's `maxTokens`), if known.
    pub max_tokens: Option<u64>,
}

impl Default for ThinkingModel {
    fn default() -> Self {
        Self {
            reasoning: true,
            level_map: None,
            max_tokens: None,
        }
    }
}

impl ThinkingModel {
    /// A description with these three facts.
    pub const fn new(
        reasoning: bool,
        level_map: Option<ThinkingLevelMap>,
        max_tokens: Option<u64>,
    ) -> Self {
        Self {
            reasoning,
            level_map,
            max_tokens,
        }
    }

    /// The map's entry for `level`: `None` when the map does not list it,
    /// `Some(None)` when it marks it unsupported, `Some(Some(name))` when it
    /// renames it.
    pub fn mapped(&self, level: ThinkingLevel) -> Option<Option<&'static str>> {
        self.level_map?
            .iter()
            .find(|(l, _)| *l == level)
            .map(|(_, name)| *name)
    }

    /// The provider's name for `level`: the map's, else Pi's.
    pub fn effort(&self, level: ThinkingLevel) -> Option<&'static str> {
        match self.mapped(level) {
            Some(name) => name,
            None => Some(level.as_str()),
        }
    }

    /// Whether the model supports `level`, as pi-ai's
    /// `getSupportedThinkingLevels` decides: a model that does not reason
    /// supports only `Off`; otherwise every level its map does not mark
    /// unsupported, `Xhigh` only where the map gives it a name.
    pub fn supports(&self, level: ThinkingLevel) -> bool {
        if !self.reasoning {
            return level == ThinkingLevel::Off;
        }
        match self.mapped(level) {
            Some(None) => false,
            Some(Some(_)) => true,
            None => level != ThinkingLevel::Xhigh,
        }
    }

    /// The supported level nearest `level` (pi-ai's `clampThinkingLevel`):
    /// the level itself if supported, else the next supported one above
    /// it, else the nearest below, else `Off`.
    pub fn clamp(&self, level: ThinkingLevel) -> ThinkingLevel {
        let all = ThinkingLevel::ALL;
        let at = all.iter().position(|l| *l == level).unwrap_or(0);
        all[at..]
            .iter()
            .chain(all[..at].iter().rev())
            .copied()
            .find(|l| self.supports(*l))
            .unwrap_or(ThinkingLevel::Off)
    }

    /// pi-ai's `adjustMaxTokensForThinking`: the output limit raised by
    /// the level's [default budget](ThinkingLevel::default_budget) (capped
    /// at the model's limit when known), and the budget, lowered to leave
    /// 1024 output tokens when the cap leaves no room. `None` for `Off`.
    ///
    /// ```
    /// use agentstream::model::{ThinkingLevel, ThinkingModel};
    /// let model = ThinkingModel::new(true, None, Some(64000));
    /// assert_eq!(model.budget_max_tokens(32000, ThinkingLevel::High), Some((48384, 16384)));
    /// let small = ThinkingModel::new(true, None, Some(8192));
    /// assert_eq!(small.budget_max_tokens(4096, ThinkingLevel::Medium), Some((8192, 7168)));
    /// ```
    pub fn budget_max_tokens(&self, max_tokens: u64, level: ThinkingLevel) -> Option<(u64, u64)> {
        let mut budget = level.default_budget()?;
        let raised = max_tokens.saturating_add(budget);
        let max = self.max_tokens.map_or(raised, |cap| raised.min(cap));
        if max <= budget {
            budget = max.saturating_sub(1024);
        }
        Some((max, budget))
    }
}
