//! The message decoder fed arbitrary JSON: no panic, and a message that
//! decodes re-serializes to JSON that decodes to the same message.
#![no_main]

use agentstream::message::Message;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(input) else {
        return;
    };
    let Ok(message) = Message::from_value(value) else {
        return;
    };
    let text = serde_json::to_string(&message).expect("a message serializes");
    let again: serde_json::Value = serde_json::from_str(&text).expect("its JSON parses");
    let decoded = Message::from_value(again).expect("its JSON decodes");
    assert_eq!(decoded, message);
});
