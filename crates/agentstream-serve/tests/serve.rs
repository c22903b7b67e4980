//! The server end to end over real HTTP: routes, errors, scripted failures,
//! disconnects, and our own OpenAI client against it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentstream::message::{assistant, text, tool_call, user, Context, Message, StopReason};
use agentstream::model::{
    AbortSignal, Model, ModelStream, ScriptStep, ScriptedModel, ScriptedTurn, StreamOptions,
    EXHAUSTED_MESSAGE,
};
use agentstream_serve::{ServeTurn, Server};
use agentstream_tokio::{AnthropicModel, OpenAiCompatModel, Runtime as _};
use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::openai::OpenAiConfig;
use serde_json::{json, Value};

mod support;

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

async fn post(url: &str, body: impl Into<reqwest::Body>) -> (u16, Option<String>, Value) {
    let response = support::post_json(url, body).await;
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = response.bytes().await.unwrap();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
    (status, retry, value)
}

/// POSTs `body` and checks for HTTP 200; the body is left to the caller.
async fn post_raw(url: &str, body: &Value) -> reqwest::Response {
    let response = client()
        .post(url)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response
}

async fn get_json(url: &str) -> Value {
    serde_json::from_slice(&support::get_bytes(url).await).unwrap()
}

fn script(value: Value) -> Vec<ServeTurn> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| ServeTurn::from_value(v.clone()).unwrap())
        .collect()
}

fn message_json(text_: &str) -> Value {
    serde_json::to_value(assistant([text(text_)], StopReason::Stop)).unwrap()
}

#[tokio::test]
async fn openai_stream_looks_like_the_recordings() {
    let reply = assistant(
        [
            text("Let me check."),
            tool_call("call_1", "weather", json!({"city": "Paris"})),
        ],
        StopReason::ToolUse,
    );
    let server = Server::builder(ScriptedModel::new([reply]))
        .chunks(3)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let body = json!({"model": "gpt-4o", "stream": true, "stream_options": {"include_usage": true},
                      "messages": [{"role": "user", "content": "weather?"}]});
    let response = post_raw(&format!("{}/chat/completions", server.url()), &body).await;
    assert_eq!(
        response.headers()["content-type"],
        "text/event-stream; charset=utf-8"
    );
    let text_ = response.text().await.unwrap();
    let events: Vec<&str> = text_.split("\n\n").filter(|e| !e.is_empty()).collect();
    let payloads: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e.strip_prefix("data: ").unwrap()).unwrap())
        .collect();
    assert_eq!(events.last(), Some(&"data: [DONE]"));
    assert_eq!(payloads[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(payloads[0]["object"], "chat.completion.chunk");
    let content: String = payloads
        .iter()
        .filter_map(|p| p["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Let me check.");
    let calls: Vec<&Value> = payloads
        .iter()
        .filter_map(|p| p["choices"][0]["delta"].get("tool_calls"))
        .collect();
    assert_eq!(calls[0][0]["id"], "call_1");
    assert_eq!(calls[0][0]["function"]["name"], "weather");
    let arguments: String = calls
        .iter()
        .filter_map(|c| c[0]["function"]["arguments"].as_str())
        .collect();
    assert_eq!(arguments, r#"{"city":"Paris"}"#);
    assert!(calls.len() > 2, "arguments come in fragments: {calls:?}");
    let finish = &payloads[payloads.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(finish["choices"][0]["delta"], json!({}));
    let usage = &payloads[payloads.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["total_tokens"].is_u64());
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].context.messages,
        [Message::from(user("weather?"))]
    );
    server.shutdown().await;
}

/// The Chat Completions and the Messages endpoint under the base URL `url`.
fn endpoints(url: &str) -> (String, String) {
    (format!("{url}/chat/completions"), format!("{url}/messages"))
}

#[tokio::test]
async fn bad_requests_get_provider_errors() {
    let server = Server::builder(ScriptedModel::new([assistant(
        [text("x")],
        StopReason::Stop,
    )]))
    .max_request_bytes(1000)
    .bind("127.0.0.1:0")
    .await
    .unwrap();
    let url = server.url();
    let (openai, anthropic) = endpoints(&url);

    let (status, _, body) = post(&openai, "{not json").await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert!(body["error"]["param"].is_null());

    let (status, _, body) = post(&openai, r#"{"model": "m"}"#).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["param"], "messages");
    assert_eq!(body["error"]["code"], "missing_required_parameter");

    let (status, _, body) = post(&anthropic, r#"{"model": "m"}"#).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        json!({"type": "error", "error": {"type": "invalid_request_error",
                                          "message": "messages: Field required"}})
    );

    let (status, _, body) = post(&anthropic, "{not json").await;
    assert_eq!(status, 400);
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "invalid_request_error");

    let (status, _, body) = post(
        &anthropic,
        r#"{"model": "m", "messages": [{"role": "system", "content": "x"}]}"#,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["message"],
        "messages.0.role: Input should be 'user' or 'assistant'"
    );

    let (status, _, body) = post(&openai, r#"{"model": "m", "messages": "hi"}"#).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], "invalid_type");

    let (status, _, body) = post(&anthropic, vec![b' '; 5000]).await;
    assert_eq!(status, 413);
    assert_eq!(body["error"]["type"], "request_too_large");

    let (status, _, body) = post(&format!("{url}/embeddings"), "{}").await;
    assert_eq!(status, 404);
    assert_eq!(
        body["error"]["message"],
        "Invalid URL (POST /v1/embeddings)"
    );

    let response = client().get(&openai).send().await.unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "POST");
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error");

    let response = client()
        .get(format!("{url}/nothing"))
        .header("anthropic-version", "2023-06-01")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["error"]["type"], "not_found_error");

    // None of these reached the model.
    assert!(server.requests().is_empty());
    server.shutdown().await;
}

