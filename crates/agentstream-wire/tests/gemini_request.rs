//! The Gemini request builder against pi-ai 0.73.1's own parameters
//! (`tests/golden/requests/google-*.pi.json`, made by `generate.mjs`
//! there), turned into the REST body the SDK sends, and one golden body
//! per option Pi does not have.

use agentstream::message::{user, Context, StopReason};
use agentstream::model::{ReasoningEffort, ResponseFormat, StreamOptions, ToolChoice};
use agentstream_wire::config::Call;
use agentstream_wire::gemini::{
    Gemini, GeminiApi, GeminiConfig, SchemaMode, Thinking, ThinkingLevel, GEMINI_API,
    GEMINI_VERTEX_API,
};
use serde_json::{json, Map, Value};

mod body_support;
use body_support::{context, golden, request_body, request_body_as, request_body_with};

/// The Gemini settings with a default thinking setting.
fn thinking(thinking: Thinking) -> Gemini {
    let mut gemini = Gemini::default();
    gemini.thinking = Some(thinking);
    gemini
}

/// Pi's SDK parameters as the REST body `@google/genai` sends: the system
/// instruction as a content, the sampling and thinking settings inside
/// `generationConfig`, the model left out (it is in the URL).
fn pi_body(name: &str) -> Value {
    let pi = golden(name);
    let config = &pi["config"];
    let mut body = Map::new();
    body.insert("contents".into(), pi["contents"].clone());
    if let Some(system) = config.get("systemInstruction") {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}]}),
        );
    }
    for key in ["tools", "toolConfig"] {
        if let Some(value) = config.get(key) {
            body.insert(key.into(), value.clone());
        }
    }
    let mut generation = Map::new();
    for key in ["maxOutputTokens", "temperature", "thinkingConfig"] {
        if let Some(value) = config.get(key) {
            generation.insert(key.into(), value.clone());
        }
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    Value::Object(body)
}

#[test]
fn same_model_history_matches_pi() {
    let body = request_body(
        &Gemini::default(),
        "gemini-2.5-flash",
        &context("google-same-model"),
    )
    .unwrap();
    assert_eq!(body, pi_body("google-same-model.plain.pi.json"));
}

/// The body of the golden context `name` to `model`, with `call`.
fn golden_context_body(model: &str, name: &str, call: &StreamOptions) -> Value {
    request_body_with(&Gemini::default(), model, &context(name), call).unwrap()
}

#[test]
fn sampling_tool_choice_and_budget_match_pi() {
    let call = StreamOptions::default()
        .with_max_tokens(100)
        .with_temperature(0.5)
        .with_tool_choice(ToolChoice::Required)
        .with_thinking_budget(1024);
    let body = golden_context_body("gemini-2.5-flash", "google-same-model", &call);
    assert_eq!(body, pi_body("google-same-model.options.pi.json"));
}

#[test]
fn thinking_off_matches_pi() {
    let gemini = thinking(Thinking::Off);
    let body = request_body(&gemini, "gemini-2.5-flash", &context("google-same-model")).unwrap();
    assert_eq!(body, pi_body("google-same-model.off.pi.json"));
}

#[test]
fn foreign_history_matches_pi_on_gemini_2_and_3() {
    let body = request_body(
        &Gemini::default(),
        "gemini-2.5-flash",
        &context("google-foreign"),
    )
    .unwrap();
    assert_eq!(body, pi_body("google-foreign.plain.pi.json"));
    let call = StreamOptions::default().with_reasoning_effort(ReasoningEffort::Low);
    let body = golden_context_body("gemini-3-pro-preview", "google-foreign", &call);
    assert_eq!(
        body["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingLevel": "LOW"})
    );
    assert_eq!(body, pi_body("google-foreign.gemini3.pi.json"));
}

fn with_tool() -> Context {
    let mut context = Context::from_messages([user("hi").into()]);
    context.tools = context_tools();
    context
}

fn context_tools() -> Option<Vec<agentstream::message::Tool>> {
    context("google-same-model").tools
}

