//! Hostile upstreams and hostile cassette directories: the recording
//! proxy never carries a key to another origin, replay never reads outside
//! its directory, and the recorder never writes outside its own or over
//! a cassette already there.

use std::path::PathBuf;

use agentstream_serve::cassette::Cassette;
use agentstream_serve::Server;
use agentstream_testserver::{MockServer, Reply};
use serde_json::json;

const SECRET: &str = "sk-hostile-secret-0123456789";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentstream-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// An upstream that redirects every request to another origin: the proxy
/// passes the redirect to the client and records it as it is; the other
/// origin is never asked, so none of the keys (headers, `?key=`, a
/// `Referer`) reaches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_does_not_follow_redirects() {
    let other = MockServer::start(|_| Reply::json(200, &[], &json!({"stolen": true}))).unwrap();
    let target = other.origin();
    let upstream = MockServer::start(move |request| {
        let path = request.path.split('?').next().unwrap_or("/");
        let location = format!("{target}{path}");
        Reply::json(307, &[("location", location.as_str())], &json!({}))
    })
    .unwrap();
    let dir = temp_dir("hostile-redirect");
    let proxy = Server::proxy(upstream.base_url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let origin = proxy.url();
    let origin = origin.trim_end_matches("/v1");
    let routes = [
        ("/v1/chat/completions", json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "Hi"}]})),
        ("/v1/messages", json!({"model": "m", "max_tokens": 9, "stream": true, "messages": [{"role": "user", "content": "Hi"}]})),
        ("/v1beta/models/gemini-test:streamGenerateContent?alt=sse&key=sk-hostile-secret-0123456789",
         json!({"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]})),
    ];
    for (path, body) in &routes {
        let answer = client
            .post(format!("{origin}{path}"))
            .header("authorization", format!("Bearer {SECRET}"))
            .header("x-api-key", SECRET)
            .header("x-goog-api-key", SECRET)
            .header("api-key", SECRET)
            .header("x-custom-secret", SECRET)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 307, "{path}");
        let location = answer.headers()["location"].to_str().unwrap().to_owned();
        assert!(location.starts_with(&other.origin()), "{location}");
    }
    proxy.shutdown().await;
    assert_eq!(upstream.requests().len(), routes.len());
    assert!(
        other.requests().is_empty(),
        "the other origin was asked: {:?}",
        other.requests()
    );
    // Recorded as they are: the redirect, not the other origin's answer.
    let cassettes = Cassette::load_all(&dir).unwrap();
    assert_eq!(cassettes.len(), routes.len());
    for cassette in &cassettes {
        assert_eq!(cassette.status, 307, "{}", cassette.name);
        assert!(cassette
            .headers
            .iter()
            .any(|(name, value)| name == "location" && value.starts_with(&other.origin())));
        assert!(!String::from_utf8_lossy(&cassette.body).contains("stolen"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
