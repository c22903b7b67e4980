//! [`Fetch`]: the [`Host`] of the WebAssembly adapter (the request through
//! `fetch`, the body read piece by piece from its `ReadableStream`), and
//! the models on it.

use std::future::Future;
use std::time::Duration;

use agentstream_wire::endpoint::PreparedRequest;
use agentstream_wire::host::{response_head, ClientError, Host};
use agentstream_wire::http::{ResponseBody, ResponseHead, TransportError};
use js_sys::{Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Headers, ReadableStreamDefaultReader, ReadableStreamReadResult, Request, RequestInit, Response,
};

use crate::local::Local;

#[wasm_bindgen]
extern "C" {
    // The global `fetch` (browsers, workers, Node 18 and later), not
    // `window.fetch`.
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(request: &Request) -> Promise;
}

/// A [`Model`](agentstream::model::Model) that streams from an
/// OpenAI-compatible Chat Completions endpoint through the host's `fetch`
/// (a browser, a worker or Node): the wire crate's one call path
/// ([`agentstream_wire::model::EndpointModel`]) on the [`Fetch`] host.
///
/// Its [`ModelStream`](agentstream::model::ModelStream)s are self-driven
/// like every other model's: poll them, or [`spawn_stream`](crate::Runtime::spawn_stream) their
/// producer on the event loop. The response body is read incrementally
/// from its `ReadableStream`; the call's
/// [`AbortSignal`](agentstream::model::AbortSignal) aborts the `fetch`
/// itself (through a JavaScript `AbortController`), and so do the idle
/// timeout and dropping the stream and its result handles.
///
/// `fetch` gives no hook between connecting and the response head, so the
/// configuration's connect timeout is not applied; the idle timeout covers
/// the wait for the head. In a browser, a cross-origin endpoint must allow
/// the request through CORS.
///
/// ```no_run
/// use agentstream_wasm::prelude::*;
///
/// wasm_bindgen_futures::spawn_local(async {
///     let config = OpenAiConfig::new("http://127.0.0.1:11434/v1", "llama3.2");
///     let model = OpenAiCompatModel::new(config).expect("fetch needs no client");
///     let context = Context::from_messages([user("Hello!").into()]);
///     let mut stream = EventLoop.spawn_stream(model.stream(&context, StreamOptions::default()));
///     let message = stream.result().await;
///     let _answer = message.text();
/// });
/// ```
pub type OpenAiCompatModel = EndpointModel<agentstream_wire::openai::OpenAiConfig>;

/// A [`Model`](agentstream::model::Model) that streams from Anthropic's
/// Messages API (or a server that speaks it) through the host's `fetch`,
/// with exactly the behaviour of [`OpenAiCompatModel`].
///
/// ```no_run
/// use agentstream_wasm::prelude::*;
///
/// wasm_bindgen_futures::spawn_local(async {
///     let config = AnthropicConfig::new("claude-sonnet-4-5")
///         .with_base_url("http://127.0.0.1:8080")
///         .with_api_key("key");
///     let model = AnthropicModel::new(config).expect("fetch needs no client");
///     let context = Context::from_messages([user("Hello!").into()]);
///     let mut stream = EventLoop.spawn_stream(model.stream(&context, StreamOptions::default()));
///     let _message = stream.result().await;
/// });
/// ```
pub type AnthropicModel = EndpointModel<agentstream_wire::anthropic::AnthropicConfig>;

/// A [`Model`](agentstream::model::Model) that streams from the OpenAI
/// Responses API (`POST {base}/responses`) through the host's `fetch`, with
/// exactly the behaviour of [`OpenAiCompatModel`].
pub type ResponsesModel = EndpointModel<agentstream_wire::responses::ResponsesConfig>;