#[test]
fn top_p_stop_and_tool_choice_of_one_tool() {
    let call = StreamOptions::default()
        .with_top_p(0.9)
        .with_stop(["END"])
        .with_tool_choice(ToolChoice::Tool("weather".into()));
    let body =
        request_body_with(&Gemini::default(), "gemini-2.5-flash", &with_tool(), &call).unwrap();
    assert_eq!(
        body["generationConfig"],
        json!({"topP": 0.9, "stopSequences": ["END"]})
    );
    assert_eq!(
        body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}})
    );
    for (choice, mode) in [(ToolChoice::Auto, "AUTO"), (ToolChoice::None, "NONE")] {
        let call = StreamOptions::default().with_tool_choice(choice);
        let body = request_body_with(&Gemini::default(), "g", &with_tool(), &call).unwrap();
        assert_eq!(body["toolConfig"]["functionCallingConfig"]["mode"], mode);
    }
    // No tools: no toolConfig, as Pi.
    let call = StreamOptions::default().with_tool_choice(ToolChoice::Required);
    let context = Context::from_messages([user("hi").into()]);
    let body = request_body_with(&Gemini::default(), "g", &context, &call).unwrap();
    assert!(body.get("toolConfig").is_none());
}

#[test]
fn structured_output_and_the_openapi_schema_subset() {
    let schema = json!({"$schema": "x", "type": "object", "additionalProperties": false,
        "properties": {"a": {"type": ["string", "null"]}, "b": {"oneOf": [{"type": "integer"}, {"const": "x"}]}}});
    let call = StreamOptions::default()
        .with_response_format(ResponseFormat::json_schema("r", schema.clone()));
    let body = request_body_with(&Gemini::default(), "g", &with_tool(), &call).unwrap();
    assert_eq!(
        body["generationConfig"],
        json!({"responseMimeType": "application/json", "responseJsonSchema": schema})
    );
    let mut openapi = Gemini::default();
    openapi.schema_mode = SchemaMode::OpenApi;
    let body = request_body_with(&openapi, "g", &with_tool(), &call).unwrap();
    let reduced = json!({"type": "object", "properties": {
        "a": {"type": "string", "nullable": true},
        "b": {"anyOf": [{"type": "integer"}, {"enum": ["x"]}]}}});
    assert_eq!(body["generationConfig"]["responseSchema"], reduced);
    assert_eq!(
        body["tools"][0]["functionDeclarations"][0]["parameters"],
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
    );
    assert!(body["tools"][0]["functionDeclarations"][0]
        .get("parametersJsonSchema")
        .is_none());
}

#[test]
fn effort_maps_to_pi_levels_and_budgets() {
    let cases = [
        (
            "gemini-2.5-pro",
            ReasoningEffort::High,
            Thinking::Budget(32768),
        ),
        (
            "gemini-2.5-flash-lite",
            ReasoningEffort::Minimal,
            Thinking::Budget(512),
        ),
        (
            "gemini-2.0-flash",
            ReasoningEffort::Medium,
            Thinking::Budget(-1),
        ),
        (
            "gemini-3-pro-preview",
            ReasoningEffort::Medium,
            Thinking::Level(ThinkingLevel::High),
        ),
        (
            "gemini-3.1-flash",
            ReasoningEffort::Medium,
            Thinking::Level(ThinkingLevel::Medium),
        ),
        (
            "gemma-4-27b",
            ReasoningEffort::Low,
            Thinking::Level(ThinkingLevel::Minimal),
        ),
    ];
    for (model, effort, expected) in cases {
        let options = StreamOptions::default().with_reasoning_effort(effort);
        let call = Call {
            model,
            provider: "google",
            options: &options,
        };
        assert_eq!(
            Gemini::default().thinking_for(&call),
            Some(expected),
            "{model}"
        );
    }
    for (model, off) in [
        ("gemini-3-pro-preview", json!({"thinkingLevel": "LOW"})),
        (
            "gemini-3-flash-preview",
            json!({"thinkingLevel": "MINIMAL"}),
        ),
    ] {
        let body = request_body(&thinking(Thinking::Off), model, &with_tool()).unwrap();
        assert_eq!(body["generationConfig"]["thinkingConfig"], off, "{model}");
    }
}

