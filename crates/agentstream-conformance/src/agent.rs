//! The agent scenarios as bodies: each runs as a task of the host's
//! [`Rt`], and its transcript must equal the golden file the core's own
//! tests check (`crates/agentstream/tests/golden/<name>.jsonl`, compiled
//! in), so every host produces the same transcript.
//!
//! The scenarios themselves live in the core's tests
//! (`crates/agentstream/tests/agent_scenarios/mod.rs`, `no_std + alloc`),
//! and the list of them is [`for_each_agent_body!`](crate::for_each_agent_body).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use futures_util::StreamExt;

use crate::Rt;

#[path = "../../agentstream/tests/agent_scenarios/mod.rs"]
mod agent_scenarios;

/// The scenario names the core knows (its golden files'), for hosts that
/// check their generated list against it.
pub const SCENARIOS: &[&str] = agent_scenarios::NAMES;

/// The demo scenario's transcript lines, as `serde_json` wrote them.
pub(crate) async fn demo_lines() -> Vec<String> {
    agent_scenarios::demo().await.lines
}

/// Plays the scenario `name` as a task of `rt` and returns its lines.
async fn play_as_task(rt: &Rt, name: &'static str) -> Vec<String> {
    let (slot, mut played) = agentstream::channel::<Vec<String>, (), ()>();
    rt.spawn(async move {
        let transcript = agent_scenarios::play(name).await;
        slot.push(transcript.lines)
            .expect("the body waits for the lines");
        let _ = slot.finish(());
    })
    .await;
    match played.next().await {
        Some(Ok(lines)) => lines,
        other => panic!("{name}: the scenario's task ended without its lines: {other:?}"),
    }
}

/// Where `actual` first differs from the lines of `expected`, according
/// to `same(expected_line, actual_line)`; `None` if they are equal.
pub fn first_difference(
    expected: &str,
    actual: &[String],
    same: impl Fn(&str, &str) -> bool,
) -> Option<String> {
    let expected: Vec<&str> = expected.lines().collect();
    for (number, (e, a)) in expected.iter().zip(actual).enumerate() {
        if !same(e, a) {
            return Some(format!(
                "line {}:\n  expected {e}\n  actual   {a}",
                number + 1
            ));
        }
    }
    if expected.len() != actual.len() {
        return Some(format!(
            "{} lines expected, {} produced",
            expected.len(),
            actual.len()
        ));
    }
    None
}

/// Plays `name` as a task and compares it with `golden` (JSON values per
/// line: the key order of a build does not matter).
async fn check(rt: Rt, name: &'static str, golden: &str) {
    let lines = play_as_task(&rt, name).await;
    if let Some(difference) = first_difference(golden, &lines, agent_scenarios::same_json) {
        panic!("{name}: the transcript differs from tests/golden/{name}.jsonl at {difference}");
    }
}

/// Defines one body per scenario.
macro_rules! agent_bodies {
    ($($name:ident),* $(,)?) => {
        $(
            #[doc = concat!(
                "The `", stringify!($name), "` agent scenario, played as a task, equals ",
                "its golden file `crates/agentstream/tests/golden/", stringify!($name), ".jsonl`."
            )]
            pub async fn $name(rt: Rt) {
                check(
                    rt,
                    stringify!($name),
                    include_str!(concat!(
                        "../../agentstream/tests/golden/",
                        stringify!($name),
                        ".jsonl"
                    )),
                )
                .await;
            }
        )*

        /// The listed agent bodies' names, in list order.
        pub const BODY_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

crate::for_each_agent_body!(agent_bodies);
