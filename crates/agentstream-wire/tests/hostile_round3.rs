//! The third round of hostile input (issue 42) on the Responses and Gemini
//! projectors: lone UTF-16 surrogates become U+FFFD wherever the OpenAI
//! and Anthropic projectors put it (tool-call ids, names, arguments,
//! signatures, `responseId`), and a lone-surrogate escape in Responses
//! arguments does not fail the call. Every sequence passes the protocol
//! checker.

use agentstream::message::{ContentBlock, StopReason};
use agentstream::model::ModelEvent;
use agentstream_wire::gemini::GeminiProjector;
use agentstream_wire::responses::ResponsesProjector;

mod hostile_support;
use hostile_support::{assert_replaced_call, project, terminal, tool_use_without_markers};

fn responses(payloads: &[&str]) -> Vec<ModelEvent> {
    project::<ResponsesProjector>("gpt", "openai", payloads)
}

fn gemini(payloads: &[&str]) -> Vec<ModelEvent> {
    project::<GeminiProjector>("gemini", "google", payloads)
}

#[test]
fn lone_surrogates_become_replacement_characters_everywhere_on_responses() {
    // Before: private-use characters in the responseId, the reasoning's
    // and the text's signatures, the call's id and name, and `\ud800`
    // inside the arguments failed the message.
    let events = responses(&[
        r#"{"type":"response.created","response":{"id":"resp_\ud800"}}"#,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_\ud800"}}"#,
        r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"hm"}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_\ud800","summary":[{"type":"summary_text","text":"hm"}]}}"#,
        r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_\udc00"}}"#,
        r#"{"type":"response.output_text.delta","output_index":1,"delta":"ok"}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"message","id":"msg_\udc00","content":[{"type":"output_text","text":"ok"}]}}"#,
        r#"{"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","call_id":"call_\ud800","id":"fc_\udfff","name":"read\udfff","arguments":""}}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"path\":\"a\\ud800b\",\"pair\":\"\\ud83d"}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":2,"delta":"\\ude00\",\"cut\":\"\\ud8"}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":2,"delta":"00\",\"marker\":\"\ud800\"}"}"#,
        r#"{"type":"response.function_call_arguments.done","output_index":2,"arguments":"{\"path\":\"a\\ud800b\",\"pair\":\"\\ud83d\\ude00\",\"cut\":\"\\ud800\",\"marker\":\"\ud800\"}"}"#,
        r#"{"type":"response.output_item.done","output_index":2,"item":{"type":"function_call","call_id":"call_\ud800","id":"fc_\udfff","name":"read\udfff","arguments":"{}"}}"#,
        r#"{"type":"response.output_item.added","output_index":3,"item":{"type":"function_call","call_id":"c2","id":"f2","name":"write"}}"#,
        r#"{"type":"response.function_call_arguments.done","output_index":3,"arguments":"{\"text\":\"x\\udc00\ud83d\"}"}"#,
        r#"{"type":"response.output_item.done","output_index":3,"item":{"type":"function_call","call_id":"c2","id":"f2","name":"write"}}"#,
        r#"{"type":"response.completed","response":{"id":"resp_\ud800","status":"completed"}}"#,
    ]);
    let message = tool_use_without_markers(&events);
    assert_eq!(message.extra["responseId"], "resp_\u{fffd}");
    match &message.content[..] {
        [ContentBlock::Thinking(t), ContentBlock::Text(text), ContentBlock::ToolCall(call), ContentBlock::ToolCall(second)] =>
        {
            assert!(t
                .thinking_signature
                .as_deref()
                .unwrap()
                .contains("rs_\u{fffd}"));
            assert!(text
                .text_signature
                .as_deref()
                .unwrap()
                .contains("msg_\u{fffd}"));
            assert_eq!(call.id, "call_\u{fffd}|fc_\u{fffd}");
            assert_replaced_call(call);
            assert_eq!(call.arguments["marker"], "\u{fffd}");
            assert_eq!(second.arguments["text"], "x\u{fffd}\u{fffd}");
        }
        other => panic!("{other:#?}"),
    }
}

#[test]
fn lone_surrogates_become_replacement_characters_everywhere_on_gemini() {
    // Before: private-use characters in the responseId, the signatures,
    // the call's id, name and arguments, also when a streamed call's
    // arguments end in a later payload that has no lone surrogate.
    let events = gemini(&[
        r#"{"responseId":"resp_\ud800","candidates":[{"content":{"parts":[
            {"text":"hm","thought":true,"thoughtSignature":"sig\ud83d"},
            {"functionCall":{"name":"read\udfff","id":"call_\ud800","args":{"path":"a\ud800b","k\udc00":1}},"thoughtSignature":"ts\udc00"}
        ]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[
            {"functionCall":{"name":"write","willContinue":true,"partialArgs":[
                {"jsonPath":"$.deep","structValue":{"k\ud800":["v\udc00"]}},
                {"jsonPath":"$.text","stringValue":"x\ud800","willContinue":true}
            ]}}
        ]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[
            {"functionCall":{"partialArgs":[{"jsonPath":"$.text","stringValue":"y"}]}}
        ]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"done"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}}"#,
    ]);
    let message = tool_use_without_markers(&events);
    assert_eq!(message.extra["responseId"], "resp_\u{fffd}");
    let ContentBlock::Thinking(thinking) = &message.content[0] else {
        panic!("{:#?}", message.content);
    };
    assert_eq!(thinking.thinking_signature.as_deref(), Some("sig\u{fffd}"));
    let calls: Vec<_> = message.tool_calls().collect();
    assert_eq!(calls.len(), 2, "{:#?}", message.content);
    assert_eq!(calls[0].id, "call_\u{fffd}");
    assert_eq!(calls[0].name, "read\u{fffd}");
    assert_eq!(calls[0].thought_signature.as_deref(), Some("ts\u{fffd}"));
    assert_eq!(calls[0].arguments["path"], "a\u{fffd}b");
    assert_eq!(calls[0].arguments["k\u{fffd}"], 1);
    assert_eq!(calls[1].arguments["text"], "x\u{fffd}y");
    assert_eq!(calls[1].arguments["deep"]["k\u{fffd}"][0], "v\u{fffd}");
}

