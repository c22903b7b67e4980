//! Answering a call: with what the script gives it (taken in
//! [`call`](crate::call)), the upstream through the recording proxy, or a
//! cassette; written as the protocol's stream or its one JSON body.

use std::io;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use agentstream::message::AssistantMessage;
use agentstream::model::{AbortController, DoneReason, ModelEvent, ModelStream, StreamOptions};
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};

use crate::call::{refusal, take, Answer, Call, Taken};
use crate::cassette::Recorded;
use crate::chaos::Chaos;
use crate::limits::BLOCKING_BODY;
use crate::manner::Manner;
use crate::pump::{next_event, Pump, EVENTS_CAPACITY};
use crate::response::{error_response, json_response, Body};
use crate::route::Target;
use crate::script::Step;
use crate::state::{Source, State};
use agentstream_wire::server::{self, ApiError, DecodedRequest, Encoder, Events};
use agentstream_wire::Api;

/// The error of a test id whose cassette subdirectory cannot be made.
fn cannot_record(error: &io::Error) -> ApiError {
    ApiError::new(
        500,
        format!("agentstream proxy: cannot make the test's cassette directory: {error}"),
    )
}

/// A body that fails at once: the connection is closed mid-response.
fn cut_body() -> Body {
    let items = [Err::<Frame<Bytes>, _>(io::Error::other(
        "the script cut the connection",
    ))];
    StreamBody::new(futures_util::stream::iter(items)).boxed_unsync()
}

/// Aborts the call's signal when the response is dropped (the client
/// went away) or finished.
struct AbortOnDrop(AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The error answer for a model that failed before its first event.
fn failed_call(event: &ModelEvent) -> ApiError {
    match event.terminal_message() {
        Some(message) => refusal(message),
        None => ApiError::new(500, "the model failed"),
    }
}

/// Runs `work` on the body: on tokio's blocking pool when it is large.
async fn off_the_thread<T: Send + 'static>(
    body: &Bytes,
    work: impl FnOnce(&[u8]) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    if body.len() <= BLOCKING_BODY {
        return work(body);
    }
    let body = body.clone();
    tokio::task::spawn_blocking(move || work(&body))
        .await
        .unwrap_or_else(|_| Err(ApiError::new(500, "decoding the request failed")))
}

/// Decodes a call answered without the model (by a cassette) and
/// records it in the log.
async fn recorded(
    shared: &State,
    test: Option<&str>,
    target: &Target,
    body: &Bytes,
) -> Result<DecodedRequest, ApiError> {
    let decoding = target.clone();
    let decoded = off_the_thread(body, move |body| decoding.decode(body)).await?;
    shared.record(test, target, body, &decoded)?;
    Ok(decoded)
}

