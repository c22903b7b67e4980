//! `agentstream chat --record-raw` against the mock server: the saved body
//! is byte for byte what the server sent, `agentstream decode` and a
//! `ReplayModel` read it back to the final message of the live call.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use agentstream::message::{user, Context};
use agentstream::model::{Model, StreamOptions};
use agentstream_testkit::http::{
    answer_payloads, anthropic_scenarios, named_sse_body, split_randomly, sse_body, MockServer,
    Reply, Rng,
};
use agentstream_wire::replay::{Recording, ReplayModel};
use serde_json::Value;

fn agentstream() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
}

fn scratch(name: &str) -> PathBuf {
    let dir: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "record-raw"].iter().collect();
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

/// The fields of a final message that decoding must reproduce.
fn essentials(message: &Value) -> Value {
    serde_json::json!({
        "content": message["content"],
        "usage": message["usage"],
        "stopReason": message["stopReason"],
    })
}

fn record_and_replay(api: &str, body: Vec<u8>) {
    let pieces = split_randomly(&body, &mut Rng::new(7), 48);
    let server =
        MockServer::start(move |_| Reply::sse(pieces.clone()).with_delay(Duration::from_millis(2)))
            .expect("server");
    let raw = scratch(&format!("{api}.sse"));
    let turn = scratch(&format!("{api}.json"));
    let base = if api == "anthropic" {
        server.origin()
    } else {
        server.base_url()
    };
    let output = agentstream()
        .args([
            "chat",
            "--api",
            api,
            "--base-url",
            &base,
            "--model",
            "test-model",
        ])
        .args(["--api-key-env", "AGENTSTREAM_TEST_NO_KEY"])
        .args(["--record-raw", raw.to_str().unwrap()])
        .args(["--record", turn.to_str().unwrap(), "Say hello"])
        .output()
        .expect("run chat");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // Byte for byte what the server sent; the lengths add up to it.
    let saved = std::fs::read(&raw).expect("raw body");
    assert_eq!(saved, body);
    let lengths = std::fs::read_to_string(format!("{}.lengths", raw.display())).expect("lengths");
    let sum: usize = lengths
        .lines()
        .map(|l| l.parse::<usize>().expect("a length"))
        .sum();
    assert_eq!(sum, body.len());

    let live: Value = serde_json::from_slice(&std::fs::read(&turn).expect("turn")).expect("JSON");
    let live = essentials(&live[0]);

    // `decode` plays the file back to the same final message.
    let output = agentstream()
        .args(["decode", "--api", api, "--jsonl", raw.to_str().unwrap()])
        .output()
        .expect("run decode");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let last: Value = serde_json::from_str(stdout.lines().last().expect("events")).expect("JSON");
    assert_eq!(last["type"], "done");
    assert_eq!(essentials(&last["message"]), live);

    // So does a ReplayModel, in the pieces the client received.
    let recording = Recording::with_lengths(&saved, &lengths).expect("recording");
    let model = ReplayModel::new([recording]);
    let context = Context::from_messages([user("Say hello").into()]);
    let message = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(async {
            model
                .stream(&context, StreamOptions::default())
                .result()
                .await
        });
    let replayed = serde_json::to_value(&message).expect("JSON");
    assert_eq!(essentials(&replayed), live);
}

#[test]
fn openai_bodies_are_recorded_exactly_and_replay() {
    let body = sse_body(&answer_payloads(
        &["Let me think."],
        &["Hel", "lo, ", "wörld 👋"],
    ));
    record_and_replay("openai", body);
}

#[test]
fn anthropic_bodies_are_recorded_exactly_and_replay() {
    let body = named_sse_body(&anthropic_scenarios::answer_payloads());
    record_and_replay("anthropic", body);
}
