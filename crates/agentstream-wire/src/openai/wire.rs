//! The wire shapes of `chat.completion.chunk` payloads that the projector
//! reads, and the usage mapping. Unknown fields are skipped.

use alloc::borrow::Cow;
use alloc::string::ToString;
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::{Map, Value};

use agentstream::message::{Cost, Usage};

use crate::json::{borrowed_str, count};
pub(crate) use crate::json::{clip, is_json_blank, trim_json};

/// One chunk. Every field is optional: providers omit them freely.
#[derive(Deserialize)]
pub(crate) struct Chunk<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    pub id: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    pub model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub choices: Option<Choices<'a>>,
    #[serde(default)]
    pub usage: Option<Value>,
    #[serde(default)]
    pub error: Option<Value>,
    /// A top-level error `code` beside `error` (its code when `error`
    /// names none).
    #[serde(default)]
    pub code: Option<Value>,
}

/// The `choices` array, reduced while parsing to the one choice the
/// projector follows: the one with `index` 0, else the first. Nothing is
/// collected, so a chunk costs no `Vec`.
#[derive(Default)]
pub(crate) struct Choices<'a> {
    pub chosen: Option<Choice<'a>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Choices<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(core::marker::PhantomData<Choice<'a>>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Choices<'a>;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("an array of choices")
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(
                self,
                mut seq: S,
            ) -> Result<Choices<'a>, S::Error> {
                let mut chosen: Option<Choice<'a>> = None;
                while let Some(choice) = seq.next_element::<Choice<'a>>()? {
                    let better = match &chosen {
                        None => true,
                        Some(current) => current.index != Some(0) && choice.index == Some(0),
                    };
                    if better {
                        chosen = Some(choice);
                    }
                }
                Ok(Choices { chosen })
            }
        }
        deserializer.deserialize_seq(Visit(core::marker::PhantomData))
    }
}

#[derive(Deserialize)]
pub(crate) struct Choice<'a> {
    #[serde(default)]
    pub index: Option<u64>,
    #[serde(default, borrow)]
    pub delta: Option<Delta<'a>>,
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    pub finish_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    pub usage: Option<Value>,
}

#[derive(Deserialize)]
pub(crate) struct Delta<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    pub content: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    pub reasoning_content: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    pub reasoning: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    pub reasoning_text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

#[derive(Deserialize)]
pub(crate) struct ToolCallDelta<'a> {
    #[serde(default)]
    pub index: Option<u64>,
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    pub id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
pub(crate) struct FunctionDelta<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    pub name: Option<Cow<'a, str>>,
    /// Usually a string fragment; a few servers send the whole arguments as
    /// an object, which is re-serialized.
    #[serde(default)]
    pub arguments: Option<Value>,
}

/// The delta fields reasoning arrives in, in the order they are read:
/// llama.cpp, DeepSeek and vLLM send `reasoning_content`; OpenRouter,
/// Ollama and Groq `reasoning`; a few servers `reasoning_text`.
pub const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "reasoning", "reasoning_text"];

impl Delta<'_> {
    /// The first non-empty reasoning fragment, with the name of its field.
    pub fn reasoning(&self) -> Option<(&'static str, &str)> {
        [
            &self.reasoning_content,
            &self.reasoning,
            &self.reasoning_text,
        ]
        .into_iter()
        .zip(REASONING_FIELDS)
        .find_map(|(value, field)| {
            value
                .as_deref()
                .filter(|r| !r.is_empty())
                .map(|r| (field, r))
        })
    }
}

impl FunctionDelta<'_> {
    /// The argument text of this fragment, if any.
    pub fn arguments_text(&self) -> Option<Cow<'_, str>> {
        match self.arguments.as_ref()? {
            Value::String(s) => Some(Cow::Borrowed(s)),
            Value::Null => None,
            other => Some(Cow::Owned(other.to_string())),
        }
    }
}

/// The usage field that keeps a provider's `total_tokens` when it was
/// smaller than the sum of the counts.
pub(crate) const PROVIDER_TOTAL_TOKENS: &str = "providerTotalTokens";

