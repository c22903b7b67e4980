//! `ReplayModel` on the real recordings in `tests/fixtures/*-sse/`: each
//! replayed call gives exactly the events of decoding the recording
//! directly, in one piece or in small pieces; recordings answer calls in
//! order, and running out is a clear error.

use std::path::PathBuf;

use agentstream::message::{user, Context, StopReason};
use agentstream::model::{
    validate_events, AbortController, ErrorCause, Model, ModelEvent, StreamOptions,
};
use agentstream_wire::anthropic::AnthropicProjector;
use agentstream_wire::gemini::GeminiProjector;
use agentstream_wire::openai::OpenAiProjector;
use agentstream_wire::replay::{Recording, ReplayModel, RECORDED, REPLAY_EXHAUSTED_MESSAGE};
use agentstream_wire::responses::ResponsesProjector;
use agentstream_wire::sse::{SseEvent, SseProjector, SseStream};
use agentstream_wire::Api;
use futures_util::StreamExt;

/// The recorded provider streams copied into `tests/fixtures/DIR/`
/// (their README gives each file's source and license).
fn fixtures(dir: &str) -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("the recorded fixtures at {}: {e}", root.display()))
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "sse" || e == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    files
}

fn context() -> Context {
    Context::from_messages([user("hi").into()])
}

fn play(model: &ReplayModel, options: StreamOptions) -> (Vec<ModelEvent>, Option<ErrorCause>) {
    let mut stream = model.stream(&context(), options);
    let events: Vec<ModelEvent> = futures_executor::block_on(stream.by_ref().collect());
    let findings = validate_events(&events);
    assert!(findings.is_empty(), "{findings:?}");
    (events, stream.error_cause())
}

/// The events of decoding `path` directly, without the model: the whole
/// body through the stream, or each line through the projector.
fn decode_directly(path: &PathBuf, api: Api) -> Vec<ModelEvent> {
    match api {
        Api::OpenAi => decode_with::<OpenAiProjector>(path),
        Api::Anthropic => decode_with::<AnthropicProjector>(path),
        Api::Responses => decode_with::<ResponsesProjector>(path),
        Api::Gemini => decode_with::<GeminiProjector>(path),
        other => panic!("no projector for {other:?}"),
    }
}

fn decode_with<P: SseProjector + Send + 'static>(path: &PathBuf) -> Vec<ModelEvent> {
    let bytes = std::fs::read(path).expect("fixture");
    let mut events = Vec::new();
    if path.extension().is_some_and(|e| e == "jsonl") {
        let text = String::from_utf8(bytes).expect("UTF-8");
        let mut projector = P::for_model(RECORDED.into(), RECORDED.into());
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            projector.push_event(&SseEvent::message(line), &mut events);
        }
        projector.finish(&mut events);
    } else {
        let mut stream = SseStream::<P>::new(RECORDED, RECORDED, None);
        events.extend(stream.feed(&bytes));
        events.extend(stream.finish_input());
    }
    events
}

fn recording(path: &PathBuf) -> Recording {
    let bytes = std::fs::read(path).expect("fixture");
    if path.extension().is_some_and(|e| e == "jsonl") {
        Recording::jsonl(std::str::from_utf8(&bytes).expect("UTF-8"))
    } else {
        Recording::body(bytes)
    }
}

/// The body cut into `size`-byte pieces (boundaries inside lines and
/// UTF-8 characters).
fn in_pieces(recording: &Recording, size: usize) -> Recording {
    let body = recording.to_body();
    Recording::pieces(body.chunks(size))
}

