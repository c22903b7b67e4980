//! The runtime-neutral conformance bodies (`agentstream-testkit`'s `conformance`, the
//! ones the six native executors run) as a seventh executor: the JavaScript
//! event loop, every task and every model driver spawned with
//! `wasm_bindgen_futures::spawn_local`.
#![cfg(target_arch = "wasm32")]

use agentstream_testkit::conformance::Rt;
use wasm_bindgen_test::wasm_bindgen_test;

/// The event loop as the bodies' spawner: tasks and model drivers through
/// `spawn_local` (which hands back no join handle, hence `detached`).
fn event_loop() -> Rt {
    Rt::detached(wasm_bindgen_futures::spawn_local)
}

/// The callback of `for_each_body!`: one test per body.
macro_rules! on_the_event_loop {
    ($($body:ident),* $(,)?) => {
        $(
            #[wasm_bindgen_test]
            async fn $body() {
                agentstream_testkit::conformance::$body(event_loop()).await;
            }
        )*
    };
}

agentstream_testkit::for_each_body!(on_the_event_loop);

mod agent {
    use super::event_loop;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// The callback of `for_each_agent_body!`: one test per agent scenario,
    /// each compared with its golden file.
    macro_rules! on_the_event_loop {
        ($($scenario:ident),* $(,)?) => {
            $(
                #[wasm_bindgen_test]
                async fn $scenario() {
                    agentstream_testkit::conformance::agent::$scenario(event_loop()).await;
                }
            )*
        };
    }

    agentstream_testkit::for_each_agent_body!(on_the_event_loop);
}

/// The demo's transcript on the JS event loop, byte for byte the checked-in
/// one the native executors produce (`trace_demo_transcript` above checks
/// it line by line; this compares the whole text).
#[wasm_bindgen_test]
async fn the_demo_transcript_is_the_checked_in_one() {
    let transcript = agentstream_testkit::conformance::demo_transcript(event_loop()).await;
    assert_eq!(
        transcript,
        include_str!("../../agentstream-testkit/transcripts/demo.txt")
    );
}
