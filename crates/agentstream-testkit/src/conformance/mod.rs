//! The runtime-neutral conformance bodies of agentstream, written once and
//! run by every host: the six native executors of the workspace's
//! conformance suite, WebAssembly under wasm-bindgen-test, and a Cortex-M
//! firmware under QEMU (`examples/embedded`).
//!
//! `no_std + alloc`. A body is an `async fn(Rt)`: [`Rt`] is the host's
//! spawner (spawn a boxed future, get a join future), so a body never
//! names an executor. Bodies fail by panicking (`assert!`), like tests.
//!
//! # The lists
//!
//! Hosts generate their tests from two callback macros, so adding a body
//! is one line here:
//!
//! - [`for_each_body!`](crate::for_each_body!)`(m)` expands `m! { name, … }` with every body at
//!   this crate's root (`agentstream_testkit::conformance::<name>`): the event
//!   stream's semantics, the scripted model's traces, mid-stream aborts,
//!   and the trace body [`trace_demo_transcript`].
//! - [`for_each_agent_body!`](crate::for_each_agent_body!)`(m)` expands `m! { name, … }` with the agent
//!   scenarios (`agentstream_testkit::conformance::agent::<name>`), each compared
//!   with its golden file.
//!
//! What they need: every body spawns only `Send` futures through [`Rt`]
//! (a single-threaded host may run them on one thread), needs no clock
//! and no file system (the golden files are compiled in), and none needs
//! a lock feature of the core beyond the host's own choice. The agent
//! bodies and the trace body run the core's agent loop and serialize its
//! events with serde_json; their heap peak is the largest. Measured on the
//! Cortex-M firmware (bytes requested at once, at most): the event stream
//! bodies under 2 KB, the scripted-model and abort bodies under 15 KB, the
//! trace body about 26 KB, the agent bodies up to 47 KB; all fit in its
//! 64 KiB heap (the README's "Embedded" section).
//!
//! ```
//! use agentstream_testkit::conformance::Rt;
//!
//! macro_rules! run_all {
//!     ($($body:ident),* $(,)?) => {
//!         $( futures_executor::block_on(agentstream_testkit::conformance::$body(Rt::inline())); )*
//!     };
//! }
//! agentstream_testkit::for_each_body!(run_all);
//! ```
pub mod agent;
mod rt;
mod scripted_bodies;
mod stream_bodies;
pub mod support;
mod trace;

pub use rt::{joinable, ready, BoxFut, Rt};
pub use scripted_bodies::*;
pub use stream_bodies::*;
pub use trace::{canonical_json, demo_transcript, trace_demo_transcript, DEMO_TRANSCRIPT};

/// Expands `$callback! { name, … }` with every body at this crate's root
/// (each an `async fn(Rt)`): the event stream's semantics, the scripted
/// model's traces, mid-stream aborts and the trace body.
///
/// ```
/// macro_rules! count {
///     ($($body:ident),* $(,)?) => { [$(stringify!($body)),*].len() };
/// }
/// assert_eq!(agentstream_testkit::for_each_body!(count), agentstream_testkit::conformance::BODY_NAMES.len());
/// ```
#[macro_export]
macro_rules! for_each_body {
    ($callback:ident) => {
        $callback! {
            events_keep_push_order,
            fail_ends_after_the_buffered_events,
            a_dropped_producer_ends_the_stream,
            finish_resolves_results_before_the_events_drain,
            the_result_is_awaited_by_several_tasks,
            an_early_stop_then_continue_keeps_order,
            a_producer_sees_when_nobody_observes_it,
            scripted_two_calls,
            scripted_tool_call_trace,
            scripted_two_text_blocks,
            scripted_error_turn,
            scripted_exhaustion,
            scripted_pre_aborted,
            scripted_chunked_and_full_sequence,
            scripted_result_before_events,
            abort_after_two_deltas,
            abort_from_another_task,
            trace_demo_transcript,
        }
    };
}

/// Expands `$callback! { name, … }` with every agent scenario; the body of
/// each is `agentstream_testkit::conformance::agent::<name>` (an `async fn(Rt)`).
/// The names are the Pi oracle's scenarios ([`agent::SCENARIOS`]).
#[macro_export]
macro_rules! for_each_agent_body {
    ($callback:ident) => {
        $crate::for_each_agent_scenario! { $callback }
    };
}

/// Names every listed body (checking that each exists).
macro_rules! body_names {
    ($($name:ident),* $(,)?) => {
        /// The names [`for_each_body!`](crate::for_each_body!) lists, in list order.
        pub const BODY_NAMES: &[&str] = &[$(stringify!($name)),*];

        #[allow(dead_code)]
        fn every_listed_body_exists() {
            $( let _ = $name; )*
        }
    };
}

for_each_body!(body_names);
