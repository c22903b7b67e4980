//! OpenAI Responses and Gemini, with the wire crate's request builders and
//! projectors as the oracle: a context our builder writes, decoded by
//! the server half, gives back a context the builder writes the same way (ids and
//! signatures kept); a scripted turn the server half streams (or answers whole),
//! read by our projector, gives back the scripted message.

use agentstream::message::{
    assistant, text, tool_result, user, AssistantMessage, ContentBlock, Context, ImageContent,
    Message, StopReason, TextContent, ThinkingContent, Tool, ToolCall, Usage, UserContent,
    UserMessage,
};
use agentstream::model::Model;
use agentstream::model::{
    DoneReason, ModelEvent, ReasoningEffort, ResponseFormat, ScriptedModel, StreamOptions,
    ToolChoice,
};
use agentstream_wire::gemini::GeminiProjector;
use agentstream_wire::responses::ResponsesProjector;
use agentstream_wire::server::options_json;
use agentstream_wire::sse::SseDecoder;
use agentstream_wire::{gemini, responses};
use futures_util::StreamExt;
use serde_json::{json, Map, Value};

mod body_support;
mod server_support;
use body_support::request_body_with;
use server_support::read_with;

fn call(id: &str, name: &str, arguments: Value) -> ContentBlock {
    let Value::Object(arguments) = arguments else {
        unreachable!()
    };
    ContentBlock::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        ..ToolCall::default()
    })
}

fn image() -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
        extra: Map::new(),
    })
}

/// A conversation with every kind of content the two protocols carry.
fn conversation(api: &str, provider: &str, model: &str, call_id: &str) -> Context {
    let mut answer = assistant(
        [
            ContentBlock::Thinking(ThinkingContent {
                thinking: "The user wants the weather.".into(),
                thinking_signature: Some(match api {
                    "openai-responses" => json!({"type": "reasoning", "id": "rs_1",
                        "encrypted_content": "gAAAA-secret", "summary": [
                        {"type": "summary_text", "text": "The user wants the weather."}]})
                    .to_string(),
                    _ => "c2lnbmF0dXJl".into(),
                }),
                ..ThinkingContent::default()
            }),
            ContentBlock::Text(TextContent {
                text: "Let me look.".into(),
                ..TextContent::default()
            }),
            call(call_id, "weather", json!({"city": "Paris", "days": [1, 2]})),
        ],
        StopReason::ToolUse,
    );
    answer.api = api.into();
    answer.provider = provider.into();
    answer.model = model.into();
    let mut context = Context::from_messages([
        Message::User(UserMessage {
            content: UserContent::Blocks(vec![
                ContentBlock::Text(TextContent {
                    text: "Weather here?".into(),
                    ..TextContent::default()
                }),
                image(),
            ]),
            timestamp: 0,
            extra: Map::new(),
        }),
        answer.into(),
        tool_result(call_id, "weather", "18°C, sunny", false).into(),
        user("Thanks!").into(),
    ]);
    context.system_prompt = Some("Be brief.".into());
    context.tools = Some(vec![Tool {
        name: "weather".into(),
        description: "The weather of a city".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        extra: Map::new(),
    }]);
    context
}

fn call_options() -> StreamOptions {
    StreamOptions::default()
        .with_max_tokens(512)
        .with_temperature(0.25)
        .with_tool_choice(ToolChoice::Tool("weather".into()))
        .with_reasoning_effort(ReasoningEffort::High)
        .with_response_format(ResponseFormat::json_schema("w", json!({"type": "object"})))
}

