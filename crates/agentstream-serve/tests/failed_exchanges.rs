//! Failed exchanges are cassettes too: the proxy records an HTTP error
//! answer, a stream that ends in the provider's error event and a stream
//! cut mid-body, each with its status, headers, pieces and their arrival
//! times; replay answers each the same way, at any speed.

mod support;
use support::temp_dir;

use std::path::Path;

use agentstream_serve::cassette::{Cassette, Match};
use agentstream_serve::{ServeTurn, Server};
use serde_json::{json, Value};

/// What a client saw of one call.
#[derive(Debug, PartialEq)]
struct Seen {
    status: u16,
    retry_after: Option<String>,
    body: Vec<u8>,
    /// Whether the body broke off (an error reading it).
    cut: bool,
}

/// A streamed Chat Completions call saying `text`.
async fn call(url: &str, text: &str) -> Seen {
    let body = json!({"model": "m", "stream": true,
        "messages": [{"role": "user", "content": text}]});
    let mut response = reqwest::Client::new()
        .post(format!("{url}/chat/completions"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let mut bytes = Vec::new();
    let cut = loop {
        match response.chunk().await {
            Ok(Some(piece)) => bytes.extend_from_slice(&piece),
            Ok(None) => break false,
            Err(_) => break true,
        }
    };
    Seen {
        status,
        retry_after,
        body: bytes,
        cut,
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The lines of a sidecar file.
fn lines(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_error_events_and_cuts_are_recorded_and_replayed_alike() {
    let script = [
        json!({"httpError": {"status": 429, "message": "slow down", "retryAfter": 7}}),
        json!({"turn": "hello there friend", "streamError": {"message": "overloaded"}, "afterEvents": 2}),
        json!({"turn": "cut me off here please", "cutAfterEvents": 2}),
    ]
    .map(|v| ServeTurn::from_value(v).unwrap());
    let upstream = Server::from_script(script)
        .chunks(3)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let dir = temp_dir("failed-exchanges");
    let proxy = Server::proxy(upstream.url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let mut live = Vec::new();
    for text in ["a", "b", "c"] {
        live.push(call(&proxy.url(), text).await);
    }
    proxy.shutdown().await;
    upstream.shutdown().await;

    // What the client got live.
    assert_eq!(live[0].status, 429);
    assert_eq!(live[0].retry_after.as_deref(), Some("7"));
    assert!(String::from_utf8_lossy(&live[0].body).contains("slow down"));
    assert_eq!((live[1].status, live[1].cut), (200, false));
    assert!(String::from_utf8_lossy(&live[1].body).contains("overloaded"));
    assert_eq!((live[2].status, live[2].cut), (200, true));

    // What the cassettes hold.
    let head = |k: &str| read_json(&dir.join(k).join("response.json"));
    assert_eq!(head("0000")["status"], 429);
    assert_eq!(head("0000")["headers"]["retry-after"], "7");
    assert_eq!(head("0001")["status"], 200);
    assert_eq!(head("0001").get("cut"), None);
    assert_eq!(head("0002")["cut"], true);
    for (k, seen) in ["0000", "0001", "0002"].iter().zip(&live) {
        let cassette = dir.join(k);
        assert_eq!(
            std::fs::read(cassette.join("response.body")).unwrap(),
            seen.body
        );
        let lengths = lines(&cassette.join("response.body.lengths"));
        let times = lines(&cassette.join("response.body.times"));
        assert_eq!(times.len(), lengths.len(), "{k}: a time per piece");
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{k}: {times:?}");
    }
    assert!(lines(&dir.join("0001/response.body.lengths")).len() > 1);
    let cassette = Cassette::load(&dir.join("0001")).unwrap();
    assert_eq!(
        cassette.times.as_ref().map(Vec::len),
        Some(cassette.lengths.count())
    );

    // Replayed at the recorded pace and as fast as possible: the same
    // answers, errors and cut included.
    for speed in [1.0, 0.0, 2.0] {
        let replay = Server::replay(&dir, Match::Exact)
            .unwrap()
            .replay_speed(speed)
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        for (text, seen) in ["a", "b", "c"].iter().zip(&live) {
            assert_eq!(
                &call(&replay.url(), text).await,
                seen,
                "speed {speed}, {text}"
            );
        }
        replay.shutdown().await;
    }

    // A cassette without arrival times (recorded before they were) still
    // loads and replays, paced or not.
    std::fs::remove_file(dir.join("0001/response.body.times")).unwrap();
    assert_eq!(Cassette::load(&dir.join("0001")).unwrap().times, None);
    let replay = Server::replay(&dir, Match::Exact)
        .unwrap()
        .replay_speed(1.0)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    assert_eq!(call(&replay.url(), "b").await, live[1]);
    replay.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}