/// A [`Model`](agentstream::model::Model) that streams from Amazon
/// Bedrock's `ConverseStream` (event-stream frames) through the host's
/// `fetch`, with exactly the behaviour of [`OpenAiCompatModel`]; signed
/// with SigV4 when the configuration has credentials (there is no process
/// environment here: build the configuration with values, or with
/// [`FromLookup`](agentstream_wire::env::FromLookup) over a lookup of your own).
pub type BedrockModel = EndpointModel<agentstream_wire::bedrock::BedrockConfig>;

/// A [`Model`](agentstream::model::Model) for Azure OpenAI Responses
/// through the host's `fetch`.
pub type AzureModel = EndpointModel<agentstream_wire::azure::AzureConfig>;

/// A [`Model`](agentstream::model::Model) for Mistral through the host's
/// `fetch`.
pub type MistralModel = EndpointModel<agentstream_wire::mistral::MistralConfig>;

/// A [`Model`](agentstream::model::Model) that streams from Google Gemini
/// (`models/{model}:streamGenerateContent`, or Vertex AI) through the
/// host's `fetch`, with exactly the behaviour of [`OpenAiCompatModel`].
pub type GeminiModel = EndpointModel<agentstream_wire::gemini::GeminiConfig>;

/// A [`Model`](agentstream::model::Model) for any
/// [`Endpoint`](agentstream_wire::endpoint::Endpoint) through `fetch`.
pub type EndpointModel<E> = agentstream_wire::model::EndpointModel<E, Fetch>;

/// A model of pi-ai's catalogue as a configured model on `fetch`, in one
/// call: the protocol its api names, its base URL, headers, prices, compat
/// flags, reasoning facts and pi-ai's default output limit (see
/// [`agentstream_wire::catalogue`]; the native hosts' function of the same
/// name).
///
/// ```no_run
/// let model = agentstream_models::get_model("anthropic", "claude-sonnet-4-5").unwrap();
/// let configured = agentstream_wasm::model_from_catalogue(model, Some("sk-ant")).unwrap();
/// # drop(configured);
/// ```
///
/// # Errors
/// A [`CatalogueModelError`](agentstream_wire::catalogue::CatalogueModelError)
/// for an api this crate does not speak or a refused header.
#[cfg(feature = "catalogue")]
pub fn model_from_catalogue(
    model: &agentstream_models::Model,
    api_key: Option<&str>,
) -> Result<
    Box<dyn agentstream::model::Model + Send + Sync>,
    agentstream_wire::catalogue::CatalogueModelError,
> {
    agentstream_wire::catalogue::model_from_catalogue::<Fetch>(model, api_key)
}

/// The WebAssembly [`Host`]: the global `fetch`, with the
/// [`EventLoop`](crate::EventLoop) as its timer and clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fetch;

impl Host for Fetch {
    type Body = FetchBody;

    fn for_endpoint(_connect_timeout: Option<Duration>) -> Result<Self, ClientError> {
        Ok(Fetch)
    }

    fn send(
        &self,
        request: PreparedRequest,
        _connect_timeout: Option<Duration>,
    ) -> impl Future<Output = Result<(ResponseHead, FetchBody), TransportError>> + Send {
        // `fetch`'s promises are JavaScript handles: the future is `Send`
        // only through `Local` (one thread on this target).
        Local::new(send(request))
    }

    type Timer = crate::EventLoop;

    fn timer(&self) -> &crate::EventLoop {
        &crate::EventLoop
    }
}

/// How deep a chain of `cause`s is followed.
const CAUSE_DEPTH: usize = 4;

