//! A hand-written HTTP/1.1 server for end-to-end tests of the HTTP
//! models of every provider: OpenAI-compatible Chat Completions, Anthropic
//! Messages, OpenAI Responses and Google Gemini (the last two play the
//! recorded streams of [`fixtures`]).
//!
//! It listens on `127.0.0.1` (never anything else), runs one thread per
//! connection, records every request, and answers with what the test's
//! handler returns: an SSE body written as chunked transfer encoding in the
//! pieces the test chose (random boundaries, slow drips), ending cleanly,
//! with a disconnect, or never; or a plain response with any status.
//!
//! Dropping the [`MockServer`] stops it: the accept loop ends and every
//! connection thread stops at its next step.
//!
//! The crate also holds the test scenarios the adapters share, each written
//! once and run by every adapter on its own runtime: [`scenarios`] for the
//! HTTP client against this server (and [`anthropic_scenarios`] for the
//! Anthropic Messages model), and [`adapter_scenarios`] for the
//! runtime pieces themselves (spawned producers, cancel on drop, timeouts).
//! It depends on no runtime; the adapters' tests bring theirs.

use std::net::TcpListener;
use std::time::Duration;

/// The runtime's methods, for what [`http_scenario_tests!`](crate::http_scenario_tests!) expands to.
#[doc(hidden)]
pub use agentstream::rt::Runtime as __Runtime;
/// The wire crate, for what [`http_host_tests!`](crate::http_host_tests!) expands to.
#[doc(hidden)]
pub use agentstream_wire as __wire;
use agentstream_wire::sse::{encode_event, SseEvent};
use serde_json::{json, Value};

pub mod adapter_scenarios;
pub mod anthropic_scenarios;
pub mod base_url_scenarios;
pub mod error_scenarios;
pub mod fixtures;
pub mod gemini_scenarios;
pub mod provider_scenarios;
pub mod redirect_scenarios;
pub mod replay_scenarios;
pub mod request_scenarios;
pub mod responses_scenarios;
pub mod retry_scenarios;
pub mod scenarios;
mod server;

pub use server::{BodyEnd, MockServer, Reply, Request};

/// An SSE body in Anthropic's shape: each payload as an event named by its
/// `type` (`event: message_start` + `data: {...}`).
pub fn named_sse_body(payloads: &[Value]) -> Vec<u8> {
    let mut out = String::new();
    for payload in payloads {
        let name = payload["type"].as_str().unwrap_or("message");
        let event = SseEvent::message(payload.to_string()).with_event(name);
        encode_event(&event, &mut out).expect("payloads are valid SSE data");
    }
    out.into_bytes()
}

/// An SSE body with one `data:` event per payload.
pub fn sse_body<S: AsRef<str>>(payloads: &[S]) -> Vec<u8> {
    let mut out = String::new();
    for payload in payloads {
        encode_event(&SseEvent::message(payload.as_ref()), &mut out)
            .expect("payloads are valid SSE data");
    }
    out.into_bytes()
}

/// The chunk payloads of a streamed answer: optional reasoning pieces, then
/// text pieces, `finish_reason: stop`, a usage chunk and `[DONE]`.
pub fn answer_payloads(reasoning: &[&str], text: &[&str]) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "model": "test-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
        .to_string()
    };
    let mut payloads = vec![chunk(json!({"role": "assistant"}), Value::Null)];
    for piece in reasoning {
        payloads.push(chunk(json!({"reasoning_content": piece}), Value::Null));
    }
    for piece in text {
        payloads.push(chunk(json!({"content": piece}), Value::Null));
    }
    payloads.push(chunk(json!({}), json!("stop")));
    payloads.push(
        json!({
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        })
        .to_string(),
    );
    payloads.push("[DONE]".into());
    payloads
}

/// A small deterministic generator (xorshift64*), so tests need no
/// randomness crate and every failure replays from its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is replaced by a fixed constant).
    pub fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next value below `bound` (`bound` > 0).
    pub fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let value = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (value % bound as u64) as usize
    }
}

/// Splits `bytes` into pieces of 1 to `max_piece` bytes at random
/// boundaries (which may fall inside UTF-8 characters and CRLF pairs).
pub fn split_randomly(bytes: &[u8], rng: &mut Rng, max_piece: usize) -> Vec<Vec<u8>> {
    let mut pieces = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let take = 1 + rng.below(max_piece.max(1)).min(rest.len() - 1);
        let (piece, tail) = rest.split_at(take);
        pieces.push(piece.to_vec());
        rest = tail;
    }
    pieces
}

