//! Two scripted turns on smol: the first plays to its end, the second is a
//! slow (paced, chunked) turn that a short timeout cuts off.
//!
//! The program is `agentstream_testkit::host::two_turns`, shared by the
//! native hosts (`crates/agentstream-testkit/src/host.rs`); what is smol's
//! is how the runtime is entered and the runtime value it is given.
//!
//! Run with `cargo run -p agentstream-smol --example smol_turns`.

fn main() {
    smol::block_on(agentstream_testkit::host::two_turns(agentstream_smol::Smol));
}
