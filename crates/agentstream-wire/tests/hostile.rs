//! The OpenAI path against hostile servers: numbers that overflow,
//! whitespace JSON does not know, and every limit of `Limits`. Each case
//! is an exact input an adversarial pass found; every sequence passes the
//! protocol checker and nothing received before the fault is lost.

use agentstream::message::{ContentBlock, StopReason};
use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::limits::{Limit, LimitExceeded, Limits};
use agentstream_wire::openai::{OpenAiProjector, OpenAiStream};
use serde_json::json;

fn checked(events: Vec<ModelEvent>) -> Vec<ModelEvent> {
    let findings = validate_events(&events);
    assert!(findings.is_empty(), "{findings:?}\n{events:#?}");
    events
}

fn project(limits: Limits, payloads: &[String]) -> Vec<ModelEvent> {
    let mut projector = OpenAiProjector::new("m", "p");
    projector.set_limits(limits);
    let mut events = Vec::new();
    for payload in payloads {
        projector.push_data(payload, &mut events);
    }
    projector.finish(&mut events);
    checked(events)
}

fn chunk(delta: serde_json::Value) -> String {
    json!({"choices": [{"index": 0, "delta": delta}]}).to_string()
}

fn finish(reason: &str) -> String {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}).to_string()
}

fn tool_fragment(index: u64, id: &str, name: &str, arguments: &str) -> String {
    chunk(json!({"tool_calls": [{
        "index": index, "id": id, "function": {"name": name, "arguments": arguments}
    }]}))
}

fn error_message(events: &[ModelEvent]) -> String {
    let message = last_message(events);
    assert_eq!(message.stop_reason, StopReason::Error, "{events:#?}");
    message.error_message.clone().unwrap_or_default()
}

/// The final message of a call's events (its terminal event's).
fn last_message(events: &[ModelEvent]) -> &agentstream::message::AssistantMessage {
    events
        .last()
        .and_then(ModelEvent::terminal_message)
        .expect("the events end with a terminal event")
}

#[test]
fn usage_numbers_at_u64_max_saturate_instead_of_overflowing() {
    let max = u64::MAX;
    let usage = json!({"choices": [], "usage": {
        "prompt_tokens": 10, "completion_tokens": max, "total_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": max},
        "completion_tokens_details": {"reasoning_tokens": max},
    }})
    .to_string();
    let mut projector = OpenAiProjector::new("m", "p");
    let mut events = Vec::new();
    for payload in [chunk(json!({"content": "hi"})), usage, finish("stop")] {
        projector.push_data(&payload, &mut events);
    }
    projector.finish(&mut events);
    // A total below its parts is not trusted: the sum is, and the
    // provider's figure is kept beside it, so the message passes the
    // checker (whose `implausible-usage` it would fail otherwise).
    let events = checked(events);
    let message = last_message(&events);
    assert_eq!(message.stop_reason, StopReason::Stop);
    // The cached count is capped at the prompt count.
    assert_eq!(
        (
            message.usage.input,
            message.usage.output,
            message.usage.cache_read
        ),
        (0, max, 10)
    );
    assert_eq!(message.usage.total_tokens, Some(max));
    assert_eq!(
        message.usage.extra.get("providerTotalTokens"),
        Some(&json!(5))
    );

    // Without a total, the sum saturates.
    let usage = json!({"choices": [], "usage": {
        "prompt_tokens": max, "completion_tokens": max,
        "completion_tokens_details": {"reasoning_tokens": max},
    }})
    .to_string();
    let events = project(
        Limits::DEFAULT,
        &[chunk(json!({"content": "hi"})), usage, finish("stop")],
    );
    let message = last_message(&events);
    assert_eq!(message.usage.total_tokens, Some(max));
}

#[test]
fn unicode_spaces_are_not_json_whitespace_in_tool_arguments() {
    // U+00A0 then `{}`: the concatenation is not JSON, so the call is not
    // handed on (`str::trim` used to drop the NBSP and accept it).
    let events = project(
        Limits::DEFAULT,
        &[
            tool_fragment(0, "c1", "f", "\u{a0}"),
            tool_fragment(0, "", "", "{}"),
            finish("tool_calls"),
        ],
    );
    assert!(
        error_message(&events).contains("are not a JSON object"),
        "{events:#?}"
    );
    // JSON's own whitespace around the arguments is fine, and a lone U+2028
    // is not blank.
    let events = project(
        Limits::DEFAULT,
        &[
            tool_fragment(0, "c1", "f", " \t\r\n{} \n"),
            finish("tool_calls"),
        ],
    );
    let message = last_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let events = project(
        Limits::DEFAULT,
        &[
            tool_fragment(0, "c1", "f", "\u{2028}"),
            finish("tool_calls"),
        ],
    );
    assert!(error_message(&events).contains("are not a JSON object"));
}

#[test]
fn done_with_nbsp_around_it_is_not_done() {
    let mut projector = OpenAiProjector::new("m", "p");
    let mut events = Vec::new();
    projector.push_data(&chunk(json!({"content": "hi"})), &mut events);
    projector.push_data("\u{a0}[DONE]", &mut events);
    let events = checked(events);
    assert!(error_message(&events).contains("not JSON"), "{events:#?}");
}

