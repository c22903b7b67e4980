//! A Bedrock call signed with SigV4 in the one call path: `BedrockModel`
//! with static credentials on a test host whose server half verifies the
//! request as AWS does (`bedrock::auth::verify`: the signature
//! recomputed from what arrived, the method, URL, headers and body, with
//! the secret key it knows, at the host's clock); and the same request's
//! `authorization` as the AWS SDK for JavaScript (`@smithy/signature-v4`,
//! which pi-ai's Bedrock provider signs with) computed it
//! (`tests/fixtures/sigv4/smithy_bedrock_call.json`, written by
//! `smithy_bedrock_call.mjs`).

use core::future::{ready, Future};
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use agentstream::message::{user, Context};
use agentstream::model::{Model, StreamOptions};
use agentstream::rt::Timer;
use agentstream_wire::bedrock::auth::sigv4::{Credentials, SignableRequest};
use agentstream_wire::bedrock::auth::{split_url, verify};
use agentstream_wire::bedrock::BedrockConfig;
use agentstream_wire::endpoint::{Endpoint, PreparedRequest};
use agentstream_wire::host::{ClientError, Host};
use agentstream_wire::http::{ResponseHead, TransportError};
use agentstream_wire::model::BedrockModel;
use agentstream_wire::options::is_secret_header;
use agentstream_wire::recording::RecordingEndpoint;
use serde_json::Value;

mod frames_support;
use frames_support::{frames, Pieces};

const ACCESS_KEY_ID: &str = "AKIDEXAMPLE";
const SECRET_ACCESS_KEY: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const SESSION_TOKEN: &str = "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN";
const REGION: &str = "us-west-2";
/// The host's clock: 2023-11-14T22:13:20.123Z.
const NOW_MS: u64 = 1_700_000_000_123;

/// What the server half saw of each request, and whether it verified.
static SEEN: Mutex<Vec<(PreparedRequest, Result<(), String>)>> = Mutex::new(Vec::new());

fn credentials(session_token: Option<&str>) -> Credentials {
    Credentials {
        access_key_id: ACCESS_KEY_ID.into(),
        secret_access_key: SECRET_ACCESS_KEY.into(),
        session_token: session_token.map(String::from),
    }
}

/// The server's check, as AWS makes it ([`verify`]): from what arrived
/// (every header sent, and the Host the client writes), with the secret
/// key and the session token of `session_token`, at the host's clock
/// with no skew allowed.
fn verify_received(request: &PreparedRequest, session_token: Option<&str>) -> Result<(), String> {
    let parts = split_url(&request.url).map_err(|e| e.to_string())?;
    let mut arrived: Vec<(&str, &str)> = request.headers_in_order().collect();
    arrived.push(("host", parts.host));
    let received = SignableRequest {
        method: request.method,
        path: parts.path,
        query: parts.query,
        headers: &arrived,
        body: &request.body,
    };
    verify(
        &credentials(session_token),
        REGION,
        &received,
        NOW_MS / 1000,
        0,
    )
    .map_err(|e| e.to_string())
}

struct Aws;

