//! Golden transcripts: each agent scenario's events as Pi-shaped JSONL,
//! compared with `tests/golden/<scenario>.jsonl`. `AGENTSTREAM_BLESS=1`
//! rewrites the files; review the diff by eye against Pi's event shapes.

mod agent_scenarios;

use std::path::PathBuf;

use agentstream_test_support::golden::assert_golden_by;

fn check(name: &str) {
    let transcript = futures_executor::block_on(agent_scenarios::play(name));
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.jsonl"));
    assert_golden_by(&path, &transcript.lines, agent_scenarios::same_json);
}

#[test]
fn every_scenario_has_a_golden_file_and_every_golden_file_a_scenario() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_owned))
        .collect();
    files.sort();
    let mut names: Vec<String> = agent_scenarios::NAMES
        .iter()
        .map(|n| n.to_string())
        .collect();
    names.sort();
    assert_eq!(files, names);
}

macro_rules! golden {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name));
            }
        )*
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
