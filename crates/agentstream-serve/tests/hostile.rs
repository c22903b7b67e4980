//! Hostile upstreams and hostile cassette directories: the recording
//! proxy never carries a key to another origin, replay never reads outside
//! its directory, and the recorder never writes outside its own or over
//! a cassette already there.

use std::path::PathBuf;

use agentstream_serve::cassette::{Cassette, Match};
use agentstream_serve::Server;
use agentstream_testkit::http::{MockServer, Reply};
use serde_json::json;

mod handwritten;
use handwritten::write_cassette;

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
        // Read to its end: the proxy's promise is that a client that has
        // read its answer finds the cassette complete (loading it while
        // the body is still being written read a half-written cassette).
        answer.bytes().await.unwrap();
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

/// Why replaying `dir` was refused.
fn refusal(dir: &std::path::Path) -> String {
    match Server::replay(dir, Match::Exact) {
        Ok(_) => panic!("{} was replayed", dir.display()),
        Err(error) => error.to_string(),
    }
}

/// Replay refuses, naming the file, a cassette whose body is a symlink to
/// a file outside the directory, whose directory is a symlink out of it,
/// or whose body is a FIFO (without blocking on it); a symlink that stays
/// inside is followed.
#[cfg(unix)]
#[test]
fn replay_reads_nothing_outside_its_directory() {
    use std::os::unix::fs::symlink;

    let root = temp_dir("hostile-replay");
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let secret = outside.join("secret");
    std::fs::write(&secret, b"data: outside-secret\n\n").unwrap();
    let dir = root.join("cassettes");

    // A body linked out by an absolute path, then by `..`.
    for target in [secret.clone(), PathBuf::from("../../outside/secret")] {
        let _ = std::fs::remove_dir_all(&dir);
        let cassette = write_cassette(&dir, "0000", None, None);
        symlink(&target, cassette.join("response.body")).unwrap();
        let message = refusal(&dir);
        assert!(message.contains("0000/response.body"), "{message}");
        assert!(message.contains("outside"), "{message}");
    }

    // The cassette's directory itself linked out.
    let _ = std::fs::remove_dir_all(&dir);
    write_cassette(&dir, "0000", Some(b"data: [DONE]\n\n"), None);
    write_cassette(
        &outside,
        "elsewhere",
        Some(b"data: outside-secret\n\n"),
        None,
    );
    symlink(outside.join("elsewhere"), dir.join("0001")).unwrap();
    let message = refusal(&dir);
    assert!(message.contains("0001/request.json"), "{message}");
    assert!(message.contains("outside"), "{message}");

    // A link that stays inside is followed.
    std::fs::remove_file(dir.join("0001")).unwrap();
    symlink("0000", dir.join("0001")).unwrap();
    let cassettes = Cassette::load_all(&dir).unwrap();
    assert_eq!(cassettes.len(), 2);
    assert_eq!(cassettes[1].body, b"data: [DONE]\n\n");

    // A FIFO: refused at once. The writer lets today's blocking read
    // finish (so a regression fails rather than hangs); refused without
    // blocking, the writer is left waiting or writes to no one.
    let _ = std::fs::remove_dir_all(&dir);
    let cassette = write_cassette(&dir, "0000", None, None);
    let fifo = cassette.join("response.body");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let writer = fifo.clone();
    std::thread::spawn(move || {
        use std::io::Write;
        if let Ok(mut pipe) = std::fs::OpenOptions::new().write(true).open(&writer) {
            let _ = pipe.write_all(b"data: from-a-fifo\n\n");
        }
    });
    let message = refusal(&dir);
    assert!(message.contains("0000/response.body"), "{message}");
    assert!(message.contains("FIFO"), "{message}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A streamed Chat Completions call saying `text` to `server`: its
/// answer, with status 200.
async fn ask(server: &Server, text: &str) -> reqwest::Response {
    let body =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": text}]});
    let answer = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.url()))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    answer
}

