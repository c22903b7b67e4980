//! OpenAI Responses and Gemini exchanges recorded by `agentstream serve
//! --upstream URL --record DIR` (in front of a scripted `serve`), read
//! back by `agentstream decode` (the exchange directory, the protocol from
//! its `request.json`) and by the library's `ReplayModel`: both give the
//! message the client got live.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use agentstream::message::{user, AssistantMessage, Context, StopReason};
use agentstream::model::{Model, StreamOptions};
use agentstream_tokio::{GeminiModel, ResponsesModel};
use agentstream_wire::gemini::GeminiConfig;
use agentstream_wire::replay::{Recording, ReplayModel};
use agentstream_wire::responses::ResponsesConfig;
use agentstream_wire::Api;
use serde_json::{json, Value};
use support::serve;

const KEY: &str = "sk-decode-cassette-secret";

fn decode(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .arg("decode")
        .args(args)
        .output()
        .expect("the binary runs")
}

fn turn(text: &str, thinking: &str) -> Value {
    json!({"role": "assistant",
           "content": [{"type": "thinking", "thinking": thinking}, {"type": "text", "text": text}],
           "api": "scripted", "provider": "scripted", "model": "scripted-cli",
           "usage": {"input": 7, "output": 5, "cacheRead": 0, "cacheWrite": 0,
                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
           "stopReason": "stop", "timestamp": 0})
}

fn question() -> Context {
    Context::from_messages([user("What is the weather?").into()])
}

/// The message without the clock.
fn comparable(mut message: AssistantMessage) -> Value {
    message.timestamp = 0;
    serde_json::to_value(message).unwrap()
}

/// `ReplayModel` on the exchange in `dir`, named as the live call was.
async fn replayed(dir: &Path, live: &AssistantMessage) -> (Api, AssistantMessage) {
    let request = std::fs::read_to_string(dir.join("request.json")).unwrap();
    let body = std::fs::read(dir.join("response.body")).unwrap();
    let lengths = std::fs::read_to_string(dir.join("response.body.lengths")).unwrap();
    let recording = Recording::from_cassette(&request, &body, &lengths).unwrap();
    let api = recording.api();
    let message = ReplayModel::new([recording])
        .with_names(live.model.clone(), live.provider.clone())
        .stream(&question(), StreamOptions::default())
        .result()
        .await;
    (api, message)
}

#[tokio::test(flavor = "current_thread")]
async fn responses_and_gemini_cassettes_decode_and_replay_as_recorded() {
    let tmp: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "decode-cassettes"]
        .iter()
        .collect();
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let script = tmp.join("script.json");
    let turns = json!([
        turn("Sunny in Paris.", "Looking it up"),
        turn("Il fait beau.", "Thinking in French")
    ]);
    std::fs::write(&script, turns.to_string()).unwrap();
    let dir = tmp.join("cassettes");

    let (upstream, upstream_url) = serve(&[script.as_os_str(), "--chunks".as_ref(), "3".as_ref()]);
    let (proxy, proxy_url) = serve(&[
        "--upstream".as_ref(),
        upstream_url.as_ref(),
        "--record".as_ref(),
        dir.as_os_str(),
    ]);
    let base = proxy_url.trim_end_matches("/v1").to_owned();
    let responses =
        ResponsesModel::new(ResponsesConfig::new(proxy_url.clone(), "gpt-5").with_api_key(KEY))
            .unwrap();
    let live_responses = responses
        .stream(&question(), StreamOptions::default())
        .result()
        .await;
    let gemini = GeminiModel::new(
        GeminiConfig::new("gemini-2.5-flash")
            .with_base_url(base)
            .with_api_key(KEY),
    )
    .unwrap();
    let live_gemini = gemini
        .stream(&question(), StreamOptions::default())
        .result()
        .await;
    drop((proxy, upstream));
    assert_eq!(
        live_responses.text(),
        "Sunny in Paris.",
        "{live_responses:?}"
    );
    assert_eq!(live_gemini.text(), "Il fait beau.", "{live_gemini:?}");
    assert_eq!(live_gemini.stop_reason, StopReason::Stop);
    let (responses_dir, gemini_dir) = (dir.join("0000"), dir.join("0001"));
    let request = std::fs::read_to_string(gemini_dir.join("request.json")).unwrap();
    assert!(request.contains(":streamGenerateContent"), "{request}");
    assert!(!request.contains(KEY), "{request}");

    // The library: the same message, the protocol read from the request.
    for (exchange, live, api) in [
        (&responses_dir, &live_responses, Api::Responses),
        (&gemini_dir, &live_gemini, Api::Gemini),
    ] {
        let (detected, message) = replayed(exchange, live).await;
        assert_eq!(detected, api);
        assert_eq!(comparable(message), comparable(live.clone()), "{api:?}");
    }

    // The binary: the exchange directory, or its body, with no --api.
    for (path, live) in [
        (responses_dir.clone(), &live_responses),
        (gemini_dir.join("response.body"), &live_gemini),
    ] {
        let out = decode(&[path.as_os_str()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut lines = stdout.lines();
        assert!(lines.next().unwrap().ends_with("→ done"), "{stdout}");
        assert_eq!(lines.next(), Some(live.text().as_str()), "{stdout}");
        assert!(stdout.contains("\nthinking: "), "{stdout}");
        assert!(stdout.contains("\nstopReason: stop\n"), "{stdout}");
        // In the JSON form, the live message with the recorded names.
        let out = decode(&[path.as_os_str(), "--jsonl=compact".as_ref()]);
        let last = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .map(str::to_owned)
            .unwrap_or_default();
        let event: Value = serde_json::from_str(&last).unwrap();
        let mut expected = comparable(live.clone());
        expected["model"] = "recorded".into();
        expected["provider"] = "recorded".into();
        assert_eq!(event["type"], "done", "{last}");
        assert_eq!(event["message"], expected, "{}", path.display());
    }
    // `--api` still wins: the Gemini body read as Chat Completions is not
    // that answer.
    let out = decode(&[gemini_dir.as_os_str(), "--api".as_ref(), "openai".as_ref()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("Il fait beau."), "{stdout}");

    // A request whose path names no protocol is an input error.
    let odd = tmp.join("odd");
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::copy(gemini_dir.join("response.body"), odd.join("response.body")).unwrap();
    std::fs::write(odd.join("request.json"), r#"{"path": "/v1/models"}"#).unwrap();
    let out = decode(&[odd.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("request.json:1: error: ") && stderr.contains("pass --api"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
