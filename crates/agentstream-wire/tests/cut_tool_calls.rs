//! Tool calls the provider cut off (it stopped for length in the middle of
//! one), and Anthropic's `refusal` with its `stop_details`, against what
//! pi-ai 0.73.1 makes of the same bodies: `tests/golden/cut/*.pi.json`,
//! written by `generate.mjs` there from the hand-written streams in
//! `tests/fixtures/cut-tool-calls/` (its README says what each holds).
//! Final messages are compared as JSON values; each deliberate difference
//! is named where it is taken out.

use std::collections::BTreeMap;

use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::anthropic::AnthropicProjector;
use agentstream_wire::openai::OpenAiProjector;
use agentstream_wire::sse::SseDecoder;
use agentstream_wire::surrogates::replace_lone_surrogates;
use serde_json::{json, Value};

fn read(path: &str) -> String {
    let path = format!("{}/tests/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// Our events for a fixture, through the SSE decoder and the projector its
/// name says (`anthropic-*` or `openai-*`), checked by the protocol
/// checker.
fn decode(file: &str) -> Vec<ModelEvent> {
    let body = read(&format!("fixtures/cut-tool-calls/{file}"));
    let mut decoder = SseDecoder::new();
    let mut sse = decoder.feed_to_vec(body.as_bytes()).unwrap();
    sse.extend(decoder.finish_to_vec());
    let mut out = Vec::new();
    if file.starts_with("anthropic-") {
        let mut projector = AnthropicProjector::new("recorded", "recorded");
        for event in &sse {
            projector.push_data(&event.data, &mut out);
        }
        projector.finish(&mut out);
    } else {
        let mut projector = OpenAiProjector::new("recorded", "recorded");
        for event in &sse {
            projector.push_data(&event.data, &mut out);
        }
        projector.finish(&mut out);
    }
    let problems = validate_events(&out);
    assert!(problems.is_empty(), "{file}: {problems:?}");
    out
}

/// The terminal message as JSON, costs left out (Pi fills them from its
/// model table; both are zero here).
fn ours(file: &str) -> Value {
    let events = decode(file);
    let message = events
        .last()
        .and_then(ModelEvent::terminal_message)
        .unwrap();
    let mut value = serde_json::to_value(message).unwrap();
    value["usage"]["cost"] = Value::Null;
    value
}

/// Pi's event types and terminal message. Pi writes a lone surrogate as
/// JavaScript holds it (`\ud83d`); here it is U+FFFD, as in every
/// projector, so the golden file is read with that rule.
fn pi(file: &str) -> (Vec<String>, Value) {
    let text = read(&format!("golden/cut/{file}.pi.json"));
    let text = replace_lone_surrogates(&text).unwrap_or(text);
    let golden: Value = serde_json::from_str(&text).unwrap();
    let events = golden["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect();
    let mut message = golden["message"].clone();
    message["usage"]["cost"] = Value::Null;
    (events, message)
}

/// Pi's message with the scratch fields it leaves on an Anthropic tool call
/// that never got its `content_block_stop` taken out (deliberate: Pi
/// deletes `partialJson` and `index` only at the block's stop, so its done
/// message still carries them; ours never has them).
fn without_scratch(mut message: Value) -> Value {
    for block in message["content"].as_array_mut().unwrap() {
        if let Some(block) = block.as_object_mut() {
            block.remove("partialJson");
            block.remove("index");
        }
    }
    message
}

fn types(events: &[ModelEvent]) -> Vec<&'static str> {
    events.iter().map(ModelEvent::type_name).collect()
}

const CUT: [&str; 11] = [
    "anthropic-cut-tool-call.sse",
    "anthropic-cut-tool-call-stopped.sse",
    "anthropic-cut-empty-arguments.sse",
    "anthropic-cut-escape.sse",
    "anthropic-cut-surrogate.sse",
    "anthropic-cut-second-call.sse",
    "openai-cut-tool-call.sse",
    "openai-cut-empty-arguments.sse",
    "openai-cut-escape.sse",
    "openai-cut-surrogate.sse",
    "openai-cut-second-call.sse",
];

#[test]
fn a_cut_call_ends_in_length_with_the_message_pi_makes() {
    for file in CUT {
        let (pi_events, pi_message) = pi(file);
        assert_eq!(pi_events.last().map(String::as_str), Some("done"), "{file}");
        let events = decode(file);
        let last = events.last().unwrap();
        assert_eq!(last.type_name(), "done", "{file}");
        assert_eq!(ours(file)["stopReason"], "length", "{file}");
        assert_eq!(ours(file), without_scratch(pi_message), "{file}");
    }
}

#[test]
fn the_deltas_of_a_cut_call_add_up_to_its_arguments() {
    for file in CUT {
        let events = decode(file);
        let mut text: BTreeMap<usize, String> = BTreeMap::new();
        let mut ended = 0;
        for event in &events {
            match event {
                ModelEvent::ToolCallDelta {
                    content_index,
                    delta,
                    ..
                } => text.entry(*content_index).or_default().push_str(delta),
                ModelEvent::ToolCallEnd {
                    content_index,
                    tool_call,
                    ..
                } => {
                    let streamed: Value = serde_json::from_str(&text[content_index]).unwrap();
                    assert_eq!(
                        streamed,
                        Value::Object(tool_call.arguments.clone()),
                        "{file}"
                    );
                    ended += 1;
                }
                _ => {}
            }
        }
        assert_eq!(ended, text.len(), "{file}: every call ends");
    }
}

#[test]
fn the_anthropic_cut_call_gets_its_completion_and_its_end() {
    // Deliberate: Pi sends no `toolcall_end` for a call without
    // `content_block_stop` (and a `toolcall_delta` for the empty first
    // `partial_json`); here the completion `"}` is the last delta and the
    // call ends, so every block that started ends before `done`.
    let file = "anthropic-cut-tool-call.sse";
    let events = decode(file);
    assert_eq!(
        types(&events),
        [
            "start",
            "text_start",
            "text_delta",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ]
    );
    let ModelEvent::ToolCallDelta { delta, .. } = &events[8] else {
        panic!("{:?}", events[8]);
    };
    assert_eq!(&**delta, "\"}");
    // Pi's types are ours without the cut call's end (as many deltas: Pi's
    // first is the empty one, our last is the completion).
    let (pi_events, _) = pi(file);
    let mut without_end = types(&events);
    without_end.retain(|t| *t != "toolcall_end");
    assert_eq!(pi_events, without_end);
    assert_eq!(
        ours(file)["content"][1]["arguments"],
        json!({"path": "notes.txt", "content": "Line one\nLine t"})
    );
}

#[test]
fn a_cut_escape_is_dropped_and_a_cut_pair_becomes_the_replacement_character() {
    for api in ["anthropic", "openai"] {
        let escape = ours(&format!("{api}-cut-escape.sse"));
        let call = escape["content"].as_array().unwrap().last().unwrap();
        assert_eq!(call["arguments"], json!({"content": "a\tb"}), "{api}");
        let surrogate = ours(&format!("{api}-cut-surrogate.sse"));
        let call = surrogate["content"].as_array().unwrap().last().unwrap();
        assert_eq!(
            call["arguments"],
            json!({"content": "smile \u{fffd}"}),
            "{api}"
        );
        let empty = ours(&format!("{api}-cut-empty-arguments.sse"));
        assert_eq!(empty["content"][0]["arguments"], json!({}), "{api}");
    }
}

#[test]
fn only_the_second_call_is_completed() {
    for api in ["anthropic", "openai"] {
        let message = ours(&format!("{api}-cut-second-call.sse"));
        let args: Vec<&Value> = message["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| &b["arguments"])
            .collect();
        assert_eq!(args, [&json!({"path": "a.txt"}), &json!({"path": "b.t"})]);
    }
}

#[test]
fn a_stream_without_any_stop_reason_is_still_an_error() {
    // Anthropic: Pi also ends in error ("Anthropic stream ended before
    // message_stop"), but keeps the cut call with its lenient arguments;
    // here an error's open call is kept only when its text is already a
    // JSON object (an error turn is never sent back or executed).
    let file = "anthropic-no-stop-reason.sse";
    let message = ours(file);
    assert_eq!(decode(file).last().unwrap().type_name(), "error");
    assert_eq!(message["stopReason"], "error");
    assert_eq!(
        message["errorMessage"],
        "the stream ended before message_stop: the response is truncated"
    );
    let (_, pi_message) = pi(file);
    assert_eq!(pi_message["stopReason"], "error");
    assert_eq!(
        pi_message["errorMessage"],
        "Anthropic stream ended before message_stop"
    );
    assert_eq!(message["content"], json!([pi_message["content"][0]]));
    assert_eq!(pi_message["content"][1]["type"], "toolCall");

    // OpenAI: deliberate difference, Pi ends a body without a
    // finish_reason or [DONE] in `done` with `stop`; here it is truncated.
    let file = "openai-no-finish-reason.sse";
    let message = ours(file);
    assert_eq!(message["stopReason"], "error");
    assert_eq!(
        message["errorMessage"],
        "the stream ended before [DONE] or a finish_reason: the response is truncated"
    );
    let (_, pi_message) = pi(file);
    assert_eq!(pi_message["stopReason"], "stop");
}

/// Anthropic payloads pushed one by one, then the end of the body.
fn anthropic(payloads: &[Value], finish: bool) -> Vec<ModelEvent> {
    let mut projector = AnthropicProjector::new("recorded", "recorded");
    let mut out = Vec::new();
    for payload in payloads {
        projector.push_data(&payload.to_string(), &mut out);
    }
    if finish {
        projector.finish(&mut out);
    }
    assert!(validate_events(&out).is_empty());
    out
}

fn cut_call_then(rest: &[Value]) -> Vec<Value> {
    let mut payloads = vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 3}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": \"b"}}),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    payloads.extend_from_slice(rest);
    payloads
}