#[test]
fn responses_requests_our_builder_writes_decode_back() {
    let context = conversation("openai-responses", "openai", "gpt-5", "call_1|fc_1");
    let (settings, options) = (responses::OpenAiResponses::default(), call_options());
    let build_request = |context| request_body_with(&settings, "gpt-5", context, &options);
    let body = build_request(&context).unwrap();
    let decoded = responses::decode::decode_request(&body).unwrap();
    assert_eq!((decoded.model.as_str(), decoded.stream), ("gpt-5", true));
    // The builder writes the decoded context as it wrote the original:
    // reasoning items, item ids and call ids come back unchanged.
    assert_eq!(build_request(&decoded.context).unwrap(), body);
    let messages = &decoded.context.messages;
    assert_eq!(messages.len(), 4, "{messages:?}");
    let Message::Assistant(answer) = &messages[1] else {
        panic!("{messages:?}")
    };
    let ContentBlock::Thinking(thinking) = &answer.content[0] else {
        panic!("{answer:?}")
    };
    assert_eq!(thinking.thinking, "The user wants the weather.");
    let item: Value =
        serde_json::from_str(thinking.thinking_signature.as_deref().unwrap()).unwrap();
    assert_eq!(item["encrypted_content"], "gAAAA-secret");
    let calls: Vec<_> = answer.tool_calls().collect();
    assert_eq!(calls[0].id, "call_1|fc_1");
    assert_eq!(calls[0].arguments["days"], json!([1, 2]));
    let Message::ToolResult(result) = &messages[2] else {
        panic!("{messages:?}")
    };
    assert_eq!(
        (result.tool_call_id.as_str(), result.tool_name.as_str()),
        ("call_1|fc_1", "weather")
    );
    let Message::User(first) = &messages[0] else {
        panic!()
    };
    assert!(
        matches!(&first.content, UserContent::Blocks(b) if matches!(b[1], ContentBlock::Image(_)))
    );
    assert_eq!(decoded.context.system_prompt.as_deref(), Some("Be brief."));
    assert_eq!(decoded.context.tools.as_ref().unwrap()[0].name, "weather");
    assert_eq!(
        options_json(&decoded.options),
        json!({"maxTokens": 512, "temperature": 0.25, "toolChoice": {"tool": "weather"},
               "reasoningEffort": "high",
               "responseFormat": {"name": "w", "schema": {"type": "object"}, "strict": false}})
    );
}

#[test]
fn gemini_requests_our_builder_writes_decode_back() {
    let model = "gemini-2.5-flash";
    let mut context = conversation("google-generative-ai", "google", model, "weather_1");
    if let Message::Assistant(answer) = &mut context.messages[1] {
        if let ContentBlock::ToolCall(call) = &mut answer.content[2] {
            call.thought_signature = Some("Y2FsbHNpZw==".into());
        }
    }
    let (settings, options) = (gemini::Gemini::default(), call_options());
    let build_request = |context| request_body_with(&settings, model, context, &options);
    let body = build_request(&context).unwrap();
    let decoded = gemini::decode::decode_request(&body, model, true).unwrap();
    assert_eq!(build_request(&decoded.context).unwrap(), body);
    let Message::Assistant(answer) = &decoded.context.messages[1] else {
        panic!()
    };
    let call = answer.tool_calls().next().unwrap();
    assert_eq!(call.thought_signature.as_deref(), Some("Y2FsbHNpZw=="));
    assert_eq!(call.arguments["city"], "Paris");
    let ContentBlock::Thinking(thinking) = &answer.content[0] else {
        panic!()
    };
    assert_eq!(thinking.thinking_signature.as_deref(), Some("c2lnbmF0dXJl"));
    // Gemini sends no ids: the result is paired with the call by name and
    // position, under a deterministic id.
    let Message::ToolResult(result) = &decoded.context.messages[2] else {
        panic!("{:?}", decoded.context.messages)
    };
    assert_eq!(result.tool_call_id, call.id);
    assert_eq!(call.id, "weather_1_1");
    assert_eq!(result.text(), "18°C, sunny");
    assert_eq!(
        options_json(&decoded.options),
        json!({"maxTokens": 512, "temperature": 0.25, "toolChoice": {"tool": "weather"},
               "thinkingBudget": 24576,
               "responseFormat": {"name": "", "schema": {"type": "object"}, "strict": false}})
    );
}

#[test]
fn gemini_pairs_responses_by_name_and_position() {
    let body = json!({"contents": [
        {"role": "user", "parts": [{"text": "two cities"}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "weather", "args": {"city": "A"}}},
            {"functionCall": {"name": "time", "args": {}}},
            {"functionCall": {"name": "weather", "args": {"city": "B"}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "time", "response": {"output": "noon"}}},
            {"functionResponse": {"name": "weather", "response": {"output": "A: sun"}}},
            {"functionResponse": {"name": "weather", "response": {"error": "B: unknown"}}}]},
    ]});
    let decoded = gemini::decode::decode_request(&body, "gemini-2.5-pro", false).unwrap();
    let results: Vec<(String, String, bool)> = decoded
        .context
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((r.tool_call_id.clone(), r.text(), r.is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            ("time_1_2".into(), "noon".into(), false),
            ("weather_1_1".into(), "A: sun".into(), false),
            ("weather_1_3".into(), "B: unknown".into(), true),
        ]
    );
    assert!(!decoded.stream);
}

