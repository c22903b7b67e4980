//! The Anthropic Messages projector fed arbitrary payloads, one per line
//! of the input: no panic, exactly one terminal event, and every sequence
//! valid under the protocol checker.
#![no_main]

use agentstream_fuzz::{check_projection, tight_limits};
use agentstream_wire::anthropic::AnthropicProjector;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let mut projector = AnthropicProjector::new("m", "p");
    projector.set_limits(tight_limits());
    check_projection(
        input,
        &mut projector,
        AnthropicProjector::push_data,
        AnthropicProjector::finish,
    );
});
