//! Scripted turns, pacers and trace helpers shared by the suite's tests:
//! the conformance crate's (`agentstream_testkit::conformance::support`).
#![allow(unused_imports)]

pub use agentstream_testkit::conformance::support::{
    assert_valid, context, indexes, play, slow_turn, stalling_pacer, tool_turn, types,
};
