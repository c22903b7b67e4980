//! `--redact REGEX` on a recording proxy: the matches never reach a
//! cassette or the request log (neither its file nor `GET /v1/requests`,
//! raw or decoded), and Gemini's `?key=` never does either.

mod support;
use support::{everything, get_bytes, piecewise_upstream, post_json, temp_dir};

use agentstream_serve::cassette::{Redactor, REDACTED_BODY};
use agentstream_serve::{ServeTurn, Server};
use serde_json::json;

fn holds(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redacted_text_and_query_keys_reach_no_cassette_and_no_log() {
    let turns = ["Your password hunter2 is safe.", "Noted hunter2 again."]
        .map(|t| ServeTurn::from_value(json!(t)).unwrap());
    let upstream = Server::from_script(turns)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let dir = temp_dir("redaction");
    let cassettes = dir.join("cassettes");
    let log = dir.join("requests.jsonl");
    let proxy = Server::proxy(upstream.url(), &cassettes)
        .redact(Redactor::new(["hunter[0-9]", "acct-[0-9]{4}"]).unwrap())
        .requests_file(&log)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let origin = proxy.url().trim_end_matches("/v1").to_owned();
    let client = reqwest::Client::new();
    // Gemini, streamed, with its key in the query.
    let gemini = client
        .post(format!(
            "{origin}/v1beta/models/m:streamGenerateContent?alt=sse&key=SECRET"
        ))
        .header("content-type", "application/json")
        .body(
            json!({"contents": [{"role": "user", "parts": [{"text": "my password is hunter2, account acct-1234"}]}]})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(gemini.status(), 200);
    // The client gets the answer unchanged.
    assert!(holds(&gemini.bytes().await.unwrap(), "hunter2"));
    // Chat Completions, not streamed.
    let chat = client
        .post(format!("{}/chat/completions", proxy.url()))
        .header("content-type", "application/json")
        .body(
            json!({"model": "m", "messages": [{"role": "user", "content": "acct-9876 hunter3"}]})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert!(holds(&chat.bytes().await.unwrap(), "hunter2"));
    let listed = |raw: &'static str| {
        let url = proxy.url();
        async move { get_bytes(&format!("{url}/requests{raw}")).await }
    };
    let (decoded, raw) = (listed("").await, listed("?raw=1").await);
    proxy.shutdown().await;
    upstream.shutdown().await;

    let written = everything(&cassettes);
    let file = std::fs::read(&log).unwrap();
    for (name, bytes) in [
        ("cassettes", &written[..]),
        ("the log file", &file[..]),
        ("GET /v1/requests", &decoded[..]),
        ("GET /v1/requests?raw=1", &raw[..]),
    ] {
        for secret in ["SECRET", "hunter2", "hunter3", "acct-1234", "acct-9876"] {
            assert!(!holds(bytes, secret), "{secret} reached {name}");
        }
    }
    assert!(
        holds(&written, REDACTED_BODY),
        "the cassettes say what was redacted"
    );
    assert!(
        holds(&raw, REDACTED_BODY),
        "the raw log says what was redacted"
    );
    assert!(holds(&file, REDACTED_BODY));
    // Two cassettes, their lengths matching the redacted bodies (they load).
    let loaded = agentstream_serve::cassette::Cassette::load_all(&cassettes).unwrap();
    assert_eq!(loaded.len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A secret an upstream sends one byte per network piece: no piece holds
/// it whole, yet it never reaches the cassette, which keeps one piece for
/// each byte that arrived (their lengths changed by the replacement) and
/// replays the redacted stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_split_across_one_byte_pieces_never_reaches_the_cassette() {
    let stream = concat!(
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",",
        "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",",
        "\"content\":\"Your password hunter2 is safe.\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",",
        "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let (origin, _received) = piecewise_upstream(
        move |_| ("text/event-stream", stream.as_bytes().to_vec()),
        1,
    );
    let dir = temp_dir("redaction-pieces");
    let proxy = Server::proxy(origin, &dir)
        .redact(Redactor::new(["hunter[0-9]"]).unwrap())
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let body = json!({"model": "m", "stream": true,
        "messages": [{"role": "user", "content": "my password?"}]});
    let chat = |server: &Server| format!("{}/chat/completions", server.url());
    let answer = post_json(&chat(&proxy), body.to_string()).await;
    // The client gets the answer unchanged.
    assert_eq!(answer.bytes().await.unwrap(), stream.as_bytes());
    proxy.shutdown().await;

    let cassette = dir.join("0000");
    let recorded = std::fs::read(cassette.join("response.body")).unwrap();
    assert!(
        !holds(&everything(&dir), "hunter2"),
        "the secret was recorded"
    );
    let expected = stream.replace("hunter2", REDACTED_BODY);
    assert_eq!(recorded, expected.as_bytes());
    let lengths = std::fs::read_to_string(cassette.join("response.body.lengths")).unwrap();
    let times = std::fs::read_to_string(cassette.join("response.body.times")).unwrap();
    assert_eq!(
        lengths.lines().count(),
        stream.len(),
        "one piece per byte sent"
    );
    assert_eq!(times.lines().count(), stream.len());

    // It replays, redacted.
    let replay = Server::replay(&dir, agentstream_serve::cassette::Match::Exact)
        .unwrap()
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let replayed = post_json(&chat(&replay), body.to_string()).await;
    assert_eq!(replayed.bytes().await.unwrap(), expected.as_bytes());
    replay.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}
