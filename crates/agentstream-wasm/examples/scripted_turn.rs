//! The smallest program that plays a scripted turn on the JavaScript event
//! loop: a `cdylib` exporting `play()`, which streams one scripted answer
//! through a spawned producer and resolves to its text. The CI script
//! builds it in release mode to report the size of the `.wasm` (before and
//! after `wasm-opt -Oz`) in the README.
//!
//! ```text
//! cargo build --release --target wasm32-unknown-unknown -p agentstream-wasm --example scripted_turn
//! wasm-bindgen --target nodejs --out-dir out target/wasm32-unknown-unknown/release/examples/scripted_turn.wasm
//! node -e 'require("./out/scripted_turn.js").play().then(console.log)'
//! ```
#![cfg(target_arch = "wasm32")]

use agentstream_wasm::prelude::*;
use futures_util::StreamExt;
use wasm_bindgen::prelude::wasm_bindgen;

/// Plays one scripted turn and resolves to its text and the number of
/// events it streamed.
#[wasm_bindgen]
pub async fn play() -> String {
    let model = ScriptedModel::new([assistant(
        [text("Hello from WebAssembly")],
        StopReason::Stop,
    )]);
    let context = Context::from_messages([user("hi").into()]);
    let mut stream = EventLoop.spawn_stream(model.stream(&context, StreamOptions::default()));
    let events = stream.by_ref().count().await;
    let message = stream.result().await;
    format!("{} ({events} events)", message.text())
}
