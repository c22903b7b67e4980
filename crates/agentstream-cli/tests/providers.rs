//! `--api responses` and `--api google`: `decode` on every recorded stream
//! the repository holds for them (`agentstream-wire/tests/fixtures`), and
//! `chat` and `agent` against the mock server, run as child processes.

use std::path::PathBuf;
use std::process::{Command, Output};

use agentstream_testkit::http::fixtures::{responses_sse, GOOGLE_TOOL, RESPONSES_REASONING_TOOLS};
use agentstream_testkit::http::{sse_body, MockServer, Reply, Request};
use serde_json::{json, Value};

const KEY: &str = "sk-providers-test-secret";

fn agentstream() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn fixture(folder: &str, name: &str) -> String {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "../agentstream-wire/tests/fixtures",
    ]
    .iter()
    .collect();
    path.join(folder).join(name).display().to_string()
}

/// `decode --api API` of a fixture (`--chunks` for `.chunks.jsonl`): exits
/// 0 and prints every line of `expected`.
fn decodes_to(api: &str, folder: &str, name: &str, expected: &[&str]) {
    let path = fixture(folder, name);
    let mut command = agentstream();
    command.args(["decode", "--api", api]);
    if name.ends_with(".jsonl") {
        command.arg("--chunks");
    }
    let output = command.arg(&path).output().expect("run");
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{name}: {stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    for line in expected {
        assert!(
            lines.contains(line),
            "{name}: no line `{line}` in\n{stdout}"
        );
    }
}

#[test]
fn decode_reads_every_recorded_responses_stream() {
    let folder = "openai-responses-sse";
    decodes_to("responses", folder, "genai-reasoning-tools.sse", &[
        "thinking: 0 chars, signature 1069 bytes",
        "toolCall: call_j1UinAcTy1fjspOBHyCkJxR2|fc_0d5b91a37ec2e2620169cb13c893048191a90c7620899d86f1 get_weather {\"city\":\"Paris\",\"country\":\"France\",\"unit\":\"C\"}",
        "stopReason: toolUse",
        "usage: input=106 output=45 cacheRead=0 totalTokens=151",
    ]);
    decodes_to(
        "responses",
        folder,
        "genai-reasoning-text.sse",
        &[
            "thinking: 0 chars, signature 1005 bytes",
            "stopReason: stop",
            "usage: input=21 output=45 cacheRead=0 totalTokens=66",
        ],
    );
    decodes_to(
        "responses",
        folder,
        "copilot-id-rotation.chunks.jsonl",
        &[
            "You can see **r** at positions **3, 8, and 9**.",
            "thinking: 34 chars, signature 158 bytes",
            "stopReason: stop",
            "usage: input=19 output=105 cacheRead=0 totalTokens=124",
        ],
    );
    decodes_to(
        "responses",
        folder,
        "openai-error.chunks.jsonl",
        &["start → error", "stopReason: error"],
    );
}

#[test]
fn decode_reads_every_recorded_gemini_stream() {
    let folder = "google-sse";
    decodes_to(
        "google",
        folder,
        "genai-thinking.sse",
        &[
            "thinking: 1604 chars, signature 0 bytes",
            "stopReason: stop",
            "usage: input=12 output=732 cacheRead=0 totalTokens=744",
        ],
    );
    decodes_to("google", folder, "genai-tool.sse", &[
        "toolCall: u959pftr get_weather {\"country\":\"Egypt\",\"unit\":\"C\",\"city\":\"Cairo\"}",
        "stopReason: toolUse",
        "usage: input=135 output=362 cacheRead=0 totalTokens=497",
    ]);
    decodes_to(
        "google",
        folder,
        "google-no-args-tool-call.chunks.jsonl",
        &[
            "toolCall: read_theme__vr4aYiWEJnYodAPkujX0QM_1 read_theme {}",
            "toolCall: read_screen__vr4aYiWEJnYodAPkujX0QM_4 read_screen {\"id\":\"C\"}",
            "stopReason: toolUse",
            "usage: input=249 output=241 cacheRead=0 totalTokens=490",
        ],
    );
    decodes_to(
        "google",
        folder,
        "google-text.chunks.jsonl",
        &[
            "There are **3** \"r\"s in strawberry.",
            "stopReason: stop",
            "usage: input=9 output=208 cacheRead=0 totalTokens=217",
        ],
    );
}

#[test]
fn decode_of_the_error_names_the_provider_code() {
    let path = fixture("openai-responses-sse", "openai-error.chunks.jsonl");
    let output = agentstream()
        .args(["decode", "--api", "responses", "--chunks", &path])
        .output()
        .expect("run");
    let (stdout, _) = text(&output);
    assert!(
        stdout.contains("errorMessage: Error Code insufficient_quota: "),
        "{stdout}"
    );
}

/// Runs `chat --api API` with `args` against a server that answers
/// `body`, the key in the variable `key_var`; checks that it succeeded
/// without printing the key and sent one request; returns that request and
/// the output.
fn chat(api: &str, body: &str, key_var: &str, args: &[&str]) -> (Request, String) {
    let body = body.as_bytes().to_vec();
    let server = MockServer::start(move |_| Reply::sse(vec![body.clone()])).expect("server");
    let output = agentstream()
        .args(["chat", "--api", api, "--base-url", &server.origin()])
        .args(args)
        .env(key_var, KEY)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    let mut requests = server.requests();
    assert_eq!(requests.len(), 1);
    (requests.remove(0), stdout)
}

#[test]
fn chat_streams_from_the_responses_api() {
    let args = ["--model", "gpt-test", "--max-tokens", "77", "Weather?"];
    let (request, stdout) = chat(
        "responses",
        RESPONSES_REASONING_TOOLS,
        "OPENAI_API_KEY",
        &args,
    );
    assert!(
        stdout.contains(" get_weather {\"city\":\"Paris\",\"country\":\"France\",\"unit\":\"C\"}"),
        "{stdout}"
    );
    assert!(
        stdout.contains("usage: input=106 output=45 cacheRead=0 totalTokens=151"),
        "{stdout}"
    );
    assert!(stdout.contains("stopReason: toolUse"), "{stdout}");
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = request.json();
    assert_eq!(
        (body["model"].clone(), body["max_output_tokens"].clone()),
        (json!("gpt-test"), json!(77))
    );
    assert_eq!(
        body["input"],
        json!([{"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]}])
    );
}

#[test]
fn chat_streams_from_gemini_with_the_key_from_its_variable() {
    let args = ["--model", "gemini-test", "--max-tokens", "55", "Weather?"];
    let (request, stdout) = chat("google", GOOGLE_TOOL, "GEMINI_API_KEY", &args);
    assert!(stdout.contains("toolCall: u959pftr get_weather {\"country\":\"Egypt\",\"unit\":\"C\",\"city\":\"Cairo\"}"), "{stdout}");
    assert!(stdout.contains("stopReason: toolUse"), "{stdout}");
    assert_eq!(
        request.path,
        "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
    );
    assert_eq!(request.header("x-goog-api-key"), Some(KEY));
    let body = request.json();
    assert_eq!(body["generationConfig"]["maxOutputTokens"], 55);
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "Weather?"}]}])
    );
}