/// Answers a call whose body was read: from the model (through the
/// script's steps), the upstream (recorded as it passes) or a cassette.
pub(crate) async fn answer(
    shared: &Arc<State>,
    target: Target,
    parts: Parts,
    body: Bytes,
    test_header: Option<HeaderValue>,
) -> Response<Body> {
    let api = target.api;
    // The edge checked the header: visible ASCII.
    let test = test_header.as_ref().and_then(|value| value.to_str().ok());
    match &shared.source {
        Source::Model => {}
        Source::Upstream(proxy) => {
            let decoding = target.clone();
            let decoded = off_the_thread(&body, move |body| decoding.decode(body)).await;
            if let Ok(decoded) = &decoded {
                if let Err(error) = shared.record(test, &target, &body, decoded) {
                    return error_response(api, &error);
                }
            }
            let own = match test {
                None => None,
                Some(test) => match crate::lanes::cassette_subdir(test)
                    .and_then(|name| proxy.for_test(name).map_err(|e| cannot_record(&e)))
                {
                    Ok(proxy) => Some(proxy),
                    Err(error) => return error_response(api, &error),
                },
            };
            let proxy = own.as_deref().unwrap_or(proxy);
            return proxy
                .forward(api, &target.upstream, &parts, body, decoded.ok(), None)
                .await;
        }
        Source::Replay(player) => {
            let decoded = match recorded(shared, test, &target, &body).await {
                Ok(decoded) => decoded,
                Err(error) => return error_response(api, &error),
            };
            let own = match test.map(|test| shared.test_player(player, test)) {
                Some(Ok(own)) => own,
                Some(Err(error)) => return error_response(api, &error),
                None => None,
            };
            let player = own.as_deref().unwrap_or(player);
            return match player.pick(api, decoded.stream, &decoded.context) {
                Ok((cassette, answer)) => replayed(cassette, answer),
                Err(error) => crossed(shared, api, test, player, decoded, error).await,
            };
        }
        Source::ReplayOrRecord(misses) => {
            let decoded = match recorded(shared, test, &target, &body).await {
                Ok(decoded) => decoded,
                Err(error) => return error_response(api, &error),
            };
            // A test id replays from and records into `DIR/<ID>`.
            let (player, own_proxy) = match shared.miss_lane(misses, test) {
                Ok(lane) => lane,
                Err(error) => return error_response(api, &error),
            };
            if let Ok((cassette, answer)) = player.pick(api, decoded.stream, &decoded.context) {
                return replayed(cassette, answer);
            }
            // Missed: recorded, then indexed.
            let reloading = shared.clone();
            let lane = test.map(str::to_owned);
            let saved: Box<dyn FnOnce() + Send> = Box::new(move || {
                if let Source::ReplayOrRecord(misses) = &reloading.source {
                    reloading.reload_misses(misses, lane.as_deref());
                }
            });
            return own_proxy
                .as_deref()
                .unwrap_or(&misses.proxy)
                .forward(
                    api,
                    &target.upstream,
                    &parts,
                    body,
                    Some(decoded),
                    Some(saved),
                )
                .await;
        }
    }
    let chaos = match parts.headers.get(crate::chaos::CHAOS_HEADER) {
        Some(value) => match Chaos::of_header(value.as_bytes()) {
            Ok(chaos) => chaos,
            Err(error) => return error_response(api, &error),
        },
        None => shared.chaos,
    };
    let chaotic = !chaos.is_off();
    let controller = AbortController::new();
    let taken = if body.len() > BLOCKING_BODY {
        let (shared, signal) = (shared.clone(), controller.signal());
        let test = test_header.clone();
        tokio::task::spawn_blocking(move || {
            let test = test.as_ref().and_then(|value| value.to_str().ok());
            take(&shared, test, &target, &body, signal, chaotic)
        })
        .await
        .unwrap_or_else(|_| Err(ApiError::new(500, "decoding the request failed")))
    } else {
        take(shared, test, &target, &body, controller.signal(), chaotic)
    };
    match taken {
        Ok(taken) => respond(shared, api, test, taken, chaos, controller).await,
        Err(error) => error_response(api, &error),
    }
}

/// The answer of a taken call, in `api`'s protocol: its error, its
/// message written whole, or its events pumped as they come.
async fn respond(
    shared: &Arc<State>,
    api: Api,
    test: Option<&str>,
    taken: Taken,
    chaos: Chaos,
    controller: AbortController,
) -> Response<Body> {
    let chaotic = !chaos.is_off();
    let Taken {
        model,
        stream,
        include_usage,
        call,
    } = taken;
    let name = if model.is_empty() {
        shared.model_name.clone()
    } else {
        model
    };
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let Call {
        index,
        answer,
        manner,
    } = call;
    if let Some(why) = manner.quirks.foreign(api) {
        return error_response(api, &ApiError::new(400, why));
    }
    let id = server::answer_id(api, index);
    let (step, mut events) = match answer {
        Answer::Refused(error) => return error_response(api, &error),
        Answer::Events { events, step } => (step, events),
        Answer::Message {
            message,
            reason,
            full_sequence,
        } => {
            if !stream {
                return completed(api, &id, &name, created, reason, &message);
            }
            // The events the turn would play, encoded as the pump would
            // have encoded them, without the events. The pump too would
            // have sent them at once (in frames of up to 64 KiB; here one
            // frame). A turn that answers again is filled in from its
            // template (the same bytes).
            let write = |id: &str, created: u64| {
                let mut encoder = encoder(
                    shared,
                    api,
                    id.to_owned(),
                    name.clone(),
                    created,
                    include_usage,
                );
                let mut out = Events::with_capacity(EVENTS_CAPACITY);
                server::message_steps(&message, reason, full_sequence, |step| {
                    encoder.encode(step, &mut out);
                });
                out.take(out.len())
            };
            let key = crate::template::Key {
                message: &message,
                api,
                name: &name,
                include_usage,
                full_sequence,
                reason,
            };
            let frame = shared.templates.answer(&key, &id, created, write);
            let frames = futures_util::stream::iter([Ok(Frame::data(frame))]);
            return event_stream(api, StreamBody::new(frames).boxed_unsync());
        }
    };
    let guard = AbortOnDrop(controller);
    let first = match next_event(&mut events).await {
        Some(event @ ModelEvent::Error { .. }) => return error_response(api, &failed_call(&event)),
        Some(event) => event,
        None => return error_response(api, &ApiError::new(500, "the model sent no events")),
    };
    if !stream {
        return whole(api, step, &id, &name, created, first, events).await;
    }
    let encoder = encoder(shared, api, id, name, created, include_usage);
    let pump = Pump::new(encoder, step, shared.delay, &first, events, guard);
    if !chaotic && manner.is_plain() {
        return event_stream(api, StreamBody::new(pump.frames()).boxed_unsync());
    }
    let rng = crate::timing::Rng::for_call(shared.seed, test, index);
    let (state, test) = (shared.clone(), test.map(str::to_owned));
    let note = Box::new(move |injected| state.note_chaos(test.as_deref(), index, injected));
    let shape = crate::pump::Shape::new(manner, chaos, rng, note).binary(api.binary_stream());
    event_stream(api, StreamBody::new(pump.shaped(shape)).boxed_unsync())
}

