//! The decoded form of a request is proportional to its body: decoding a
//! body of 300,000 tiny messages peaks at a bounded multiple of the body
//! (the generic JSON tree of the whole conversation, about 20 times the
//! body, is never built). Measured with the process's peak resident set
//! (`VmHWM`, reset through `/proc/self/clear_refs`), so this binary holds
//! this one test only. Linux only.

#![cfg(target_os = "linux")]

use agentstream_serve::openai;

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
    let decode = |body: &[u8]| {
        if std::env::var_os("DECODE_MEMORY_VIA_VALUE").is_some() {
            let value: serde_json::Value = serde_json::from_slice(body).unwrap();
            openai::decode_request(&value).unwrap()
        } else {
            openai::decode_body(body).unwrap()
        }
    };
    // Once to warm the allocator, then measured.
    drop(decode(body.as_bytes()));
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status("VmRSS:");
    let decoded = decode(body.as_bytes());
    let peak = status("VmHWM:").saturating_sub(before);
    assert_eq!(decoded.context.messages.len(), 300_000);
    let ratio = peak as f64 / body.len() as f64;
    eprintln!(
        "body {} bytes, decode peak {peak} bytes ({ratio:.1}x)",
        body.len()
    );
    assert!(ratio < 12.0, "decoding peaked at {ratio:.1} times the body");
}
