//! What the request tests share: one body written by a protocol's body
//! writer, [`Protocol::body`], for one borrowed [`Call`].

// Each test binary uses its part.
#![allow(dead_code)]

use agentstream::message::Context;
use agentstream::model::StreamOptions;
use agentstream_wire::config::{Call, Protocol};
use agentstream_wire::request::RequestError;
use serde_json::Value;

/// The body `protocol` writes for `context` to `model` of `provider`,
/// with `options`.
pub fn request_body_as<P: Protocol>(
    protocol: &P,
    provider: &str,
    model: &str,
    context: &Context,
    options: &StreamOptions,
) -> Result<Value, RequestError> {
    let call = Call {
        model,
        provider,
        options,
    };
    protocol.body(context, &call)
}

/// The body `protocol` writes for `context` to `model` of the protocol's
/// own provider ([`Protocol::PROVIDER`]), with `options`.
pub fn request_body_with<P: Protocol>(
    protocol: &P,
    model: &str,
    context: &Context,
    options: &StreamOptions,
) -> Result<Value, RequestError> {
    request_body_as(protocol, P::PROVIDER, model, context, options)
}

/// The body `protocol` writes for `context` to `model` of the protocol's
/// own provider, without options.
pub fn request_body<P: Protocol>(
    protocol: &P,
    model: &str,
    context: &Context,
) -> Result<Value, RequestError> {
    request_body_with(protocol, model, context, &StreamOptions::default())
}

/// The JSON file `name` of `tests/golden/requests/`.
pub fn golden(name: &str) -> Value {
    let path = format!(
        "{}/tests/golden/requests/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// The context of the golden request `name` (`<name>.context.json`).
pub fn context(name: &str) -> Context {
    serde_json::from_value(golden(&format!("{name}.context.json"))).unwrap()
}
