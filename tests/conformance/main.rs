//! The conformance suite: every body in `bodies.rs` runs under every
//! executor in `common/executors.rs`, as one `#[test]` per pair
//! (`<executor>::<body>`).
#![cfg(not(loom))]

#[path = "../common/executors.rs"]
mod executors;
#[path = "../common/models.rs"]
mod models;

mod agent_bodies;
mod bodies;

/// Expands to one module per executor, holding one `#[test]` per body.
macro_rules! conformance {
    (executors: [$($executor:ident),* $(,)?], bodies: $bodies:tt) => {
        $( conformance!(@executor $executor $bodies); )*
    };
    (@executor $executor:ident [$($body:ident),* $(,)?]) => {
        mod $executor {
            $(
                #[test]
                fn $body() {
                    crate::executors::$executor(crate::bodies::$body);
                }
            )*
        }
    };
}

conformance! {
    executors: [
        hand_polled,
        smol_block_on,
        tokio_current_thread,
        tokio_multi_thread,
        smol_multi_thread,
        async_std,
    ],
    bodies: [
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
    ]
}
