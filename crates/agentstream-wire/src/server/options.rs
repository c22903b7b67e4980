//! The per-call options of a request body, read into the
//! [`StreamOptions`] the model gets (and the log records): each
//! provider's spelling of the token limit, temperature, `top_p`, stop
//! sequences, tool choice, reasoning and response format, at the field
//! names of the provider's table (`FIELDS` in its `request` module, which
//! the body writer writes). Values of the wrong type are ignored, as the
//! rest of the decoding ignores what it does not know.

use crate::request::OptionFields;
use crate::server::prelude::*;
use agentstream::model::{ReasoningEffort, ResponseFormat, StreamOptions, ToolChoice};
use serde_json::{json, Map, Value};

/// OpenAI Chat Completions: `max_completion_tokens` (or `max_tokens`),
/// `temperature`, `top_p`, `stop` (a string or an array), `tool_choice`
/// (`"auto"`, `"none"`, `"required"`, `{"type": "function", "function":
/// {"name"}}`), `reasoning_effort`, `response_format` (`{"type":
/// "json_schema", "json_schema": {"name", "description"?, "schema",
/// "strict"?}}`).
pub(crate) fn openai(object: &Map<String, Value>) -> StreamOptions {
    use crate::openai::request::{FIELDS, MAX_COMPLETION_TOKENS};
    let mut options = common(object, &FIELDS);
    options.max_tokens = u64_at(object, MAX_COMPLETION_TOKENS).or(options.max_tokens);
    options.stop = match FIELDS.stop.and_then(|field| object.get(field)) {
        Some(Value::String(stop)) => Some(vec![stop.clone()]),
        Some(Value::Array(stops)) => Some(strings(stops)),
        _ => None,
    };
    options.tool_choice = match object.get(FIELDS.tool_choice) {
        Some(Value::String(choice)) => named_choice(choice),
        Some(Value::Object(choice)) => choice
            .get("function")
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .map(|name| ToolChoice::Tool(name.into())),
        _ => None,
    };
    options.reasoning_effort = object
        .get(FIELDS.reasoning)
        .and_then(Value::as_str)
        .and_then(effort);
    options.response_format = object
        .get(FIELDS.response_format)
        .filter(|f| f.get("type").and_then(Value::as_str) == Some("json_schema"))
        .and_then(|f| f.get("json_schema"))
        .map(|schema| {
            let mut format = ResponseFormat::json_schema(
                str_of(schema.get("name")),
                schema.get("schema").cloned().unwrap_or(Value::Null),
            )
            .with_strict(schema.get("strict").and_then(Value::as_bool) == Some(true));
            format.description = schema
                .get("description")
                .and_then(Value::as_str)
                .map(Into::into);
            format
        });
    options
}

/// Anthropic Messages: `max_tokens`, `temperature`, `top_p`,
/// `stop_sequences`, `tool_choice` (`{"type": "auto" | "any" | "none" |
/// "tool", "name"?}`), `thinking` (`{"type": "enabled", "budget_tokens"}`),
/// `output_config.format` (`{"type": "json_schema", "schema"}`; its name
/// is empty, as Anthropic's format has none).
pub(crate) fn anthropic(object: &Map<String, Value>) -> StreamOptions {
    use crate::anthropic::request::FIELDS;
    let mut options = common(object, &FIELDS);
    options.stop = stops(object, &FIELDS);
    options.tool_choice =
        object
            .get(FIELDS.tool_choice)
            .and_then(|c| match c.get("type").and_then(Value::as_str) {
                Some("any") => Some(ToolChoice::Required),
                Some("tool") => Some(ToolChoice::Tool(str_of(c.get("name")))),
                Some(other) => named_choice(other),
                None => None,
            });
    options.thinking_budget = object
        .get(FIELDS.reasoning)
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("enabled"))
        .and_then(|t| t.get("budget_tokens"))
        .and_then(Value::as_u64);
    options.response_format = object
        .get(FIELDS.response_format)
        .and_then(|c| c.get("format"))
        .filter(|f| f.get("type").and_then(Value::as_str) == Some("json_schema"))
        .map(|f| ResponseFormat::json_schema("", f.get("schema").cloned().unwrap_or(Value::Null)));
    options
}

