//! Azure OpenAI Responses and Mistral recordings against pi-ai's own
//! output for them: each fixture of `tests/fixtures/azure-responses-sse/`
//! and `tests/fixtures/mistral-sse/` is projected and compared with the
//! golden pi-ai 0.73.1 wrote for it (`oracle/pi-ai/golden/streams/`,
//! written by `oracle/pi-ai/compare.mjs` with `GOLDEN_DIR`, never from our
//! output). The events are compared as `compare.mjs` projects them, the
//! final message whole but its timestamp; the differences
//! `oracle/pi-ai/deliberate.json` lists are left out here as there.

use std::path::{Path, PathBuf};

use agentstream::model::ModelEvent;
use agentstream_wire::azure::AzureResponsesProjector;
use agentstream_wire::mistral::MistralProjector;
use agentstream_wire::sse::{SseEvent, SseProjector};
use serde_json::Value;

mod event_fields_support;
use event_fields_support::event_fields;

const RECORDED: &str = "recorded";

fn fixtures(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".chunks.jsonl"))
        .collect();
    files.sort();
    files
}

fn golden(fixture: &Path) -> Value {
    let name = fixture.file_name().unwrap().to_string_lossy();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../oracle/pi-ai/golden/streams")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The events of a `.chunks.jsonl` recording, one payload per line, as
/// `agentstream decode --chunks` reads it.
fn project<P: SseProjector>(fixture: &Path) -> Vec<ModelEvent> {
    let text = std::fs::read_to_string(fixture).unwrap();
    let mut projector = P::for_model(RECORDED.into(), RECORDED.into());
    let mut events = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        projector.push_event(&SseEvent::message(line), &mut events);
    }
    projector.finish(&mut events);
    events
}

/// Our events and final message beside pi-ai's. Pi's empty `text_delta`s
/// are dropped (agentstream sends no empty deltas; listed in
/// `deliberate.json`).
fn compare(fixture: &Path, events: &[ModelEvent]) -> (Vec<Value>, Vec<Value>, Value, Value) {
    let golden = golden(fixture);
    let ours: Vec<Value> = events
        .iter()
        .map(|e| event_fields(&serde_json::to_value(e).unwrap()))
        .collect();
    let theirs: Vec<Value> = golden["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !(e["type"] == "text_delta" && e["delta"] == ""))
        .cloned()
        .collect();
    let mut message =
        serde_json::to_value(events.last().unwrap().terminal_message().unwrap()).unwrap();
    message.as_object_mut().unwrap().remove("timestamp");
    let mut pi = golden["final"].clone();
    read_signatures(&mut message);
    read_signatures(&mut pi);
    (ours, theirs, message, pi)
}

/// A text's `textSignature` as the JSON it holds: its keys are in
/// serde_json's order when this crate is built alone (without
/// `preserve_order`), in written order in the command line's build.
fn read_signatures(message: &mut Value) {
    for block in message["content"].as_array_mut().into_iter().flatten() {
        if let Some(Value::String(text)) = block.get("textSignature") {
            if let Ok(value) = serde_json::from_str::<Value>(text) {
                block["textSignature"] = value;
            }
        }
    }
}

#[test]
fn mistral_recordings_agree_with_pi_ai() {
    let files = fixtures("mistral-sse");
    assert_eq!(files.len(), 3);
    for fixture in &files {
        let (ours, theirs, message, pi) = compare(fixture, &project::<MistralProjector>(fixture));
        assert_eq!(ours, theirs, "{}", fixture.display());
        assert_eq!(message, pi, "{}", fixture.display());
    }
}

#[test]
fn azure_recordings_agree_with_pi_ai() {
    let files = fixtures("azure-responses-sse");
    assert_eq!(files.len(), 3);
    for fixture in &files {
        let (ours, theirs, message, pi) =
            compare(fixture, &project::<AzureResponsesProjector>(fixture));
        assert_eq!(message["api"], "azure-openai-responses");
        if fixture
            .to_string_lossy()
            .contains("azure-reasoning-encrypted-content")
        {
            // Four responses in one recording: Pi merges them, we end at
            // the first `response.completed` (deliberate.json). The first
            // response's blocks are the same.
            assert_eq!(
                message["content"][0]["thinking"],
                pi["content"][0]["thinking"]
            );
            assert_eq!(message["content"][1], pi["content"][1]);
            assert_eq!(message["stopReason"], pi["stopReason"]);
            continue;
        }
        assert_eq!(ours, theirs, "{}", fixture.display());
        assert_eq!(message, pi, "{}", fixture.display());
    }
}
