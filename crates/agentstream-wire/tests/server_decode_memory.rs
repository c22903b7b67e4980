//! The decoded form of a request is proportional to its body: decoding a
//! body of 300,000 tiny messages peaks at a bounded multiple of the body
//! (the generic JSON tree of the whole conversation, about 20 times the
//! body, is never built). Measured with the process's peak resident set
//! (`VmHWM`, reset through `/proc/self/clear_refs`), so this binary holds
//! this one test only. Linux only.

#![cfg(target_os = "linux")]

use agentstream_wire::openai::decode as openai;

fn status(key: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<usize>()
        .unwrap()
        * 1024
}

#[test]
fn decoding_costs_a_bounded_multiple_of_the_body() {
    let message = r#"{"role":"user","content":"hi"}"#;
    let body = format!(
        r#"{{"model":"m","messages":[{}]}}"#,
        vec![message; 300_000].join(",")
    );
    let via_value = |body: &[u8]| {
        let value: serde_json::Value = serde_json::from_slice(body).unwrap();
        openai::decode_request(&value).unwrap()
    };
    let via_body = |body: &[u8]| openai::decode_body(body).unwrap();
    // The peak above the resident set of one decode, in multiples of the
    // body (each path run once first, to warm the allocator).
    let peak = |decode: &dyn Fn(&[u8]) -> agentstream_wire::server::DecodedRequest| {
        drop(decode(body.as_bytes()));
        std::fs::write("/proc/self/clear_refs", "5").unwrap();
        let before = status("VmRSS:");
        let decoded = decode(body.as_bytes());
        let peak = status("VmHWM:").saturating_sub(before);
        assert_eq!(decoded.context.messages.len(), 300_000);
        peak as f64 / body.len() as f64
    };
    let old = peak(&via_value);
    let new = peak(&via_body);
    eprintln!(
        "body {} bytes: decode peak {new:.1}x the body, {old:.1}x through a serde_json::Value",
        body.len()
    );
    // The decoded messages themselves cost 10-15x a body of tiny messages
    // (more when a crate of the build turns on serde_json's
    // `preserve_order`); what the body path saves is the whole `Value`
    // tree beside them.
    assert!(new < 20.0, "decoding peaked at {new:.1} times the body");
    assert!(
        new < old * 0.95,
        "decoding the body ({new:.1}x) costs no less than through a Value ({old:.1}x)"
    );
}