/// OpenAI Responses: `max_output_tokens`, `temperature`, `top_p`,
/// `tool_choice` (`"auto"`, `"none"`, `"required"`, `{"type": "function",
/// "name"}`), `reasoning.effort` (`reasoning.summary` has no Pi option and
/// is not kept), `text.format` (`{"type": "json_schema", "name", "schema",
/// "description"?, "strict"?}`).
pub(crate) fn responses(object: &Map<String, Value>) -> StreamOptions {
    use crate::responses::request::FIELDS;
    let mut options = common(object, &FIELDS);
    options.tool_choice = match object.get(FIELDS.tool_choice) {
        Some(Value::String(choice)) => named_choice(choice),
        Some(Value::Object(choice)) => choice
            .get("name")
            .and_then(Value::as_str)
            .map(|name| ToolChoice::Tool(name.into())),
        _ => None,
    };
    options.reasoning_effort = object
        .get(FIELDS.reasoning)
        .and_then(|r| r.get("effort"))
        .and_then(Value::as_str)
        .and_then(effort);
    options.response_format = object
        .get(FIELDS.response_format)
        .and_then(|t| t.get("format"))
        .filter(|f| f.get("type").and_then(Value::as_str) == Some("json_schema"))
        .map(|f| {
            let mut format = ResponseFormat::json_schema(
                str_of(f.get("name")),
                f.get("schema").cloned().unwrap_or(Value::Null),
            )
            .with_strict(f.get("strict").and_then(Value::as_bool) == Some(true));
            format.description = f.get("description").and_then(Value::as_str).map(Into::into);
            format
        });
    options
}

/// Google Gemini: `generationConfig` (`maxOutputTokens`, `temperature`,
/// `topP`, `stopSequences`, `thinkingConfig.thinkingBudget` (a budget of
/// 0 or more) or `.thinkingLevel` (as a reasoning effort), and
/// `responseJsonSchema` or `responseSchema` as a response format without
/// a name), `toolConfig.functionCallingConfig` (`mode` `AUTO`, `NONE`,
/// `ANY`; `ANY` with one `allowedFunctionNames` is that tool).
pub(crate) fn gemini(object: &Map<String, Value>) -> StreamOptions {
    use crate::gemini::request::{FIELDS, GENERATION_CONFIG, RESPONSE_SCHEMA};
    let empty = Map::new();
    let config = object
        .get(GENERATION_CONFIG)
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut options = common(config, &FIELDS);
    options.stop = stops(config, &FIELDS);
    let thinking = config.get(FIELDS.reasoning);
    options.thinking_budget = thinking
        .and_then(|t| t.get("thinkingBudget"))
        .and_then(Value::as_u64);
    options.reasoning_effort = thinking
        .and_then(|t| t.get("thinkingLevel"))
        .and_then(Value::as_str)
        .and_then(|level| effort(&level.to_ascii_lowercase()));
    options.response_format = config
        .get(FIELDS.response_format)
        .or_else(|| config.get(RESPONSE_SCHEMA))
        .map(|schema| ResponseFormat::json_schema("", schema.clone()));
    let calling = object
        .get(FIELDS.tool_choice)
        .and_then(|c| c.get("functionCallingConfig"));
    options.tool_choice = calling.and_then(|c| {
        let allowed = c.get("allowedFunctionNames").and_then(Value::as_array);
        match c.get("mode").and_then(Value::as_str)? {
            "AUTO" => Some(ToolChoice::Auto),
            "NONE" => Some(ToolChoice::None),
            "ANY" => match allowed.map(Vec::as_slice) {
                Some([Value::String(name)]) => Some(ToolChoice::Tool(name.clone())),
                _ => Some(ToolChoice::Required),
            },
            _ => None,
        }
    });
    options
}

