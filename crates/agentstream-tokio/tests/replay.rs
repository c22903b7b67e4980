//! End to end: `EndpointModel` over a `TapEndpoint` records the body the
//! mock server sent, and a `ReplayModel` of it gives the live events. Run
//! with `cargo test -p agentstream-tokio --features http --test replay`.
#![cfg(feature = "http")]

use std::time::Duration;

use agentstream_testserver::replay_scenarios as scenarios;
use agentstream_tokio::EndpointModel;

#[test]
fn tapped_bodies_replay_as_received() {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async {
            let scenario = scenarios::tapped_bodies_replay_as_received(|endpoint| {
                EndpointModel::new(endpoint).expect("client")
            });
            tokio::time::timeout(Duration::from_secs(60), scenario)
                .await
                .expect("the scenario hung");
        });
}