/// The Vertex AI form sends what Pi's `google-vertex` provider sends
/// (`*.vertex.pi.json`), for history recorded on Vertex (signatures kept),
/// through the Gemini API (another provider and api: thinking as text, no
/// signature) and with Vertex's provider but the Gemini API's api (another
/// api: the same as the Gemini API's history).
#[test]
fn vertex_keeps_signatures_only_for_its_own_provider_and_api_as_pi_does() {
    let vertex = GeminiConfig::vertex("p", "us-central1", "gemini-2.5-flash");
    for name in [
        "google-vertex-same-model",
        "google-same-model",
        "google-vertex-mixed",
    ] {
        let expected = pi_body(&format!("{name}.vertex.pi.json"));
        let mut on_vertex = Gemini::default();
        on_vertex.api = GeminiApi::Vertex;
        let options = StreamOptions::default();
        let model = "gemini-2.5-flash";
        assert_eq!(
            request_body_as(&on_vertex, "google-vertex", model, &context(name), &options).unwrap(),
            expected,
            "{name}"
        );
        let request = vertex.prepare(&context(name)).unwrap();
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        assert_eq!(body, expected, "{name} through GeminiConfig::vertex");
    }
    let kept = pi_body("google-vertex-same-model.vertex.pi.json");
    assert_eq!(
        kept["contents"][1]["parts"][0],
        json!({"thought": true, "text": "Two cities.", "thoughtSignature": "c2lnbmF0dXJl"})
    );
    let dropped = pi_body("google-same-model.vertex.pi.json");
    assert_eq!(
        dropped["contents"][1]["parts"][0],
        json!({"text": "Two cities."})
    );
    assert_eq!(dropped, pi_body("google-vertex-mixed.vertex.pi.json"));
}

/// A message recorded through Vertex AI names Pi's provider and api
/// `google-vertex`; sent back through Vertex it is the same model (its
/// signature goes back), through the Gemini API it is not.
#[test]
fn a_vertex_message_records_google_vertex_and_round_trips_only_there() {
    let vertex = GeminiConfig::vertex("p", "us-central1", "gemini-2.5-flash");
    let record = |config: &GeminiConfig| {
        let mut stream = config.open_stream(None);
        let body = concat!(
            "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[",
            "{\"text\":\"Hmm.\",\"thought\":true,\"thoughtSignature\":\"c2ln\"},",
            "{\"text\":\"Hi\"}]},\"finishReason\":\"STOP\"}]}\n\n"
        );
        let mut events: Vec<_> = stream.feed(body.as_bytes()).collect();
        events.extend(stream.finish_input());
        let message = events.last().and_then(|e| e.terminal_message()).cloned();
        message.expect("a terminal event")
    };
    let message = record(&vertex);
    assert_eq!(
        (message.api.as_str(), message.provider.as_str()),
        (GEMINI_VERTEX_API, "google-vertex")
    );
    assert_eq!(message.stop_reason, StopReason::Stop);
    let other = record(&GeminiConfig::new("gemini-2.5-flash"));
    assert_eq!(
        (other.api.as_str(), other.provider.as_str()),
        (GEMINI_API, "google")
    );

    let context = Context::from_messages([user("hi").into(), message.into(), user("again").into()]);
    let thought = |config: &GeminiConfig| -> Value {
        let request = config.prepare(&context).unwrap();
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        body["contents"][1]["parts"][0].clone()
    };
    assert_eq!(
        thought(&vertex),
        json!({"thought": true, "text": "Hmm.", "thoughtSignature": "c2ln"})
    );
    // Another provider and api: the thinking goes as text, unsigned.
    assert_eq!(
        thought(&GeminiConfig::new("gemini-2.5-flash")),
        json!({"text": "Hmm."})
    );
    // Vertex's provider name on the Gemini API is still another api.
    let renamed = GeminiConfig::new("gemini-2.5-flash").with_provider("google-vertex");
    assert_eq!(thought(&renamed), json!({"text": "Hmm."}));
}