/// The numbers every protocol sends as they are: the token limit, the
/// temperature and `top_p`, at `fields`' names in `object`.
fn common(object: &Map<String, Value>, fields: &OptionFields) -> StreamOptions {
    let mut options = StreamOptions::default();
    options.max_tokens = u64_at(object, fields.max_tokens);
    options.temperature = object.get(fields.temperature).and_then(Value::as_f64);
    options.top_p = object.get(fields.top_p).and_then(Value::as_f64);
    options
}

/// The stop sequences, an array at `fields`' name in `object`.
fn stops(object: &Map<String, Value>, fields: &OptionFields) -> Option<Vec<String>> {
    fields
        .stop
        .and_then(|field| object.get(field))
        .and_then(Value::as_array)
        .map(|stops| strings(stops))
}

fn u64_at(object: &Map<String, Value>, key: &str) -> Option<u64> {
    object.get(key).and_then(Value::as_u64)
}

fn strings(values: &[Value]) -> Vec<String> {
    values
        .iter()
        .filter_map(Value::as_str)
        .map(Into::into)
        .collect()
}

fn str_of(value: Option<&Value>) -> String {
    value.and_then(Value::as_str).unwrap_or_default().into()
}

fn named_choice(name: &str) -> Option<ToolChoice> {
    match name {
        "auto" => Some(ToolChoice::Auto),
        "none" => Some(ToolChoice::None),
        "required" => Some(ToolChoice::Required),
        _ => None,
    }
}

fn effort(name: &str) -> Option<ReasoningEffort> {
    match name {
        "minimal" => Some(ReasoningEffort::Minimal),
        "low" => Some(ReasoningEffort::Low),
        "medium" => Some(ReasoningEffort::Medium),
        "high" => Some(ReasoningEffort::High),
        _ => None,
    }
}

