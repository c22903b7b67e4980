//! The differential test against the real Pi: each scenario of the Pi
//! oracle (`oracle/pi-agent/transcripts.mjs`, Pi 0.73.1) played through
//! our loop, compared with the transcripts the oracle wrote
//! (`tests/golden/pi/<name>.jsonl` and `<name>.final.json`): every event
//! as a JSON value, then the final messages, the params each tool
//! received, the context each model call was sent and how many scripted
//! turns no call played. A scenario that
//! deliberately differs names its [`Difference`](agent_scenarios::Difference),
//! which is applied to Pi's side first; see the agent module docs.
//!
//! The golden files are Pi's output, never ours: `.ci/pi-agent-oracle.sh`
//! regenerates them with the real Pi and checks they are unchanged. They
//! are compiled in (`include_str!`), so the comparison needs no file
//! system at run time (Miri runs these tests in isolation).
//!
//! Under Miri, one scenario in three is compared (the first, fourth, …
//! of [`NAMES`](agent_scenarios::NAMES), and every scenario that differs
//! from Pi on purpose): the loop's paths are Miri's concern, and
//! `tests/agent.rs` runs the same scenarios' loop under it too; the JSON
//! comparison of all of them took ten minutes of CI there. Natively
//! every scenario is compared.

extern crate alloc;

mod agent_scenarios;

use agent_scenarios::{difference, expected_events, expected_final, final_record, Difference};
use serde_json::Value;

fn check(name: &str, pi_jsonl: &str, pi_final: &str) {
    if cfg!(miri) && !compared_under_miri(name) {
        return;
    }
    let transcript = futures_executor::block_on(agent_scenarios::play(name));
    let difference = difference(name);
    let expected: Vec<Value> = expected_events(difference, pi_jsonl).collect();
    let actual: Vec<Value> = transcript
        .lines
        .iter()
        .map(|line| serde_json::from_str(line).expect("our lines are JSON"))
        .collect();
    for (index, (e, a)) in expected.iter().zip(&actual).enumerate() {
        assert_eq!(
            e, a,
            "{name}: event {index} differs from Pi's ({difference:?})\n  Pi:  {e}\n  ours: {a}"
        );
    }
    assert_eq!(
        expected.len(),
        actual.len(),
        "{name}: Pi emitted {} events, we emitted {} ({difference:?})",
        expected.len(),
        actual.len()
    );
    let pi = expected_final(difference, pi_final);
    let ours = final_record(&transcript);
    for key in [
        "result",
        "toolExecutions",
        "llmRequests",
        "unusedScriptedResponses",
    ] {
        assert_eq!(
            pi[key], ours[key],
            "{name}: `{key}` differs from Pi's ({difference:?})"
        );
    }
}

/// Whether Miri compares scenario `name` (see the module docs).
fn compared_under_miri(name: &str) -> bool {
    let position = agent_scenarios::NAMES.iter().position(|n| *n == name);
    position.is_some_and(|i| i % 3 == 0) || difference(name) != Difference::None
}

macro_rules! differential {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(
                    stringify!($name),
                    include_str!(concat!("golden/pi/", stringify!($name), ".jsonl")),
                    include_str!(concat!("golden/pi/", stringify!($name), ".final.json")),
                );
            }
        )*

        #[test]
        fn every_oracle_scenario_is_compared() {
            let mut tested = [$(stringify!($name)),*];
            tested.sort_unstable();
            let mut known = agent_scenarios::NAMES.to_vec();
            known.sort_unstable();
            assert_eq!(tested.as_slice(), known.as_slice());
        }
    };
}

crate::for_each_agent_scenario!(differential);

/// The differences are exactly the documented ones: every scenario not
/// listed here is identical to Pi.
#[test]
fn the_deliberate_differences_are_these() {
    let differing: Vec<(&str, Difference)> = agent_scenarios::NAMES
        .iter()
        .map(|name| (*name, difference(name)))
        .filter(|(_, d)| *d != Difference::None)
        .collect();
    assert_eq!(
        differing,
        [
            (
                "abort_tool_honours_signal",
                Difference::NoModelCallAfterAbort
            ),
            (
                "abort_tool_ignores_signal",
                Difference::NoModelCallAfterAbort
            ),
            (
                "length_with_tool_call",
                Difference::LengthCallsNotExecuted(&["c1"])
            ),
        ]
    );
}
