//! `agentstream cassette ls` and `cassette diff` on cassettes recorded
//! through the proxy (in front of a scripted server).

use std::path::PathBuf;

use agentstream_serve::{ServeTurn, Server};
use serde_json::{json, Value};

#[path = "support/run.rs"]
mod run_support;
use run_support::{run, text};

fn chat(text: &str, stream: bool) -> Value {
    json!({"model": "gpt-test", "stream": stream, "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": text}]})
}

/// POSTs `body` to `path` at `address` over a plain connection and
/// reads the answer to its end.
async fn post(address: &str, path: &str, body: &str) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    assert!(
        answer.starts_with(b"HTTP/1.1 "),
        "{}",
        String::from_utf8_lossy(&answer)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ls_lists_and_diff_names_the_closest_with_every_difference() {
    let tmp: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "cassette-cmd"]
        .iter()
        .collect();
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let dir = tmp.join("cassettes");
    let turns = ["Sunny.", "Rainy."].map(|t| ServeTurn::from_value(json!(t)).unwrap());
    let script = [json!({"httpError": {"status": 429, "message": "slow down"}})]
        .map(|v| ServeTurn::from_value(v).unwrap());
    let upstream = Server::from_script(turns.into_iter().chain(script))
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let proxy = Server::proxy(upstream.url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let bodies = [
        ("/v1/chat/completions", chat("Weather in Paris?", true)),
        ("/v1/chat/completions", chat("Weather in Rome?", false)),
        (
            "/v1/messages",
            json!({"model": "claude-test", "max_tokens": 50,
                   "messages": [{"role": "user", "content": "Weather in Oslo?"}]}),
        ),
    ];
    let address = proxy
        .url()
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_owned();
    for (path, body) in &bodies {
        post(&address, path, &body.to_string()).await;
    }
    proxy.shutdown().await;
    upstream.shutdown().await;
    let dir_text = dir.display().to_string();

    let o = run(&["cassette", "ls", &dir_text]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "0000  openai-completions  gpt-test  200  stream  Weather in Paris?\n\
         0001  openai-completions  gpt-test  200  whole  Weather in Rome?\n\
         0002  anthropic-messages  claude-test  429  whole  Weather in Oslo?\n"
    );
    let o = run(&["cassette", "ls", "--json", &dir_text]);
    let first: Value = serde_json::from_str(text(&o.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(
        first,
        json!({"name": "0000", "api": "openai-completions", "model": "gpt-test", "status": 200,
               "stream": true, "cut": false, "firstUserText": "Weather in Paris?"})
    );

    // The same request matches exactly; a changed one names the closest
    // and each difference.
    let same = run_support::file(
        "cassette-cmd",
        "same.json",
        chat("Weather in Rome?", false).to_string(),
    );
    let o = run(&["cassette", "diff", &dir_text, same.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "0001: matches exactly\n");
    let mut changed = chat("Weather in Rome!", true);
    changed["messages"][0]["content"] = json!("Be long.");
    let changed = run_support::file("cassette-cmd", "changed.json", changed.to_string());
    let o = run(&["cassette", "diff", &dir_text, changed.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("closest: 000"), "{out}");
    assert!(
        out.contains("$.messages[0].content: cassette \"Weather in "),
        "{out}"
    );
    assert!(
        out.contains("$.systemPrompt: cassette \"Be brief.\" | request \"Be long.\""),
        "{out}"
    );
    // Anthropic, told by its shape.
    let oslo = run_support::file(
        "cassette-cmd",
        "oslo.json",
        json!({"model": "claude-test", "max_tokens": 50,
               "messages": [{"role": "user", "content": "Weather in Oslo?"}]})
        .to_string(),
    );
    let o = run(&["cassette", "diff", &dir_text, oslo.to_str().unwrap()]);
    assert_eq!(text(&o.stdout), "0002: matches exactly\n");

    // Unreadable inputs: exit 2 with one message.
    let missing = tmp.join("missing").display().to_string();
    for args in [
        vec!["cassette", "ls", &missing],
        vec!["cassette", "diff", &missing, same.to_str().unwrap()],
        vec!["cassette", "diff", &dir_text, &missing],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = text(&o.stderr);
        assert!(
            err.starts_with("agentstream cassette: error: ") && err.contains("missing"),
            "{err}"
        );
    }
    let junk = run_support::file("cassette-cmd", "junk.json", "{\"hello\": 1}");
    let o = run(&["cassette", "diff", &dir_text, junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("pass --api"),
        "{}",
        text(&o.stderr)
    );
}