/// A JavaScript exception or rejection as a [`TransportError`]: its `name`
/// and `message` (for an `Error`), with its `cause` as the error's
/// [`source`](std::error::Error::source) (Node's `fetch failed` keeps the
/// socket error there), `depth` causes deep.
fn js_error(value: &JsValue, depth: usize) -> TransportError {
    let message = if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        let (name, text) = (String::from(error.name()), String::from(error.message()));
        match (name.as_str(), text.is_empty()) {
            (_, true) => name,
            ("Error", false) => text,
            _ => format!("{name}: {text}"),
        }
    } else if let Some(text) = value.as_string() {
        text
    } else {
        js_sys::JSON::stringify(value)
            .ok()
            .and_then(|text| text.as_string())
            .unwrap_or_else(|| "a JavaScript exception".to_owned())
    };
    match Reflect::get(value, &JsValue::from_str("cause")) {
        Ok(cause) if depth > 0 && !cause.is_undefined() && !cause.is_null() => {
            TransportError::failed(message).with_source(js_error(&cause, depth - 1))
        }
        _ => TransportError::failed(message),
    }
}

/// `what`, caused by the JavaScript exception `value`.
fn failed(what: impl Into<String>, value: &JsValue) -> TransportError {
    TransportError::failed(what.into()).with_source(js_error(value, CAUSE_DEPTH))
}

/// Aborts the `fetch` when dropped: an abort of the call, the idle timeout
/// or a consumer that went away all drop the exchange's futures.
struct AbortOnDrop(web_sys::AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sends `request` through `fetch` and waits for the response head.
async fn send(request: PreparedRequest) -> Result<(ResponseHead, FetchBody), TransportError> {
    let guard = web_sys::AbortController::new()
        .map(AbortOnDrop)
        .map_err(|e| failed("cannot create an AbortController", &e))?;
    let headers = Headers::new().map_err(|e| failed("cannot create the headers", &e))?;
    for (name, value) in request.headers_in_order() {
        headers
            .set(name, value)
            .map_err(|e| failed(format!("invalid header `{name}`"), &e))?;
    }
    let init = RequestInit::new();
    init.set_method(request.method);
    init.set_headers(&headers);
    init.set_body(&Uint8Array::from(request.body.as_slice()));
    init.set_signal(Some(&guard.0.signal()));
    let js_request = Request::new_with_str_and_init(&request.url, &init)
        .map_err(|e| failed(format!("invalid endpoint URL `{}`", request.url), &e))?;
    let response = JsFuture::from(global_fetch(&js_request))
        .await
        // The call path names the URL (see `agentstream_wire::model`).
        .map_err(|e| js_error(&e, CAUSE_DEPTH))?;
    let response: Response = response
        .dyn_into()
        .map_err(|e| failed("fetch resolved to something else than a Response", &e))?;
    let head = response_head(response.status(), |name| {
        response.headers().get(name).ok().flatten()
    });
    let reader = response
        .body()
        .map(|body| body.get_reader().unchecked_into());
    Ok((head, FetchBody(Local::new((reader, guard)))))
}

/// A response body being read from its `ReadableStream`: the reader
/// (`None` for a response without a body, and once the body ended) and the
/// guard that aborts the `fetch`, and so cancels the stream, when the body
/// is dropped.
pub struct FetchBody(Local<(Option<ReadableStreamDefaultReader>, AbortOnDrop)>);

impl ResponseBody for FetchBody {
    type Chunk = Vec<u8>;

    fn next_chunk(
        &mut self,
    ) -> impl Future<Output = Result<Option<Vec<u8>>, TransportError>> + Send {
        let reader = &mut self.0.inner.0;
        Local::new(async move {
            while let Some(current) = reader {
                let read: ReadableStreamReadResult = JsFuture::from(current.read())
                    .await
                    .map_err(|e| failed("reading the body failed", &e))?
                    .unchecked_into();
                if read.get_done().unwrap_or(true) {
                    break;
                }
                let Some(bytes) = read.get_value().dyn_into::<Uint8Array>().ok() else {
                    return Err(TransportError::failed(
                        "the body stream gave something else than bytes",
                    ));
                };
                // Empty pieces are legal; wait for the next one.
                if bytes.length() > 0 {
                    return Ok(Some(bytes.to_vec()));
                }
            }
            *reader = None;
            Ok(None)
        })
    }
}
