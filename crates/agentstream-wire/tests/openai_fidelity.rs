//! The OpenAI fields compared with Pi's provider: `thinkingSignature` as
//! the reasoning field (and the field used again on the way back),
//! `responseModel`, `cacheWrite`, timestamps and costs, on the recorded
//! streams in `tests/fixtures/openai-sse/` and on unit payloads.

use agentstream::message::{
    assistant, text, user, AssistantMessage, ContentBlock, Context, StopReason, ThinkingContent,
};
use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::openai::{OpenAiChat, OpenAiProjector, OpenAiStream};
use agentstream_wire::pricing::Pricing;
use serde_json::{json, Value};

mod body_support;
use body_support::request_body;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/openai-sse/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn checked(events: Vec<ModelEvent>) -> Vec<ModelEvent> {
    let findings = validate_events(&events);
    assert!(findings.is_empty(), "{findings:?}\n{events:#?}");
    events
}

fn sse(stream: OpenAiStream, body: &str) -> Vec<ModelEvent> {
    let mut stream = stream;
    let mut events: Vec<ModelEvent> = stream.feed(body.as_bytes()).collect();
    events.extend(stream.finish_input());
    checked(events)
}

fn chunks(model: &str, payloads: &[Value]) -> Vec<ModelEvent> {
    let mut projector = OpenAiProjector::new(model, "openai");
    let mut events = Vec::new();
    for payload in payloads {
        projector.push_data(&payload.to_string(), &mut events);
    }
    projector.push_data("[DONE]", &mut events);
    checked(events)
}

fn last(events: &[ModelEvent]) -> &AssistantMessage {
    events
        .last()
        .and_then(ModelEvent::terminal_message)
        .unwrap()
}

fn delta(delta: Value) -> Value {
    json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta}]})
}