/// `for_each_http_scenario!((callback) { args })` expands
/// `callback! { args ; module [group name, …], … }` with
/// every end-to-end HTTP scenario, `module::name`, each with the group
/// that says what it is given:
///
/// - `openai`: `fn(OpenAiConfig) -> M`;
/// - `anthropic`: `fn(AnthropicConfig) -> M`;
/// - `both`: the OpenAI maker, then the Anthropic one;
/// - `retry`: the OpenAI maker and the runtime's [`Timer`](agentstream::rt::Timer);
/// - `timeout`: the OpenAI maker and the adapter's `stream_with_timeout`;
/// - `with_retry`: `|config, policy| timer.with_retry(model(config), policy)`
///   ([`Runtime::with_retry`](agentstream::rt::Runtime::with_retry) on the runtime);
/// - `recording`: `fn(RecordingEndpoint<OpenAiConfig>) -> M`;
/// - `responses`: `fn(ResponsesConfig) -> M`; `gemini`: `fn(GeminiConfig) -> M`;
/// - `responses_retry`, `gemini_retry`: `|config, policy| timer.with_retry(model(config), policy)`.
///
/// [`http_scenario_tests!`](crate::http_scenario_tests!) turns the list into one `#[test]` each, so
/// every native host runs every scenario.
#[macro_export]
macro_rules! for_each_http_scenario {
    (($($callback:tt)+) { $($args:tt)* }) => {
        $($callback)+! {
            $($args)* ;
            scenarios [
                openai random_chunk_boundaries, openai many_random_splits, openai slow_drip,
                openai mid_stream_disconnect, openai truncated_body, openai error_statuses,
                openai abort_never_ending_body, openai idle_timeout, openai connect_timeout,
                openai connection_refused, openai broken_context_is_not_sent,
                openai base_url_with_query, openai url_without_host, openai endless_line,
                openai endless_deltas,
            ],
            anthropic_scenarios [
                anthropic random_chunk_boundaries, anthropic slow_drip,
                anthropic mid_stream_disconnect, anthropic error_event_after_200,
                anthropic cut_off_in_tool_use, anthropic error_statuses,
                anthropic abort_never_ending_body, anthropic idle_timeout,
            ],
            error_scenarios [
                openai http_causes, openai stream_causes, openai limit_causes,
                openai transport_causes, timeout timeout_and_abort_causes,
                anthropic anthropic_causes,
            ],
            request_scenarios [openai openai_request_options, anthropic anthropic_request_options],
            base_url_scenarios [both base_url_forms],
            retry_scenarios [
                retry retries_server_errors_then_succeeds, retry honours_retry_after_up_to_its_cap,
                retry what_is_not_retried, retry abort_during_the_wait,
                retry transport_failures_and_seeded_jitter, with_retry adapter_with_retry,
            ],
            replay_scenarios [recording recorded_bodies_replay_as_received],
            redirect_scenarios [
                openai openai_keys_stay_on_their_origin,
                anthropic anthropic_keys_stay_on_their_origin,
                responses responses_keys_stay_on_their_origin,
                gemini gemini_keys_stay_on_their_origin,
            ],
            responses_scenarios [
                responses recorded_streams, responses reasoning_round_trip,
                responses error_causes, responses_retry retries_429_and_503,
                responses idle_timeout, responses base_url_forms,
            ],
            gemini_scenarios [
                gemini recorded_streams, gemini signature_round_trip,
                gemini error_causes, gemini_retry retries_429_and_503,
                gemini idle_timeout, gemini base_url_forms,
            ],
        }
    };
}

/// A port on `127.0.0.1` that nobody listens on: bound, then released.
pub fn refused_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    listener.local_addr().expect("addr").port()
}

/// A listener on `127.0.0.1` that is never accepted (the kernel completes
/// the TCP handshake, nobody reads: a TLS handshake never ends), and an
/// OpenAI configuration for `https://` on it with the test key and a
/// 150 ms connect timeout. Keep the listener alive while the call runs.
pub fn unanswered_tls() -> (TcpListener, agentstream_wire::openai::OpenAiConfig) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let url = format!("https://{}/v1", listener.local_addr().expect("addr"));
    let config = agentstream_wire::openai::OpenAiConfig::new(url, "test-model")
        .with_api_key(scenarios::TEST_KEY)
        .with_connect_timeout(Duration::from_millis(150));
    (listener, config)
}

