//! The agent scenarios under every executor: each runs as a task of the
//! executor (`Rt::spawn`: on a worker thread where the runtime has them)
//! and its transcript must equal the golden file the core's tests check,
//! so every executor produces the identical transcript. The bodies are
//! `agentstream_testkit::conformance::agent::<scenario>`; the scenarios live in
//! `crates/agentstream/tests/agent_scenarios` and use only the core and
//! futures-util.

/// One module per executor holding a `#[test]` per scenario
/// (`agent::<executor>::<scenario>`).
macro_rules! agent_conformance {
    (executors: [$($executor:ident),* $(,)?], scenarios: $scenarios:tt) => {
        agent_conformance!(@names $scenarios);
        mod agent {
            $( agent_conformance!(@executor $executor $scenarios); )*
        }
    };
    (@names [$($name:ident),* $(,)?]) => {
        #[test]
        fn every_scenario_runs_on_every_executor() {
            let mut listed = [$(stringify!($name)),*];
            listed.sort_unstable();
            let mut known = agentstream_testkit::conformance::agent::SCENARIOS.to_vec();
            known.sort_unstable();
            assert_eq!(listed.as_slice(), known.as_slice());
        }
    };
    (@executor $executor:ident [$($name:ident),* $(,)?]) => {
        mod $executor {
            $(
                #[test]
                fn $name() {
                    crate::executors::$executor(agentstream_testkit::conformance::agent::$name);
                }
            )*
        }
    };
}

/// The callback of `for_each_agent_body!`.
macro_rules! on_every_executor {
    ($($name:ident),* $(,)?) => {
        agent_conformance! {
            executors: [
                hand_polled,
                smol_block_on,
                tokio_current_thread,
                tokio_multi_thread,
                smol_multi_thread,
                async_std,
            ],
            scenarios: [$($name),*]
        }
    };
}

agentstream_testkit::for_each_agent_body!(on_every_executor);
