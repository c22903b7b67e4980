//! Our own clients pointed at a server, for the tests and the bench.

// Each test binary that includes this module uses its part.
#![allow(dead_code)]

use std::sync::Arc;

use agentstream::model::Model;
use agentstream_serve::cassette::Match;
use agentstream_serve::{Server, TEST_HEADER};
use agentstream_tokio::{AnthropicModel, OpenAiCompatModel};
use agentstream_wire::anthropic::AnthropicConfig;
use agentstream_wire::openai::OpenAiConfig;
use serde_json::json;

/// A protocol the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    OpenAi,
    Anthropic,
}

/// A client of `server`.
pub type Client = Arc<dyn Model + Send + Sync>;

/// Our client for `protocol`, pointed at `server` (`OpenAiCompatModel`
/// takes the `/v1` base URL, `AnthropicModel` the address before it).
pub fn client(protocol: Protocol, server: &Server) -> Client {
    let url = server.url();
    match protocol {
        Protocol::OpenAi => {
            Arc::new(OpenAiCompatModel::new(OpenAiConfig::new(url, "gpt-test")).unwrap())
        }
        Protocol::Anthropic => Arc::new(
            AnthropicModel::new(
                AnthropicConfig::new("claude-test").with_base_url(url.trim_end_matches("/v1")),
            )
            .unwrap(),
        ),
    }
}

/// POSTs `body` to `url` as JSON.
pub async fn post_json(url: &str, body: impl Into<reqwest::Body>) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
}

/// The body of a GET of `url`.
pub async fn get_bytes(url: &str) -> Vec<u8> {
    reqwest::Client::new()
        .get(url)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap()
        .to_vec()
}

/// POSTs a Chat Completions request (not streamed) saying `text` to
/// `url/chat/completions` with `client`, under the test id `test` if any.
pub async fn chat_call(
    client: &reqwest::Client,
    url: &str,
    test: Option<&str>,
    text: &str,
) -> reqwest::Response {
    let body = json!({"model": "m", "messages": [{"role": "user", "content": text}]});
    let mut request = client
        .post(format!("{url}/chat/completions"))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(test) = test {
        request = request.header(TEST_HEADER, test);
    }
    request.send().await.unwrap()
}

/// A fresh, empty directory under the system's temporary directory for
/// the test `name` (of this process).
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("agentstream-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The names in `dir`, sorted.
pub fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every byte of every file under `dir`.
pub fn everything(dir: &std::path::Path) -> Vec<u8> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all.extend(everything(&path));
        } else {
            all.extend(std::fs::read(&path).unwrap());
        }
    }
    all
}

/// A server on 127.0.0.1 replaying the cassettes in `dir`, matched
/// exactly.
pub async fn replay(dir: &std::path::Path) -> Server {
    Server::replay(dir, Match::Exact)
        .unwrap()
        .bind("127.0.0.1:0")
        .await
        .unwrap()
}

/// The path of a request log `requests.jsonl`, absent, in a directory of
/// its own for the test `name` (of this process).
pub fn requests_file(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("agentstream-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("requests.jsonl");
    let _ = std::fs::remove_file(&path);
    path
}

/// One request as a [`piecewise_upstream`] received it.
#[derive(Debug, Clone)]
pub struct Received {
    /// The request line: `POST /path?query HTTP/1.1`.
    pub line: String,
    /// Its headers, names in lower case, values trimmed.
    pub headers: Vec<(String, String)>,
}

impl Received {
    /// The value of header `name` (lower case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An upstream on 127.0.0.1 (its origin is returned): every request gets
/// status 200 with the content type and body `answer` gives for its
/// request line, the body sent as chunks of at most `piece` bytes, each
/// written on its own (a chunk of the chunked encoding, so that the proxy
/// reads each as a piece of its own), then the connection is closed.
/// Each request received is sent on the returned channel.
pub fn piecewise_upstream(
    answer: impl Fn(&str) -> (&'static str, Vec<u8>) + Send + 'static,
    piece: usize,
) -> (String, std::sync::mpsc::Receiver<Received>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let (report, reports) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            stream.set_nodelay(true).unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let mut received = Received {
                line: line.trim_end().to_owned(),
                headers: Vec::new(),
            };
            let mut length = 0usize;
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                if header == "\r\n" || header.is_empty() {
                    break;
                }
                if let Some((name, value)) = header.split_once(':') {
                    let name = name.trim().to_ascii_lowercase();
                    if name == "content-length" {
                        length = value.trim().parse().unwrap();
                    }
                    received.headers.push((name, value.trim().to_owned()));
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let (content_type, bytes) = answer(&received.line);
            let _ = report.send(received);
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\n\
                 transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            );
            let _ = stream.write_all(head.as_bytes());
            for chunk in bytes.chunks(piece.max(1)) {
                let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
                if stream.write_all(&framed).is_err() {
                    break;
                }
            }
            let _ = stream.write_all(b"0\r\n\r\n");
        }
    });
    (origin, reports)
}
