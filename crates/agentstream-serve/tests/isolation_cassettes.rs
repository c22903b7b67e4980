//! Per-test cassettes: a recording proxy saves a test id's exchanges in
//! `DIR/<ID>`, a replay answers a test id from `DIR/<ID>` when it exists
//! (else from `DIR`), ids that cannot name a directory are refused, and
//! a symlink is never followed.

use agentstream_serve::{ServeTurn, Server, TEST_HEADER};
use serde_json::{json, Value};

mod support;
use support::names;

async fn call(url: &str, test: Option<&str>, text: &str) -> (u16, String) {
    let response = support::chat_call(&reqwest::Client::new(), url, test, text).await;
    let status = response.status().as_u16();
    let bytes = response.bytes().await.unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let text = body["choices"][0]["message"]["content"]
        .as_str()
        .or(body["error"]["message"].as_str())
        .unwrap_or("")
        .to_owned();
    (status, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_test_id_records_and_replays_its_own_subdirectory() {
    let turns = ["for t1", "for t2", "for none"].map(|t| ServeTurn::from_value(json!(t)).unwrap());
    let upstream = Server::from_script(turns)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let root =
        std::env::temp_dir().join(format!("agentstream-test-cassettes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("cassettes");
    let proxy = Server::proxy(upstream.url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    assert_eq!(
        call(&proxy.url(), Some("t1"), "q").await,
        (200, "for t1".into())
    );
    assert_eq!(
        call(&proxy.url(), Some("t2"), "q").await,
        (200, "for t2".into())
    );
    assert_eq!(
        call(&proxy.url(), None, "q").await,
        (200, "for none".into())
    );
    for bad in ["a/b", "..", "x..y", "a\\b", "."] {
        let (status, message) = call(&proxy.url(), Some(bad), "q").await;
        assert_eq!(status, 400, "{bad}");
        assert!(message.contains(TEST_HEADER), "{message}");
    }
    // A symlink in DIR is never followed to record elsewhere.
    #[cfg(unix)]
    {
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.join("evil")).unwrap();
        let (status, _) = call(&proxy.url(), Some("evil"), "q").await;
        assert_eq!(status, 500);
        assert!(names(&elsewhere).is_empty());
        // A replay refuses a directory holding a symlink as it always did.
        std::fs::remove_file(dir.join("evil")).unwrap();
    }
    proxy.shutdown().await;
    assert_eq!(
        upstream.calls(),
        3,
        "the bad ids never reached the upstream"
    );
    assert_eq!(names(&dir.join("t1")), ["0000"]);
    assert_eq!(names(&dir.join("t2")), ["0000"]);

    let replay = support::replay(&dir).await;
    let url = replay.url();
    assert_eq!(call(&url, Some("t1"), "q").await, (200, "for t1".into()));
    assert_eq!(call(&url, Some("t2"), "q").await, (200, "for t2".into()));
    // No subdirectory of its own: DIR's cassettes.
    assert_eq!(call(&url, Some("t3"), "q").await, (200, "for none".into()));
    assert_eq!(call(&url, None, "q").await, (200, "for none".into()));
    #[cfg(unix)]
    assert_eq!(
        call(&url, Some("evil"), "q").await,
        (200, "for none".into())
    );
    assert_eq!(call(&url, Some("a/b"), "q").await.0, 400);
    replay.shutdown().await;
    upstream.shutdown().await;
    std::fs::remove_dir_all(&root).unwrap();
}