/// A scripted failure with nothing to stream is answered as a failed
/// provider request (HTTP 500 with the provider's error body), not as a
/// stream that starts and fails, whether the call streams or not and with
/// or without `--delay`. (The core's short trace plays such a turn as
/// `start → error`, chapter 04's shape; serve does not put that on the
/// wire.)
#[tokio::test]
async fn a_failure_with_nothing_streamed_is_an_http_error() {
    for delay in [Duration::ZERO, Duration::from_millis(1)] {
        let turns = script(json!([
            {"stopReason": "error", "errorMessage": "the GPU caught fire"},
            {"stopReason": "aborted", "errorMessage": "user cancelled"},
            {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "empty"},
        ]));
        let server = Server::from_script(turns)
            .delay(delay)
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        let url = server.url();
        let streaming = json!({"model": "m", "stream": true,
            "messages": [{"role": "user", "content": "hi"}]})
        .to_string();
        let whole =
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).to_string();
        let (status, _, body) = post(&format!("{url}/chat/completions"), streaming).await;
        assert_eq!(status, 500, "{delay:?}");
        assert_eq!(body["error"]["message"], "the GPU caught fire");
        let (status, _, body) = post(&format!("{url}/messages"), whole.clone()).await;
        assert_eq!(status, 500, "{delay:?}");
        assert_eq!(body["error"]["message"], "user cancelled");
        let (status, _, body) = post(&format!("{url}/chat/completions"), whole).await;
        assert_eq!(status, 500, "{delay:?}");
        assert_eq!(body["error"]["message"], "empty");
        server.shutdown().await;
    }
}

