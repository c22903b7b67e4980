//! A tool's schema derived from its argument type (feature `schemars`):
//! the argument validator accepts exactly what the serde type
//! deserializes, and a `TypedTool` built on it rejects what its type
//! cannot hold before `call` runs.
#![cfg(feature = "schemars")]

use agentstream::agent::{
    derived_parameters, run_agent, validate_arguments, AgentOptions, ToolContext, ToolError,
    ToolOutput, ToolSet, TypedTool,
};
use agentstream::message::{assistant, text, tool_call, user, Context, Message, StopReason};
use agentstream::model::ScriptedModel;
use serde_json::{json, Value};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Range {
    start: u32,
    end: u32,
}

/// Arguments with the shapes tools use: a string, an optional integer,
/// a list, a flag with a serde default, and a nested struct.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// How many hits at most.
    limit: Option<u32>,
    /// Folders to search.
    folders: Vec<String>,
    #[serde(default)]
    case_sensitive: bool,
    lines: Range,
}

#[test]
fn the_derived_schema_is_flat_and_describes_the_fields() {
    let schema = derived_parameters::<SearchArgs>();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["query", "folders", "lines"]));
    assert_eq!(
        schema["properties"]["query"]["description"],
        "What to look for."
    );
    assert_eq!(schema["properties"]["lines"]["type"], "object");
    assert!(schema.get("$schema").is_none() && schema.get("$defs").is_none());
    assert!(!schema.to_string().contains("$ref"));
}

#[test]
fn the_validator_accepts_what_serde_deserializes() {
    let schema = derived_parameters::<SearchArgs>();
    let lines = json!({"start": 1, "end": 9});
    let cases = [
        json!({"query": "fn", "folders": ["src"], "lines": lines}),
        json!({"query": "fn", "limit": 3, "folders": [], "case_sensitive": true, "lines": lines}),
        json!({"query": "fn", "limit": null, "folders": ["a", "b"], "lines": lines}),
        json!({"folders": ["src"], "lines": lines}),
        json!({"query": "fn", "lines": lines}),
        json!({"query": "fn", "folders": "src", "lines": lines}),
        json!({"query": "fn", "folders": [3], "lines": lines}),
        json!({"query": "fn", "folders": [], "lines": {"start": 1}}),
        json!({"query": "fn", "folders": [], "lines": {"start": "x", "end": 2}}),
        json!({"query": "fn", "folders": [], "limit": 2.5, "lines": lines}),
        json!({"query": "fn", "folders": [], "case_sensitive": "maybe", "lines": lines}),
        json!({"query": ["fn"], "folders": [], "lines": lines}),
        json!([]),
    ];
    let mut accepted = 0;
    for case in cases {
        let mut coerced = case.clone();
        let errors = validate_arguments(&schema, &mut coerced);
        let decoded = serde_json::from_value::<SearchArgs>(coerced);
        assert_eq!(
            errors.is_empty(),
            decoded.is_ok(),
            "{case}: validator {errors:?}, serde {decoded:?}"
        );
        accepted += usize::from(errors.is_empty());
    }
    // The three valid cases, and `folders: [3]`, which Pi's scalar
    // coercion turns into `["3"]` before serde sees it.
    assert_eq!(accepted, 4);
}

struct Search;

impl TypedTool for Search {
    type Args = SearchArgs;
    fn name(&self) -> &str {
        "search"
    }
    fn description(&self) -> &str {
        "Searches files."
    }
    fn parameters(&self) -> Value {
        derived_parameters::<SearchArgs>()
    }
    async fn call(&self, args: SearchArgs, _cx: ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!(
            "{} in {} folders, lines {}..{}, limit {:?}, case-sensitive {}",
            args.query,
            args.folders.len(),
            args.lines.start,
            args.lines.end,
            args.limit,
            args.case_sensitive
        )))
    }
}

#[test]
fn a_typed_tool_with_a_derived_schema_runs_and_rejects_before_its_call() {
    let good = json!({"query": "fn", "folders": ["src"], "lines": {"start": 1, "end": 9}});
    let bad = json!({"query": "fn", "folders": ["src"], "lines": {"start": 1}});
    let model = ScriptedModel::new([
        assistant(
            [
                tool_call("c1", "search", good),
                tool_call("c2", "search", bad),
            ],
            StopReason::ToolUse,
        ),
        assistant([text("done")], StopReason::Stop),
    ]);
    let tools = ToolSet::new().with(Search);
    let outcome = futures_executor::block_on(run_agent(
        &model,
        &tools,
        Context::default(),
        vec![user("search").into()],
        AgentOptions::default(),
        |_| {},
    ));
    let results: Vec<_> = outcome
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::ToolResult(result) => Some(result),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2);
    assert!(!results[0].is_error);
    assert_eq!(
        results[0].text(),
        "fn in 1 folders, lines 1..9, limit None, case-sensitive false"
    );
    assert!(results[1].is_error);
    assert!(
        results[1]
            .text()
            .starts_with("Validation failed for tool \"search\""),
        "{}",
        results[1].text()
    );
    assert!(results[1].text().contains("end"), "{}", results[1].text());
}