/// Panics unless `message` stopped normally (`stop`), showing its error
/// message if it did not.
pub fn assert_stopped(message: &agentstream::message::AssistantMessage) {
    assert_eq!(
        message.stop_reason,
        agentstream::message::StopReason::Stop,
        "{:?}",
        message.error_message
    );
}

/// The four spellings of a base URL on `origin` every adapter accepts:
/// bare, with a trailing `/`, with `/v1`, and with `/v1/`.
pub fn base_url_spellings(origin: &str) -> [String; 4] {
    [
        origin.to_owned(),
        format!("{origin}/"),
        format!("{origin}/v1"),
        format!("{origin}/v1/"),
    ]
}

/// One `#[test]` for every scenario of [`for_each_http_scenario!`](crate::for_each_http_scenario!), each
/// `run(scenario)`, in a module named after the scenario's module. With
/// tokio (`crates/agentstream-tokio/tests/http.rs` defines the makers,
/// `with_timeout` and `run`):
///
/// ```no_run
/// agentstream_testkit::http_scenario_tests! {
///     openai: model,                 // fn(OpenAiConfig) -> impl Model
///     anthropic: anthropic,          // fn(AnthropicConfig) -> impl Model
///     responses: responses,          // fn(ResponsesConfig) -> impl Model
///     gemini: gemini,                // fn(GeminiConfig) -> impl Model
///     recording: recording,          // fn(RecordingEndpoint<OpenAiConfig>) -> impl Model
///     timer: agentstream_tokio::Tokio, // the runtime's timer
///     with_timeout: with_timeout,    // the adapter's stream_with_timeout for the OpenAI model
///     run: run,                      // fn(impl Future<Output = ()>)
/// }
/// ```
///
/// As a doctest this is compiled, not run: that checks the invocation
/// matches the macro (every key, in this order). The `#[test]` functions it
/// expands to exist only in a `--test` build, so the names they call are
/// resolved and type-checked by each adapter's `tests/http.rs` under
/// `cargo test`.
#[macro_export]
macro_rules! http_scenario_tests {
    ($($args:tt)*) => {
        $crate::for_each_http_scenario!(($crate::__http_scenario_tests) { $($args)* });
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __http_scenario_tests {
    (
        openai: $o:path,
        anthropic: $a:path,
        responses: $rs:path,
        gemini: $g:path,
        recording: $t:path,
        timer: $s:path,
        with_timeout: $w:path,
        run: $run:path $(,)? ;
        $($module:ident [$($group:ident $name:ident),* $(,)?]),* $(,)?
    ) => {
        $(
            mod $module {
                #[allow(unused_imports)]
                use super::*;
                $(
                    #[test]
                    fn $name() {
                        $crate::__http_scenario_tests!(@run $group $module $name ($rs, $g) $o, $a, $t, $s, $w, $run);
                    }
                )*
            }
        )*
    };
    (@run openai $module:ident $name:ident ($rs:path, $g:path) $o:path, $a:path, $t:path, $s:path, $w:path, $run:path) => {
        $run($crate::http::$module::$name($o))
    };
    (@run anthropic $module:ident $name:ident ($rs:path, $g:path) $o:path, $a:path, $t:path, $s:path, $w:path, $run:path) => {
        $run($crate::http::$module::$name($a))
    };
    (@run both $module:ident $name:ident ($rs:path, $g:path) $o:path, $a:path, $t:path, $s:path, $w:path, $run:path) => {
        $run($crate::http::$module::$name($o, $a))
    };
    (@run retry $module:ident $name:ident ($rs:path, $g:path) $o:path, $a:path, $t:path, $s:path, $w:path, $run:path) => {
        $run($crate::http::$module::$name($o, $s))
    };
    (@run timeout $module:ident $name:ident ($rs:path, $g:path) $o:path, $a:path, $t:path, $s:path, $w:path, $run:path) => {
        $run($crate::http::$module::$name($o, $w))
    };
    (@run with_retry $module:ident $name:ident ($rs:path, $g:path) $o:path, $a:path, $t:path, $s:path, $w:path, $run:path) => {
        $run($crate::http::$module::$name(|config, policy| $crate::http::__Runtime::with_retry(&$s, $o(config), policy)))
    };
    (@run responses $module:ident $name:ident ($rs:path, $g:path) $o:path, $a:path, $t:path, $s:path, $w:path, $run:path) => {
        $run($crate::http::$module::$name($rs))
    };
    (@run gemini $module:ident $name:ident ($rs:path, $g:path) $o:path, $a:path, $t:path, $s:path, $w:path, $run:path) => {
        $run($crate::http::$module::$name($g))
    };
    (@run responses_retry $module:ident $name:ident ($rs:path, $g:path) $o:path, $a:path, $t:path, $s:path, $w:path, $run:path) => {
        $run($crate::http::$module::$name(|config, policy| $crate::http::__Runtime::with_retry(&$s, $rs(config), policy)))
    };
    (@run gemini_retry $module:ident $name:ident ($rs:path, $g:path) $o:path, $a:path, $t:path, $s:path, $w:path, $run:path) => {
        $run($crate::http::$module::$name(|config, policy| $crate::http::__Runtime::with_retry(&$s, $g(config), policy)))
    };
    (@run recording $module:ident $name:ident ($rs:path, $g:path) $o:path, $a:path, $t:path, $s:path, $w:path, $run:path) => {
        $run($crate::http::$module::$name($t))
    };
}

/// A native host's whole `tests/http.rs`: the model makers of
/// [`http_scenario_tests!`](crate::http_scenario_tests!) (`model`,
/// `anthropic`, `responses`, `gemini`, `recording`, each the host's HTTP
/// model built from the names of its prelude, and `with_timeout`, its
/// runtime's `stream_with_timeout`), then every scenario as a `#[test]`,
/// and those of [`provider_scenarios`] (Bedrock, Azure, Mistral) with the
/// makers `bedrock`, `azure` and `mistral`.
/// The host names its crate, its runtime value and its `run`:
///
/// ```text
/// agentstream_testkit::http_host_tests! {
///     host: agentstream_tokio,          // the crate (its `prelude` and `EndpointModel`)
///     runtime: agentstream_tokio::Tokio, // the runtime value
///     run: run,                         // fn(impl Future<Output = ()>)
/// }
/// ```
///
/// The makers are items of the invoking module, so a host's own tests
/// beside the macro call them too.
#[macro_export]
macro_rules! http_host_tests {
    (host: $host:ident, runtime: $rt:path, run: $run:path $(,)?) => {
        fn model(config: $host::prelude::OpenAiConfig) -> $host::prelude::OpenAiCompatModel {
            $host::prelude::OpenAiCompatModel::new(config).expect("client")
        }

        fn anthropic(config: $host::prelude::AnthropicConfig) -> $host::prelude::AnthropicModel {
            $host::prelude::AnthropicModel::new(config).expect("client")
        }

        fn responses(config: $host::prelude::ResponsesConfig) -> $host::prelude::ResponsesModel {
            $host::prelude::ResponsesModel::new(config).expect("client")
        }

        fn gemini(config: $host::prelude::GeminiConfig) -> $host::prelude::GeminiModel {
            $host::prelude::GeminiModel::new(config).expect("client")
        }

        fn recording(
            endpoint: $crate::http::__wire::recording::RecordingEndpoint<
                $host::prelude::OpenAiConfig,
            >,
        ) -> $host::EndpointModel<
            $crate::http::__wire::recording::RecordingEndpoint<$host::prelude::OpenAiConfig>,
        > {
            $host::EndpointModel::new(endpoint).expect("client")
        }

        fn with_timeout(
            model: &$host::prelude::OpenAiCompatModel,
            context: &$host::prelude::Context,
            options: $host::prelude::StreamOptions,
            timeout: ::std::time::Duration,
        ) -> $host::prelude::ModelStream {
            $crate::http::__Runtime::stream_with_timeout(&$rt, model, context, options, timeout)
        }

        $crate::http_scenario_tests! {
            openai: model,
            anthropic: anthropic,
            responses: responses,
            gemini: gemini,
            recording: recording,
            timer: $rt,
            with_timeout: with_timeout,
            run: $run,
        }

        $crate::provider_host_tests!(host: $host, run: $run);
    };
}
