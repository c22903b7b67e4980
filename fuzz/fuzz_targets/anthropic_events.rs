//! The Anthropic Messages projector fed arbitrary payloads, one per line
//! of the input: no panic, exactly one terminal event, and every sequence
//! valid under the protocol checker.
#![no_main]

use agentstream::model::{validate_events, ModelEvent};
use agentstream_wire::anthropic::EventProjector;
use agentstream_wire::limits::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let text = String::from_utf8_lossy(input);
    let mut projector = EventProjector::new("m", "p");
    projector.set_limits(
        Limits::DEFAULT
            .with_max_content_blocks(8)
            .with_max_tool_calls(4)
            .with_max_tool_argument_bytes(256),
    );
    let mut events: Vec<ModelEvent> = Vec::new();
    for line in text.lines() {
        projector.push_data(line, &mut events);
    }
    projector.finish(&mut events);
    let findings = validate_events(&events);
    assert!(findings.is_empty(), "{findings:?}\n{events:#?}");
    assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
});