#[test]
fn an_item_after_the_largest_output_index_is_an_error_not_a_merge() {
    // Before: `last + 1` overflowed (a panic in a debug build; in release
    // the item was dropped and its text merged into the previous one).
    let events = responses(&[
        r#"{"type":"response.output_item.added","output_index":18446744073709551615,"item":{"type":"message","id":"m1"}}"#,
        r#"{"type":"response.output_text.delta","delta":"first"}"#,
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m2"}}"#,
        r#"{"type":"response.output_text.delta","delta":" second"}"#,
        r#"{"type":"response.completed","response":{"status":"completed"}}"#,
    ]);
    let message = terminal(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = message.error_message.as_deref().unwrap_or_default();
    assert!(error.contains("output_index"), "{error}");
    assert_eq!(message.text(), "first");
}

#[test]
fn gemini_generated_call_ids_never_repeat_the_providers() {
    // Before: the second call's generated id was `f_r1_2`, the id the
    // provider gave the first.
    let events = gemini(&[r#"{"responseId":"r1","candidates":[{"content":{"parts":[
            {"functionCall":{"name":"f","id":"f_r1_2","args":{}}},
            {"functionCall":{"name":"f","args":{}}},
            {"functionCall":{"name":"f","id":"f_r1_3","args":{}}}
        ]},"finishReason":"STOP"}]}"#]);
    let message = terminal(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let ids: Vec<&str> = message.tool_calls().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(ids[0], "f_r1_2");
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 3, "{ids:?}");
}

#[test]
fn usage_numbers_are_read_as_in_the_other_protocols() {
    // Before: a count that is not a plain integer (`2e64`, `1.5`, `-3`)
    // was 0 on Responses and failed the whole chunk on Gemini; `1e400`
    // failed both.
    for (number, expected) in [
        ("2e64", u64::MAX),
        ("1e400", u64::MAX),
        ("1e19", 10_000_000_000_000_000_000),
        ("1.5", 2),
        ("-3", 0),
        ("7", 7),
    ] {
        let completed = format!(
            r#"{{"type":"response.completed","response":{{"status":"completed","usage":{{"input_tokens":2,"output_tokens":{number}}}}}}}"#
        );
        let events = responses(&[
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m"}}"#,
            r#"{"type":"response.output_text.delta","output_index":0,"delta":"ok"}"#,
            &completed,
        ]);
        assert_usage(&events, number, expected);

        let chunk = format!(
            r#"{{"candidates":[{{"content":{{"parts":[{{"text":"ok"}}]}},"finishReason":"STOP"}}],"usageMetadata":{{"promptTokenCount":2,"candidatesTokenCount":{number}}}}}"#
        );
        assert_usage(&gemini(&[&chunk]), number, expected);
    }
}

/// Asserts that `events` end in `stop` with the text "ok", 2 input tokens
/// and `expected` output tokens read from `number`.
fn assert_usage(events: &[ModelEvent], number: &str, expected: u64) {
    let message = terminal(events);
    assert_eq!(
        message.stop_reason,
        StopReason::Stop,
        "{number}: {:?}",
        message.error_message
    );
    assert_eq!(message.text(), "ok", "{number}");
    assert_eq!(
        (message.usage.input, message.usage.output),
        (2, expected),
        "{number}"
    );
}

/// A `structValue` of `depth` levels at a `jsonPath` of `steps` steps.
fn nested_partial_args(steps: usize, depth: usize) -> String {
    let path = format!("${}", ".k".repeat(steps));
    let value = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    format!(
        r#"{{"candidates":[{{"content":{{"parts":[{{"functionCall":{{"name":"deep","willContinue":true,"partialArgs":[{{"jsonPath":"{path}","structValue":{value}}}]}}}}]}}}}]}}"#
    )
}

#[test]
fn gemini_arguments_never_nest_deeper_than_the_parser_reads_back() {
    // Before: a 64-step path holding a 100-level list assembled arguments
    // 164 levels deep, whose text serde_json refuses to parse back.
    let end = r#"{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[]}}]},"finishReason":"STOP"}]}"#;
    // At the bound: the arguments read back as assembled.
    let events = gemini(&[&nested_partial_args(64, 63), end]);
    let message = tool_use_without_markers(&events);
    let call = message.tool_calls().next().expect("the call");
    let text = serde_json::to_string(&call.arguments).unwrap();
    assert!(text.contains(&"[".repeat(63)), "{text}");
    let back: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&text).expect("the arguments parse back");
    assert_eq!(back, call.arguments);
    // One level past it (by the path or by the value): a clear error.
    for (steps, depth) in [(64, 64), (64, 100), (10, 118)] {
        let events = gemini(&[&nested_partial_args(steps, depth), end]);
        let message = terminal(&events);
        assert_eq!(message.stop_reason, StopReason::Error);
        let error = message.error_message.as_deref().unwrap_or_default();
        assert!(error.contains("nested deeper than 127 levels"), "{error}");
    }
}
