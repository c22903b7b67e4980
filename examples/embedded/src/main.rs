//! agentstream on a microcontroller: QEMU's MPS2 AN386 board (Cortex-M4F),
//! a 128 KiB heap, the core's `critical-section` lock and the embassy
//! executor. The firmware plays the scripted two-turn demo (a `read` tool
//! call, then an answer) and prints its transcript, then runs every
//! conformance body of `agentstream-testkit`'s `conformance`, printing `ok <name>` or
//! `FAILED <name>: <panic>` for each, and exits through semihosting with
//! success only if all passed.
//!
//! A body fails by panicking; the panic handler reports the body that was
//! running and exits with failure, so the bodies after a failing one do
//! not run.
#![no_std]
#![no_main]

extern crate alloc;

mod heap;

use alloc::boxed::Box;
use core::cell::Cell;
use core::future::Future;
use core::panic::PanicInfo;
use core::pin::Pin;

use agentstream_testkit::conformance::{BoxFut, Rt};
use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use critical_section::Mutex;
use embassy_executor::{Executor, Spawner};

use crate::heap::{CountingHeap, HEAP_SIZE};

#[global_allocator]
static HEAP: CountingHeap = CountingHeap::empty();

/// How many spawned futures may be alive at once (the bodies spawn at most
/// six: five tasks and a model driver); the task pool's `pool_size` below.
const POOL_SIZE: usize = 16;

/// The body running now, for the panic handler.
static CURRENT: Mutex<Cell<&'static str>> = Mutex::new(Cell::new("startup"));

/// A body as the list holds it.
type Body = fn(Rt) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// The callback of `for_each_body!`: `(name, body)` pairs.
macro_rules! root_bodies {
    ($($body:ident),* $(,)?) => {
        &[$((stringify!($body), |rt| Box::pin(agentstream_testkit::conformance::$body(rt)))),*]
    };
}

/// The callback of `for_each_agent_body!`: `(name, body)` pairs.
macro_rules! agent_bodies {
    ($($body:ident),* $(,)?) => {
        &[$((stringify!($body), |rt| Box::pin(agentstream_testkit::conformance::agent::$body(rt)))),*]
    };
}

/// Every body of `for_each_body!`.
const BODIES: &[(&str, Body)] = agentstream_testkit::for_each_body!(root_bodies);
/// Every agent scenario of `for_each_agent_body!`.
const AGENT_BODIES: &[(&str, Body)] = agentstream_testkit::for_each_agent_body!(agent_bodies);

/// Runs a spawned future to its end: the task pool behind [`Rt`].
#[embassy_executor::task(pool_size = 16)]
async fn boxed(future: BoxFut) {
    future.await;
}

#[embassy_executor::task]
async fn run(spawner: Spawner) {
    let spawner = spawner.make_send();
    let rt = Rt::detached(move |future| {
        if spawner.spawn(boxed(future)).is_err() {
            panic!("the task pool is full ({POOL_SIZE} futures)");
        }
    });

    hprintln!(
        "agentstream on a Cortex-M4F: embassy executor, {} KiB heap",
        HEAP_SIZE / 1024
    );
    set_current("demo");
    HEAP.reset_peak();
    let before = HEAP.in_use();
    let transcript = agentstream_testkit::conformance::demo_transcript(rt.clone()).await;
    let demo_peak = HEAP.peak() - before;
    hprintln!("transcript begin");
    for line in transcript.lines() {
        hprintln!("{}", line);
    }
    hprintln!("transcript end");
    drop(transcript);
    hprintln!("demo heap peak: {} bytes", demo_peak);

    // `demo-only` (a feature for the size report) leaves the bodies out of
    // the firmware.
    let (bodies, agent_bodies) = if cfg!(feature = "demo-only") {
        (&[][..], &[][..])
    } else {
        (BODIES, AGENT_BODIES)
    };
    let mut passed = 0;
    for (name, body) in bodies.iter().chain(agent_bodies) {
        set_current(name);
        HEAP.reset_peak();
        let before = HEAP.in_use();
        body(rt.clone()).await;
        hprintln!("ok {} (heap peak {} bytes)", name, HEAP.peak() - before);
        passed += 1;
    }
    set_current("shutdown");
    hprintln!(
        "{} bodies passed; heap in use at the end: {} bytes",
        passed,
        HEAP.in_use()
    );
    debug::exit(debug::EXIT_SUCCESS);
}

fn set_current(name: &'static str) {
    critical_section::with(|cs| CURRENT.borrow(cs).set(name));
}

#[entry]
fn main() -> ! {
    HEAP.init();
    let executor = cortex_m::singleton!(: Executor = Executor::new()).expect("main runs once");
    executor.run(|spawner| {
        if spawner.spawn(run(spawner)).is_err() {
            panic!("the main task did not start");
        }
    })
}

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    let name = critical_section::with(|cs| CURRENT.borrow(cs).get());
    match info.location() {
        Some(at) => hprintln!(
            "FAILED {}: {} (at {}:{})",
            name,
            info.message(),
            at.file(),
            at.line()
        ),
        None => hprintln!("FAILED {}: {}", name, info.message()),
    }
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::bkpt();
    }
}
