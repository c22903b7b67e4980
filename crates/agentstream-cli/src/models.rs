//! `agentstream models [PROVIDER]`: pi-ai's model catalogue, one model a
//! line with its context window and prices, or (`--json`) every model as
//! pi-ai's `getModels` returns it, for the CI comparison
//! (`.ci/models-catalogue.sh`).

use std::io::{self, Write};
use std::process::ExitCode;

use agentstream_models::{all_models, models, providers, Model};
use serde_json::{json, Map, Value};

/// `agentstream models`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this provider's models (`agentstream models --providers` lists
    /// the providers).
    provider: Option<String>,
    /// Print the provider names instead, one a line.
    #[arg(long, conflicts_with = "provider")]
    providers: bool,
    /// One JSON object: provider → array of models, each with pi-ai's
    /// field names.
    #[arg(long)]
    json: bool,
}

/// Prints the catalogue; exits 2 for an unknown provider.
pub fn run(args: &Args) -> io::Result<ExitCode> {
    let mut out = io::stdout().lock();
    if args.providers {
        for p in providers() {
            writeln!(out, "{p}")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let chosen: Vec<&str> = match &args.provider {
        Some(p) if models(p).is_empty() => {
            eprintln!(
                "agentstream: error: unknown provider `{p}` (see `agentstream models --providers`)"
            );
            return Ok(ExitCode::from(2));
        }
        Some(p) => vec![p.as_str()],
        None => providers().collect(),
    };
    if args.json {
        let mut all = Map::new();
        for p in &chosen {
            all.insert((*p).to_owned(), models(p).iter().map(to_json).collect());
        }
        serde_json::to_writer(&mut out, &Value::Object(all))?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = all_models()
        .map(|m| m.provider.len() + m.id.len() + 1)
        .max()
        .unwrap_or(0);
    writeln!(
        out,
        "{:width$}  {:>9}  {:>7}  {:>7}  {:>7}  {:>7}  api",
        "provider/id", "context", "input", "output", "c.read", "c.write"
    )?;
    for p in chosen {
        for m in models(p) {
            let name = format!("{}/{}", m.provider, m.id);
            let c = m.cost;
            writeln!(
                out,
                "{name:width$}  {:>9}  {:>7}  {:>7}  {:>7}  {:>7}  {}",
                m.context_window, c.input, c.output, c.cache_read, c.cache_write, m.api
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A model as pi-ai's `Model` object: optional fields only when set.
fn to_json(m: &Model) -> Value {
    let mut v = json!({
        "id": m.id,
        "name": m.name,
        "api": m.api,
        "provider": m.provider,
        "baseUrl": m.base_url,
        "reasoning": m.reasoning,
        "input": m.input.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
        "cost": {
            "input": m.cost.input,
            "output": m.cost.output,
            "cacheRead": m.cost.cache_read,
            "cacheWrite": m.cost.cache_write,
        },
        "contextWindow": m.context_window,
        "maxTokens": m.max_tokens,
    });
    let Value::Object(fields) = &mut v else {
        return v;
    };
    if let Some(headers) = m.headers {
        let map: Map<String, Value> = headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
            .collect();
        fields.insert("headers".into(), Value::Object(map));
    }
    if let Some(c) = m.compat {
        let mut map = Map::new();
        let mut text = |key: &str, value: Option<&str>| {
            if let Some(value) = value {
                map.insert(key.into(), Value::from(value));
            }
        };
        text("thinkingFormat", c.thinking_format);
        text("maxTokensField", c.max_tokens_field);
        for (key, value) in [
            ("supportsStore", c.supports_store),
            ("supportsDeveloperRole", c.supports_developer_role),
            ("supportsStrictMode", c.supports_strict_mode),
            ("supportsUsageInStreaming", c.supports_usage_in_streaming),
            ("supportsReasoningEffort", c.supports_reasoning_effort),
            (
                "requiresReasoningContentOnAssistantMessages",
                c.requires_reasoning_content_on_assistant_messages,
            ),
            ("requiresToolResultName", c.requires_tool_result_name),
            (
                "supportsEagerToolInputStreaming",
                c.supports_eager_tool_input_streaming,
            ),
            (
                "sendSessionAffinityHeaders",
                c.send_session_affinity_headers,
            ),
            ("zaiToolStream", c.zai_tool_stream),
        ] {
            if let Some(value) = value {
                map.insert(key.into(), Value::from(value));
            }
        }
        fields.insert("compat".into(), Value::Object(map));
    }
    if let Some(levels) = m.thinking_level_map {
        let map: Map<String, Value> = levels
            .iter()
            .map(|(l, v)| (l.as_str().to_owned(), v.map_or(Value::Null, Value::from)))
            .collect();
        fields.insert("thinkingLevelMap".into(), Value::Object(map));
    }
    v
}