#[tokio::test]
async fn scripted_http_errors_and_exhaustion() {
    let turns = script(json!([
        {"httpError": {"status": 429, "message": "Rate limit reached", "retryAfter": 7}},
        {"httpError": {"status": 529, "message": "Overloaded"}},
        message_json("finally"),
    ]));
    let server = Server::from_script(turns)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let url = server.url();
    let (openai, anthropic) = endpoints(&url);
    let request =
        json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).to_string();

    let (status, retry, body) = post(&openai, request.clone()).await;
    assert_eq!((status, retry.as_deref()), (429, Some("7")));
    assert_eq!(body["error"]["message"], "Rate limit reached");
    assert_eq!(body["error"]["type"], "requests");

    let (status, retry, body) = post(&anthropic, request.clone()).await;
    assert_eq!((status, retry), (529, None));
    assert_eq!(body["error"]["type"], "overloaded_error");

    let (status, _, body) = post(&openai, request.clone()).await;
    assert_eq!(status, 200);
    assert_eq!(body["choices"][0]["message"]["content"], "finally");

    // Past the end: a status the SDKs do not retry (#37).
    let (status, _, body) = post(&openai, request.clone()).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["message"], EXHAUSTED_MESSAGE);
    assert_eq!(body["error"]["code"], "script_exhausted");
    let (status, _, body) = post(&anthropic, request).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["type"], "invalid_request_error");

    // Every call was recorded, the failed ones too, and GET returns them.
    assert_eq!(server.requests().len(), 5);
    let listed = get_json(&format!("{url}/requests")).await;
    let apis: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["api"].as_str().unwrap())
        .collect();
    assert_eq!(
        apis,
        [
            "openai-completions",
            "anthropic-messages",
            "openai-completions",
            "openai-completions",
            "anthropic-messages"
        ]
    );
    assert_eq!(listed[0]["context"]["messages"][0]["content"], "hi");
    let models = get_json(&format!("{url}/models")).await;
    assert_eq!(models["data"][0]["id"], "scripted");
    server.shutdown().await;
}

fn openai_model(server: &Server) -> OpenAiCompatModel {
    OpenAiCompatModel::new(OpenAiConfig::new(server.url(), "gpt-test")).unwrap()
}

#[tokio::test]
async fn stream_errors_and_cuts_reach_the_client() {
    let turns = script(json!([
        {"turn": message_json("hello world"), "streamError": {"message": "Overloaded",
            "type": "overloaded_error"}, "afterEvents": 2},
        {"turn": message_json("hello world"), "cutAfterEvents": 2},
        {"stopReason": "error", "errorMessage": "the GPU caught fire", "partialText": "I was"},
    ]));
    let server = Server::from_script(turns)
        .chunks(4)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let model = openai_model(&server);
    let context = Context::from_messages([user("hi").into()]);

    let mut stream = model.stream(&context, StreamOptions::default());
    let result = stream.result().await;
    assert_eq!(result.stop_reason, StopReason::Error);
    assert!(
        result
            .error_message
            .as_deref()
            .unwrap()
            .contains("Overloaded"),
        "{result:?}"
    );
    assert_eq!(result.text(), "hel");

    let mut stream = model.stream(&context, StreamOptions::default());
    let result = stream.result().await;
    assert_eq!(result.stop_reason, StopReason::Error, "{result:?}");
    assert_eq!(result.text(), "hel");

    let mut stream = model.stream(&context, StreamOptions::default());
    let result = stream.result().await;
    assert_eq!(result.stop_reason, StopReason::Error);
    assert!(result
        .error_message
        .as_deref()
        .unwrap()
        .contains("the GPU caught fire"));
    assert_eq!(result.text(), "I was");
    server.shutdown().await;
}

/// A model that keeps the signal of every call it is given.
struct Watched {
    inner: ScriptedModel,
    signals: Arc<Mutex<Vec<AbortSignal>>>,
}

impl Model for Watched {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        self.signals
            .lock()
            .unwrap()
            .push(options.signal.clone().unwrap());
        self.inner.stream(context, options)
    }
}

#[tokio::test]
async fn a_client_that_disconnects_stops_its_turn() {
    let long = "word ".repeat(200);
    let signals = Arc::new(Mutex::new(Vec::new()));
    let model = Watched {
        inner: ScriptedModel::new([ScriptedTurn::message(assistant(
            [text(long)],
            StopReason::Stop,
        ))
        .chunked(200.try_into().unwrap())])
        .with_pacer(agentstream_tokio::Tokio.pause(Duration::from_millis(20))),
        signals: signals.clone(),
    };
    let server = Server::builder(model).bind("127.0.0.1:0").await.unwrap();
    let body = json!({"model": "m", "stream": true,
                      "messages": [{"role": "user", "content": "talk"}]});
    let mut response = client()
        .post(format!("{}/chat/completions", server.url()))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(response.chunk().await.unwrap().is_some());
    let signal = signals.lock().unwrap()[0].clone();
    assert!(!signal.is_aborted(), "the turn is still playing");
    drop(response);
    // The server notices the closed connection and aborts the call; wait
    // for it (bounded by the test harness, not asserted as a duration).
    tokio::time::timeout(Duration::from_secs(30), signal.aborted())
        .await
        .expect("the call was aborted after the client left");
    server.shutdown().await;
}

