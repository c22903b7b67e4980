//! The Responses request builder against pi-ai 0.73.1's own bodies
//! (`tests/golden/requests/*.pi.json`, made by `generate.mjs` there from
//! the contexts beside them), with the documented differences applied,
//! and one golden body per option Pi does not have.

use agentstream::message::{user, Context};
use agentstream::model::{ReasoningEffort, ResponseFormat, StreamOptions, ToolChoice};
use agentstream_wire::responses::{OpenAiResponses, ReasoningSummary};
use serde_json::{json, Value};

mod body_support;
use body_support::{context, golden, request_body, request_body_with};

/// The Responses settings with `reasoning.summary` set.
fn summarized(summary: ReasoningSummary) -> OpenAiResponses {
    let mut responses = OpenAiResponses::default();
    responses.reasoning_summary = Some(summary);
    responses
}

/// Pi's body, with this crate's documented differences applied: the system
/// prompt in `instructions` instead of a first `developer`/`system` input
/// message, and `include` whenever `store` is false.
fn pi_body(name: &str) -> Value {
    let mut pi = golden(name);
    let input = pi["input"].as_array_mut().unwrap();
    let system = input.remove(0);
    assert!(matches!(
        system["role"].as_str(),
        Some("developer" | "system")
    ));
    pi["instructions"] = system["content"].clone();
    pi["include"] = json!(["reasoning.encrypted_content"]);
    pi
}

#[test]
fn same_model_history_matches_pi() {
    let body = request_body(
        &OpenAiResponses::default(),
        "gpt-5",
        &context("responses-same-model"),
    )
    .unwrap();
    assert_eq!(body, pi_body("responses-same-model.plain.pi.json"));
}

#[test]
fn reasoning_and_sampling_options_match_pi() {
    let call = StreamOptions::default()
        .with_max_tokens(100)
        .with_temperature(0.5)
        .with_reasoning_effort(ReasoningEffort::High);
    let responses = summarized(ReasoningSummary::Detailed);
    let body =
        request_body_with(&responses, "gpt-5", &context("responses-same-model"), &call).unwrap();
    assert_eq!(body, pi_body("responses-same-model.options.pi.json"));
}

#[test]
fn foreign_history_matches_pi() {
    let body = request_body(
        &OpenAiResponses::default(),
        "gpt-5",
        &context("responses-foreign"),
    )
    .unwrap();
    assert_eq!(body, pi_body("responses-foreign.plain.pi.json"));
}

fn simple(responses: &OpenAiResponses, call: &StreamOptions) -> Value {
    let context = Context::from_messages([user("hi").into()]);
    request_body_with(responses, "gpt-5", &context, call).unwrap()
}

#[test]
fn store_true_sends_no_include() {
    let mut responses = OpenAiResponses::default();
    responses.store = true;
    let body = simple(&responses, &StreamOptions::default());
    assert_eq!(body["store"], true);
    assert!(body.get("include").is_none());
}

#[test]
fn top_p_tool_choice_and_structured_output() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let format =
        ResponseFormat::json_schema("answer", schema.clone()).with_description("The answer");
    let call = StreamOptions::default()
        .with_top_p(0.9)
        .with_tool_choice(ToolChoice::Tool("weather".into()))
        .with_response_format(format);
    let body = simple(&OpenAiResponses::default(), &call);
    assert_eq!(body["top_p"], 0.9);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "name": "weather"})
    );
    assert_eq!(
        body["text"],
        json!({"format": {"type": "json_schema", "name": "answer", "schema": schema, "strict": false, "description": "The answer"}})
    );
    for (choice, expected) in [
        (ToolChoice::Auto, json!("auto")),
        (ToolChoice::None, json!("none")),
        (ToolChoice::Required, json!("required")),
    ] {
        let call = StreamOptions::default().with_tool_choice(choice);
        assert_eq!(
            simple(&OpenAiResponses::default(), &call)["tool_choice"],
            expected
        );
    }
}

#[test]
fn a_summary_alone_asks_for_medium_effort_and_stop_sequences_are_not_sent() {
    let call = StreamOptions::default().with_stop(["END"]);
    let body = simple(&summarized(ReasoningSummary::Concise), &call);
    assert_eq!(
        body["reasoning"],
        json!({"effort": "medium", "summary": "concise"})
    );
    assert!(body.get("stop").is_none());
}

#[test]
fn unpaired_tool_calls_are_refused() {
    use agentstream::message::{assistant, tool_result, StopReason};
    let context = Context::from_messages([
        user("hi").into(),
        tool_result("nobody", "x", "orphan", false).into(),
        assistant([agentstream::message::text("ok")], StopReason::Stop).into(),
    ]);
    assert!(request_body(&OpenAiResponses::default(), "gpt-5", &context).is_err());
}