fn error_message(events: &[ModelEvent]) -> String {
    let last = events.last().unwrap();
    assert_eq!(last.type_name(), "error");
    last.terminal_message()
        .unwrap()
        .error_message
        .clone()
        .unwrap()
}

#[test]
fn unparsable_arguments_without_max_tokens_are_still_an_error() {
    let unparsable = "the arguments of tool call \"toolu_1\" (f) are not a JSON object";
    let stop = json!({"type": "message_stop"});
    // Another stop reason.
    let events = anthropic(
        &cut_call_then(&[
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}}),
            stop.clone(),
        ]),
        false,
    );
    assert!(error_message(&events).starts_with(unparsable));
    // More content after the call: it was not cut.
    let events = anthropic(
        &cut_call_then(&[
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        ]),
        false,
    );
    assert!(error_message(&events).starts_with(unparsable));
    // No stop reason at all.
    let events = anthropic(&cut_call_then(std::slice::from_ref(&stop)), false);
    assert!(error_message(&events).starts_with(unparsable));
    // `max_tokens`, then `message_stop`: length.
    let events = anthropic(
        &cut_call_then(&[
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {}}),
            stop,
        ]),
        false,
    );
    assert_eq!(events.last().unwrap().type_name(), "done");
}

#[test]
fn max_tokens_without_message_stop_is_truncated_and_says_so() {
    // Pi: "Anthropic stream ended before message_stop" (it has no stop
    // reason in the message); the reason is named here.
    let events = anthropic(
        &cut_call_then(&[
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {}}),
        ]),
        true,
    );
    assert_eq!(
        error_message(&events),
        "the stream ended before message_stop (after stop_reason \"max_tokens\"): the response is truncated"
    );
}