#[tokio::test]
async fn requests_are_appended_to_a_file() {
    let path = support::requests_file("serve");
    let server = Server::builder(ScriptedModel::new([
        assistant([text("a")], StopReason::Stop),
        assistant([text("b")], StopReason::Stop),
    ]))
    .requests_file(&path)
    .bind("127.0.0.1:0")
    .await
    .unwrap();
    for (route, content) in [("chat/completions", "one"), ("messages", "two")] {
        let body = json!({"model": "m", "system": "sys",
                          "messages": [{"role": "user", "content": content}]});
        let (status, _, _) = post(&format!("{}/{route}", server.url()), body.to_string()).await;
        assert_eq!(status, 200);
    }
    server.shutdown().await;
    let lines: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["call"], 0);
    assert_eq!(lines[1]["context"]["messages"][0]["content"], "two");
    assert_eq!(lines[1]["context"]["systemPrompt"], "sys");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// The answer of a turn computed from the request: the tool result the
/// client sent back, quoted.
fn answer_from_tool_result(context: &Context) -> ScriptedTurn {
    let result = context.messages.iter().rev().find_map(|m| match m {
        agentstream::message::Message::ToolResult(r) => {
            Some(format!("{}={}", r.tool_name, r.text()))
        }
        _ => None,
    });
    let reply = result.unwrap_or_else(|| "no tool result".into());
    ScriptedTurn::message(assistant([text(reply)], StopReason::Stop))
}

#[tokio::test]
async fn turns_computed_from_the_request_see_the_decoded_context() {
    // Per protocol: a tool call, then a turn that answers from the tool
    // result the client sends back.
    let turns = || {
        [
            ScriptStep::from(assistant(
                [tool_call("call_1", "weather", json!({"city": "Paris"}))],
                StopReason::ToolUse,
            )),
            ScriptStep::reply(answer_from_tool_result),
        ]
    };
    let server = Server::builder(ScriptedModel::new(turns().into_iter().chain(turns())))
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let base = server.url().trim_end_matches("/v1").to_owned();
    let clients: [Box<dyn Model>; 2] = [
        Box::new(openai_model(&server)),
        Box::new(AnthropicModel::new(AnthropicConfig::new("claude").with_base_url(base)).unwrap()),
    ];
    for (i, model) in clients.iter().enumerate() {
        let mut context = Context::from_messages([user("weather in Paris?").into()]);
        let call = model
            .stream(&context, StreamOptions::default())
            .result()
            .await;
        assert_eq!(call.stop_reason, StopReason::ToolUse, "{call:?}");
        let id = call.tool_calls().next().unwrap().id.clone();
        context.messages.push(call.into());
        context
            .messages
            .push(agentstream::message::Message::ToolResult(
                agentstream::message::ToolResultMessage {
                    tool_call_id: id,
                    tool_name: "weather".into(),
                    content: vec![text(format!("{}C", 18 + i))],
                    details: None,
                    is_error: false,
                    timestamp: 0,
                    extra: serde_json::Map::new(),
                },
            ));
        let answer = model
            .stream(&context, StreamOptions::default())
            .result()
            .await;
        // The name comes from the server's decoding: the tool result on the
        // wire carries only the call id, named after the earlier call.
        assert_eq!(answer.text(), format!("weather={}C", 18 + i), "{answer:?}");
    }
    assert_eq!(server.requests().len(), 4);
    server.shutdown().await;
}