/// Maps an OpenAI `usage` object onto [`Usage`]; `None` for `null`, `{}`
/// or a value without any token count.
///
/// - `cacheRead` is `prompt_tokens_details.cached_tokens` (or DeepSeek's
///   `prompt_cache_hit_tokens`); `cacheWrite` is
///   `prompt_tokens_details.cache_write_tokens` (OpenRouter, for models
///   that bill cache writes), else `cache_creation_input_tokens` inside
///   `prompt_tokens_details` or at the top level (gateways that pass
///   Anthropic's name through); `input` is the prompt tokens without both,
///   as these providers count reads and writes inside `prompt_tokens`.
/// - Reasoning tokens (`completion_tokens_details.reasoning_tokens`) are
///   counted once in `output`: most providers already include them in
///   `completion_tokens`; when `total_tokens` equals prompt + completion +
///   reasoning (xAI), they were not, and are added.
/// - `totalTokens` is the provider's `total_tokens` when given, else
///   input + output + cacheRead + cacheWrite.
/// - Each count is read by [`count`](crate::json#numbers): fractions
///   round, negative counts are 0 and counts past `u64::MAX` (`1e20`,
///   `1e400`) are `u64::MAX`.
/// - The numbers are the provider's: sums saturate at `u64::MAX` instead
///   of overflowing, and a cached count larger than the prompt count is
///   capped at it. A `total_tokens` smaller than the parts is not trusted:
///   `totalTokens` is the sum, and the provider's figure is kept in the
///   usage as `providerTotalTokens`, so the message stays consistent (the
///   protocol checker's `implausible-usage` would flag it) and nothing the
///   provider sent is lost.
/// - Costs are zero: the projector knows no prices.
pub(crate) fn map_usage(value: &Value) -> Option<Usage> {
    let object = value.as_object()?;
    let prompt = count(object.get("prompt_tokens"));
    let completion = count(object.get("completion_tokens"));
    let total = count(object.get("total_tokens"));
    if prompt.is_none() && completion.is_none() && total.is_none() {
        return None;
    }
    let (prompt, completion) = (prompt.unwrap_or(0), completion.unwrap_or(0));
    let cached = count(
        object
            .get("prompt_tokens_details")
            .and_then(|d| d.get("cached_tokens")),
    )
    .or_else(|| count(object.get("prompt_cache_hit_tokens")))
    .unwrap_or(0);
    let details = object.get("prompt_tokens_details");
    let written = count(details.and_then(|d| d.get("cache_write_tokens")))
        .or_else(|| count(details.and_then(|d| d.get("cache_creation_input_tokens"))))
        .or_else(|| count(object.get("cache_creation_input_tokens")))
        .unwrap_or(0);
    let reasoning = count(
        object
            .get("completion_tokens_details")
            .and_then(|d| d.get("reasoning_tokens")),
    )
    .unwrap_or(0);
    // Every figure came from the wire: sums saturate, and a cached count
    // above the prompt count is capped at it (the input cannot be
    // negative).
    let cached = cached.min(prompt);
    let written = written.min(prompt - cached);
    let with_reasoning = completion.saturating_add(reasoning);
    let excluded = reasoning > 0 && total == Some(prompt.saturating_add(with_reasoning));
    let output = if excluded { with_reasoning } else { completion };
    let input = prompt - cached - written;
    let parts = input
        .saturating_add(output)
        .saturating_add(cached)
        .saturating_add(written);
    let mut extra = Map::new();
    let total = match total {
        // A total below its parts is not trusted: the sum is, and the
        // provider's figure is kept beside it.
        Some(total) if total < parts => {
            extra.insert(PROVIDER_TOTAL_TOKENS.into(), Value::from(total));
            parts
        }
        Some(total) => total,
        None => parts,
    };
    Some(Usage {
        input,
        output,
        cache_read: cached,
        cache_write: written,
        total_tokens: Some(total),
        cost: Cost::default(),
        extra,
    })
}

pub(crate) use crate::error_body::error_text;
