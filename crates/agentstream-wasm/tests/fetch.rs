//! The fetch models against a mock server on 127.0.0.1
//! (`tests/support/mock-server.mjs`, started by `.ci/hosts-wasm.sh`, which
//! passes its URL in `AGENTSTREAM_WASM_MOCK_URL` when these tests are
//! built): streaming text, a tool call, an HTTP error, an abort that
//! cancels the `fetch`, an Anthropic stream, and Mistral's, Azure's and
//! Bedrock's (event-stream frames).
#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use agentstream_wasm::prelude::*;
use futures_util::StreamExt;
use serde_json::json;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

/// The mock server's base URL.
fn server() -> &'static str {
    // Without the server these tests cannot pass: they fail, saying why.
    match option_env!("AGENTSTREAM_WASM_MOCK_URL") {
        Some(url) if !url.is_empty() => url,
        _ => panic!(
            "AGENTSTREAM_WASM_MOCK_URL was not set when the tests were built: \
             start tests/support/mock-server.mjs and pass its URL (see .ci/hosts-wasm.sh)"
        ),
    }
}

fn openai(scenario: &str, id: &str) -> OpenAiCompatModel {
    let config = OpenAiConfig::new(format!("{}/{scenario}/{id}/v1", server()), "mock")
        .with_api_key("test-key");
    OpenAiCompatModel::new(config).expect("client")
}

fn context() -> Context {
    Context::from_messages([user("hello").into()])
}

#[wasm_bindgen_test]
async fn streams_text_incrementally() {
    let model = openai("text", "1");
    let mut stream = EventLoop.spawn_stream(model.stream(&context(), StreamOptions::default()));
    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
    assert!(validate_events(&events).is_empty(), "{events:?}");
    let deltas: Vec<_> = events.iter().filter_map(ModelEvent::delta).collect();
    assert_eq!(deltas, ["Hello", ", wo", "rld"]);
    let message = stream.result().await;
    assert_eq!(message.text(), "Hello, world");
    assert_eq!(message.stop_reason, StopReason::Stop);
}

/// The per-call options, the config's extra body and headers reach the
/// server, and the message carries the host's wall clock, as on the native
/// adapters.
#[wasm_bindgen_test]
async fn sends_the_call_options_and_the_extras_and_stamps_the_time() {
    let config = OpenAiConfig::new(format!("{}/echo/1/v1", server()), "mock")
        .with_api_key("test-key")
        .with_extra_body(json!({"extra_field": "kept"}))
        .with_header("x-agentstream-extra", "yes")
        .expect("a valid header");
    let model = OpenAiCompatModel::new(config).expect("client");
    let options = StreamOptions::default().with_max_tokens(7);
    let mut stream = EventLoop.spawn_stream(model.stream(&context(), options));
    let message = stream.result().await;
    assert_eq!(
        message.stop_reason,
        StopReason::Stop,
        "{:?}",
        message.error_message
    );
    let seen: serde_json::Value = serde_json::from_str(&message.text()).expect("the echo");
    assert_eq!(
        seen,
        json!({"header": "yes", "maxTokens": 7, "extra": "kept"})
    );
    assert!(
        message.timestamp > 1_600_000_000_000,
        "{}",
        message.timestamp
    );
}