/// A root holding `README.md`.
fn root(name: &str) -> PathBuf {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "providers", name]
        .iter()
        .collect();
    std::fs::create_dir_all(&dir).expect("root");
    std::fs::write(dir.join("README.md"), "# Demo project\n").expect("readme");
    dir
}

/// Runs `agent --api API` against `server` and checks the two turns: a
/// call of `read` on README.md, then the answer.
fn agent_reads_the_readme(api: &str, server: &MockServer, name: &str) {
    let root = root(name);
    let output = agentstream()
        .args(["agent", "--api", api, "--root", root.to_str().unwrap()])
        .args(["--base-url", &server.origin(), "--model", "test-model"])
        .args(["--api-key-env", "AGENTSTREAM_TEST_PROVIDERS_NO_KEY"])
        .arg("What is in the README?")
        .output()
        .expect("run");
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("  tool call: read {\"path\":\"README.md\"}\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  tool result: # Demo project\\n\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("turn 2\n  assistant: It is a demo project.\n"),
        "{stdout}"
    );
    assert_eq!(server.requests().len(), 2);
}

/// The `name` of each tool in the JSON array `tools`.
fn tool_names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .expect("an array of tools")
        .iter()
        .map(|t| t["name"].as_str().expect("a name"))
        .collect()
}

/// A server that answers `call` until `answered(request)` says the request
/// carries the tool's result, then `answer`.
fn two_turns(
    call: Vec<u8>,
    answer: Vec<u8>,
    answered: impl Fn(&Request) -> bool + Send + Sync + 'static,
) -> MockServer {
    MockServer::start(move |request| {
        Reply::sse(vec![if answered(request) {
            answer.clone()
        } else {
            call.clone()
        }])
    })
    .expect("server")
}

#[test]
fn agent_runs_the_loop_against_the_responses_api() {
    let call = [
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1", "delta": "{\"path\": \"README.md\"}"}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{\"path\": \"README.md\"}", "status": "completed"}}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "usage": {"input_tokens": 9, "output_tokens": 4, "total_tokens": 13}}}),
    ];
    let answer = [
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_1", "delta": "It is a demo project."}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "It is a demo project."}]}}),
        json!({"type": "response.completed", "response": {"id": "resp_2", "status": "completed", "usage": {"input_tokens": 20, "output_tokens": 6, "total_tokens": 26}}}),
    ];
    let lines = |payloads: &[Value]| {
        payloads
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (call, answer) = (responses_sse(&lines(&call)), responses_sse(&lines(&answer)));
    let server = two_turns(call, answer, |request| {
        let input = request.json()["input"].clone();
        input.as_array().is_some_and(|items| {
            items
                .iter()
                .any(|item| item["type"] == "function_call_output" && item["call_id"] == "call_1")
        })
    });
    agent_reads_the_readme("responses", &server, "responses");
    let first = server.requests()[0].json();
    let names = tool_names(&first["tools"]);
    assert_eq!(names, ["read", "ls"]);
}

#[test]
fn agent_runs_the_loop_against_gemini() {
    let call = json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "read", "args": {"path": "README.md"}}}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 4, "totalTokenCount": 13}});
    let answer = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "It is a demo project."}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 6, "totalTokenCount": 26}});
    let (call, answer) = (
        sse_body(&[call.to_string()]),
        sse_body(&[answer.to_string()]),
    );
    let server = two_turns(call, answer, |request| {
        request.json()["contents"]
            .to_string()
            .contains("functionResponse")
    });
    agent_reads_the_readme("google", &server, "google");
    let second = server.requests()[1].json();
    assert_eq!(
        second["contents"][2]["parts"][0]["functionResponse"]["name"],
        "read"
    );
    let first = server.requests()[0].json();
    let names = tool_names(&first["tools"][0]["functionDeclarations"]);
    assert_eq!(names, ["read", "ls"]);
}