/// The scripted turn both stream tests play.
fn scripted(signature: &str, call_id: &str) -> AssistantMessage {
    let mut message = assistant(
        [
            ContentBlock::Thinking(ThinkingContent {
                thinking: "Think \"hard\" ü".into(),
                thinking_signature: Some(signature.into()),
                ..ThinkingContent::default()
            }),
            text("It is sunny.\nReally 😀"),
            call(call_id, "weather", json!({"city": "Paris", "n": 2.5})),
        ],
        StopReason::ToolUse,
    );
    message.usage = Usage {
        input: 11,
        output: 7,
        cache_read: 3,
        total_tokens: Some(21),
        ..Usage::default()
    };
    message
}

fn events_of(message: AssistantMessage) -> Vec<ModelEvent> {
    let model = ScriptedModel::new([message]);
    let stream = model.stream(
        &Context::from_messages([user("hi").into()]),
        StreamOptions::default(),
    );
    futures_executor::block_on(stream.collect())
}

/// The SSE `data` of each event in `frames`.
fn data_of(frames: &[String]) -> Vec<String> {
    let mut decoder = SseDecoder::new();
    let mut events = decoder.feed_to_vec(frames.concat().as_bytes()).unwrap();
    events.extend(decoder.finish_to_vec());
    events.into_iter().map(|e| e.data).collect()
}

/// The content, stop reason and usage (the parts that must round-trip).
fn essence(message: &AssistantMessage) -> Value {
    json!({
        "content": message.content,
        "stopReason": message.stop_reason,
        "usage": {"input": message.usage.input, "output": message.usage.output,
                  "cacheRead": message.usage.cache_read, "total": message.usage.total_tokens},
    })
}

fn responses_played(message: AssistantMessage, chunks: usize) -> (Vec<String>, AssistantMessage) {
    let mut encoder =
        responses::encode::StreamEncoder::new("resp_1", "gpt-5", 7).with_chunks(chunks);
    let mut frames = Vec::new();
    for event in events_of(message) {
        encoder.encode(&event, &mut frames);
    }
    let read = read_with::<ResponsesProjector>("gpt-5", "openai", frames.concat().as_bytes());
    (frames, read)
}

