//! Recording and replay end to end, written once and run by every
//! adapter: a [`RecordingEndpoint`] around a real config records the body the
//! mock server sent, byte for byte, and a [`ReplayModel`] of that
//! recording, in the pieces the client received, gives the live call's
//! events.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentstream::message::{user, Context};
use agentstream::model::{Model, ModelEvent, StreamOptions};
use agentstream_wire::openai::OpenAiConfig;
use agentstream_wire::recording::RecordingEndpoint;
use agentstream_wire::replay::{Recording, ReplayModel};
use futures_util::StreamExt;

use crate::http::scenarios::TEST_KEY;
use crate::http::{answer_payloads, split_randomly, sse_body, MockServer, Reply, Rng};

/// The body served in random pieces with pauses; the recorded pieces join
/// to it, and replaying them gives the live events.
pub async fn recorded_bodies_replay_as_received<M: Model>(
    make: impl Fn(RecordingEndpoint<OpenAiConfig>) -> M,
) {
    let body = sse_body(&answer_payloads(&["Hmm."], &["Hel", "lo, ", "wörld 👋"]));
    let pieces = split_randomly(&body, &mut Rng::new(11), 40);
    let server =
        MockServer::start(move |_| Reply::sse(pieces.clone()).with_delay(Duration::from_millis(1)))
            .expect("server");
    let received: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let sink = Arc::clone(&received);
    let config = OpenAiConfig::new(server.base_url(), "test-model").with_api_key(TEST_KEY);
    let model = make(RecordingEndpoint::new(
        config,
        Arc::new(move |piece: &[u8]| sink.lock().expect("sink").push(piece.to_vec())),
    ));
    let context = Context::from_messages([user("Say hello").into()]);
    let mut stream = model.stream(&context, StreamOptions::default());
    let live: Vec<ModelEvent> = stream.by_ref().collect().await;
    let message = stream.result().await;
    assert_eq!(
        message.text(),
        "Hello, wörld 👋",
        "{:?}",
        message.error_message
    );

    let received = received.lock().expect("received").clone();
    assert_eq!(
        received.concat(),
        body,
        "the recording saw the body byte for byte"
    );
    assert_ne!(message.timestamp, 0, "the live call carries the wall clock");
    let replay = ReplayModel::new([Recording::pieces(&received)])
        .with_names("test-model", "openai")
        .with_timestamp(message.timestamp);
    let mut stream = replay.stream(&context, StreamOptions::default());
    let replayed: Vec<ModelEvent> = stream.by_ref().collect().await;
    assert_eq!(replayed, live);
}