fn check_dir(dir: &str, api: Api) {
    let files = fixtures(dir);
    let recordings: Vec<Recording> = files.iter().map(recording).collect();
    for (path, recording) in files.iter().zip(&recordings) {
        assert_eq!(
            recording.api(),
            api,
            "detected protocol of {}",
            path.display()
        );
    }
    // Each recording answers one call, in order, then the model is out.
    let model = ReplayModel::new(recordings.clone());
    let small = ReplayModel::new(recordings.iter().map(|r| in_pieces(r, 7)));
    for path in &files {
        let expected = decode_directly(path, api);
        let (events, cause) = play(&model, StreamOptions::default());
        assert_eq!(events, expected, "{}", path.display());
        let message = events
            .last()
            .and_then(ModelEvent::terminal_message)
            .expect("terminal");
        // A recorded provider error (`*error*` fixtures) replays as one.
        let failed = path.to_string_lossy().contains("error");
        if failed {
            assert_eq!(message.stop_reason, StopReason::Error, "{}", path.display());
            assert!(cause.is_some(), "{}", path.display());
        } else {
            assert!(cause.is_none(), "{}: {cause:?}", path.display());
            assert!(
                matches!(message.stop_reason, StopReason::Stop | StopReason::ToolUse),
                "{}: {:?}",
                path.display(),
                message.error_message
            );
        }
        let (pieces, _) = play(&small, StreamOptions::default());
        assert_eq!(
            pieces.last().and_then(ModelEvent::terminal_message),
            Some(message),
            "{} in 7-byte pieces",
            path.display()
        );
    }
    assert_eq!(model.remaining(), 0);
    let (events, _) = play(&model, StreamOptions::default());
    assert_eq!(events.len(), 1);
    let message = events[0].terminal_message().expect("terminal");
    assert_eq!(
        message.error_message.as_deref(),
        Some(REPLAY_EXHAUSTED_MESSAGE)
    );
}

#[test]
fn openai_recordings_replay_as_they_decode() {
    check_dir("openai-sse", Api::OpenAi);
}

#[test]
fn anthropic_recordings_replay_as_they_decode() {
    check_dir("anthropic-sse", Api::Anthropic);
}

#[test]
fn responses_recordings_replay_as_they_decode() {
    check_dir("openai-responses-sse", Api::Responses);
}

#[test]
fn gemini_recordings_replay_as_they_decode() {
    check_dir("google-sse", Api::Gemini);
}

