//! Replay holds one copy of a cassette's body, shared by every request
//! that plays it: stalled clients cost what is in flight, not a copy of
//! the body each (issue 42: a 1 GiB cassette with 4 stalled clients used
//! 5.25 GB). Measured with the process's resident set (`VmRSS`), so this
//! binary holds this one test only. Linux only.

#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::net::TcpStream;

use agentstream_serve::cassette::Match;
use agentstream_serve::Server;
use serde_json::json;

mod handwritten;
use handwritten::{resident, write_cassette};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_clients_share_one_copy_of_the_body() {
    const BODY: usize = 32 << 20;
    const PIECE: usize = 4096;
    const CLIENTS: usize = 4;
    let dir =
        std::env::temp_dir().join(format!("agentstream-replay-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let lengths = format!("{PIECE}\n").repeat(BODY / PIECE);
    write_cassette(&dir, "0000", Some(&vec![b'x'; BODY]), Some(&lengths));

    let server = Server::replay(&dir, Match::LastMessage)
        .unwrap()
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let address = server.url();
    let address = address
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_owned();
    let before = resident();
    // Each client sends its request, reads the answer's head (so the
    // server has started its answer) and then nothing more.
    let stalled = tokio::task::spawn_blocking(move || {
        let body = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "Hi"}]})
            .to_string();
        (0..CLIENTS)
            .map(|_| {
                let mut client = TcpStream::connect(&address).unwrap();
                write!(
                    client,
                    "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
                let mut head = Vec::new();
                let mut byte = [0u8];
                while !head.ends_with(b"\r\n\r\n") {
                    client.read_exact(&mut byte).unwrap();
                    head.push(byte[0]);
                }
                assert!(head.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&head));
                client
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let grown = resident().saturating_sub(before);
    eprintln!(
        "{CLIENTS} stalled clients on a {BODY}-byte body in {PIECE}-byte pieces: resident set grew {grown} bytes"
    );
    // Before: a copy of the body per request (4 x 32 MiB).
    assert!(grown < BODY, "{grown} bytes for {CLIENTS} stalled clients");
    drop(stalled);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
