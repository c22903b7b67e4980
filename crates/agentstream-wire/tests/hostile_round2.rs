//! The second round of hostile input (issue 26): Anthropic events routed
//! by their block `index`, the OpenAI projector's choice and tool-call
//! indices, usage numbers that are not plain integers, and lone UTF-16
//! surrogates outside the text. Each case is an input the attack run
//! found; every sequence passes the protocol checker.

use agentstream::message::{AssistantMessage, ContentBlock, StopReason};
use agentstream::model::ModelEvent;
use agentstream_wire::anthropic::AnthropicProjector;
use agentstream_wire::openai::OpenAiProjector;
use serde_json::json;

mod hostile_support;
use hostile_support::{assert_replaced_call, project, terminal, tool_use_without_markers};

fn anthropic(payloads: &[&str]) -> Vec<ModelEvent> {
    project::<AnthropicProjector>("claude", "anthropic", payloads)
}

fn openai(payloads: &[&str]) -> Vec<ModelEvent> {
    project::<OpenAiProjector>("gpt", "openai", payloads)
}

fn error_message(events: &[ModelEvent]) -> String {
    let message = terminal(events);
    assert_eq!(message.stop_reason, StopReason::Error, "{events:#?}");
    message.error_message.clone().unwrap_or_default()
}

fn tool_arguments(message: &AssistantMessage) -> Vec<(String, String)> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolCall(call) => Some((
                call.id.clone(),
                serde_json::Value::Object(call.arguments.clone()).to_string(),
            )),
            _ => None,
        })
        .collect()
}

const START: &str =
    r#"{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":3}}}"#;
const STOP: &str = r#"{"type":"message_stop"}"#;

fn tool_start(index: u64, id: &str) -> String {
    json!({"type": "content_block_start", "index": index,
           "content_block": {"type": "tool_use", "id": id, "name": "f", "input": {}}})
    .to_string()
}

fn json_delta(index: u64, part: &str) -> String {
    json!({"type": "content_block_delta", "index": index,
           "delta": {"type": "input_json_delta", "partial_json": part}})
    .to_string()
}

fn text_start(index: u64) -> String {
    json!({"type": "content_block_start", "index": index,
           "content_block": {"type": "text", "text": ""}})
    .to_string()
}

fn text_delta(index: u64, text: &str) -> String {
    json!({"type": "content_block_delta", "index": index,
           "delta": {"type": "text_delta", "text": text}})
    .to_string()
}

fn block_stop(index: u64) -> String {
    json!({"type": "content_block_stop", "index": index}).to_string()
}

#[test]
fn an_anthropic_delta_for_a_block_that_is_not_open_ends_in_error() {
    // Before: `{"evil":1}` landed in block 0's call.
    let events = anthropic(&[
        START,
        &tool_start(0, "t0"),
        &json_delta(0, "{\"a\":"),
        &json_delta(7, "{\"evil\":1}"),
        &json_delta(0, "1}"),
        &block_stop(0),
        STOP,
    ]);
    let error = error_message(&events);
    assert!(
        error.contains("content block 7, which is not open"),
        "{error}"
    );
    assert!(
        !format!("{events:?}").contains("evil\\\":1}\""),
        "{events:#?}"
    );
    // A stop for a block that is not open is the same violation.
    let events = anthropic(&[START, &text_start(0), &block_stop(3), STOP]);
    assert!(error_message(&events).contains("stopped content block 3, which is not open"));
}

#[test]
fn an_anthropic_delta_of_the_wrong_kind_ends_in_error() {
    // A text delta on a tool block, and a JSON delta on a text block:
    // before, both were dropped silently.
    let events = anthropic(&[
        START,
        &tool_start(0, "t0"),
        &text_delta(0, "hello"),
        &block_stop(0),
        STOP,
    ]);
    let error = error_message(&events);
    assert!(
        error.contains("text_delta for content block 0, which is a tool_use block"),
        "{error}"
    );
    let events = anthropic(&[
        START,
        &text_start(0),
        &json_delta(0, "{}"),
        &block_stop(0),
        STOP,
    ]);
    let error = error_message(&events);
    assert!(
        error.contains("input_json_delta for content block 0, which is a text block"),
        "{error}"
    );
}