#[test]
fn a_responses_stream_reads_back_as_the_scripted_message() {
    let signature = json!({"type": "reasoning", "id": "rs_9", "encrypted_content": "enc==",
                           "summary": [{"type": "summary_text", "text": "Think \"hard\" ü"}]});
    let mut message = scripted(&signature.to_string(), "call_7|fc_7");
    if let ContentBlock::Text(t) = &mut message.content[1] {
        t.text_signature = Some(r#"{"v":1,"id":"msg_3"}"#.into());
    }
    for chunks in [1, 3] {
        let (frames, read) = responses_played(message.clone(), chunks);
        let mut expected = essence(&message);
        let mut got = essence(&read);
        // The signatures are JSON texts: compared as values.
        for value in [&mut expected, &mut got] {
            for k in [0, 1] {
                let key = if k == 0 {
                    "thinkingSignature"
                } else {
                    "textSignature"
                };
                let text = value["content"][k][key].as_str().unwrap().to_owned();
                value["content"][k][key] = serde_json::from_str(&text).unwrap();
            }
        }
        assert_eq!(got, expected);
        // Every event is named and numbered in order.
        let data = data_of(&frames);
        for (k, payload) in data.iter().enumerate() {
            let payload: Value = serde_json::from_str(payload).unwrap();
            assert_eq!(payload["sequence_number"], k as u64, "{payload}");
        }
        let types: Vec<String> = data
            .iter()
            .map(|d| {
                serde_json::from_str::<Value>(d).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        for wanted in [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
        ] {
            assert!(
                types.iter().any(|t| t == wanted),
                "{wanted} not in {types:?}"
            );
        }
        let completed: Value = serde_json::from_str(data.last().unwrap()).unwrap();
        assert_eq!(
            completed["response"]["usage"],
            json!({"input_tokens": 14, "input_tokens_details": {"cached_tokens": 3},
                   "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 0},
                   "total_tokens": 21})
        );
    }
}

#[test]
fn responses_length_and_error_turns_end_as_openai_ends_them() {
    let mut cut = assistant([text("half")], StopReason::Length);
    cut.usage.output = 4;
    let (frames, read) = responses_played(cut, 1);
    assert!(frames
        .last()
        .unwrap()
        .starts_with("event: response.incomplete\n"));
    assert!(frames
        .last()
        .unwrap()
        .contains(r#""reason":"max_output_tokens""#));
    assert_eq!(
        (read.stop_reason.clone(), read.text()),
        (StopReason::Length, "half".into())
    );

    let mut failed = assistant([text("so far")], StopReason::Error);
    failed.error_message = Some("the upstream broke".into());
    let (frames, read) = responses_played(failed, 1);
    assert!(frames
        .last()
        .unwrap()
        .starts_with("event: response.failed\n"));
    assert_eq!(read.stop_reason, StopReason::Error);
    assert!(
        read.error_message
            .as_deref()
            .unwrap()
            .contains("the upstream broke"),
        "{read:?}"
    );
}

#[test]
fn a_responses_call_id_without_an_item_id_gets_a_deterministic_one() {
    let (_, read) = responses_played(scripted("opaque", "call_1"), 1);
    let call = read.tool_calls().next().unwrap();
    assert_eq!(call.id, "call_1|fc_agentstream_2");
    let ContentBlock::Thinking(thinking) = &read.content[0] else {
        panic!()
    };
    let item: Value =
        serde_json::from_str(thinking.thinking_signature.as_deref().unwrap()).unwrap();
    assert_eq!(item["encrypted_content"], "opaque");
}

#[test]
fn the_whole_response_object_carries_the_same_items() {
    let message = scripted("opaque", "call_1|fc_1");
    let body = responses::encode::response("resp_1", "gpt-5", 0, DoneReason::ToolUse, &message);
    let types: Vec<_> = body["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["reasoning", "message", "function_call"]);
    assert_eq!(body["output"][2]["call_id"], "call_1");
    assert_eq!(
        body["output"][2]["arguments"],
        r#"{"city":"Paris","n":2.5}"#
    );
    assert_eq!(body["status"], "completed");
}

fn gemini_played(message: AssistantMessage, chunks: usize) -> (Vec<String>, AssistantMessage) {
    let mut encoder =
        gemini::encode::StreamEncoder::new("r1", "gemini-2.5-flash").with_chunks(chunks);
    let mut frames = Vec::new();
    for event in events_of(message) {
        encoder.encode(&event, &mut frames);
    }
    let read =
        read_with::<GeminiProjector>("gemini-2.5-flash", "google", frames.concat().as_bytes());
    (frames, read)
}

#[test]
fn a_gemini_stream_reads_back_as_the_scripted_message() {
    let mut message = scripted("dGhpbmtzaWc=", "weather_r1_1");
    if let ContentBlock::ToolCall(call) = &mut message.content[2] {
        call.thought_signature = Some("Y2FsbA==".into());
    }
    if let ContentBlock::Text(t) = &mut message.content[1] {
        t.text_signature = Some("dGV4dA==".into());
    }
    for chunks in [1, 4] {
        let (frames, read) = gemini_played(message.clone(), chunks);
        assert_eq!(essence(&read), essence(&message));
        let last: Value = serde_json::from_str(data_of(&frames).last().unwrap()).unwrap();
        assert_eq!(last["candidates"][0]["finishReason"], "STOP");
        assert_eq!(
            last["usageMetadata"],
            json!({"promptTokenCount": 14, "candidatesTokenCount": 7, "totalTokenCount": 21,
                   "cachedContentTokenCount": 3})
        );
    }
}

#[test]
fn gemini_length_and_error_turns() {
    let (frames, read) = gemini_played(assistant([text("half")], StopReason::Length), 1);
    assert!(frames
        .last()
        .unwrap()
        .contains(r#""finishReason":"MAX_TOKENS""#));
    assert_eq!(read.stop_reason, StopReason::Length);
    let mut failed = assistant([text("so far")], StopReason::Error);
    failed.error_message = Some("quota gone".into());
    let (frames, read) = gemini_played(failed, 1);
    let last: Value = serde_json::from_str(data_of(&frames).last().unwrap()).unwrap();
    assert_eq!(
        last,
        json!({"error": {"code": 500, "message": "quota gone", "status": "INTERNAL"}})
    );
    assert_eq!(read.stop_reason, StopReason::Error);
    assert!(read.error_message.unwrap().contains("quota gone"));
}

#[test]
fn the_whole_gemini_response_reads_back_too() {
    let message = scripted("dGhpbmtzaWc=", "weather_r1_1");
    let body = gemini::encode::generate_content_response(
        "r1",
        "gemini-2.5-flash",
        DoneReason::ToolUse,
        &message,
    );
    let mut projector = GeminiProjector::new("gemini-2.5-flash", "google");
    let mut out = Vec::new();
    projector.push_data(&body.to_string(), &mut out);
    projector.finish(&mut out);
    let read = out.last().and_then(ModelEvent::terminal_message).unwrap();
    assert_eq!(essence(read), essence(&message));
}

#[test]
fn bad_requests_get_each_providers_errors() {
    use agentstream_wire::Api;
    let error = responses::decode::decode_request(&json!({"model": "gpt-5"})).unwrap_err();
    assert_eq!((error.status, error.param.as_deref()), (400, Some("input")));
    assert_eq!(
        error.body(Api::Responses)["error"]["type"],
        "invalid_request_error"
    );
    let error =
        responses::decode::decode_request(&json!({"input": [{"type": "wizard"}]})).unwrap_err();
    assert_eq!(error.param.as_deref(), Some("input[0]"));
    let string = responses::decode::decode_request(&json!({"input": "Hello"})).unwrap();
    assert!(
        matches!(&string.context.messages[0], Message::User(u) if matches!(&u.content, UserContent::Text(t) if t == "Hello"))
    );
    let error = gemini::decode::decode_request(&json!({}), "g", true).unwrap_err();
    assert_eq!(
        error.body(Api::Gemini),
        json!({"error": {"code": 400, "message": error.message, "status": "INVALID_ARGUMENT"}})
    );
    let error =
        gemini::decode::decode_request(&json!({"contents": [{"role": "system"}]}), "g", true)
            .unwrap_err();
    assert_eq!(error.status, 400);
    assert!(gemini::decode::decode_body(b"{\"contents\": [", "g", true).is_err());
}

#[test]
fn many_calls_of_one_name_pair_in_order() {
    // 20,000 calls of one name answered in one turn: pairing is linear
    // (a quadratic search would take minutes here), and in order.
    let n = 20_000;
    let calls: Vec<Value> = (0..n)
        .map(|k| json!({"functionCall": {"name": "f", "args": {"k": k}}}))
        .collect();
    let answers: Vec<Value> = (0..n)
        .map(|k| json!({"functionResponse": {"name": "f", "response": {"output": k.to_string()}}}))
        .collect();
    let body = json!({"contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": calls},
        {"role": "user", "parts": answers},
    ]});
    let decoded = gemini::decode::decode_request(&body, "gemini-2.5-flash", true).unwrap();
    let messages = &decoded.context.messages;
    assert_eq!(messages.len(), 2 + n);
    let Message::ToolResult(last) = &messages[n + 1] else {
        panic!()
    };
    assert_eq!(
        (last.tool_call_id.as_str(), last.text()),
        (format!("f_1_{n}").as_str(), (n - 1).to_string())
    );
}

#[test]
fn gemini_calls_with_ids_pair_by_id_first() {
    let body = json!({"contents": [
        {"role": "model", "parts": [
            {"functionCall": {"name": "f", "id": "a", "args": {}}},
            {"functionCall": {"name": "f", "id": "b", "args": {}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "f", "id": "b", "response": {"output": "B"}}},
            {"functionResponse": {"name": "f", "response": {"output": "A"}}}]},
    ]});
    let decoded = gemini::decode::decode_request(&body, "claude-x", true).unwrap();
    let results: Vec<(String, String)> = decoded
        .context
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((r.tool_call_id.clone(), r.text())),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [("b".into(), "B".into()), ("a".into(), "A".into())]
    );
}
