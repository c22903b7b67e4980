//! The memory of decoding a request whose messages hold content blocks
//! (Anthropic's usual shape) or strings (Chat Completions'): reading the
//! body keeps the generic JSON tree of one message's content at a time at
//! most, never that of every message at once, which is what decoding
//! through a `serde_json::Value` of the whole body costs. Measured as the
//! peak of live heap bytes with a counting allocator (exact, unlike the
//! resident set, which keeps what the allocator freed).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use agentstream_wire::anthropic::decode as anthropic;
use agentstream_wire::openai::decode as openai;
use agentstream_wire::server::{ApiError, DecodedRequest};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; the
// counters only observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `alloc` above with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

type Decode = fn(&[u8]) -> Result<DecodedRequest, ApiError>;

/// The peak of live bytes above those before while `decode` runs on
/// `body` and its result is alive, and the result's own live bytes.
fn peak_and_kept(decode: &dyn Fn(&[u8]) -> DecodedRequest, body: &[u8]) -> (usize, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let decoded = decode(body);
    let kept = LIVE.load(Ordering::Relaxed) - before;
    let peak = PEAK.load(Ordering::Relaxed) - before;
    drop(decoded);
    (peak, kept)
}

/// Decoding `body` (of `messages` messages) from its bytes peaks at no
/// more than the decoded request plus `slack` times the body, while the
/// path through a whole `Value` peaks well above that.
fn holds_no_whole_tree(
    decode_body: Decode,
    decode_value: fn(&serde_json::Value) -> Result<DecodedRequest, ApiError>,
    body: &str,
    messages: usize,
) {
    let via_body = |body: &[u8]| decode_body(body).unwrap();
    let via_value = |body: &[u8]| {
        let value: serde_json::Value = serde_json::from_slice(body).unwrap();
        decode_value(&value).unwrap()
    };
    let (peak, kept) = peak_and_kept(&via_body, body.as_bytes());
    let (value_peak, _) = peak_and_kept(&via_value, body.as_bytes());
    assert_eq!(
        decode_body(body.as_bytes()).unwrap().context.messages.len(),
        messages
    );
    let over = (peak - kept) as f64 / body.len() as f64;
    let tree = (value_peak - kept) as f64 / body.len() as f64;
    eprintln!(
        "body {} bytes: the decoded request {:.1}x it; decoding peaks {over:.2}x the body above that, {tree:.2}x through a Value",
        body.len(),
        kept as f64 / body.len() as f64,
    );
    // Besides the result: the body's messages as read (a few words each,
    // in a list that grows by doubling) and one message's tree, never
    // every message's (holding each message's content tree from the
    // parse on held 6.4x for the blocks here).
    assert!(
        over < 5.0,
        "decoding held {over:.2}x the body besides its result"
    );
    assert!(
        over < tree / 2.0,
        "decoding held {over:.2}x the body, a Value {tree:.2}x"
    );
}

#[test]
fn decoding_holds_no_tree_of_every_message() {
    let blocks = r#"{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"text","text":"yo"}]}"#;
    let body = format!(
        r#"{{"model":"m","max_tokens":8,"messages":[{}]}}"#,
        vec![blocks; 50_000].join(",")
    );
    holds_no_whole_tree(
        anthropic::decode_body,
        anthropic::decode_request,
        &body,
        100_000,
    );
    let strings = r#"{"role":"user","content":"hi"},{"role":"assistant","content":"yo","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"ok"}"#;
    let body = format!(
        r#"{{"model":"m","messages":[{}]}}"#,
        vec![strings; 30_000].join(",")
    );
    holds_no_whole_tree(openai::decode_body, openai::decode_request, &body, 90_000);
}