#[test]
fn two_anthropic_blocks_open_at_once_each_get_their_own_deltas() {
    // Before: block 0 was closed with `{}` and its arguments glued onto
    // block 1's.
    let events = anthropic(&[
        START,
        &tool_start(0, "t0"),
        &tool_start(1, "t1"),
        &json_delta(0, "{\"a\":"),
        &json_delta(1, "{\"b\":"),
        &json_delta(0, "0}"),
        &json_delta(1, "1}"),
        &block_stop(1),
        &block_stop(0),
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
        STOP,
    ]);
    let message = terminal(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse, "{events:#?}");
    assert_eq!(
        tool_arguments(message),
        [
            ("t0".to_string(), r#"{"a":0}"#.to_string()),
            ("t1".to_string(), r#"{"b":1}"#.to_string())
        ]
    );
    // A text block and a tool call interleaved, the text stopped last.
    let events = anthropic(&[
        START,
        &text_start(0),
        &tool_start(1, "t1"),
        &json_delta(1, "{\"b\":1}"),
        &text_delta(0, "Hi"),
        &block_stop(1),
        &text_delta(0, "!"),
        &block_stop(0),
        STOP,
    ]);
    let message = terminal(&events);
    assert!(
        matches!(&message.content[0], ContentBlock::Text(t) if t.text == "Hi!"),
        "{message:#?}"
    );
    assert_eq!(
        tool_arguments(message),
        [("t1".to_string(), r#"{"b":1}"#.to_string())]
    );
}

#[test]
fn a_second_message_start_is_a_protocol_error() {
    // Before: the two messages were glued into "firstsecond".
    let events = anthropic(&[
        START,
        &text_start(0),
        &text_delta(0, "first"),
        &block_stop(0),
        START,
        &text_start(0),
        &text_delta(0, "second"),
        &block_stop(0),
        STOP,
    ]);
    let error = error_message(&events);
    assert!(error.contains("a second message_start"), "{error}");
    let message = terminal(&events);
    assert!(
        matches!(&message.content[..], [ContentBlock::Text(t)] if t.text == "first"),
        "{message:#?}"
    );
}

#[test]
fn anything_before_message_start_is_a_protocol_error() {
    // Before: a lone `message_stop` decoded as an empty successful message.
    let events = anthropic(&[STOP]);
    let error = error_message(&events);
    assert!(
        error.contains("message_stop before message_start"),
        "{error}"
    );
    assert_eq!(events.len(), 1, "{events:#?}");
    let text = text_start(0);
    let events = anthropic(&[&text, START, STOP]);
    assert!(error_message(&events).contains("content_block_start before message_start"));
    // Pings and unknown event types are still ignored.
    let events = anthropic(&[r#"{"type":"ping"}"#, START, STOP]);
    assert_eq!(terminal(&events).stop_reason, StopReason::Stop);
}

#[test]
fn openai_chunks_of_another_choice_are_not_mixed_into_the_message() {
    // Before: a chunk carrying only choice 1 was read as if it were the
    // choice followed, so two answers were interleaved into one text.
    let events = openai(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"A"}}]}"#,
        r#"{"choices":[{"index":1,"delta":{"role":"assistant","content":"X"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"B"}}]}"#,
        r#"{"choices":[{"index":1,"delta":{"content":"Y"},"finish_reason":"length"}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ]);
    let message = terminal(&events);
    assert_eq!(message.stop_reason, StopReason::Stop, "{events:#?}");
    assert!(
        matches!(&message.content[..], [ContentBlock::Text(t)] if t.text == "AB"),
        "{message:#?}"
    );
}

#[test]
fn openai_tool_call_indices_out_of_order_and_a_second_role_chunk() {
    // Tool-call indices are keys: index 1 first, then 0, interleaved;
    // each fragment goes to its own call. A second role chunk changes
    // nothing.
    let fragment = |index: u64, id: &str, args: &str| {
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
            "index": index, "id": id, "function": {"name": "f", "arguments": args}
        }]}}]})
        .to_string()
    };
    let events = openai(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant"}}]}"#,
        &fragment(1, "b", "{\"b\":"),
        &fragment(0, "a", "{\"a\":"),
        r#"{"choices":[{"index":0,"delta":{"role":"assistant"}}]}"#,
        &fragment(1, "", "1}"),
        &fragment(0, "", "0}"),
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ]);
    let message = terminal(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse, "{events:#?}");
    assert_eq!(
        tool_arguments(message),
        [
            ("b".to_string(), r#"{"b":1}"#.to_string()),
            ("a".to_string(), r#"{"a":0}"#.to_string())
        ]
    );
}

#[test]
fn usage_numbers_that_are_not_plain_integers_saturate_or_round() {
    // Before: `1e400` made the answer "not JSON"; `1e19` and `1.5`
    // became 0.
    let text = [START, &text_start(0), &text_delta(0, "ok"), &block_stop(0)];
    for (number, expected) in [
        ("1e400", u64::MAX),
        ("1e19", 10_000_000_000_000_000_000),
        ("1e20", u64::MAX),
        ("1.5", 2),
        ("1.4", 1),
        ("-3", 0),
        ("-1e400", 0),
        ("7", 7),
    ] {
        let delta = format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"end_turn"}},"usage":{{"output_tokens":{number}}}}}"#
        );
        let mut payloads = text.to_vec();
        payloads.extend([delta.as_str(), STOP]);
        let events = anthropic(&payloads);
        let message = terminal(&events);
        assert_eq!(
            message.stop_reason,
            StopReason::Stop,
            "{number}: {:?}",
            message.error_message
        );
        assert_eq!(message.usage.output, expected, "{number}");
        assert!(matches!(&message.content[..], [ContentBlock::Text(t)] if t.text == "ok"));

        let usage = format!(
            r#"{{"choices":[],"usage":{{"prompt_tokens":2,"completion_tokens":{number}}}}}"#
        );
        let events = openai(&[
            r#"{"choices":[{"index":0,"delta":{"content":"ok"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            &usage,
            "[DONE]",
        ]);
        let message = terminal(&events);
        assert_eq!(
            message.stop_reason,
            StopReason::Stop,
            "{number}: {:?}",
            message.error_message
        );
        assert_eq!(message.usage.output, expected, "{number}");
        assert_eq!(message.usage.input, 2, "{number}");
    }
    // A huge number inside a string is text, not a number.
    let events = anthropic(&[
        START,
        &text_start(0),
        &text_delta(0, "1e400"),
        &block_stop(0),
        STOP,
    ]);
    assert!(matches!(&terminal(&events).content[..], [ContentBlock::Text(t)] if t.text == "1e400"));
}

