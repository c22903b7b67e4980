//! Record on miss: a replaying server given an upstream answers what its
//! cassettes match, and sends what they do not to the upstream, saving
//! the exchange in the replay directory so the next identical request
//! replays it.

use agentstream_serve::cassette::Match;
use agentstream_serve::{ServeTurn, Server};
use serde_json::{json, Value};

mod support;
use support::{names, temp_dir};

/// A Chat Completions call saying `text`: the status and the answer's
/// text.
async fn call(url: &str, text: &str, stream: bool) -> (u16, String) {
    call_as(url, None, text, stream).await
}

/// [`call`] under the test id `test`, if any.
async fn call_as(url: &str, test: Option<&str>, text: &str, stream: bool) -> (u16, String) {
    let body = json!({"model": "m", "stream": stream,
        "messages": [{"role": "user", "content": text}]});
    let mut request = reqwest::Client::new()
        .post(format!("{url}/chat/completions"))
        .header("content-type", "application/json");
    if let Some(test) = test {
        request = request.header("x-agentstream-test", test);
    }
    let response = request.body(body.to_string()).send().await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.bytes().await.unwrap();
    let text = if stream {
        // The text deltas of the SSE body.
        String::from_utf8_lossy(&bytes)
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str::<Value>(data).ok())
            .filter_map(|chunk| {
                chunk["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    } else {
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        body["choices"][0]["message"]["content"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    (status, text)
}

/// A scripted upstream answering `turns` in order, and a server replaying
/// the fresh directory `dir_name` that records its misses from that
/// upstream: (upstream, directory, server).
async fn recording(turns: &[&str], dir_name: &str) -> (Server, std::path::PathBuf, Server) {
    let turns = turns
        .iter()
        .map(|t| ServeTurn::from_value(json!(t)).unwrap());
    let upstream = Server::from_script(turns)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let dir = temp_dir(dir_name);
    let server = Server::replay(&dir, Match::Exact)
        .unwrap()
        .record_misses(upstream.url())
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    (upstream, dir, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misses_are_recorded_and_then_replayed() {
    let (upstream, dir, server) = recording(&["first", "second", "third"], "record-on-miss").await;
    let url = server.url();
    assert_eq!(call(&url, "a", false).await, (200, "first".into()));
    assert_eq!(upstream.calls(), 1);
    // The same request again: replayed, the upstream not asked.
    assert_eq!(call(&url, "a", false).await, (200, "first".into()));
    assert_eq!(upstream.calls(), 1);
    // A streamed one is another request: recorded, then replayed.
    assert_eq!(call(&url, "b", true).await, (200, "second".into()));
    assert_eq!(call(&url, "b", true).await, (200, "second".into()));
    assert_eq!(call(&url, "a", false).await, (200, "first".into()));
    assert_eq!(upstream.calls(), 2);
    assert_eq!(server.requests().len(), 5, "every call is in the log");
    assert_eq!(names(&dir), ["0000", "0001"]);
    server.shutdown().await;

    // A plain replay of the directory answers both without the upstream.
    let replay = support::replay(&dir).await;
    assert_eq!(call(&replay.url(), "b", true).await, (200, "second".into()));
    assert_eq!(
        call(&replay.url(), "c", false).await.0,
        400,
        "no cassette, no upstream: not retried"
    );
    replay.shutdown().await;
    upstream.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_ids_misses_are_recorded_into_its_own_subdirectory() {
    let (upstream, dir, server) = recording(&["first", "second"], "record-on-miss-test-id").await;
    let url = server.url();
    let t1 = Some("t1");
    assert_eq!(call_as(&url, t1, "a", false).await, (200, "first".into()));
    assert_eq!(names(&dir), ["t1"], "nothing recorded into DIR itself");
    assert_eq!(names(&dir.join("t1")), ["0000"]);
    // Replayed from DIR/t1, the upstream not asked again.
    assert_eq!(call_as(&url, t1, "a", false).await, (200, "first".into()));
    assert_eq!(upstream.calls(), 1);
    // Without the id the same request is not in DIR: a miss, recorded there.
    assert_eq!(call(&url, "a", false).await, (200, "second".into()));
    assert_eq!(upstream.calls(), 2);
    assert_eq!(names(&dir), ["0000", "t1"]);
    assert_eq!(names(&dir.join("t1")), ["0000"]);
    server.shutdown().await;
    upstream.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}
