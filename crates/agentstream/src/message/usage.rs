//! Token usage, cost and the stop reason of an assistant message.

use alloc::string::String;
use core::fmt;

use serde::ser::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::decode::{
    deserialize_via_from_value, float, object, optional, required, string, take_non_null, unsigned,
    DecodeError, Written,
};
use super::number::JsNumber;

/// Token counts of one model call: `{input, output, cacheRead, cacheWrite,
/// totalTokens?, cost}`.
///
/// Counts are integers. `totalTokens` is optional because older Pi logs lack
/// it; an absent value stays absent. Newer fields (`reasoning`,
/// `cacheWrite1h`, ...) are kept in [`extra`](Self::extra).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// `cacheRead`: input tokens read from the prompt cache.
    pub cache_read: u64,
    /// `cacheWrite`: input tokens written to the prompt cache.
    pub cache_write: u64,
    /// `totalTokens`, if the log has it.
    pub total_tokens: Option<u64>,
    /// The cost in dollars.
    pub cost: Cost,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// The cost of one model call in dollars: `{input, output, cacheRead,
/// cacheWrite, total}`.
///
/// Values are `f64` and come back bit-identical from a round trip. An
/// integral value such as `0` is written without a fraction, as JavaScript
/// does.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cost {
    /// Cost of the input tokens.
    pub input: f64,
    /// Cost of the output tokens.
    pub output: f64,
    /// `cacheRead`: cost of the cache reads.
    pub cache_read: f64,
    /// `cacheWrite`: cost of the cache writes.
    pub cache_write: f64,
    /// The total cost.
    pub total: f64,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// Why the model stopped: Pi's `stopReason`.
///
/// Values this model does not know (newer Pi versions write `pending` and
/// `deferred`) are kept as [`StopReason::Other`] and written back unchanged.
///
/// ```
/// use agentstream::message::StopReason;
///
/// assert_eq!(StopReason::from("toolUse"), StopReason::ToolUse);
/// assert_eq!(StopReason::from("pending").as_str(), "pending");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// `stop`: the model finished its turn.
    Stop,
    /// `length`: the output hit the token limit.
    Length,
    /// `toolUse`: the model wants tool results before it continues.
    ToolUse,
    /// `error`: the call failed; see `errorMessage`.
    Error,
    /// `aborted`: the caller cancelled the call.
    Aborted,
    /// Any other value, kept verbatim.
    Other(String),
}

impl StopReason {
    /// The JSON string of this stop reason.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
            StopReason::Other(s) => s,
        }
    }

    /// Decodes a stop reason from JSON; it must be a string.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        string(value).map(StopReason::from)
    }
}

impl From<&str> for StopReason {
    fn from(s: &str) -> Self {
        match s {
            "stop" => StopReason::Stop,
            "length" => StopReason::Length,
            "toolUse" => StopReason::ToolUse,
            "error" => StopReason::Error,
            "aborted" => StopReason::Aborted,
            other => StopReason::Other(other.into()),
        }
    }
}

impl From<String> for StopReason {
    fn from(s: String) -> Self {
        match StopReason::from(s.as_str()) {
            StopReason::Other(_) => StopReason::Other(s),
            known => known,
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl Usage {
    /// Decodes usage from JSON.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let (mut input, mut output, mut cache_read, mut cache_write) = (None, None, None, None);
        let (mut total, mut cost, mut extra) = (None, None, Map::new());
        for (key, value) in object(value)? {
            match key.as_str() {
                "input" => input = Some(value),
                "output" => output = Some(value),
                "cacheRead" => cache_read = Some(value),
                "cacheWrite" => cache_write = Some(value),
                "totalTokens" => take_non_null(&mut total, &mut extra, key, value),
                "cost" => cost = Some(value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        Ok(Usage {
            input: required("input", input, unsigned)?,
            output: required("output", output, unsigned)?,
            cache_read: required("cacheRead", cache_read, unsigned)?,
            cache_write: required("cacheWrite", cache_write, unsigned)?,
            total_tokens: optional("totalTokens", total, unsigned)?,
            cost: required("cost", cost, Cost::from_value)?,
            extra,
        })
    }
}

impl Cost {
    /// Decodes a cost from JSON.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let (mut input, mut output, mut cache_read) = (None, None, None);
        let (mut cache_write, mut total, mut extra) = (None, None, Map::new());
        for (key, value) in object(value)? {
            match key.as_str() {
                "input" => input = Some(value),
                "output" => output = Some(value),
                "cacheRead" => cache_read = Some(value),
                "cacheWrite" => cache_write = Some(value),
                "total" => total = Some(value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        Ok(Cost {
            input: required("input", input, float)?,
            output: required("output", output, float)?,
            cache_read: required("cacheRead", cache_read, float)?,
            cache_write: required("cacheWrite", cache_write, float)?,
            total: required("total", total, float)?,
            extra,
        })
    }
}

impl Serialize for Usage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "input", &self.input)?;
        w.entry(&mut map, "output", &self.output)?;
        w.entry(&mut map, "cacheRead", &self.cache_read)?;
        w.entry(&mut map, "cacheWrite", &self.cache_write)?;
        w.opt(&mut map, "totalTokens", &self.total_tokens)?;
        w.entry(&mut map, "cost", &self.cost)?;
        w.finish(map, &self.extra)
    }
}

impl Serialize for Cost {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "input", &JsNumber(self.input))?;
        w.entry(&mut map, "output", &JsNumber(self.output))?;
        w.entry(&mut map, "cacheRead", &JsNumber(self.cache_read))?;
        w.entry(&mut map, "cacheWrite", &JsNumber(self.cache_write))?;
        w.entry(&mut map, "total", &JsNumber(self.total))?;
        w.finish(map, &self.extra)
    }
}

deserialize_via_from_value!(Usage, Cost, StopReason);
