//! The agent scenarios under every executor: each runs as a task of the
//! executor (`Rt::spawn`: on a worker thread where the runtime has them)
//! and its transcript must equal the golden file the core's tests check,
//! so every executor produces the identical transcript. The scenarios live
//! in `crates/agentstream/tests/agent_scenarios` and use only the core and
//! futures-util.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::executors::Rt;
use agentstream_test_support::golden::assert_golden_by;

#[path = "../../crates/agentstream/tests/agent_scenarios/mod.rs"]
mod agent_scenarios;

/// Plays `name` as a task of `rt` and compares it with its golden file.
async fn check(rt: Rt, name: &'static str) {
    let lines = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&lines);
    let task = rt.spawn(async move {
        let transcript = agent_scenarios::play(name).await;
        *slot.lock().unwrap() = Some(transcript.lines);
    });
    task.await;
    let lines = lines.lock().unwrap().take().expect("the scenario ran");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("crates/agentstream/tests/golden")
        .join(format!("{name}.jsonl"));
    assert_golden_by(&path, &lines, agent_scenarios::same_json);
}

/// One body per scenario, and one module per executor holding a `#[test]`
/// per body (`agent::<executor>::<scenario>`).
macro_rules! agent_conformance {
    (executors: [$($executor:ident),* $(,)?], scenarios: $scenarios:tt) => {
        agent_conformance!(@bodies $scenarios);
        mod agent {
            $( agent_conformance!(@executor $executor $scenarios); )*
        }
    };
    (@bodies [$($name:ident),* $(,)?]) => {
        $(
            pub async fn $name(rt: Rt) {
                check(rt, stringify!($name)).await;
            }
        )*
        #[test]
        fn every_scenario_runs_on_every_executor() {
            let mut listed = [$(stringify!($name)),*];
            listed.sort_unstable();
            let mut known = agent_scenarios::NAMES.to_vec();
            known.sort_unstable();
            assert_eq!(listed.as_slice(), known.as_slice());
        }
    };
    (@executor $executor:ident [$($name:ident),* $(,)?]) => {
        mod $executor {
            $(
                #[test]
                fn $name() {
                    crate::executors::$executor(crate::agent_bodies::$name);
                }
            )*
        }
    };
}

agent_conformance! {
    executors: [
        hand_polled,
        smol_block_on,
        tokio_current_thread,
        tokio_multi_thread,
        smol_multi_thread,
        async_std,
    ],
    scenarios: [
        demo,
        parallel_reverse_completion,
        unknown_tool,
        invalid_arguments,
        length_turn_with_tool_calls,
        max_turns,
        steering_after_batch,
        steering_interrupt,
        follow_up,
        abort_during_tool,
        hooks_block_and_rewrite,
    ]
}