#[wasm_bindgen_test]
async fn streams_a_tool_call() {
    let model = openai("tool", "1");
    let mut stream = EventLoop.spawn_stream(model.stream(&context(), StreamOptions::default()));
    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
    assert!(validate_events(&events).is_empty(), "{events:?}");
    let message = stream.result().await;
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolCall(call) => Some((
                call.id.clone(),
                call.name.clone(),
                serde_json::Value::Object(call.arguments.clone()),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [(
            "call_1".to_owned(),
            "read".to_owned(),
            json!({"path": "README.md"})
        )]
    );
}

#[wasm_bindgen_test]
async fn an_http_error_is_one_error_event() {
    let model = openai("error", "1");
    let mut stream = EventLoop.spawn_stream(model.stream(&context(), StreamOptions::default()));
    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
    let types: Vec<_> = events.iter().map(ModelEvent::type_name).collect();
    assert_eq!(types, ["error"]);
    let message = stream.result().await;
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = message.error_message.unwrap_or_default();
    assert!(error.contains("429"), "{error}");
    assert!(error.contains("slow down"), "{error}");
    // The `Retry-After` header reached us (in a browser, through CORS's
    // `access-control-expose-headers`).
    assert!(error.ends_with("retry after 20"), "{error}");
}

#[wasm_bindgen_test]
async fn a_refused_connection_is_an_error_with_the_hosts_cause() {
    // A loopback port the server bound once and closed: nothing listens.
    let port = get_text(&format!("{}/closed-port/-", server())).await;
    let url = format!("http://127.0.0.1:{port}/v1");
    let config = OpenAiConfig::new(url.as_str(), "mock");
    let mut stream = EventLoop.spawn_stream(
        OpenAiCompatModel::new(config)
            .expect("client")
            .stream(&context(), StreamOptions::default()),
    );
    let message = stream.result().await;
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = message.error_message.unwrap_or_default();
    let what = format!("the request to {url}/chat/completions failed: ");
    // Then what the host threw: `TypeError: fetch failed` and its cause
    // (`connect ECONNREFUSED …`) under Node, `TypeError: Failed to fetch`
    // in Chromium.
    assert!(error.starts_with(&what), "{error}");
    assert!(error[what.len()..].starts_with("TypeError: "), "{error}");
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = fetch)]
    fn fetch_url(url: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = fetch)]
    fn fetch_request(request: &web_sys::Request) -> js_sys::Promise;
}

/// An id no other run against the same server used (the server counts
/// closed requests per id for as long as it runs).
fn unique_id(test: &str) -> String {
    format!("{test}-{}", (js_sys::Math::random() * 1e15) as u64)
}

/// The body of a `GET url`, as text.
async fn get_text(url: &str) -> String {
    let response = JsFuture::from(fetch_url(url))
        .await
        .expect("a GET to the server");
    let response: web_sys::Response = response.unchecked_into();
    let text = JsFuture::from(response.text().expect("a body"))
        .await
        .expect("the body's text");
    text.as_string().unwrap_or_default()
}

/// How many `hang` requests of `id` the server saw closed by the client.
async fn closed_by_the_client(id: &str) -> u64 {
    let text = get_text(&format!("{}/stats/{id}", server())).await;
    let stats: serde_json::Value = serde_json::from_str(&text).expect("stats as JSON");
    stats["closed"].as_u64().expect("a count")
}

/// Asks the server until it saw `id`'s request closed, a bounded number of
/// times, 10 s at most (it learns of a cancelled `fetch` asynchronously;
/// once, in Chromium, the server had not seen it after 2 s).
async fn wait_until_closed(id: &str) -> u64 {
    for _ in 0..1000 {
        let closed = closed_by_the_client(id).await;
        if closed > 0 {
            return closed;
        }
        agentstream_wasm::sleep(Duration::from_millis(10)).await;
    }
    0
}

/// An abort mid-stream ends the call in `error(aborted)` with the text so
/// far, and cancels the `fetch`: the server sees its connection closed.
#[wasm_bindgen_test]
async fn an_abort_cancels_the_fetch() {
    let id = &unique_id("abort");
    let model = openai("hang", id);
    let controller = AbortController::new();
    let options = StreamOptions::default().with_signal(controller.signal());
    let mut stream = EventLoop.spawn_stream(model.stream(&context(), options));
    // Wait for the delta the server sends before it hangs.
    while let Some(event) = stream.next().await {
        if event.delta().is_some() {
            break;
        }
    }
    assert_eq!(
        closed_by_the_client(id).await,
        0,
        "the response is still open"
    );
    controller.abort();
    let message = stream.result().await;
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.text(), "partial");
    assert_eq!(
        wait_until_closed(id).await,
        1,
        "the server never saw the fetch cancelled"
    );
}

/// Dropping the stream (nobody listens any more) cancels the `fetch` too.
#[wasm_bindgen_test]
async fn dropping_the_stream_cancels_the_fetch() {
    let id = &unique_id("drop");
    let model = openai("hang", id);
    let mut stream = EventLoop.spawn_stream(model.stream(&context(), StreamOptions::default()));
    while let Some(event) = stream.next().await {
        if event.delta().is_some() {
            break;
        }
    }
    drop(stream);
    assert_eq!(
        wait_until_closed(id).await,
        1,
        "the server never saw the fetch cancelled"
    );
}