#[test]
fn more_tool_calls_than_the_limit_end_in_error_keeping_the_earlier_ones() {
    let limits = Limits::default().with_max_tool_calls(3);
    let mut payloads: Vec<String> = (0..5)
        .map(|i| tool_fragment(i, &format!("c{i}"), "f", "{}"))
        .collect();
    payloads.push(finish("tool_calls"));
    let events = project(limits, &payloads);
    assert_eq!(
        error_message(&events),
        LimitExceeded::new(Limit::ToolCalls, &limits).to_string()
    );
    assert_eq!(
        error_message(&events),
        "response limit exceeded: the message has more tool calls than max_tool_calls (3)"
    );
    let message = last_message(&events);
    // The first two ended; the third was live with complete arguments.
    assert_eq!(message.content.len(), 3, "{:#?}", message.content);
}

#[test]
fn more_content_blocks_than_the_limit_end_in_error() {
    let limits = Limits::default().with_max_content_blocks(2);
    let payloads = [
        chunk(json!({"reasoning_content": "think"})),
        chunk(json!({"content": "text"})),
        chunk(json!({"reasoning_content": "again"})),
        finish("stop"),
    ];
    let events = project(limits, &payloads);
    assert!(error_message(&events).contains("max_content_blocks (2)"));
    let message = last_message(&events);
    assert!(
        matches!(&message.content[..], [ContentBlock::Thinking(_), ContentBlock::Text(t)] if t.text == "text")
    );
}

#[test]
fn argument_text_past_the_limit_ends_in_error() {
    let limits = Limits::default().with_max_tool_argument_bytes(8);
    let payloads = [
        tool_fragment(0, "c1", "f", "{\"a\":"),
        tool_fragment(0, "", "", "\"0123456789\"}"),
        finish("tool_calls"),
    ];
    let events = project(limits, &payloads);
    assert!(error_message(&events).contains("max_tool_argument_bytes (8)"));
}

#[test]
fn a_body_past_the_response_limit_keeps_what_came_before_it() {
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        chunk(json!({"content": "kept"})),
        chunk(json!({"content": "x".repeat(100)}))
    );
    let first_event = body.find("\n\n").unwrap() + 2;
    let limits = Limits::default().with_max_response_bytes(first_event as u64 + 10);
    let mut stream = OpenAiStream::new("m", "p", None).with_limits(limits);
    // In pieces, so the limit falls inside a later one.
    let mut events = Vec::new();
    for piece in body.as_bytes().chunks(7) {
        events.extend(stream.feed(piece));
        if stream.is_finished() {
            break;
        }
    }
    let events = checked(events);
    assert!(stream.is_finished());
    assert!(error_message(&events).contains("max_response_bytes"));
    let message = last_message(&events);
    assert_eq!(message.text(), "kept");
    assert_eq!(stream.feed(b"data: more\n\n").count(), 0);
}

#[test]
fn an_endless_line_ends_the_stream_with_the_line_limit() {
    let limits = Limits::default().with_max_line_bytes(1 << 12);
    let mut stream = OpenAiStream::new("m", "p", None).with_limits(limits);
    let mut events: Vec<ModelEvent> = stream
        .feed(format!("data: {}\n\ndata: ", chunk(json!({"content": "kept"}))).as_bytes())
        .collect();
    let mut fed = 0usize;
    while !stream.is_finished() {
        events.extend(stream.feed(&[b'x'; 1000]));
        fed += 1000;
        assert!(fed < 10_000, "the line limit never fired");
    }
    let events = checked(events);
    assert_eq!(
        error_message(&events),
        "response limit exceeded: an SSE line is longer than max_line_bytes (4096)"
    );
    let message = last_message(&events);
    assert_eq!(message.text(), "kept");
}

#[test]
fn many_interleaved_tool_calls_keep_their_order_and_arguments() {
    // 2,000 calls, every fragment of call i split in two and the halves of
    // consecutive calls interleaved; keys start at 1 and skip.
    let n = 2000u64;
    let mut payloads = Vec::new();
    for i in 0..n {
        payloads.push(tool_fragment(2 * i + 1, &format!("id{i}"), "f", "{\"i\":"));
        if i > 0 {
            payloads.push(tool_fragment(2 * i - 1, "", "", &format!("{}}}", i - 1)));
        }
    }
    payloads.push(tool_fragment(2 * n - 1, "", "", &format!("{}}}", n - 1)));
    payloads.push(finish("tool_calls"));
    let limits = Limits::default().with_max_tool_calls(4096);
    let events = project(limits, &payloads);
    let message = last_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(message.content.len(), n as usize);
    for (i, block) in message.content.iter().enumerate() {
        let ContentBlock::ToolCall(call) = block else {
            panic!("block {i} is not a call");
        };
        assert_eq!(call.id, format!("id{i}"));
        assert_eq!(call.arguments.get("i"), Some(&json!(i)));
    }
}

