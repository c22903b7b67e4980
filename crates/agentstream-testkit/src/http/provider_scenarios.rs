//! The end-to-end scenarios of the providers of #41, run by every native
//! HTTP adapter against the [`MockServer`]: Azure OpenAI Responses and
//! Mistral play their recorded SSE streams; Bedrock's call is signed with
//! SigV4 by the call path and checked by the server from what the real
//! HTTP client put on the wire (the `Host` it wrote, the headers and body
//! bytes as received), then answered with the recorded `ConverseStream`
//! as event-stream frames. Each stream arrives in random pieces.

use std::time::{SystemTime, UNIX_EPOCH};

use agentstream::message::{user, Context};
use agentstream::model::Model;
use agentstream_wire::azure::AzureConfig;
use agentstream_wire::bedrock::auth::sigv4::{Credentials, SignableRequest};
use agentstream_wire::bedrock::auth::verify;
use agentstream_wire::bedrock::BedrockConfig;
use agentstream_wire::mistral::MistralConfig;
use serde_json::Value;

use crate::http::fixtures::{play, responses_sse, scripted};
use crate::http::scenarios::TEST_KEY;
use crate::http::{assert_stopped, split_randomly, sse_body, MockServer, Reply, Request, Rng};

/// The wire crate's fixtures, compiled in.
macro_rules! fixture {
    ($path:literal) => {
        include_str!(concat!("../../../agentstream-wire/tests/fixtures/", $path))
    };
}

/// Azure's recorded text stream (one Responses payload a line).
const AZURE_TEXT: &str = fixture!("azure-responses-sse/azure-text.1.chunks.jsonl");
/// Mistral's recorded text stream (one chunk a line).
const MISTRAL_TEXT: &str = fixture!("mistral-sse/mistral-text.chunks.jsonl");
/// Bedrock's recorded `ConverseStream` (one `{event: payload}` a line).
const BEDROCK_TEXT: &str = fixture!("bedrock/amazon-bedrock-text.events.jsonl");

/// The region and keys of the Bedrock scenario (not secrets).
const REGION: &str = "us-west-2";
const ACCESS_KEY_ID: &str = "AKIDEXAMPLE";
const SECRET_ACCESS_KEY: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const SESSION_TOKEN: &str = "session-token-not-a-secret";

fn context() -> Context {
    Context::from_messages([user("Say hello").into()])
}

/// The payloads of a recording, one JSON value a line.
fn lines(recording: &str) -> impl Iterator<Item = Value> + '_ {
    recording
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
}

/// The recording's text, read from its payloads with `delta`.
fn text_of(recording: &str, delta: impl Fn(&Value) -> Option<&str>) -> String {
    lines(recording)
        .filter_map(|v| delta(&v).map(String::from))
        .collect()
}

/// Azure's recorded stream at random boundaries: the text arrives whole,
/// and the request goes to the deployment path with `api-key`, naming the
/// deployment and without `store`.
pub async fn azure_recorded_stream<M: Model>(make: impl Fn(AzureConfig) -> M) {
    let expected = text_of(AZURE_TEXT, |v| {
        (v["type"] == "response.output_text.delta")
            .then(|| v["delta"].as_str())
            .flatten()
    });
    assert!(!expected.is_empty());
    let mut rng = Rng::new(41);
    let body = responses_sse(AZURE_TEXT);
    let server = scripted(vec![Reply::sse(split_randomly(&body, &mut rng, 48))]);
    let config = AzureConfig::new(format!("{}/openai", server.origin()), "gpt-5.1")
        .with_deployment("prod-gpt")
        .with_api_key(TEST_KEY);
    let (_, message, cause) = play(&make(config), &context()).await;
    assert_stopped(&message);
    assert!(cause.is_none());
    assert_eq!(message.text(), expected);
    assert_eq!(message.api, "azure-openai-responses");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/openai/v1/responses?api-version=v1");
    assert_eq!(request.header("api-key"), Some(TEST_KEY));
    assert_eq!(request.header("authorization"), None);
    let body = request.json();
    assert_eq!(body["model"], "prod-gpt");
    assert!(body.get("store").is_none(), "{body}");
}

/// Mistral's recorded stream at random boundaries: the text arrives
/// whole, and the request goes to `/v1/chat/completions` with the bearer
/// key.
pub async fn mistral_recorded_stream<M: Model>(make: impl Fn(MistralConfig) -> M) {
    let expected = text_of(MISTRAL_TEXT, |v| {
        v["choices"][0]["delta"]["content"].as_str()
    });
    assert!(!expected.is_empty());
    let mut payloads: Vec<&str> = MISTRAL_TEXT
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    payloads.push("[DONE]");
    let mut rng = Rng::new(42);
    let body = sse_body(&payloads);
    let server = scripted(vec![Reply::sse(split_randomly(&body, &mut rng, 48))]);
    let config = MistralConfig::new(server.origin(), "mistral-small-latest").with_api_key(TEST_KEY);
    let (_, message, cause) = play(&make(config), &context()).await;
    assert_stopped(&message);
    assert!(cause.is_none());
    assert_eq!(message.text(), expected);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    let bearer = format!("Bearer {TEST_KEY}");
    assert_eq!(request.header("authorization"), Some(bearer.as_str()));
    assert_eq!(request.json()["model"], "mistral-small-latest");
}