/// Records one Chat Completions call saying `text` through `proxy`.
async fn record(proxy: &Server, text: &str) {
    ask(proxy, text).await.bytes().await.unwrap();
}

/// What the recorded cassette `name` in `dir` asked.
fn asked(dir: &std::path::Path, name: &str) -> String {
    let request: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(name).join("request.json")).unwrap())
            .unwrap();
    request["context"]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The recorder writes nothing through a symlink planted in its directory,
/// numbers past the highest cassette (never over one), and two recorders
/// on one directory keep every cassette.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recorder_writes_only_new_cassettes_beneath_its_directory() {
    use agentstream_testkit::http::{answer_payloads, sse_body};
    use std::os::unix::fs::symlink;

    let upstream =
        MockServer::start(|_| Reply::sse(vec![sse_body(&answer_payloads(&[], &["ok"]))])).unwrap();
    let root = temp_dir("hostile-record");
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let dir = root.join("cassettes");
    std::fs::create_dir_all(&dir).unwrap();
    // Links planted where the next cassettes would go, to a directory
    // outside and to a file outside.
    symlink(&outside, dir.join("0000")).unwrap();
    std::fs::write(outside.join("file"), b"keep").unwrap();
    symlink(outside.join("file"), dir.join("0001")).unwrap();

    let proxy = Server::proxy(upstream.base_url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    for text in ["a", "b", "c"] {
        record(&proxy, text).await;
    }
    proxy.shutdown().await;
    assert_eq!(std::fs::read(outside.join("file")).unwrap(), b"keep");
    let written: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
    assert_eq!(written.len(), 1, "written outside: {written:?}");
    assert_eq!(
        ["0002", "0003", "0004"].map(|name| asked(&dir, name)),
        ["a", "b", "c"]
    );

    // A cassette deleted before the last: the next one goes after the
    // last, not over it.
    std::fs::remove_dir_all(dir.join("0003")).unwrap();
    let proxy = Server::proxy(upstream.base_url(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    record(&proxy, "d").await;
    proxy.shutdown().await;
    assert_eq!(asked(&dir, "0004"), "c");
    assert_eq!(asked(&dir, "0005"), "d");

    // Two recorders on one directory, started together, taking turns.
    let shared = root.join("shared");
    let first = Server::proxy(upstream.base_url(), &shared)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let second = Server::proxy(upstream.base_url(), &shared)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let texts: Vec<String> = (0..10).map(|k| format!("call {k}")).collect();
    for (k, text) in texts.iter().enumerate() {
        record(if k % 2 == 0 { &first } else { &second }, text).await;
    }
    first.shutdown().await;
    second.shutdown().await;
    let mut kept: Vec<String> = Cassette::load_all(&shared)
        .unwrap()
        .iter()
        .map(|c| asked(&shared, &c.name))
        .collect();
    kept.sort();
    let mut expected = texts.clone();
    expected.sort();
    assert_eq!(kept, expected);
    let _ = std::fs::remove_dir_all(&root);
}

/// `--match order` past 10,000 cassettes: `10000` comes after `9999`,
/// not before `1001` as a plain sort of the names has it.
#[test]
fn cassettes_play_in_the_order_of_their_numbers() {
    let dir = temp_dir("hostile-order");
    for name in ["1001", "9999", "10000"] {
        write_cassette(&dir, name, Some(b"data: [DONE]\n\n"), None);
    }
    let names: Vec<String> = Cassette::load_all(&dir)
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["1001", "9999", "10000"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The most an endless upstream writes before giving up on its own: the
/// proxy should have closed the connection long before.
const ENDLESS_CAP: usize = 256 << 20;

/// The first connection to `listener`, once its request (head and
/// `content-length` body) has been read.
fn accept_one_request(listener: &std::net::TcpListener) -> std::net::TcpStream {
    use std::io::{BufRead, BufReader, Read};
    let (stream, _) = listener.accept().unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap();
        }
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    stream
}

/// An upstream on 127.0.0.1 that answers one request with an endless
/// chunked body, and reports how many bytes it wrote and whether a write
/// failed (the proxy closed the connection) before [`ENDLESS_CAP`].
fn endless_upstream() -> (String, std::sync::mpsc::Receiver<(usize, bool)>) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let (report, reports) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut stream = accept_one_request(&listener);
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        stream.write_all(head.as_bytes()).unwrap();
        let event = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"more\"}}]}\n\n"
            .repeat(1000);
        let chunk = [format!("{:x}\r\n", event.len()).as_bytes(), &event, b"\r\n"].concat();
        let mut written = 0;
        while written < ENDLESS_CAP {
            if stream.write_all(&chunk).is_err() {
                let _ = report.send((written, true));
                return;
            }
            written += chunk.len();
        }
        let _ = report.send((written, false));
    });
    (origin, reports)
}