fn text_of(events: &[ModelEvent]) -> (String, Vec<String>) {
    let message = last_message(events);
    let deltas = events
        .iter()
        .filter_map(ModelEvent::delta)
        .map(str::to_string)
        .collect();
    (message.text(), deltas)
}

#[test]
fn a_surrogate_pair_split_across_chunks_is_one_character_as_in_javascript() {
    // What `JSON.stringify` writes for the two halves of U+1F600.
    let payloads = [
        r#"{"choices":[{"index":0,"delta":{"content":"a\ud83d"}}]}"#.to_string(),
        r#"{"choices":[{"index":0,"delta":{"content":"\ude00b"}}]}"#.to_string(),
        finish("stop"),
    ];
    let events = project(Limits::DEFAULT, &payloads);
    let (text, deltas) = text_of(&events);
    assert_eq!(text, "a😀b");
    assert_eq!(deltas, ["a", "😀b"]);
    // Thinking too, and a pair in one chunk is untouched.
    let payloads = [
        r#"{"choices":[{"index":0,"delta":{"reasoning_content":"\ud83d"}}]}"#.to_string(),
        r#"{"choices":[{"index":0,"delta":{"reasoning_content":"\ude00\ud83d\ude00"}}]}"#
            .to_string(),
        finish("stop"),
    ];
    let events = project(Limits::DEFAULT, &payloads);
    let message = last_message(&events);
    assert!(matches!(&message.content[..], [ContentBlock::Thinking(t)] if t.thinking == "😀😀"));
}

#[test]
fn truly_lone_surrogates_become_replacement_characters_not_errors() {
    let payloads = [
        // A low half with no high half before it.
        r#"{"choices":[{"index":0,"delta":{"content":"\ude00x"}}]}"#.to_string(),
        // A high half followed by text that is not its low half.
        r#"{"choices":[{"index":0,"delta":{"content":"y\ud83d"}}]}"#.to_string(),
        r#"{"choices":[{"index":0,"delta":{"content":"z"}}]}"#.to_string(),
        // A high half at the very end of the block.
        r#"{"choices":[{"index":0,"delta":{"content":"\ud83d"}}]}"#.to_string(),
        finish("stop"),
    ];
    let events = project(Limits::DEFAULT, &payloads);
    let (text, deltas) = text_of(&events);
    assert_eq!(text, "\u{fffd}xy\u{fffd}z\u{fffd}");
    assert_eq!(deltas.concat(), text);
    let message = last_message(&events);
    assert_eq!(message.stop_reason, StopReason::Stop);
}

#[test]
fn a_half_held_back_when_the_block_switches_is_flushed_in_its_own_block() {
    let payloads = [
        r#"{"choices":[{"index":0,"delta":{"reasoning_content":"t\ud83d"}}]}"#.to_string(),
        r#"{"choices":[{"index":0,"delta":{"content":"\ude00"}}]}"#.to_string(),
        finish("stop"),
    ];
    let events = project(Limits::DEFAULT, &payloads);
    let message = last_message(&events);
    assert!(
        matches!(
            &message.content[..],
            [ContentBlock::Thinking(t), ContentBlock::Text(x)] if t.thinking == "t\u{fffd}" && x.text == "\u{fffd}"
        ),
        "{:#?}",
        message.content
    );
}

#[test]
fn the_anthropic_projector_keeps_the_same_limits() {
    use agentstream_wire::anthropic::AnthropicProjector;
    let tool = |i: usize| {
        [
            json!({"type": "content_block_start", "index": i,
                   "content_block": {"type": "tool_use", "id": format!("t{i}"), "name": "f", "input": {}}}),
            json!({"type": "content_block_delta", "index": i,
                   "delta": {"type": "input_json_delta", "partial_json": "{\"a\":1}"}}),
            json!({"type": "content_block_stop", "index": i}),
        ]
    };
    let run = |limits: Limits, payloads: Vec<serde_json::Value>| {
        let mut projector = AnthropicProjector::new("m", "p");
        projector.set_limits(limits);
        let mut events = Vec::new();
        projector.push_data(
            &json!({"type": "message_start", "message": {"id": "msg", "usage": {"input_tokens": 1}}})
                .to_string(),
            &mut events,
        );
        for payload in payloads {
            projector.push_data(&payload.to_string(), &mut events);
        }
        projector.finish(&mut events);
        checked(events)
    };
    let calls: Vec<_> = (0..3).flat_map(tool).collect();
    let events = run(Limits::default().with_max_tool_calls(2), calls.clone());
    assert!(
        error_message(&events).contains("max_tool_calls (2)"),
        "{events:#?}"
    );
    let message = last_message(&events);
    assert_eq!(message.tool_calls().count(), 2);
    let events = run(Limits::default().with_max_content_blocks(1), calls.clone());
    assert!(error_message(&events).contains("max_content_blocks (1)"));
    let events = run(Limits::default().with_max_tool_argument_bytes(4), calls);
    assert!(error_message(&events).contains("max_tool_argument_bytes (4)"));
}
