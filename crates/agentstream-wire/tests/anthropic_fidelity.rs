//! The Anthropic fields compared with Pi's provider on the recorded streams
//! in `tests/fixtures/anthropic-sse/`: `responseModel`, timestamps and
//! costs, and thinking sent back to the same model.

use agentstream::message::{user, ContentBlock, Context, Message};
use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::anthropic::{AnthropicMessages, AnthropicProjector, AnthropicStream};
use agentstream_wire::pricing::Pricing;

mod body_support;
use body_support::request_body;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/anthropic-sse/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn checked(events: Vec<ModelEvent>) -> Vec<ModelEvent> {
    let findings = validate_events(&events);
    assert!(findings.is_empty(), "{findings:?}");
    events
}

fn sse(stream: AnthropicStream, body: &str) -> Vec<ModelEvent> {
    let mut stream = stream;
    let mut events: Vec<ModelEvent> = stream.feed(body.as_bytes()).collect();
    events.extend(stream.finish_input());
    checked(events)
}

fn chunks(mut projector: AnthropicProjector, body: &str) -> Vec<ModelEvent> {
    let mut events = Vec::new();
    for line in body.lines().filter(|l| !l.trim().is_empty()) {
        projector.push_data(line, &mut events);
    }
    projector.finish(&mut events);
    checked(events)
}

fn last(events: &[ModelEvent]) -> &agentstream::message::AssistantMessage {
    events
        .last()
        .and_then(ModelEvent::terminal_message)
        .unwrap()
}

#[test]
fn the_served_model_is_the_response_model_when_it_differs() {
    let body = fixture("anthropic-text-tool-use.sse");
    let events = sse(
        AnthropicStream::new("claude-sonnet-4-0", "anthropic", None),
        &body,
    );
    assert_eq!(
        last(&events).extra["responseModel"],
        "claude-sonnet-4-20250514"
    );
    let events = sse(
        AnthropicStream::new("claude-sonnet-4-20250514", "anthropic", None),
        &body,
    );
    assert!(!last(&events).extra.contains_key("responseModel"));
}

#[test]
fn timestamps_and_costs_on_a_recorded_stream() {
    let body = fixture("anthropic-text-ping.sse");
    let pricing = Pricing::new(15.0, 75.0)
        .with_cache_read(1.5)
        .with_cache_write(18.75);
    let stream = AnthropicStream::new("claude-3-opus-latest", "anthropic", None)
        .with_timestamp(42)
        .with_pricing(Some(pricing));
    let events = sse(stream, &body);
    let message = last(&events);
    assert_eq!(message.timestamp, 42);
    let u = &message.usage;
    assert!(u.input + u.output > 0, "{u:?}");
    assert_eq!(u.cost, pricing.cost(u));
    assert_eq!(
        u.cost.total,
        u.cost.input + u.cost.output + u.cost.cache_read + u.cost.cache_write
    );
    assert!(u.cost.total > 0.0);
}

#[test]
fn recorded_thinking_goes_back_signed_to_its_model_and_as_text_elsewhere() {
    let body = fixture("anthropic-thinking-signature.chunks.jsonl");
    let model = "claude-sonnet-4-5-20250929";
    let events = chunks(AnthropicProjector::new(model, "anthropic"), &body);
    let message = last(&events).clone();
    let ContentBlock::Thinking(thinking) = &message.content[0] else {
        panic!("{message:?}")
    };
    let signature = thinking.thinking_signature.clone().unwrap();
    let text = thinking.thinking.clone();
    let context = Context::from_messages([
        user("q").into(),
        Message::Assistant(message),
        user("again").into(),
    ]);
    let body = request_body(&AnthropicMessages::default(), model, &context).unwrap();
    let first = &body["messages"][1]["content"][0];
    assert_eq!(first["type"], "thinking");
    assert_eq!(first["signature"], signature.as_str());
    let body = request_body(&AnthropicMessages::default(), "claude-opus-4-1", &context).unwrap();
    let first = &body["messages"][1]["content"][0];
    assert_eq!(first["type"], "text");
    assert_eq!(first["text"], text.as_str());
    assert!(!body.to_string().contains(&signature));
}
