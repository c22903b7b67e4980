//! The `js-api` feature as a `cdylib`: `ScriptedModel` and `EventIterator`
//! for JavaScript. `.ci/hosts-wasm.sh` builds it, runs `wasm-bindgen
//! --target nodejs` on it and tests it from Node with
//! `tests/js/scripted.mjs`.
#![cfg(target_arch = "wasm32")]

pub use agentstream_wasm::js::{JsEventIterator, JsScriptedModel};