/// Bedrock with temporary credentials: the request the HTTP client sent
/// verifies as AWS verifies it (see [`verify_sigv4`]); the recorded
/// stream, as event-stream frames in random pieces, arrives whole. A
/// request that does not verify is answered 403, as AWS answers it.
pub async fn bedrock_signed_stream<M: Model>(make: impl Fn(BedrockConfig) -> M) {
    let expected = text_of(BEDROCK_TEXT, |v| {
        v["contentBlockDelta"]["delta"]["text"].as_str()
    });
    assert!(!expected.is_empty());
    let mut frames = Vec::new();
    for line in lines(BEDROCK_TEXT) {
        let Some((event, payload)) = line.as_object().and_then(|o| o.iter().next()) else {
            continue;
        };
        agentstream_wire::eventstream::encode_event(
            event,
            payload.to_string().as_bytes(),
            &mut frames,
        )
        .expect("a recorded event encodes");
    }
    let mut rng = Rng::new(43);
    let pieces = split_randomly(&frames, &mut rng, 40);
    let server = MockServer::start(move |request| match verify_sigv4(request) {
        Ok(()) => Reply::Sse {
            status: 200,
            content_type: "application/vnd.amazon.eventstream".into(),
            pieces: pieces.clone(),
            delay: std::time::Duration::ZERO,
            end: crate::http::BodyEnd::Complete,
        },
        Err(why) => Reply::json(403, &[], &serde_json::json!({ "message": why })),
    })
    .expect("server");
    let config = BedrockConfig::new("anthropic.claude-sonnet-4-5-20250929-v1:0", REGION)
        .with_base_url(server.origin())
        .with_credentials(credentials());
    let (_, message, cause) = play(&make(config), &context()).await;
    assert_stopped(&message);
    assert!(cause.is_none());
    assert_eq!(message.text(), expected);
    assert_eq!(message.api, "bedrock-converse-stream");
    let request = &server.requests()[0];
    assert_eq!(
        request.path,
        "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    assert_eq!(request.header("x-amz-security-token"), Some(SESSION_TOKEN));

    // The check can fail: the same request with one more body byte.
    let mut tampered = request.clone();
    tampered.body.push(b' ');
    assert!(verify_sigv4(&tampered).is_err());
}

/// AWS's check of a SigV4 request, from the request as received (the
/// headers as they arrived, the `Host` the client wrote among them):
/// [`verify`] with the scenario's key and session token in `REGION`,
/// `x-amz-date` within AWS's five minutes of this machine's clock.
///
/// # Errors
/// What does not verify.
pub fn verify_sigv4(request: &Request) -> Result<(), String> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| e.to_string())?
        .as_secs();
    let headers: Vec<(&str, &str)> = request
        .headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let (path, query) = request.path.split_once('?').unwrap_or((&request.path, ""));
    let received = SignableRequest {
        method: &request.method,
        path,
        query,
        headers: &headers,
        body: &request.body,
    };
    verify(&credentials(), REGION, &received, now, 300).map_err(|e| e.to_string())
}

/// The scenario's temporary credentials.
fn credentials() -> Credentials {
    Credentials {
        access_key_id: ACCESS_KEY_ID.into(),
        secret_access_key: SECRET_ACCESS_KEY.into(),
        session_token: Some(SESSION_TOKEN.into()),
    }
}

/// The makers `bedrock`, `azure` and `mistral` (the host's models from
/// its prelude) and one `#[test]` per scenario of this module, in a
/// module `provider_scenarios`; expanded by
/// [`http_host_tests!`](crate::http_host_tests!).
#[doc(hidden)]
#[macro_export]
macro_rules! provider_host_tests {
    (host: $host:ident, run: $run:path $(,)?) => {
        fn bedrock(config: $host::prelude::BedrockConfig) -> $host::prelude::BedrockModel {
            $host::prelude::BedrockModel::new(config).expect("client")
        }

        fn azure(config: $host::prelude::AzureConfig) -> $host::prelude::AzureModel {
            $host::prelude::AzureModel::new(config).expect("client")
        }

        fn mistral(config: $host::prelude::MistralConfig) -> $host::prelude::MistralModel {
            $host::prelude::MistralModel::new(config).expect("client")
        }

        // The providers of #41 (`provider_scenarios`).
        mod provider_scenarios {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            fn azure_recorded_stream() {
                $run($crate::http::provider_scenarios::azure_recorded_stream(
                    azure,
                ))
            }

            #[test]
            fn mistral_recorded_stream() {
                $run($crate::http::provider_scenarios::mistral_recorded_stream(
                    mistral,
                ))
            }

            #[test]
            fn bedrock_signed_stream() {
                $run($crate::http::provider_scenarios::bedrock_signed_stream(
                    bedrock,
                ))
            }
        }
    };
}