/// A client that leaves in the middle of an endless answer: the proxy
/// stops reading (and recording) it, rather than writing it to disk
/// forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_stops_recording_when_the_client_leaves() {
    let (origin, reports) = endless_upstream();
    let dir = temp_dir("hostile-endless");
    let proxy = Server::proxy(origin, &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let mut answer = ask(&proxy, "Hi").await;
    assert!(answer.chunk().await.unwrap().is_some());
    drop(answer);
    let (written, closed) = tokio::task::spawn_blocking(move || reports.recv().unwrap())
        .await
        .unwrap();
    assert!(
        closed,
        "the upstream wrote {written} bytes and the proxy was still reading"
    );
    proxy.shutdown().await;
    let recorded = std::fs::metadata(dir.join("0000/response.body"))
        .unwrap()
        .len();
    eprintln!("upstream wrote {written} bytes before the proxy closed it; {recorded} recorded");
    assert!((recorded as usize) < ENDLESS_CAP);
    // The client left before the end: the cassette says it was cut.
    assert_eq!(response_json(&dir.join("0000"))["cut"], true);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hand-edited `response.json` listing the connection's own headers
/// (`content-length`, `transfer-encoding`, `connection`): replay sends the
/// body whole, framed by the server, and keeps the other headers.
#[tokio::test]
async fn replay_drops_hop_by_hop_headers_of_a_cassette() {
    let dir = temp_dir("hostile-hop");
    let body: &[u8] = b"data: [DONE]\n\n";
    let cassette = write_cassette(&dir, "0000", Some(body), None);
    let headers = json!({"content-length": "3", "transfer-encoding": "gzip", "connection": "close",
                         "x-request-id": "req_1"});
    std::fs::write(
        cassette.join("response.json"),
        json!({"status": 200, "headers": headers}).to_string(),
    )
    .unwrap();
    let server = Server::replay(&dir, Match::Exact)
        .unwrap()
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let answer = ask(&server, "Hi").await;
    assert_eq!(answer.headers()["x-request-id"], "req_1");
    assert!(answer.headers().get("connection").is_none());
    assert_eq!(answer.bytes().await.unwrap(), body);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// An upstream that accepts the connection and never answers: the proxy
/// gives up after its upstream timeout with 504, instead of holding the
/// client forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_gives_up_on_a_silent_upstream() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let (held, holding) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Keeps the connection open, reads nothing, answers nothing.
        if let Ok((stream, _)) = listener.accept() {
            let _ = held.send(stream);
        }
    });
    let dir = temp_dir("hostile-silent");
    let proxy = Server::proxy(origin, &dir)
        .upstream_timeout(std::time::Duration::from_millis(200))
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let body =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "Hi"}]});
    let asked = reqwest::Client::new()
        .post(format!("{}/chat/completions", proxy.url()))
        .body(body.to_string())
        .send();
    // Only a guard against a hang: the answer comes after the 200 ms.
    let answer = tokio::time::timeout(std::time::Duration::from_secs(60), asked)
        .await
        .expect("the proxy held the client")
        .unwrap();
    assert_eq!(answer.status(), 504);
    let text = answer.text().await.unwrap();
    assert!(text.contains("did not answer within 200 ms"), "{text}");
    drop(holding);
    proxy.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Replay names every entry of its directory it passed over, and why: a
