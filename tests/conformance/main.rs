//! The conformance suite: every body of `agentstream-testkit`'s `conformance` runs
//! under every executor in `common/executors.rs`, as one `#[test]` per pair
//! (`<executor>::<body>`; the agent scenarios as
//! `agent::<executor>::<scenario>`, see `agent_bodies.rs`). The bodies and
//! their list live in that crate, which the WebAssembly and embedded hosts
//! run too.
#![cfg(not(loom))]

#[path = "../common/executors.rs"]
mod executors;

mod agent_bodies;

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
                    crate::executors::$executor(agentstream_testkit::conformance::$body);
                }
            )*
        }
    };
}

/// The callback of `for_each_body!`: every body on every executor.
macro_rules! on_every_executor {
    ($($body:ident),* $(,)?) => {
        conformance! {
            executors: [
                hand_polled,
                smol_block_on,
                tokio_current_thread,
                tokio_multi_thread,
                smol_multi_thread,
                async_std,
            ],
            bodies: [$($body),*]
        }
    };
}

agentstream_testkit::for_each_body!(on_every_executor);
