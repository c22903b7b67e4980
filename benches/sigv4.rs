//! Signing one Bedrock ConverseStream request with SigV4 (static keys
//! and a session token, a 4 KB JSON body): the time per signature and
//! the allocations of one.
//!
//! Run with `cargo bench --bench sigv4`. After criterion's group it prints
//! a markdown line: microseconds per signature (best of several timed
//! batches) and allocations (a counting global allocator).

// criterion's macros generate undocumented items.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use agentstream_testkit::{allocations as allocations_so_far, CountingAllocator};
use agentstream_wire::bedrock::auth::sigv4::{sign, Credentials, SignableRequest, SigningParams};
use criterion::{criterion_group, Criterion};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn body() -> Vec<u8> {
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(90);
    format!(r#"{{"messages":[{{"role":"user","content":[{{"text":"{text}"}}]}}],"inferenceConfig":{{"maxTokens":1024}}}}"#)
        .into_bytes()
}

fn sign_once(credentials: &Credentials, body: &[u8]) -> usize {
    let headers = [
        ("host", "bedrock-runtime.us-east-1.amazonaws.com"),
        ("content-type", "application/json"),
        ("accept", "application/vnd.amazon.eventstream"),
        ("user-agent", "agentstream"),
    ];
    let params = SigningParams::new(credentials, "us-east-1", "bedrock", 1_796_537_109);
    let request = SignableRequest {
        method: "POST",
        path: "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream",
        query: "",
        headers: &headers,
        body,
    };
    match sign(&params, &request) {
        Ok(signed) => signed.headers().len(),
        Err(error) => panic!("{error}"),
    }
}

fn credentials() -> Credentials {
    Credentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
        session_token: Some("IQoJb3JpZ2luX2VjEXAMPLE//////////wEaCXVzLWVhc3QtMSJH+token==".into()),
    }
}

fn bench(c: &mut Criterion) {
    let (credentials, body) = (credentials(), body());
    c.bench_function("sigv4 sign one Bedrock request (4 KB body)", |b| {
        b.iter(|| sign_once(black_box(&credentials), black_box(&body)))
    });
}

criterion_group!(benches, bench);

fn summary() {
    let (credentials, body) = (credentials(), body());
    let before = allocations_so_far();
    assert_eq!(sign_once(&credentials, &body), 3);
    let allocations = allocations_so_far() - before;
    const BATCH: u32 = 1000;
    let best = (0..5)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..BATCH {
                black_box(sign_once(black_box(&credentials), black_box(&body)));
            }
            start.elapsed().as_secs_f64() / f64::from(BATCH)
        })
        .fold(f64::INFINITY, f64::min);
    println!(
        "| sigv4: sign one Bedrock request, {} B body | {:.1} µs (best of 5 × {BATCH}) | {allocations} allocations |",
        body.len(),
        best * 1e6
    );
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
