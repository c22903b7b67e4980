//! `BedrockModel` through the one call path on a host that answers with
//! event-stream frames: the request's URL and headers, and the response
//! decoded as frames (the framing is the protocol's, chosen in one place).

use core::future::{ready, Future};
use std::sync::Mutex;
use std::time::Duration;

use agentstream::message::{user, Context};
use agentstream::model::{Model, StreamOptions};
use agentstream::rt::Timer;
use agentstream_wire::bedrock::BedrockConfig;
use agentstream_wire::endpoint::PreparedRequest;
use agentstream_wire::host::{ClientError, Host};
use agentstream_wire::http::{ResponseHead, TransportError};
use agentstream_wire::model::BedrockModel;

mod frames_support;
use frames_support::{frames, Pieces};

/// The requests seen.
static SEEN: Mutex<Vec<PreparedRequest>> = Mutex::new(Vec::new());

struct Frames;

impl Host for Frames {
    type Body = Pieces;
    fn for_endpoint(_connect_timeout: Option<Duration>) -> Result<Self, ClientError> {
        Ok(Frames)
    }
    fn send(
        &self,
        request: PreparedRequest,
        _connect_timeout: Option<Duration>,
    ) -> impl Future<Output = Result<(ResponseHead, Pieces), TransportError>> + Send {
        SEEN.lock().unwrap().push(request);
        let body = frames(&[
            ("messageStart", r#"{"role":"assistant"}"#),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"text":"Hel"}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"text":"lo"}}"#,
            ),
            ("contentBlockStop", r#"{"contentBlockIndex":0}"#),
            ("messageStop", r#"{"stopReason":"end_turn"}"#),
            (
                "metadata",
                r#"{"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5}}"#,
            ),
        ]);
        // Pieces that cut the frames anywhere.
        let pieces = body.chunks(13).map(<[u8]>::to_vec).collect();
        ready(Ok((ResponseHead::new(200), Pieces(pieces))))
    }
    type Timer = Frames;
    fn timer(&self) -> &Frames {
        self
    }
}

impl Timer for Frames {
    type Sleep = core::future::Pending<()>;
    fn sleep(&self, _duration: Duration) -> core::future::Pending<()> {
        core::future::pending()
    }
    fn now_unix_ms(&self) -> u64 {
        1_700_000_000_000
    }
}

#[test]
fn a_call_sends_the_converse_stream_request_and_reads_frames() {
    let config = BedrockConfig::new("anthropic.claude-sonnet-4-5", "us-west-2")
        .with_base_url("http://h")
        .with_api_key("key");
    let model = BedrockModel::<Frames>::new(config).unwrap();
    let context = Context::from_messages([user("hello").into()]);
    let message =
        futures_executor::block_on(model.stream(&context, StreamOptions::default()).result());
    assert_eq!(message.error_message, None);
    assert_eq!(message.text(), "Hello");
    assert_eq!((message.usage.input, message.usage.output), (3, 2));
    assert_eq!(message.api, "bedrock-converse-stream");
    assert_eq!(message.provider, "amazon-bedrock");
    let seen = SEEN.lock().unwrap();
    let request = &seen[0];
    assert_eq!(
        request.url,
        "http://h/model/anthropic.claude-sonnet-4-5/converse-stream"
    );
    assert!(request
        .headers
        .contains(&("authorization", "Bearer key".into())));
    assert!(request
        .headers
        .contains(&("accept", "application/vnd.amazon.eventstream".into())));
}