#[test]
fn lone_surrogates_become_replacement_characters_everywhere_on_anthropic() {
    // Before: private-use characters in the id, name, signature and model,
    // and `\ud800` inside the arguments failed the message.
    let events = anthropic(&[
        r#"{"type":"message_start","message":{"id":"msg_\ud800","model":"claude-\udc00","usage":{"input_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig\ud83d"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_\ud800","name":"read\udfff","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"a\\ud800b\",\"pair\":\"\\ud83d"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\\ude00\",\"cut\":\"\\ud8"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"00\"}"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
        STOP,
    ]);
    let message = tool_use_without_markers(&events);
    assert_eq!(message.extra["responseId"], "msg_\u{fffd}");
    assert_eq!(message.extra["responseModel"], "claude-\u{fffd}");
    match &message.content[..] {
        [ContentBlock::Thinking(t), ContentBlock::ToolCall(call)] => {
            assert_eq!(t.thinking_signature.as_deref(), Some("sig\u{fffd}"));
            assert_eq!(call.id, "toolu_\u{fffd}");
            assert_replaced_call(call);
        }
        other => panic!("{other:#?}"),
    }
}

#[test]
fn lone_surrogates_become_replacement_characters_everywhere_on_openai() {
    let events = openai(&[
        r#"{"id":"chatcmpl-\ud800","model":"gpt-\udc00","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_\ud800","function":{"name":"read\udfff","arguments":"{\"path\":\"a\\ud800"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"b\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ]);
    let message = tool_use_without_markers(&events);
    assert_eq!(message.extra["responseId"], "chatcmpl-\u{fffd}");
    assert_eq!(message.extra["responseModel"], "gpt-\u{fffd}");
    match &message.content[..] {
        [ContentBlock::ToolCall(call)] => {
            assert_eq!(call.id, "call_\u{fffd}");
            assert_eq!(call.name, "read\u{fffd}");
            assert_eq!(call.arguments["path"], "a\u{fffd}b");
        }
        other => panic!("{other:#?}"),
    }
}