/// file, and a directory without a `request.json` (say a cassette whose
/// `request.json` was renamed), besides loading the real cassettes.
#[test]
fn replay_names_the_entries_it_did_not_load() {
    let dir = temp_dir("hostile-skipped");
    write_cassette(&dir, "0000", Some(b"data: [DONE]\n\n"), None);
    let renamed = write_cassette(&dir, "0001", Some(b"data: [DONE]\n\n"), None);
    std::fs::rename(
        renamed.join("request.json"),
        renamed.join("request.json.bak"),
    )
    .unwrap();
    std::fs::write(dir.join("README.md"), "notes").unwrap();
    let loaded = Cassette::load_dir(&dir).unwrap();
    assert_eq!(loaded.cassettes.len(), 1);
    let skipped: Vec<String> = loaded.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(
        skipped,
        ["0001: no request.json in it", "README.md: not a directory"]
    );
    let builder = Server::replay(&dir, Match::Exact).unwrap();
    assert_eq!(builder.skipped_cassettes(), loaded.skipped);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cassette's `response.json`.
fn response_json(cassette: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(cassette.join("response.json")).unwrap()).unwrap()
}

/// The first piece of the answer of an upstream whose chunked body breaks
/// off after it.
const BEFORE_THE_CUT: &[u8] =
    b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cut\"}}]}\n\n";

/// An upstream on 127.0.0.1 that answers one request with one chunk of a
/// chunked body, [`BEFORE_THE_CUT`], and then closes the connection
/// without the body's end.
fn cutting_upstream() -> String {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut stream = accept_one_request(&listener);
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        let chunk = [
            format!("{:x}\r\n", BEFORE_THE_CUT.len()).as_bytes(),
            BEFORE_THE_CUT,
            b"\r\n",
        ]
        .concat();
        stream
            .write_all(&[head.as_bytes(), &chunk].concat())
            .unwrap();
        stream.flush().unwrap();
        let _ = stream.shutdown(std::net::Shutdown::Both);
    });
    origin
}

/// The body of `answer` as far as it came, and whether it ended cleanly.
async fn read_all(mut answer: reqwest::Response) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    loop {
        match answer.chunk().await {
            Ok(Some(piece)) => body.extend_from_slice(&piece),
            Ok(None) => return (body, true),
            Err(_) => return (body, false),
        }
    }
}

/// An upstream body that breaks off: the client sees it break off, the
/// cassette is marked cut, and replay breaks it off again after the same
/// bytes instead of ending it as if complete. A cassette without the mark
/// (as every older one) plays complete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_exchange_is_recorded_and_replayed_cut() {
    let dir = temp_dir("hostile-cut");
    let proxy = Server::proxy(cutting_upstream(), &dir)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let (live, ended) = read_all(ask(&proxy, "Hi").await).await;
    assert_eq!((live.as_slice(), ended), (BEFORE_THE_CUT, false));
    proxy.shutdown().await;
    let cassette = dir.join("0000");
    let mut response = response_json(&cassette);
    assert_eq!(response["cut"], true, "{response}");

    let replayed = |dir: PathBuf| async move {
        let server = Server::replay(&dir, Match::Exact)
            .unwrap()
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        let answer = read_all(ask(&server, "Hi").await).await;
        server.shutdown().await;
        answer
    };
    assert_eq!(
        replayed(dir.clone()).await,
        (BEFORE_THE_CUT.to_vec(), false)
    );

    // Without the mark, the same cassette is complete.
    response.as_object_mut().unwrap().remove("cut");
    std::fs::write(cassette.join("response.json"), response.to_string()).unwrap();
    assert_eq!(replayed(dir.clone()).await, (BEFORE_THE_CUT.to_vec(), true));
    // And a mark that is not a boolean is refused, naming the file.
    response["cut"] = json!("yes");
    std::fs::write(cassette.join("response.json"), response.to_string()).unwrap();
    let message = refusal(&dir);
    assert!(message.contains("0000/response.json"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}
