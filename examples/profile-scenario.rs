//! Runs one bench scenario for one flavour in a plain loop, for profilers
//! (`valgrind --tool=callgrind`, `perf record`), which want a small process
//! without criterion's analysis around it.
//!
//! ```text
//! profile-scenario SCENARIO FLAVOUR ITERATIONS
//!   SCENARIO: burst-<N> | lifecycle | pingpong-tokio | crossthread | crossthread-smol
//!   FLAVOUR:  ours | futures | tokio | async-channel | flume
//! ```
//!
//! For example, instructions per lifecycle call:
//! `valgrind --tool=callgrind target/release/examples/profile-scenario lifecycle ours 100000`
//! and divide the total by 100,000.

use std::task::Context;

use agentstream_suite::{consume, for_each_flavor, Flag, Flavor};

fn run<Fl: Flavor>(scenario: &str, iterations: u64) -> u64 {
    let (_flag, waker) = Flag::waker();
    let mut cx = Context::from_waker(&waker);
    let mut sum = 0u64;
    if let Some(n) = scenario.strip_prefix("burst-") {
        let n: u64 = n.parse().expect("burst-<N>");
        for _ in 0..iterations {
            sum = sum.wrapping_add(agentstream_suite::burst::<Fl>(std::hint::black_box(n)));
        }
    } else if scenario == "lifecycle" {
        for _ in 0..iterations {
            sum = sum.wrapping_add(agentstream_suite::lifecycle::<Fl>(&mut cx));
        }
    } else if scenario == "pingpong-tokio" {
        // ITERATIONS rounds in tokio's current-thread runtime, as in the bench.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("tokio runtime");
        sum = runtime.block_on(async {
            let (tx, rx, res) = Fl::channel();
            let consumer = tokio::spawn(consume::<Fl>(rx, res));
            tokio::task::yield_now().await;
            for round in 0..iterations {
                Fl::push(&tx, round);
                tokio::task::yield_now().await;
            }
            Fl::finish(tx, 0);
            consumer.await.expect("consumer")
        });
    } else if scenario == "crossthread-smol" {
        for _ in 0..iterations {
            let (tx, rx, res) = Fl::channel();
            let consumer = smol::spawn(consume::<Fl>(rx, res));
            let producer = std::thread::spawn(move || {
                for event in 0..100_000 {
                    Fl::push(&tx, event);
                }
                Fl::finish(tx, 0);
            });
            sum = sum.wrapping_add(smol::block_on(consumer));
            producer.join().expect("producer");
        }
    } else if scenario == "crossthread" {
        // 100,000 events per iteration, consumer on a tokio worker thread.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .build()
            .expect("tokio runtime");
        for _ in 0..iterations {
            let (tx, rx, res) = Fl::channel();
            let consumer = runtime.spawn(consume::<Fl>(rx, res));
            let producer = std::thread::spawn(move || {
                for event in 0..100_000 {
                    Fl::push(&tx, event);
                }
                Fl::finish(tx, 0);
            });
            sum = sum.wrapping_add(runtime.block_on(consumer).expect("consumer"));
            producer.join().expect("producer");
        }
    } else {
        panic!("unknown scenario {scenario}");
    }
    sum
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [scenario, flavour, iterations] = args.as_slice() else {
        eprintln!("usage: profile-scenario SCENARIO FLAVOUR ITERATIONS");
        std::process::exit(2);
    };
    let iterations: u64 = iterations.parse().expect("ITERATIONS");
    let mut found = false;
    for_each_flavor!(Fl => {
        if Fl::NAME == flavour.as_str() {
            found = true;
            println!("{}", run::<Fl>(scenario, iterations));
        }
    });
    if !found {
        eprintln!("unknown flavour {flavour}");
        std::process::exit(2);
    }
}
