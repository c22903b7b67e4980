//! `agentstream models` and `agentstream chat --dry-run`: the catalogue on
//! the command line, and the request printed without being sent.

use std::process::Command;

use serde_json::Value;

fn agentstream() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentstream"))
}

#[test]
fn models_lists_a_provider_and_refuses_an_unknown_one() {
    let output = agentstream()
        .args(["models", "anthropic"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("anthropic/claude-sonnet-4-5 ")),
        "{text}"
    );
    assert!(!text.contains("openai/"));

    let output = agentstream()
        .args(["models", "--json", "google"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let models = json["google"].as_array().unwrap();
    assert!(models
        .iter()
        .all(|m| m["api"] == "google-generative-ai" && m["cost"]["input"].is_number()));

    let output = agentstream()
        .args(["models", "no-such-provider"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown provider"));
}

#[test]
fn dry_run_prints_the_request_with_the_key_redacted_and_sends_nothing() {
    // The base URL points at a port nothing listens on: a dry run never
    // connects, so it succeeds all the same.
    let output = agentstream()
        .args([
            "chat",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--base-url",
            "http://127.0.0.1:9",
        ])
        .args(["--session-id", "s-1", "--dry-run", "hello"])
        .env("ANTHROPIC_API_KEY", "sk-ant-very-secret")
        .env_remove("ANTHROPIC_OAUTH_TOKEN")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(!text.contains("sk-ant-very-secret"));
    let request: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(request["method"], "POST");
    assert_eq!(request["url"], "http://127.0.0.1:9/v1/messages");
    assert_eq!(request["headers"]["x-api-key"], "<redacted>");
    assert_eq!(request["body"]["model"], "claude-sonnet-4-5");
    // Without --max-tokens, pi-ai's `streamSimple` default (what Pi's
    // agent sends): min(the model's maxTokens, 32000), as the wire
    // crate's catalogue configures it.
    assert_eq!(request["body"]["max_tokens"], 32000);
    // A catalogue model caches by default (pi-ai's `short`).
    assert_eq!(
        request["body"]["messages"][0]["content"][0]["cache_control"]["type"],
        "ephemeral"
    );

    let output = agentstream()
        .args([
            "chat",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--cache-retention",
            "none",
        ])
        .args(["--dry-run", "hello"])
        .output()
        .unwrap();
    let request: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(!request["body"].to_string().contains("cache_control"));
}

/// `chat` on Amazon Bedrock with pi-ai's environment: a catalogue model
/// or `--api bedrock` goes to the region's endpoint and is signed with
/// SigV4 when keys are set (the dry run signs as the call would), carries
/// the API key as a bearer token when that is set, and goes unsigned with
/// neither; a profile is refused with a clear error.
#[test]
fn bedrock_requests_are_signed_with_the_keys_of_the_environment() {
    let aws = [
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_BEDROCK_SKIP_AUTH",
        "AWS_PROFILE",
    ];
    let dry_run = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = agentstream();
        command.arg("chat").args(args).args(["--dry-run", "hi"]);
        for name in aws {
            command.env_remove(name);
        }
        command.envs(env.iter().copied());
        command.output().unwrap()
    };
    let keys = [
        ("AWS_REGION", "eu-west-3"),
        ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
        (
            "AWS_SECRET_ACCESS_KEY",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        ),
        ("AWS_SESSION_TOKEN", "session-token-secret"),
    ];
    for args in [
        &["--model", "amazon-bedrock/amazon.nova-lite-v1:0"][..],
        &["--api", "bedrock", "--model", "amazon.nova-lite-v1:0"][..],
    ] {
        let output = dry_run(args, &keys);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(!text.contains("wJalrXUtnFEMI"), "{text}");
        assert!(!text.contains("session-token-secret"), "{text}");
        let request: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            request["url"],
            "https://bedrock-runtime.eu-west-3.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse-stream"
        );
        let headers = &request["headers"];
        assert_eq!(headers["authorization"], "<redacted>", "{headers}");
        assert!(
            headers["x-amz-date"]
                .as_str()
                .is_some_and(|d| d.len() == 16),
            "{headers}"
        );
        assert!(headers["x-amz-content-sha256"].is_string(), "{headers}");
    }

    // A Bedrock API key: a bearer token, nothing signed.
    let output = dry_run(
        &["--api", "bedrock", "--model", "m"],
        &[("AWS_BEARER_TOKEN_BEDROCK", "bedrock-key-secret")],
    );
    let request: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        request["url"],
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream"
    );
    assert_eq!(request["headers"]["authorization"], "<redacted>");
    assert!(request["headers"].get("x-amz-date").is_none());

    // Nothing: unsigned (a local server).
    let output = dry_run(
        &[
            "--api",
            "bedrock",
            "--base-url",
            "http://127.0.0.1:9",
            "--model",
            "m",
        ],
        &[],
    );
    let request: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(request["headers"].get("authorization").is_none());
    assert!(request["headers"].get("x-amz-date").is_none());

    // A profile cannot be read here: said, not ignored.
    let output = dry_run(
        &["--api", "bedrock", "--model", "m"],
        &[("AWS_PROFILE", "work")],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("profile"));
}
