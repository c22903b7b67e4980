//! Allocation figures of agentstream's EventStream and of every peer flavour
//! from the benches, measured in one binary with a counting global
//! allocator. Only ours is asserted (at most 2 allocations per stream, none
//! per event in steady state); the peers' figures are printed for the report
//! (`cargo test --test allocations -- --nocapture` at the root).
#![cfg(not(loom))]

use std::pin::{pin, Pin};
use std::task::Context;

use agentstream_suite::{expect_event, for_each_flavor, Flavor};
use agentstream_testkit::{measure, CountingAllocator};

/// The workspace's one counting allocator; `measure` counts this thread only.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Pushes `n` events, then reads them back.
fn cycle<Fl: Flavor>(tx: &Fl::Tx, mut rx: Pin<&mut Fl::Rx>, n: u64) {
    let mut cx = Context::from_waker(futures_util::task::noop_waker_ref());
    for event in 0..n {
        Fl::push(tx, event);
    }
    for event in 0..n {
        assert_eq!(expect_event::<Fl>(rx.as_mut(), &mut cx), Some(event));
    }
}

const STEADY_ROUNDS: u64 = 1_000;
const BURST: u64 = 1 << 20;

/// One flavour's figures.
struct Figures {
    name: &'static str,
    per_stream: usize,
    steady_events: u64,
    steady_allocations: usize,
    held_after_burst: isize,
}

impl Figures {
    fn per_event(&self) -> f64 {
        self.steady_allocations as f64 / self.steady_events as f64
    }
}

fn figures<Fl: Flavor>() -> Figures {
    // A stream's whole life: create, push one, finish, drain, await.
    let (per_stream, _) = measure(|| {
        std::hint::black_box(agentstream_suite::burst::<Fl>(1));
    });

    let (tx, rx, _res) = Fl::channel();
    let mut rx = pin!(rx);
    // Warm up: buffers, blocks and free lists reach their working size.
    cycle::<Fl>(&tx, rx.as_mut(), 64);
    cycle::<Fl>(&tx, rx.as_mut(), 64);
    let (steady_allocations, _) = measure(|| {
        for _ in 0..STEADY_ROUNDS {
            cycle::<Fl>(&tx, rx.as_mut(), 64);
        }
        for _ in 0..STEADY_ROUNDS {
            cycle::<Fl>(&tx, rx.as_mut(), 1);
        }
    });
    // Everything a fresh stream (and its result side) holds after a burst
    // has drained, while both ends are still alive.
    let (_, held_after_burst) = measure(|| {
        let (tx, rx, res) = Fl::channel();
        let mut rx = Box::pin(rx);
        cycle::<Fl>(&tx, rx.as_mut(), BURST);
        // One more round trip lets a consumer notice its drained buffer.
        cycle::<Fl>(&tx, rx.as_mut(), 1);
        (tx, rx, res)
    });
    Figures {
        name: Fl::NAME,
        per_stream,
        steady_events: STEADY_ROUNDS * 65,
        steady_allocations,
        held_after_burst,
    }
}

fn table(all: &[Figures]) -> String {
    let mut out = String::from(
        "| flavour | allocations per stream (create, push 1, finish, drain, await) \
         | allocations per event, steady state | bytes held by a stream after a drained 1M burst |\n\
         |---|---:|---:|---:|\n",
    );
    for f in all {
        out += &format!(
            "| {} | {} | {:.3} ({} over {} events) | {} |\n",
            f.name,
            f.per_stream,
            f.per_event(),
            f.steady_allocations,
            f.steady_events,
            f.held_after_burst
        );
    }
    out
}

#[test]
fn allocation_figures_for_ours_and_the_peers() {
    let mut all = Vec::new();
    for_each_flavor!(Fl => {
        all.push(figures::<Fl>());
    });
    // Printed between markers so `benches/report.sh` can pick the table up.
    println!(
        "<!-- allocations:begin -->\n{}<!-- allocations:end -->",
        table(&all)
    );

    let ours = &all[0];
    assert_eq!(ours.name, "ours");
    assert!(
        ours.per_stream <= 2,
        "{} allocations per stream",
        ours.per_stream
    );
    assert_eq!(
        ours.steady_allocations, 0,
        "allocations over {} steady-state events",
        ours.steady_events
    );
    // The shared state plus at most two retained buffers.
    let bound = (4096 + 2 * 1024 * std::mem::size_of::<u64>()) as isize;
    assert!(
        ours.held_after_burst <= bound,
        "{} bytes held after the burst (bound {bound})",
        ours.held_after_burst
    );
}
