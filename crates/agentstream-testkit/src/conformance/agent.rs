//! The agent scenarios as bodies: each runs as a task of the host's
//! [`Rt`], and its events must equal the real Pi's for the same scenario
//! (`crates/agentstream/tests/golden/pi/<name>.jsonl`, written by the Pi
//! oracle and compiled in; the core's differential test checks the same
//! files), after the scenario's documented difference, if it has one, so
//! every host matches Pi.
//!
//! The scenarios themselves live in the core's tests
//! (`crates/agentstream/tests/agent_scenarios/mod.rs`, `no_std + alloc`),
//! and the list of them is [`for_each_agent_body!`](crate::for_each_agent_body).

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use futures_util::StreamExt;

use crate::conformance::Rt;

#[path = "../../../agentstream/tests/agent_scenarios/mod.rs"]
mod agent_scenarios;

/// The scenario names the core knows (its golden files'), for hosts that
/// check their generated list against it.
pub const SCENARIOS: &[&str] = agent_scenarios::NAMES;

/// The demo scenario's transcript lines, as `serde_json` wrote them.
pub(crate) async fn demo_lines() -> Vec<String> {
    agent_scenarios::demo(None).await.lines
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

/// Plays `name` as a task and compares each event with Pi's, `pi_jsonl`
/// (one JSON line each), as a JSON value, the moment it is emitted (the
/// firmware's heap holds one event at a time, not the transcript), after
/// the scenario's documented difference.
async fn check(rt: Rt, name: &'static str, pi_jsonl: &'static str) {
    let difference = agent_scenarios::difference(name);
    let sink: agent_scenarios::LineSink = Arc::new(move |index, line| {
        let actual: serde_json::Value = serde_json::from_str(line).expect("our lines are JSON");
        match agent_scenarios::expected_event(difference, pi_jsonl, index) {
            Some(pi) if pi == actual => {}
            Some(pi) => panic!(
                "{name}: event {} differs from Pi's ({difference:?})\n  Pi:   {pi}\n  ours: {line}",
                index + 1
            ),
            None => panic!(
                "{name}: event {} is one more than Pi's ({difference:?})",
                index + 1
            ),
        }
    });
    let emitted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&emitted);
    let sink: agent_scenarios::LineSink = Arc::new(move |index, line| {
        counted.fetch_add(1, Ordering::SeqCst);
        sink(index, line)
    });
    let (slot, mut played) = agentstream::channel::<(), (), ()>();
    rt.spawn(async move {
        agent_scenarios::play_with(name, Some(sink)).await;
        slot.push(()).expect("the body waits for the run");
        let _ = slot.finish(());
    })
    .await;
    if !matches!(played.next().await, Some(Ok(()))) {
        panic!("{name}: the scenario's task ended without finishing its run");
    }
    let expected = agent_scenarios::expected_len(difference, pi_jsonl);
    let emitted = emitted.load(Ordering::SeqCst);
    if emitted != expected {
        panic!("{name}: {emitted} events, Pi emitted {expected} ({difference:?})");
    }
}

/// Defines one body per scenario.
macro_rules! agent_bodies {
    ($($name:ident),* $(,)?) => {
        $(
            #[doc = concat!(
                "The `", stringify!($name), "` agent scenario, played as a task, emits Pi's ",
                "events (`crates/agentstream/tests/golden/pi/", stringify!($name), ".jsonl`)."
            )]
            pub async fn $name(rt: Rt) {
                check(
                    rt,
                    stringify!($name),
                    include_str!(concat!(
                        "../../../agentstream/tests/golden/pi/",
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
