//! The oracle's scenarios of pi-agent-core 0.73.1's smaller loop features:
//! `shouldStopAfterTurn`, a result's `terminate` hint, a tool's
//! `executionMode: "sequential"`, `prepareArguments` and `getApiKey`.

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use agentstream::agent::{
    AgentHooks, AgentOptions, AgentStop, AgentTool, ApiKeyHook, StopAfterTurnHook, ToolContext,
    ToolError, ToolOutput, ToolSet,
};
use agentstream::message::StopReason;
use agentstream::model::ApiKey;
use serde_json::{json, Map, Value};

use super::{
    answer, call, empty_object, log, log_execution, read_readme, read_tools, record_quiet, turn,
    Custom, LineSink, Log, Read, Transcript,
};

/// The hook ends the run after the turn that read `stop.md`; the third
/// scripted turn is never played.
pub async fn should_stop_after_turn(sink: Option<LineSink>) -> Transcript {
    let logs = log();
    let tools = read_tools(&logs.0);
    let turns = vec![
        turn(
            vec![call("c1", "read", json!({"path": "notes.md"}))],
            StopReason::ToolUse,
        ),
        turn(
            vec![call("c2", "read", json!({"path": "stop.md"}))],
            StopReason::ToolUse,
        ),
        answer("never"),
    ];
    let hook = StopAfterTurnHook::new(|turn| {
        turn.tool_results.iter().any(|result| {
            result
                .details
                .as_ref()
                .and_then(|details| details.get("path"))
                .and_then(Value::as_str)
                == Some("stop.md")
        })
    });
    let options =
        AgentOptions::default().with_hooks(AgentHooks::default().with_should_stop_after_turn(hook));
    let t = record_quiet(
        sink,
        turns,
        &tools,
        logs,
        "Read until told to stop.",
        options,
    )
    .await;
    assert_eq!(t.outcome.stop, AgentStop::StoppedAfterTurn);
    t
}

/// The oracle's `finish`: a result with the `terminate` hint.
fn finish(log: &Log) -> impl AgentTool {
    Custom {
        name: "finish",
        description: "Ends the task",
        parameters: empty_object(),
        log: Arc::clone(log),
        run: |_: ToolContext<'_>, _| async {
            Ok(ToolOutput::text("finished")
                .with_details(json!({}))
                .with_terminate(true))
        },
    }
}

/// A batch in which one result sets `terminate` goes on; the next, in
/// which every result does, ends the run.
pub async fn terminate_batch(sink: Option<LineSink>) -> Transcript {
    let logs = log();
    let tools = read_tools(&logs.0).with(finish(&logs.0));
    let turns = vec![
        turn(
            vec![
                call("c1", "finish", json!({})),
                call("c2", "read", json!({"path": "README.md"})),
            ],
            StopReason::ToolUse,
        ),
        turn(vec![call("c3", "finish", json!({}))], StopReason::ToolUse),
        answer("never"),
    ];
    let t = record_quiet(
        sink,
        turns,
        &tools,
        logs,
        "Finish up.",
        AgentOptions::default(),
    )
    .await;
    assert_eq!(t.outcome.stop, AgentStop::Completed);
    t
}

/// The oracle's `write`, a sequential tool.
struct Write {
    log: Log,
}

impl AgentTool for Write {
    fn name(&self) -> &str {
        "write"
    }
    fn description(&self) -> &str {
        "Write a file"
    }
    fn parameters(&self) -> Value {
        Read::schema()
    }
    fn sequential(&self) -> bool {
        true
    }
    async fn execute(
        &self,
        args: Map<String, Value>,
        cx: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        log_execution(&self.log, "write", &cx, &args);
        let path = args.get("path").and_then(Value::as_str).unwrap_or_default();
        Ok(ToolOutput::text(format!("wrote {path}")).with_details(json!({})))
    }
}

/// A call of a sequential tool makes the whole (parallel-mode) batch run
/// one call after the other.
pub async fn sequential_tool(sink: Option<LineSink>) -> Transcript {
    let logs = log();
    let tools = read_tools(&logs.0).with(Write {
        log: Arc::clone(&logs.0),
    });
    let turns = vec![
        turn(
            vec![
                call("c1", "read", json!({"path": "a.md"})),
                call("c2", "write", json!({"path": "b.md"})),
                call("c3", "read", json!({"path": "c.md"})),
            ],
            StopReason::ToolUse,
        ),
        answer("Done."),
    ];
    record_quiet(
        sink,
        turns,
        &tools,
        logs,
        "Read, write, read.",
        AgentOptions::default(),
    )
    .await
}

/// The oracle's `read` with a `prepareArguments` that maps `file` to
/// `path`.
struct PreparedRead(Read);

impl AgentTool for PreparedRead {
    fn name(&self) -> &str {
        AgentTool::name(&self.0)
    }
    fn description(&self) -> &str {
        AgentTool::description(&self.0)
    }
    fn parameters(&self) -> Value {
        AgentTool::parameters(&self.0)
    }
    fn prepare_arguments(&self, arguments: &Map<String, Value>) -> Option<Map<String, Value>> {
        let file = arguments.get("file")?;
        let mut prepared = Map::new();
        prepared.insert("path".into(), file.clone());
        Some(prepared)
    }
    async fn execute(
        &self,
        args: Map<String, Value>,
        cx: ToolContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        self.0.execute(args, cx).await
    }
}

/// One call's arguments are prepared into valid ones; the other's are
/// left as they are and fail validation.
pub async fn prepare_arguments(sink: Option<LineSink>) -> Transcript {
    let logs = log();
    let tools = ToolSet::new().with(PreparedRead(Read::new(&logs.0)));
    let turns = vec![
        turn(
            vec![
                call("c1", "read", json!({"file": "README.md"})),
                call("c2", "read", json!({"name": "x"})),
            ],
            StopReason::ToolUse,
        ),
        answer("One worked."),
    ];
    record_quiet(
        sink,
        turns,
        &tools,
        logs,
        "Read with old arguments.",
        AgentOptions::default(),
    )
    .await
}

/// The key is resolved before each model call: `key-1`, then `key-2`.
pub async fn get_api_key(sink: Option<LineSink>) -> Transcript {
    let logs = log();
    let tools = read_tools(&logs.0);
    let turns = vec![read_readme(), answer("The README says hello.")];
    let keys = Arc::new(AtomicUsize::new(0));
    let hook = ApiKeyHook::new_async(move || {
        let n = keys.fetch_add(1, Ordering::SeqCst) + 1;
        async move { Some(ApiKey::from(format!("key-{n}"))) }
    });
    let options = AgentOptions::default().with_hooks(AgentHooks::default().with_api_key(hook));
    record_quiet(sink, turns, &tools, logs, "What is in the README?", options).await
}