/// The answer of a replayed request no cassette of its own API matches:
/// a cassette of another API with the same neutral context, its events
/// written in `api`'s protocol (see [`cross`](crate::cassette)), else
/// `mismatch`.
async fn crossed(
    shared: &Arc<State>,
    api: Api,
    test: Option<&str>,
    player: &crate::cassette::Player,
    mut decoded: DecodedRequest,
    mismatch: ApiError,
) -> Response<Body> {
    let controller = AbortController::new();
    let mut options: StreamOptions = std::mem::take(&mut decoded.options);
    options.signal = Some(controller.signal());
    let events = match player.cross(api, &decoded.context, options) {
        Some(Ok(events)) => events,
        Some(Err(error)) => return error_response(api, &error),
        None => return error_response(api, &mismatch),
    };
    let taken = Taken {
        model: decoded.model,
        stream: decoded.stream,
        include_usage: decoded.include_usage,
        call: Call {
            index: 0,
            answer: Answer::Events {
                events,
                step: Step::Model,
            },
            manner: Manner::default(),
        },
    };
    respond(shared, api, test, taken, shared.chaos, controller).await
}

/// The encoder of a streamed answer in `api`'s protocol.
fn encoder(
    shared: &State,
    api: Api,
    id: String,
    name: String,
    created: u64,
    include_usage: bool,
) -> Encoder {
    Encoder::new(api, id, name, created)
        .with_chunks(shared.chunks)
        .with_ping(shared.pings)
        .with_usage(include_usage)
}

/// A streamed answer with `body`, of `api`'s content type (SSE, or
/// Bedrock's binary event stream).
fn event_stream(api: Api, body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static(api.stream_content_type()),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A cassette's answer: its status and headers, and its body in the
/// pieces it arrived in, each written on its own as a view of the one
/// copy of the body (a request holds no copy, whatever the pieces); a
/// cut cassette's body then breaks off, as it did when it was recorded.
fn replayed(cassette: &crate::cassette::Entry, answer: Recorded) -> Response<Body> {
    let frames = answer.frames();
    let mut response = Response::new(StreamBody::new(frames).boxed_unsync());
    *response.status_mut() =
        StatusCode::from_u16(cassette.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in &cassette.headers {
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            // The body's framing and the connection are this server's.
            if crate::proxy::forwarded(&name) {
                response.headers_mut().append(name, value);
            }
        }
    }
    response
}

/// The non-streaming answer: the whole message as one JSON body.
async fn whole(
    api: Api,
    step: Step,
    id: &str,
    name: &str,
    created: u64,
    first: ModelEvent,
    mut events: ModelStream,
) -> Response<Body> {
    match step {
        Step::Cut { .. } => {
            let mut response = Response::new(cut_body());
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            return response;
        }
        Step::StreamError { error, .. } => return error_response(api, &error),
        _ => {}
    }
    let mut terminal = first;
    while let Some(event) = next_event(&mut events).await {
        terminal = event;
    }
    match &terminal {
        ModelEvent::Done { reason, message } => completed(api, id, name, created, *reason, message),
        _ => error_response(api, &failed_call(&terminal)),
    }
}

/// The non-streaming answer of a call that ended well.
fn completed(
    api: Api,
    id: &str,
    name: &str,
    created: u64,
    reason: DoneReason,
    message: &AssistantMessage,
) -> Response<Body> {
    json_response(
        StatusCode::OK,
        server::whole_answer(api, id, name, created, reason, message),
    )
}