fn finish(reason: &str) -> Value {
    json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

#[test]
fn the_recorded_streams_name_the_served_model() {
    // openai-text.sse was answered by gpt-4o-2024-08-06.
    let body = fixture("openai-text.sse");
    let events = sse(OpenAiStream::new("gpt-4o", "openai", None), &body);
    assert_eq!(last(&events).extra["responseModel"], "gpt-4o-2024-08-06");
    // Already in the start partial: the first chunk named it.
    let ModelEvent::Start { partial } = &events[0] else {
        panic!()
    };
    assert_eq!(
        partial.to_message().extra["responseModel"],
        "gpt-4o-2024-08-06"
    );
    // Asking for the exact model leaves it out, as Pi does.
    let events = sse(
        OpenAiStream::new("gpt-4o-2024-08-06", "openai", None),
        &body,
    );
    assert!(!last(&events).extra.contains_key("responseModel"));
    // A fixture without `model` in its chunks has none either.
    let body = fixture("compat-tool-call-index1-no-final-blank.sse");
    let has_model = body.contains("\"model\"");
    let events = sse(OpenAiStream::new("requested", "openai", None), &body);
    assert_eq!(last(&events).extra.contains_key("responseModel"), has_model);
}

#[test]
fn a_served_model_named_only_later_reaches_the_final_message() {
    let events = chunks(
        "router/auto",
        &[
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": "hi"}}]}),
            json!({"id": "c1", "model": "vendor/picked", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            json!({"id": "c1", "model": "vendor/other", "choices": []}),
        ],
    );
    let message = last(&events);
    assert_eq!(message.model, "router/auto");
    assert_eq!(message.extra["responseModel"], "vendor/picked");
}

#[test]
fn the_recorded_streams_carry_the_timestamp_and_the_cost() {
    let body = fixture("openai-parallel-tool-calls.sse");
    let stream = OpenAiStream::new("gpt-4o", "openai", None)
        .with_timestamp(1_764_000_000_123)
        .with_pricing(Some(Pricing::new(2.5, 10.0)));
    let events = sse(stream, &body);
    for event in &events {
        if let Some(partial) = event.partial() {
            assert_eq!(partial.to_message().timestamp, 1_764_000_000_123);
        }
    }
    let message = last(&events);
    assert_eq!(message.timestamp, 1_764_000_000_123);
    // 149 prompt and 60 completion tokens.
    assert_eq!((message.usage.input, message.usage.output), (149, 60));
    assert_eq!(message.usage.cost.input, 149.0 * 2.5 / 1e6);
    assert_eq!(message.usage.cost.output, 60.0 * 10.0 / 1e6);
    assert_eq!(
        message.usage.cost.total,
        message.usage.cost.input + message.usage.cost.output
    );
    // Without prices, the costs stay 0.
    let events = sse(OpenAiStream::new("gpt-4o", "openai", None), &body);
    assert_eq!(last(&events).usage.cost.total, 0.0);
    assert_eq!(last(&events).timestamp, 0);
}

#[test]
fn the_reasoning_field_is_the_thinking_signature() {
    for field in ["reasoning_content", "reasoning", "reasoning_text"] {
        let events = chunks(
            "m",
            &[
                delta(json!({ field: "Let me think." })),
                delta(json!({"content": "42"})),
                finish("stop"),
            ],
        );
        let message = last(&events);
        let ContentBlock::Thinking(t) = &message.content[0] else {
            panic!("{message:?}")
        };
        assert_eq!(t.thinking, "Let me think.");
        assert_eq!(t.thinking_signature.as_deref(), Some(field));
    }
    // Both fields with the same text: read once, from reasoning_content.
    let events = chunks(
        "m",
        &[
            delta(json!({"reasoning_content": "a", "reasoning": "a"})),
            finish("stop"),
        ],
    );
    let ContentBlock::Thinking(t) = &last(&events).content[0] else {
        panic!()
    };
    assert_eq!(
        (t.thinking.as_str(), t.thinking_signature.as_deref()),
        ("a", Some("reasoning_content"))
    );
}

fn with_thinking(model: &str, signature: Option<&str>) -> AssistantMessage {
    let mut m = assistant(
        [
            ContentBlock::Thinking(ThinkingContent {
                thinking: "first".into(),
                thinking_signature: signature.map(String::from),
                ..ThinkingContent::default()
            }),
            ContentBlock::Thinking(ThinkingContent {
                thinking: "second".into(),
                thinking_signature: signature.map(String::from),
                ..ThinkingContent::default()
            }),
            text("answer"),
        ],
        StopReason::Stop,
    );
    m.provider = "openai".into();
    m.api = "openai-completions".into();
    m.model = model.into();
    m
}

fn sent_assistant(message: AssistantMessage, model: &str) -> Value {
    let context = Context::from_messages([user("q").into(), message.into(), user("q2").into()]);
    let body = request_body(&OpenAiChat::default(), model, &context).unwrap();
    body["messages"][1].clone()
}

#[test]
fn same_model_thinking_goes_back_in_its_field() {
    let sent = sent_assistant(with_thinking("qwen", Some("reasoning_content")), "qwen");
    assert_eq!(
        sent,
        json!({"role": "assistant", "content": "answer", "reasoning_content": "first\nsecond"})
    );
    let sent = sent_assistant(with_thinking("qwen", Some("reasoning")), "qwen");
    assert_eq!(sent["reasoning"], "first\nsecond");
    // Without a signature, or one that is not a field name, nothing is sent.
    for signature in [None, Some("content"), Some("role"), Some("EncryptedBlob==")] {
        let sent = sent_assistant(with_thinking("qwen", signature), "qwen");
        assert_eq!(
            sent,
            json!({"role": "assistant", "content": "answer"}),
            "{signature:?}"
        );
    }
    // Another model's thinking is sent as text.
    let sent = sent_assistant(with_thinking("qwen", Some("reasoning_content")), "gpt-4o");
    assert_eq!(
        sent,
        json!({"role": "assistant", "content": "firstsecondanswer"})
    );
}

#[test]
fn a_decoded_reasoning_turn_round_trips_into_the_next_request() {
    let events = chunks(
        "deepseek-reasoner",
        &[
            delta(json!({"reasoning_content": "think"})),
            delta(json!({"content": "done"})),
            finish("stop"),
        ],
    );
    let message = last(&events).clone();
    let sent = sent_assistant(message, "deepseek-reasoner");
    assert_eq!(sent["reasoning_content"], "think");
    assert_eq!(sent["content"], "done");
}

fn usage_of(usage: Value) -> agentstream::message::Usage {
    let events = chunks(
        "m",
        &[
            delta(json!({"content": "x"})),
            finish("stop"),
            json!({"id": "c1", "choices": [], "usage": usage}),
        ],
    );
    last(&events).usage.clone()
}

#[test]
fn cache_writes_are_read_where_providers_send_them() {
    // OpenRouter: writes and reads inside prompt_tokens.
    let u = usage_of(json!({
        "prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010,
        "prompt_tokens_details": {"cached_tokens": 200, "cache_write_tokens": 300}
    }));
    assert_eq!(
        (u.input, u.cache_read, u.cache_write, u.output),
        (500, 200, 300, 10)
    );
    assert_eq!(u.total_tokens, Some(1010));
    // Anthropic's name passed through by a gateway, at either level.
    let u = usage_of(json!({
        "prompt_tokens": 100, "completion_tokens": 1,
        "prompt_tokens_details": {"cache_creation_input_tokens": 40}
    }));
    assert_eq!((u.input, u.cache_write), (60, 40));
    assert_eq!(u.total_tokens, Some(101));
    let u = usage_of(json!({
        "prompt_tokens": 100, "completion_tokens": 1, "cache_creation_input_tokens": 30
    }));
    assert_eq!((u.input, u.cache_write), (70, 30));
    // A write count above the prompt is capped: input never goes negative.
    let u = usage_of(json!({
        "prompt_tokens": 10, "completion_tokens": 1,
        "prompt_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 99}
    }));
    assert_eq!((u.input, u.cache_read, u.cache_write), (0, 4, 6));
    // No write field: 0, as before.
    let u = usage_of(json!({"prompt_tokens": 10, "completion_tokens": 1}));
    assert_eq!(u.cache_write, 0);
}

#[test]
fn costs_follow_the_price_table_on_every_terminal() {
    let pricing = Pricing::new(1.0, 2.0)
        .with_cache_read(0.5)
        .with_cache_write(4.0);
    let mut projector = OpenAiProjector::new("m", "openai");
    projector.set_pricing(Some(pricing));
    let mut events = Vec::new();
    for payload in [
        delta(json!({"content": "x"})),
        json!({"id": "c1", "choices": [], "usage": {
            "prompt_tokens": 3_000_000, "completion_tokens": 1_000_000,
            "prompt_tokens_details": {"cached_tokens": 1_000_000, "cache_write_tokens": 1_000_000}
        }}),
    ] {
        projector.push_data(&payload.to_string(), &mut events);
    }
    // The stream is cut: the error message is priced too.
    projector.finish(&mut events);
    let events = checked(events);
    let message = last(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    let cost = &message.usage.cost;
    assert_eq!(
        (cost.input, cost.output, cost.cache_read, cost.cache_write),
        (1.0, 2.0, 0.5, 4.0)
    );
    assert_eq!(cost.total, 7.5);
}

#[test]
fn a_recorded_openrouter_stream_decodes_whole() {
    // A keep-alive comment first, `role` in every delta, and the finish
    // reason on two chunks, the second carrying the usage.
    let body = fixture("openrouter-tool-call.sse");
    assert!(body.starts_with(": OPENROUTER PROCESSING\n\n"));
    let events = sse(
        OpenAiStream::new("openai/gpt-4o-mini", "openrouter", None),
        &body,
    );
    let message = last(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let [ContentBlock::ToolCall(call)] = message.content.as_slice() else {
        panic!("{:?}", message.content)
    };
    assert_eq!(call.id, "call_L7mHMq49ZSUTBHjLJfBIP2eT");
    assert_eq!(call.name, "get_weather");
    assert_eq!(
        Value::Object(call.arguments.clone()),
        json!({"city": "Paris"})
    );
    assert_eq!((message.usage.input, message.usage.output), (67, 5));
    assert_eq!(
        message.extra["responseId"],
        "gen-1778031306-HYzOq04JIk1hZQ4iaNjD"
    );
}