impl Host for Aws {
    type Body = Pieces;
    fn for_endpoint(_connect_timeout: Option<Duration>) -> Result<Self, ClientError> {
        Ok(Aws)
    }
    fn send(
        &self,
        request: PreparedRequest,
        _connect_timeout: Option<Duration>,
    ) -> impl Future<Output = Result<(ResponseHead, Pieces), TransportError>> + Send {
        let token = request.header("x-amz-security-token").map(String::from);
        let verdict = verify_received(&request, token.as_deref());
        let ok = verdict.is_ok();
        SEEN.lock().unwrap().push((request, verdict));
        if !ok {
            let body = br#"{"message":"The request signature we calculated does not match the signature you provided."}"#;
            return ready(Ok((ResponseHead::new(403), Pieces(vec![body.to_vec()]))));
        }
        let body = frames(&[
            ("messageStart", r#"{"role":"assistant"}"#),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"text":"signed"}}"#,
            ),
            ("contentBlockStop", r#"{"contentBlockIndex":0}"#),
            ("messageStop", r#"{"stopReason":"end_turn"}"#),
        ]);
        ready(Ok((ResponseHead::new(200), Pieces(vec![body]))))
    }
    type Timer = Aws;
    fn timer(&self) -> &Aws {
        self
    }
}

impl Timer for Aws {
    type Sleep = core::future::Pending<()>;
    fn sleep(&self, _duration: Duration) -> core::future::Pending<()> {
        core::future::pending()
    }
    fn now_unix_ms(&self) -> u64 {
        NOW_MS
    }
}

fn config(session_token: Option<&str>) -> BedrockConfig {
    BedrockConfig::new("anthropic.claude-sonnet-4-5-20250929-v1:0", REGION)
        .with_base_url("http://127.0.0.1:4566")
        .with_credentials(credentials(session_token))
}

fn context() -> Context {
    Context::from_messages([user("hello").into()])
}

/// The last request the server half saw, and its verdict.
fn last_seen() -> (PreparedRequest, Result<(), String>) {
    SEEN.lock().unwrap().last().cloned().unwrap()
}

fn call<E: Endpoint + Send + Sync + 'static>(
    endpoint: E,
) -> agentstream::message::AssistantMessage {
    let model = agentstream_wire::model::EndpointModel::<E, Aws>::new(endpoint).unwrap();
    futures_executor::block_on(model.stream(&context(), StreamOptions::default()).result())
}

// One test: the server's log is shared.
#[test]
fn a_signed_call_verifies_on_the_server_and_matches_the_aws_sdk() {
    // Static keys.
    let message = call(config(None));
    let (request, verdict) = last_seen();
    assert_eq!(verdict, Ok(()), "{request:?}");
    assert_eq!(message.error_message, None);
    assert_eq!(message.text(), "signed");
    assert_eq!(request.header("x-amz-security-token"), None);

    // The AWS SDK for JavaScript signed the same request at the same time.
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sigv4/smithy_bedrock_call.json");
    let signed: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(signed["url"], request.url.as_str());
    assert_eq!(signed["time_ms"], NOW_MS);
    // The SDK signed the body in both key orders serde_json may write
    // (sorted, or as written under `preserve_order`): take this build's.
    let sent = std::str::from_utf8(&request.body).ok();
    let golden = signed["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|variant| variant["body"].as_str() == sent)
        .unwrap_or_else(|| panic!("the body changed: rerun smithy_bedrock_call.mjs with {sent:?}"));
    for name in ["authorization", "x-amz-date", "x-amz-content-sha256"] {
        assert_eq!(
            golden["headers"][name].as_str(),
            request.header(name),
            "{name}"
        );
    }

    // Temporary credentials: the session token is sent and signed.
    let message = call(config(Some(SESSION_TOKEN)));
    let (request, verdict) = last_seen();
    assert_eq!(verdict, Ok(()));
    assert_eq!(message.text(), "signed");
    assert_eq!(request.header("x-amz-security-token"), Some(SESSION_TOKEN));
    let authorization = request.header("authorization").unwrap();
    assert!(
        authorization.contains("x-amz-security-token"),
        "{authorization}"
    );
    assert_eq!(
        golden["session_headers"]["authorization"].as_str(),
        Some(authorization)
    );

    // Through a recording wrapper the request is signed too.
    let recording = RecordingEndpoint::new(config(None), std::sync::Arc::new(|_: &[u8]| {}));
    assert_eq!(call(recording).text(), "signed");
    assert_eq!(last_seen().1, Ok(()));

    // A tampered request fails the server's check (the check can fail).
    let mut tampered = request.clone();
    tampered.body.push(b' ');
    assert!(verify_received(&tampered, Some(SESSION_TOKEN)).is_err());
    let mut tampered = request.clone();
    tampered.url.push_str("?x=1");
    assert!(verify_received(&tampered, Some(SESSION_TOKEN)).is_err());

    // A Bedrock API key wins over credentials, as in pi-ai: bearer, unsigned.
    let bearer = config(None).with_api_key("bedrock-api-key");
    call(bearer);
    let (request, verdict) = last_seen();
    assert_eq!(
        request.header("authorization"),
        Some("Bearer bedrock-api-key")
    );
    assert_eq!(request.header("x-amz-date"), None);
    assert!(verdict.is_err());
}

#[test]
fn a_request_that_cannot_be_signed_ends_the_call_in_an_error() {
    let bad_token = config(Some("line\nbreak"));
    let model = BedrockModel::<Aws>::new(bad_token).unwrap();
    let message =
        futures_executor::block_on(model.stream(&context(), StreamOptions::default()).result());
    let error = message.error_message.unwrap_or_default();
    assert!(error.contains("x-amz-security-token"), "{error}");
}

#[test]
fn no_secret_of_a_signed_request_is_printed_or_recorded_in_the_clear() {
    let config = config(Some(SESSION_TOKEN));
    let mut request = config.prepare(&context()).unwrap();
    config.sign(&mut request, NOW_MS).unwrap();
    let signature = request
        .header("authorization")
        .and_then(|a| a.rsplit("Signature=").next())
        .unwrap()
        .to_string();
    let printed = format!("{request:?} {config:?}");
    for secret in [SECRET_ACCESS_KEY, SESSION_TOKEN, signature.as_str()] {
        assert!(!printed.contains(secret), "{secret} in {printed}");
    }
    // The headers that carry a secret are the ones a cassette redacts.
    for (name, _) in request.headers_in_order() {
        let secret = matches!(name, "authorization" | "x-amz-security-token");
        assert_eq!(is_secret_header(name), secret, "{name}");
    }
}
