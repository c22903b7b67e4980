//! Replay reads no body at startup and reads each body from disk when it
//! is played (issue 42, High 4: every body was held in memory from
//! startup): a large body streams from its file, and a file changed or
//! removed after startup is a clear error at play time, never a stale
//! answer. The first test measures the process's resident set
//! (`VmRSS`); the others hold little memory. Linux only.

#![cfg(target_os = "linux")]

use std::path::PathBuf;

use agentstream_serve::cassette::Match;
use agentstream_serve::Server;
use serde_json::json;

mod handwritten;
use handwritten::{resident, write_cassette};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "agentstream-replay-lazy-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A server replaying `dir`, matching the last message.
async fn replay(dir: &std::path::Path) -> Server {
    Server::replay(dir, Match::LastMessage)
        .unwrap()
        .bind("127.0.0.1:0")
        .await
        .unwrap()
}

/// The streamed Chat Completions call saying "Hi" (what
/// [`write_cassette`]'s cassettes answer).
async fn ask(server: &Server) -> reqwest::Response {
    let body =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "Hi"}]});
    reqwest::Client::new()
        .post(format!("{}/chat/completions", server.url()))
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

/// The status and the whole body of a call, or the error that broke the
/// body off.
async fn answer(server: &Server) -> (u16, Result<Vec<u8>, String>) {
    let answer = ask(server).await;
    let status = answer.status().as_u16();
    let body = answer
        .bytes()
        .await
        .map(|b| b.to_vec())
        .map_err(|e| format!("{e:?}"));
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_reads_no_body_and_a_large_one_streams_from_disk() {
    const BIG: u64 = 256 << 20;
    let dir = temp_dir("big");
    let cassette = write_cassette(&dir, "0000", Some(b""), None);
    // A sparse file: reading it costs memory, keeping it on disk none.
    std::fs::OpenOptions::new()
        .write(true)
        .open(cassette.join("response.body"))
        .unwrap()
        .set_len(BIG)
        .unwrap();
    let before = resident();
    let server = replay(&dir).await;
    let started = resident().saturating_sub(before);
    eprintln!("startup on a {BIG}-byte body: resident set grew {started} bytes");
    // Before: the whole body was read at startup.
    assert!(started < (BIG / 8) as usize, "{started} bytes at startup");

    // Played: the client reads 4 MiB of it and leaves.
    let mut answer = ask(&server).await;
    assert_eq!(answer.status(), 200);
    let mut got = 0usize;
    while got < 4 << 20 {
        let chunk = answer.chunk().await.unwrap().unwrap();
        assert!(chunk.iter().all(|b| *b == 0));
        got += chunk.len();
    }
    drop(answer);
    let played = resident().saturating_sub(before);
    assert!(played < (BIG / 8) as usize, "{played} bytes once played");
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A body larger than what is read whole plays byte for byte in its
/// pieces from disk; with lengths that do not add up it breaks off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_body_plays_as_recorded_and_bad_lengths_break_it_off() {
    let dir = temp_dir("streamed");
    let body: Vec<u8> = (0..3_000_000u32).map(|n| b'a' + (n % 26) as u8).collect();
    let lengths = "1000\n".repeat(3000);
    write_cassette(&dir, "0000", Some(&body), Some(&lengths));
    let server = replay(&dir).await;
    let (status, got) = answer(&server).await;
    assert_eq!(status, 200);
    assert!(got.unwrap() == body, "the body differs");
    server.shutdown().await;

    // One piece short: the recorded pieces go out, then the body breaks
    // off rather than ending as if complete.
    std::fs::write(
        dir.join("0000/response.body.lengths"),
        "1000\n".repeat(2999),
    )
    .unwrap();
    let server = replay(&dir).await;
    let (status, got) = answer(&server).await;
    assert_eq!(status, 200);
    assert!(
        got.is_err(),
        "a body whose lengths do not add up ended well"
    );
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each of a cassette's files changed or removed after startup is an
/// error at play time naming the file, also once its body was played
/// (and is kept in memory); small lengths that do not add up are one too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_after_startup_is_a_clear_error_when_played() {
    let dir = temp_dir("changed");
    let body = b"data: [DONE]\n\n";
    type Change<'a> = &'a dyn Fn(&std::path::Path);
    let cases: [(&str, Change); 5] = [
        ("response.body", &|c| {
            std::fs::write(c.join("response.body"), b"data: [NOPE]\n\n").unwrap()
        }),
        ("response.body", &|c| {
            std::fs::remove_file(c.join("response.body")).unwrap()
        }),
        ("response.body.lengths", &|c| {
            std::fs::write(c.join("response.body.lengths"), "7\n7\n").unwrap()
        }),
        ("response.json", &|c| {
            std::fs::write(c.join("response.json"), r#"{"status": 404}"#).unwrap()
        }),
        ("request.json", &|c| {
            std::fs::write(c.join("request.json"), "{}").unwrap()
        }),
    ];
    for (leaf, change) in cases {
        let _ = std::fs::remove_dir_all(&dir);
        let cassette = write_cassette(&dir, "0000", Some(body), Some("14\n"));
        let server = Server::replay(&dir, Match::LastMessage)
            .unwrap()
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        assert_eq!(answer(&server).await, (200, Ok(body.to_vec())));
        change(&cassette);
        let (status, got) = answer(&server).await;
        let text = String::from_utf8_lossy(&got.unwrap()).into_owned();
        assert_eq!(status, 500, "{leaf}: {text}");
        assert!(text.contains(&format!("0000/{leaf}")), "{leaf}: {text}");
        assert!(!text.contains("NOPE"), "{text}");
        server.shutdown().await;
    }

    // Lengths that do not add up, found when the body is first played.
    let _ = std::fs::remove_dir_all(&dir);
    write_cassette(&dir, "0000", Some(body), Some("3\n"));
    let server = replay(&dir).await;
    let (status, got) = answer(&server).await;
    let text = String::from_utf8_lossy(&got.unwrap()).into_owned();
    assert_eq!(status, 500, "{text}");
    assert!(text.contains("0000/response.body.lengths"), "{text}");
    assert!(text.contains("do not add up"), "{text}");
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
