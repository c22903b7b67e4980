//! End to end: `EndpointModel` over a `TapEndpoint` records the body the
//! mock server sent, and a `ReplayModel` of it gives the live events. Run
//! with `cargo test -p agentstream-smol --features http --test replay`.
#![cfg(feature = "http")]

use std::time::Duration;

use agentstream_smol::EndpointModel;
use agentstream_testserver::replay_scenarios as scenarios;

#[test]
fn tapped_bodies_replay_as_received() {
    let scenario = scenarios::tapped_bodies_replay_as_received(|endpoint| {
        EndpointModel::new(endpoint).expect("client")
    });
    smol::block_on(smol::future::or(scenario, async {
        smol::Timer::after(Duration::from_secs(60)).await;
        panic!("the scenario hung");
    }));
}
