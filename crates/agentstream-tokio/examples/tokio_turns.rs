//! Two scripted turns on tokio: the first plays to its end, the second is a
//! slow (paced, chunked) turn that a short timeout cuts off.
//!
//! The program is `agentstream_testkit::host::two_turns`, shared by the
//! native hosts (`crates/agentstream-testkit/src/host.rs`); what is tokio's
//! is how the runtime is entered and the runtime value it is given.
//!
//! Run with `cargo run -p agentstream-tokio --example tokio_turns`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    agentstream_testkit::host::two_turns(agentstream_tokio::Tokio).await;
}