/// The protocol of a cassette comes from its request's path; the body's
/// first event names it when nothing else does.
#[test]
fn a_cassette_names_its_protocol() {
    let body = b"data: {\"candidates\":[]}\n\n";
    for (path, api) in [
        ("/v1/chat/completions", Api::OpenAi),
        ("/v1/messages", Api::Anthropic),
        ("/v1/responses", Api::Responses),
        (
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            Api::Gemini,
        ),
        (
            "/v1/projects/p/locations/l/publishers/google/models/g:generateContent",
            Api::Gemini,
        ),
    ] {
        let request = serde_json::json!({"api": "x", "path": path}).to_string();
        let recording = Recording::from_cassette(&request, body, "10\n15\n").expect(path);
        assert_eq!(recording.api(), api, "{path}");
    }
    for bad in ["", "[]", r#"{"path": "/v1/models"}"#, r#"{"path": 3}"#] {
        let error = Recording::from_cassette(bad, body, "25\n").unwrap_err();
        assert!(
            error.to_string().starts_with("cassette request: "),
            "{bad:?}"
        );
    }
    assert!(Recording::from_cassette(r#"{"path": "/v1/responses"}"#, body, "3\n").is_err());
    // Detected from the body: each protocol's first event.
    for (payload, api) in [
        (r#"{"choices":[]}"#, Api::OpenAi),
        (r#"{"type":"chunk","choices":[]}"#, Api::OpenAi),
        ("[DONE]", Api::OpenAi),
        (r#"{"type":"message_start","message":{}}"#, Api::Anthropic),
        (
            r#"{"type":"response.created","response":{}}"#,
            Api::Responses,
        ),
        (r#"{"usageMetadata":{}}"#, Api::Gemini),
    ] {
        assert_eq!(Recording::payloads([payload]).api(), api, "{payload}");
    }
}

#[test]
fn the_constructor_can_fix_the_protocol_and_an_abort_is_honoured() {
    let path = &fixtures("openai-sse")[0];
    // Read as Anthropic, an OpenAI body is not a Messages stream.
    let model = ReplayModel::new([recording(path)]).with_api(Api::Anthropic);
    let (events, cause) = play(&model, StreamOptions::default());
    let message = events
        .last()
        .and_then(ModelEvent::terminal_message)
        .expect("terminal");
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(matches!(cause, Some(ErrorCause::Protocol)), "{cause:?}");

    let model = ReplayModel::new([recording(path)]).with_names("gpt-test", "openai");
    let controller = AbortController::new();
    controller.abort();
    let (events, cause) = play(
        &model,
        StreamOptions::default().with_signal(controller.signal()),
    );
    assert_eq!(events.len(), 1);
    assert!(matches!(cause, Some(ErrorCause::Aborted)));
    assert_eq!(model.remaining(), 0, "an aborted call used its recording");
}

#[test]
fn chunk_lengths_are_checked() {
    let body = b"data: [DONE]\n\n";
    let recording = Recording::with_lengths(body, "4\n\n10\n").expect("valid");
    assert_eq!(recording.piece_lengths().collect::<Vec<_>>(), [4, 10]);
    assert_eq!(recording.to_body(), body);
    for bad in ["4\n", "4\n11\n", "x\n", "-1\n", "99999999999999999999999\n"] {
        let error = Recording::with_lengths(body, bad).unwrap_err();
        assert!(
            error.to_string().starts_with("chunk lengths: "),
            "{bad:?}: {error}"
        );
    }
}

/// A replay is a host: beside a real provider configuration and the recording endpoint it
/// runs the call path of a live call (the recording endpoint sees the recorded pieces in
/// order, the messages carry the replay's clock), and a request past the
/// last recording fails as a transport error naming the URL.
#[test]
fn a_replay_host_runs_the_live_call_path() {
    use std::sync::{Arc, Mutex};

    use agentstream_wire::model::EndpointModel;
    use agentstream_wire::openai::OpenAiConfig;
    use agentstream_wire::recording::RecordingEndpoint;
    use agentstream_wire::replay::ReplayHost;

    let path = &fixtures("openai-sse")[0];
    let recorded = in_pieces(&recording(path), 7);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let config = OpenAiConfig::new("http://127.0.0.1:9/v1", "m");
    let recording = RecordingEndpoint::new(
        config,
        Arc::new(move |piece: &[u8]| sink.lock().unwrap().push(piece.len())),
    );
    let host = ReplayHost::new([recorded.clone()]).with_timestamp(42);
    let model = EndpointModel::with_host(recording, host);
    let mut stream = model.stream(&context(), StreamOptions::default());
    let events: Vec<ModelEvent> = futures_executor::block_on(stream.by_ref().collect());
    assert!(validate_events(&events).is_empty());
    let message = events.last().and_then(ModelEvent::terminal_message);
    let message = message.expect("terminal");
    assert!(
        matches!(message.stop_reason, StopReason::Stop | StopReason::ToolUse),
        "{:?}",
        message.error_message
    );
    assert_eq!(message.timestamp, 42);
    let seen = seen.lock().unwrap().clone();
    let lengths: Vec<usize> = recorded.piece_lengths().collect();
    assert!(!seen.is_empty() && lengths.starts_with(&seen), "{seen:?}");
    assert_eq!(model.host().remaining(), 0);

    let mut stream = model.stream(&context(), StreamOptions::default());
    let message = futures_executor::block_on(stream.result());
    let error = message.error_message.unwrap_or_default();
    assert!(
        error.contains("http://127.0.0.1:9/v1/chat/completions")
            && error.contains(REPLAY_EXHAUSTED_MESSAGE),
        "{error}"
    );
    assert!(matches!(
        stream.error_cause(),
        Some(ErrorCause::Transport(_))
    ));
}

/// A cassette whose `response.json` says `"cut": true` replays cut: the
/// body breaks off after its pieces, and the call ends in an error rather
/// than as a complete answer; the same files without the mark play
/// complete, and a mark that is not a boolean is refused.
#[test]
fn a_cut_cassette_replays_cut() {
    let request = r#"{"api": "openai-completions", "path": "/v1/chat/completions"}"#;
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n",
    );
    let lengths = format!("20\n{}\n", body.len() - 20);
    let ended = |response: &str| {
        let recording =
            Recording::from_cassette_files(request, response, body.as_bytes(), &lengths).unwrap();
        let cut = recording.is_cut();
        let (events, _) = play(&ReplayModel::new([recording]), StreamOptions::default());
        let Some(ModelEvent::Done { message, .. } | ModelEvent::Error { error: message, .. }) =
            events.last()
        else {
            panic!("{events:?}");
        };
        (
            cut,
            message.stop_reason.clone(),
            message.error_message.clone(),
        )
    };
    let (cut, reason, error) = ended(r#"{"status": 200, "headers": {}, "cut": true}"#);
    assert!(cut);
    assert_eq!(reason, StopReason::Error);
    assert!(
        error.as_deref().unwrap_or_default().contains("cut"),
        "{error:?}"
    );
    for complete in [r#"{"status": 200}"#, r#"{"status": 200, "cut": false}"#] {
        assert_eq!(ended(complete), (false, StopReason::Stop, None));
    }
    for bad in [r#"{"cut": "yes"}"#, "[]", "not json"] {
        assert!(Recording::from_cassette_files(request, bad, body.as_bytes(), &lengths).is_err());
    }
}

/// A Bedrock fixture's events (one `{eventType: payload}` per line) as
/// the event-stream body AWS sends.
fn bedrock_body(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bedrock")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut body = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let event: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).unwrap();
        for (name, payload) in event {
            agentstream_wire::eventstream::encode_event(
                &name,
                payload.to_string().as_bytes(),
                &mut body,
            )
            .unwrap();
        }
    }
    body
}

#[test]
fn bedrock_cassettes_replay_their_binary_frames_and_whole_answers() {
    let body = bedrock_body("amazon-bedrock-tool-call.1.events.jsonl");
    let model = "anthropic.claude-3-haiku-20240307-v1:0";
    let mut direct = agentstream_wire::bedrock::BedrockStream::new(model, "amazon-bedrock", None);
    let mut expected: Vec<ModelEvent> = direct.feed(&body).collect();
    expected.extend(direct.finish_input());
    let request = serde_json::json!({
        "api": "bedrock-converse-stream",
        "path": "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
        "stream": true,
    })
    .to_string();
    // In pieces that cut the binary messages anywhere.
    let lengths: String = body
        .chunks(7)
        .map(|piece| format!("{}\n", piece.len()))
        .collect();
    let recording = Recording::from_cassette(&request, &body, &lengths).unwrap();
    assert_eq!(recording.api(), Api::Bedrock);
    let (events, cause) = play(&ReplayModel::new([recording]), StreamOptions::default());
    assert!(cause.is_none());
    let message = |events: &[ModelEvent]| {
        events
            .last()
            .and_then(ModelEvent::terminal_message)
            .cloned()
    };
    let replayed = message(&events).unwrap();
    assert_eq!(replayed.content, message(&expected).unwrap().content);
    assert_eq!(replayed.stop_reason, StopReason::ToolUse);

    // The same answer, not streamed: `/converse`'s JSON reads as its stream.
    let whole = serde_json::json!({
        "output": {"message": {"role": "assistant", "content": [
            {"text": "Checking."},
            {"toolUse": {"toolUseId": "t1", "name": "ls", "input": {"dir": "/"}}}]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 5, "outputTokens": 3, "totalTokens": 8},
        "metrics": {"latencyMs": 10},
    })
    .to_string();
    let request = serde_json::json!({"path": "/model/m/converse", "stream": false}).to_string();
    let lengths = format!("{}\n", whole.len());
    let recording = Recording::from_cassette(&request, whole.as_bytes(), &lengths).unwrap();
    let (events, _) = play(&ReplayModel::new([recording]), StreamOptions::default());
    let replayed = message(&events).unwrap();
    assert_eq!(replayed.stop_reason, StopReason::ToolUse);
    assert_eq!(replayed.usage.total_tokens, Some(8));
    let json = serde_json::to_value(&replayed.content).unwrap();
    assert_eq!(json[0]["text"], "Checking.");
    assert_eq!(json[1]["arguments"], serde_json::json!({"dir": "/"}));
    // Bedrock's error body stays as it is: the call fails with its message.
    let error = br#"{"message": "Too many requests"}"#;
    let recording = Recording::from_cassette(&request, error, "32\n").unwrap();
    let (events, _) = play(&ReplayModel::new([recording]), StreamOptions::default());
    assert!(matches!(events.last(), Some(ModelEvent::Error { .. })));
}
