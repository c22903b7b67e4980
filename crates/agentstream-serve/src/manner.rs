//! How a turn is written, beside what it says: its [timing](crate::timing)
//! and its [quirks](crate::quirks), given on a script element (or a rule's
//! reply) as `"timing"` and `"quirks"` beside the turn's own keys.

use agentstream::message::DecodeError;
use serde_json::{Map, Value};

use crate::quirks::Quirks;
use crate::timing::Timing;

/// A turn's timing and quirks; the default (neither) writes the turn as
/// the encoder does, at once.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Manner {
    pub(crate) timing: Option<Timing>,
    pub(crate) quirks: Quirks,
}

impl Manner {
    /// Takes `"timing"` and `"quirks"` out of a script element.
    ///
    /// # Errors
    /// A [`DecodeError`] naming the bad key.
    pub(crate) fn take(object: &mut Map<String, Value>) -> Result<Self, DecodeError> {
        let timing = object
            .remove("timing")
            .map(|value| Timing::from_value(value).map_err(|e| e.within_key("timing")))
            .transpose()?;
        let quirks = match object.remove("quirks") {
            None => Quirks::default(),
            Some(value) => Quirks::from_value(value).map_err(|e| e.within_key("quirks"))?,
        };
        Ok(Self { timing, quirks })
    }

    /// Neither timing nor quirks.
    pub(crate) fn is_plain(&self) -> bool {
        self.timing.is_none() && self.quirks.is_empty()
    }
}