/// Pi's names for the options a request set, in camelCase:
/// `maxTokens`, `temperature`, `topP`, `stop`, `toolChoice` (`"auto"`,
/// `"none"`, `"required"` or `{"tool": NAME}`), `reasoningEffort`,
/// `thinkingBudget`, `responseFormat` (`{"name", "description"?,
/// "schema", "strict"}`). Options not set are left out.
///
/// ```
/// use agentstream::model::{StreamOptions, ToolChoice};
/// use agentstream_wire::server::options_json;
/// use serde_json::json;
///
/// let options = StreamOptions::default()
///     .with_temperature(0.5)
///     .with_tool_choice(ToolChoice::Tool("search".into()));
/// assert_eq!(
///     options_json(&options),
///     json!({"temperature": 0.5, "toolChoice": {"tool": "search"}})
/// );
/// ```
pub fn options_json(options: &StreamOptions) -> Value {
    let mut object = Map::new();
    let mut put = |key: &str, value: Value| {
        object.insert(key.into(), value);
    };
    if let Some(n) = options.max_tokens {
        put("maxTokens", n.into());
    }
    if let Some(t) = options.temperature {
        put("temperature", t.into());
    }
    if let Some(p) = options.top_p {
        put("topP", p.into());
    }
    if let Some(stop) = &options.stop {
        put("stop", stop.clone().into());
    }
    if let Some(choice) = &options.tool_choice {
        put(
            "toolChoice",
            match choice {
                ToolChoice::None => "none".into(),
                ToolChoice::Required => "required".into(),
                ToolChoice::Tool(name) => json!({ "tool": name }),
                // `Auto`, and any choice added later.
                _ => "auto".into(),
            },
        );
    }
    if let Some(effort) = options.reasoning_effort {
        put("reasoningEffort", effort.as_str().into());
    }
    if let Some(budget) = options.thinking_budget {
        put("thinkingBudget", budget.into());
    }
    if let Some(format) = &options.response_format {
        let mut value =
            json!({"name": format.name, "schema": format.schema, "strict": format.strict});
        if let (Some(description), Value::Object(map)) = (&format.description, &mut value) {
            map.insert("description".into(), description.clone().into());
        }
        put("responseFormat", value);
    }
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn openai_options_are_read() {
        let options = openai(&object(json!({
            "max_completion_tokens": 64, "max_tokens": 10, "temperature": 0.25, "top_p": 0.5,
            "stop": "END", "tool_choice": {"type": "function", "function": {"name": "ls"}},
            "reasoning_effort": "low",
            "response_format": {"type": "json_schema", "json_schema":
                {"name": "w", "schema": {"type": "object"}, "strict": true}},
        })));
        assert_eq!(
            options_json(&options),
            json!({"maxTokens": 64, "temperature": 0.25, "topP": 0.5, "stop": ["END"],
                   "toolChoice": {"tool": "ls"}, "reasoningEffort": "low",
                   "responseFormat": {"name": "w", "schema": {"type": "object"}, "strict": true}})
        );
        assert_eq!(options_json(&openai(&Map::new())), json!({}));
        let required = openai(&object(
            json!({"tool_choice": "required", "stop": ["a", 1]}),
        ));
        assert_eq!(
            options_json(&required),
            json!({"toolChoice": "required", "stop": ["a"]})
        );
    }

    #[test]
    fn responses_and_gemini_options_are_read() {
        let options = responses(&object(json!({
            "max_output_tokens": 99, "temperature": 0.5, "top_p": 0.25,
            "tool_choice": {"type": "function", "name": "ls"},
            "reasoning": {"effort": "high", "summary": "auto"},
            "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"},
                                "strict": true, "description": "d"}},
        })));
        assert_eq!(
            options_json(&options),
            json!({"maxTokens": 99, "temperature": 0.5, "topP": 0.25, "toolChoice": {"tool": "ls"},
                   "reasoningEffort": "high", "responseFormat": {"name": "w", "description": "d",
                   "schema": {"type": "object"}, "strict": true}})
        );
        let options = gemini(&object(json!({
            "generationConfig": {"maxOutputTokens": 7, "temperature": 1, "topP": 0.5,
                "stopSequences": ["X"], "thinkingConfig": {"includeThoughts": true,
                "thinkingBudget": 128, "thinkingLevel": "LOW"},
                "responseMimeType": "application/json", "responseJsonSchema": {"type": "object"}},
            "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["ls"]}},
        })));
        assert_eq!(
            options_json(&options),
            json!({"maxTokens": 7, "temperature": 1.0, "topP": 0.5, "stop": ["X"],
                   "toolChoice": {"tool": "ls"}, "reasoningEffort": "low", "thinkingBudget": 128,
                   "responseFormat": {"name": "", "schema": {"type": "object"}, "strict": false}})
        );
        let any = gemini(&object(
            json!({"toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
                   "generationConfig": {"thinkingConfig": {"thinkingBudget": -1}}}),
        ));
        assert_eq!(options_json(&any), json!({"toolChoice": "required"}));
    }

    #[test]
    fn anthropic_options_are_read() {
        let options = anthropic(&object(json!({
            "max_tokens": 1024, "temperature": 1, "stop_sequences": ["\n\nHuman:"],
            "tool_choice": {"type": "any"}, "thinking": {"type": "enabled", "budget_tokens": 512},
            "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}},
        })));
        assert_eq!(
            options_json(&options),
            json!({"maxTokens": 1024, "temperature": 1.0, "stop": ["\n\nHuman:"],
                   "toolChoice": "required", "thinkingBudget": 512,
                   "responseFormat": {"name": "", "schema": {"type": "object"}, "strict": false}})
        );
        let tool = anthropic(&object(
            json!({"tool_choice": {"type": "tool", "name": "ls"}}),
        ));
        assert_eq!(tool.tool_choice, Some(ToolChoice::Tool("ls".into())));
    }
}
