//! Golden transcripts: each agent scenario's events as Pi-shaped JSONL,
//! compared with `tests/golden/<scenario>.jsonl` (JSON values per line, so
//! the key order of a build does not matter). `AGENTSTREAM_BLESS=1`
//! rewrites the files; review the diff by eye against Pi's event shapes.
//!
//! The files are compiled in (`include_str!`), so the comparison needs no
//! file system at run time (Miri runs these tests in isolation).

extern crate alloc;

mod agent_scenarios;

use std::path::PathBuf;

use agentstream_test_support::golden::assert_golden_text;

fn check(name: &str, expected: &str) {
    let transcript = futures_executor::block_on(agent_scenarios::play(name));
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.jsonl"));
    assert_golden_text(
        &path,
        expected,
        &transcript.lines,
        agent_scenarios::same_json,
    );
}

macro_rules! golden {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(
                    stringify!($name),
                    include_str!(concat!("golden/", stringify!($name), ".jsonl")),
                );
            }
        )*

        #[test]
        fn every_scenario_has_a_golden_test() {
            let mut tested = [$(stringify!($name)),*];
            tested.sort_unstable();
            let mut known = agent_scenarios::NAMES.to_vec();
            known.sort_unstable();
            assert_eq!(tested.as_slice(), known.as_slice());
        }
    };
}

golden!(
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
);