#[test]
fn a_refusal_keeps_its_explanation() {
    // Deliberate: Pi 0.73.1 maps `refusal` to `error` and then throws
    // "An unknown error occurred", losing the reason and the explanation.
    let file = "anthropic-refusal-explanation.sse";
    let (_, pi_message) = pi(file);
    assert_eq!(pi_message["errorMessage"], "An unknown error occurred");
    let message = ours(file);
    assert_eq!(
        message["errorMessage"],
        "the provider ended the response with stop_reason \"refusal\" (category \"cyber\"): \
         This request was declined because it conflicts with the usage policy."
    );
    let mut theirs = pi_message;
    let mut ours_without = message;
    theirs["errorMessage"] = Value::Null;
    ours_without["errorMessage"] = Value::Null;
    assert_eq!(ours_without, theirs);

    let file = "anthropic-refusal-no-explanation.sse";
    assert_eq!(
        ours(file)["errorMessage"],
        "the provider ended the response with stop_reason \"refusal\""
    );
    assert_eq!(pi(file).1["errorMessage"], "An unknown error occurred");
}

#[test]
fn stop_details_of_the_wrong_shape_are_ignored() {
    for details in [
        json!("declined"),
        json!({"type": "refusal", "category": 7, "explanation": ["x"]}),
        json!({"type": "refusal", "explanation": "  "}),
        Value::Null,
    ] {
        let events = anthropic(
            &[
                json!({"type": "message_start", "message": {"id": "msg_1", "usage": {}}}),
                json!({"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_details": details}, "usage": {}}),
                json!({"type": "message_stop"}),
            ],
            false,
        );
        assert_eq!(
            error_message(&events),
            "the provider ended the response with stop_reason \"refusal\"",
            "{details}"
        );
    }
}

#[test]
fn a_member_cut_after_its_key_is_null_where_pi_drops_it() {
    // Deliberate: Pi's partial-json parse drops a member whose value never
    // started; here the completion is a suffix sent as the call's last
    // delta (so the deltas add up to the arguments), and what already went
    // out (`"mode":`) cannot be taken back: the member is `null`.
    for api in ["anthropic", "openai"] {
        let file = format!("{api}-cut-after-key.sse");
        let (_, theirs) = pi(&file);
        let mut theirs = without_scratch(theirs);
        assert_eq!(theirs["content"][0]["arguments"], json!({"path": "a.txt"}));
        let message = ours(&file);
        assert_eq!(message["stopReason"], "length");
        assert_eq!(
            message["content"][0]["arguments"],
            json!({"path": "a.txt", "mode": null})
        );
        theirs["content"][0]["arguments"] = message["content"][0]["arguments"].clone();
        assert_eq!(message, theirs, "{api}");
    }
}

#[test]
fn a_long_explanation_is_clipped() {
    let explanation = "x".repeat(5000);
    let events = anthropic(
        &[
            json!({"type": "message_start", "message": {"id": "msg_1", "usage": {}}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_details": {"type": "refusal", "category": null, "explanation": explanation}}, "usage": {}}),
            json!({"type": "message_stop"}),
        ],
        false,
    );
    let message = error_message(&events);
    let kept = message
        .strip_prefix("the provider ended the response with stop_reason \"refusal\": ")
        .unwrap();
    assert_eq!(kept, format!("{}…", "x".repeat(1000)));
}