#[wasm_bindgen_test]
async fn streams_from_an_anthropic_endpoint() {
    let config = AnthropicConfig::new("mock")
        .with_base_url(format!("{}/anthropic/1", server()))
        .with_api_key("test-key");
    let model = AnthropicModel::new(config).expect("client");
    let mut stream = EventLoop.spawn_stream(model.stream(&context(), StreamOptions::default()));
    let events: Vec<ModelEvent> = stream.by_ref().collect().await;
    assert!(validate_events(&events).is_empty(), "{events:?}");
    let message = stream.result().await;
    assert_eq!(message.text(), "Hi from Claude");
    assert_eq!(message.stop_reason, StopReason::Stop);
}

/// Our `AbortController`, bridged with `to_js_signal`, aborts a plain
/// JavaScript `fetch` mid-body: the pending read rejects with an
/// `AbortError` and the server sees the connection closed.
#[wasm_bindgen_test]
async fn our_abort_aborts_a_plain_fetch_through_the_bridge() {
    let id = &unique_id("bridge");
    let controller = AbortController::new();
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_signal(Some(
        &agentstream_wasm::to_js_signal(&controller.signal()).expect("an AbortController"),
    ));
    let url = format!("{}/hang/{id}/v1/chat/completions", server());
    let request = web_sys::Request::new_with_str_and_init(&url, &init).expect("a request");
    let response: web_sys::Response = JsFuture::from(fetch_request(&request))
        .await
        .expect("the response head")
        .unchecked_into();
    let reader: web_sys::ReadableStreamDefaultReader = response
        .body()
        .expect("a body")
        .get_reader()
        .unchecked_into();
    // The first piece arrives; the next read waits for a body that hangs.
    JsFuture::from(reader.read())
        .await
        .expect("the first piece");
    let pending = JsFuture::from(reader.read());
    controller.abort();
    let rejection = pending.await.expect_err("the read was aborted");
    let name = js_sys::Reflect::get(&rejection, &"name".into()).unwrap_or_default();
    assert_eq!(name.as_string().as_deref(), Some("AbortError"));
    assert_eq!(
        wait_until_closed(id).await,
        1,
        "the server never saw the fetch cancelled"
    );
}

/// `model`'s answer to [`context`], which must have ended normally.
async fn answered(model: &impl Model) -> AssistantMessage {
    let mut stream = EventLoop.spawn_stream(model.stream(&context(), StreamOptions::default()));
    let message = stream.result().await;
    assert_eq!(
        message.stop_reason,
        StopReason::Stop,
        "{:?}",
        message.error_message
    );
    message
}

/// Mistral through `fetch`: its dialect is Chat Completions' chunks, so
/// the `text` scenario's stream arrives whole, at `{base}/v1/chat/completions`.
#[wasm_bindgen_test]
async fn mistral_streams_text() {
    let config =
        MistralConfig::new(format!("{}/text/m1", server()), "mock").with_api_key("test-key");
    let model = MistralModel::new(config).expect("client");
    let message = answered(&model).await;
    assert_eq!(message.text(), "Hello, world");
    assert_eq!(message.provider, "mistral");
}

/// Azure OpenAI through `fetch`: its recorded Responses stream, at
/// `{base}/openai/v1/responses?api-version=…` with the `api-key` header.
#[wasm_bindgen_test]
async fn azure_streams_its_recorded_answer() {
    let config =
        AzureConfig::new(format!("{}/azure/a1", server()), "gpt-5.1").with_api_key("test-key");
    let model = AzureModel::new(config).expect("client");
    let message = answered(&model).await;
    assert_eq!(message.text(), "Hello");
    assert_eq!(message.api, "azure-openai-responses");
    assert_eq!(message.usage.input, 11);
}

/// Bedrock through `fetch`: its recorded ConverseStream events as AWS
/// event-stream frames (binary, cut inside a frame), decoded by the same
/// framing seam as on the native hosts.
#[wasm_bindgen_test]
async fn bedrock_streams_its_recorded_frames() {
    let config = BedrockConfig::new("anthropic.claude-sonnet-4-5-20250929-v1:0", "us-east-1")
        .with_base_url(format!("{}/bedrock/b1", server()));
    let model = BedrockModel::new(config).expect("client");
    let message = answered(&model).await;
    assert!(
        message.text().contains("3** r's in \"strawberry.\""),
        "{}",
        message.text()
    );
    assert_eq!((message.usage.input, message.usage.output), (22, 55));
}

// The aliases of Bedrock, Azure and Mistral, and their requests (no server).
agentstream_testkit::provider_alias_tests!(host: agentstream_wasm, test: wasm_bindgen_test);