#[tokio::test]
async fn anthropic_pings_and_delays_keep_the_recorded_shape() {
    let reply = assistant(
        [text("Hello there"), tool_call("toolu_1", "ls", json!({}))],
        StopReason::ToolUse,
    );
    let server = Server::builder(ScriptedModel::new([reply]))
        .pings(true)
        .delay(Duration::from_millis(1))
        .chunks(2)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let body = json!({"model": "claude", "max_tokens": 10, "stream": true,
                      "messages": [{"role": "user", "content": "hi"}]});
    let response = post_raw(&format!("{}/messages", server.url()), &body).await;
    let sse = response.text().await.unwrap();
    let names: Vec<&str> = sse
        .split("\n\n")
        .filter_map(|event| event.lines().next()?.strip_prefix("event: "))
        .collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ],
        "{sse}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn by_request_elements_pick_their_turn_from_the_request() {
    let turns = script(json!([
        {"byRequest": [
            {"ifContains": "weather", "turn": message_json("Let me check.")},
            {"turn": message_json("Ask me about the weather.")},
        ]},
        {"byRequest": [
            {"ifContains": "error", "turn": message_json("The tool failed.")},
            {"ifContains": "18C", "turn": message_json("It is 18C.")},
        ]},
        {"byRequest": [{"ifContains": "never", "turn": message_json("unreachable")}]},
    ]));
    let server = Server::from_script(turns)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let openai = format!("{}/chat/completions", server.url());
    let anthropic = format!("{}/messages", server.url());

    let body =
        json!({"model": "m", "messages": [{"role": "user", "content": "How is the weather?"}]});
    let (status, _, reply) = post(&openai, body.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(reply["choices"][0]["message"]["content"], "Let me check.");

    // The last message is a tool result: its text decides.
    let body = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "How is the weather?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "18C"}]},
    ]});
    let (status, _, reply) = post(&anthropic, body.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(reply["content"][0]["text"], "It is 18C.");

    let body = json!({"model": "m", "messages": [{"role": "user", "content": "hello"}]});
    let (status, _, reply) = post(&openai, body.to_string()).await;
    // Not a status the SDKs retry: the script has no answer for it.
    assert_eq!(status, agentstream_serve::EXHAUSTED_STATUS);
    assert_eq!(
        reply["error"]["message"],
        agentstream_serve::NO_MATCH_MESSAGE
    );
    assert_eq!(reply["error"]["code"], agentstream_serve::UNMATCHED_CODE);
    assert_eq!(server.requests().len(), 3);
    server.shutdown().await;
}

#[tokio::test]
async fn the_calls_options_are_recorded_beside_the_context() {
    let server = Server::builder(ScriptedModel::new([
        assistant([text("a")], StopReason::Stop),
        assistant([text("b")], StopReason::Stop),
    ]))
    .bind("127.0.0.1:0")
    .await
    .unwrap();
    let url = server.url();
    post_raw(
        &format!("{url}/chat/completions"),
        &json!({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                "temperature": 0.2, "max_completion_tokens": 99, "stop": ["END"],
                "tool_choice": "none", "reasoning_effort": "high",
                "response_format": {"type": "json_schema", "json_schema":
                    {"name": "w", "schema": {"type": "object"}}}}),
    )
    .await;
    post_raw(
        &format!("{url}/messages"),
        &json!({"model": "m", "max_tokens": 512, "messages": [{"role": "user", "content": "hi"}],
                "tool_choice": {"type": "tool", "name": "ls"},
                "thinking": {"type": "enabled", "budget_tokens": 256}}),
    )
    .await;
    let expected = [
        json!({"temperature": 0.2, "maxTokens": 99, "stop": ["END"], "toolChoice": "none",
               "reasoningEffort": "high",
               "responseFormat": {"name": "w", "schema": {"type": "object"}, "strict": false}}),
        json!({"maxTokens": 512, "toolChoice": {"tool": "ls"}, "thinkingBudget": 256}),
    ];
    let recorded: Vec<Value> = server.requests().into_iter().map(|r| r.options).collect();
    assert_eq!(recorded, expected);
    let listed = get_json(&format!("{url}/requests")).await;
    let listed: Vec<Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["options"].clone())
        .collect();
    assert_eq!(listed, expected);
    server.shutdown().await;
}
