//! The mock server: a hand-written HTTP/1.1 server on `127.0.0.1`, one
//! thread per connection, recording every request and answering with what
//! the test's handler returns (see the [module documentation](super)).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use agentstream_wire::sse::encode_comment;
use serde_json::Value;

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    /// The method, such as `POST`.
    pub method: String,
    /// The request target, such as `/v1/chat/completions`.
    pub path: String,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// The first header called `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON (`Value::Null` if it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// How an SSE body ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyEnd {
    /// The chunked body is terminated properly.
    Complete,
    /// The connection is closed without terminating the body.
    Disconnect,
    /// Nothing more is sent, but the connection stays open until the
    /// client goes away or the server stops.
    Hang,
    /// A `: keep-alive` comment every period, forever (until the client
    /// goes away or the server stops).
    KeepAlive(Duration),
    /// This piece, again and again, until the client goes away (a write
    /// fails) or the server stops: a hostile server's endless body.
    Endless(Vec<u8>),
}

/// What the server answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A streamed body.
    Sse {
        /// The status (normally 200).
        status: u16,
        /// The `Content-Type`.
        content_type: String,
        /// The body, written piece by piece (each its own HTTP chunk).
        pieces: Vec<Vec<u8>>,
        /// A pause after each piece.
        delay: Duration,
        /// How the body ends.
        end: BodyEnd,
    },
    /// A complete response with `Content-Length`.
    Fixed {
        /// The status.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// The `Content-Type`.
        content_type: String,
        /// The body.
        body: Vec<u8>,
    },
}

impl Reply {
    /// A 200 `text/event-stream` reply of `pieces` that ends cleanly.
    pub fn sse(pieces: Vec<Vec<u8>>) -> Self {
        Self::Sse {
            status: 200,
            content_type: "text/event-stream".into(),
            pieces,
            delay: Duration::ZERO,
            end: BodyEnd::Complete,
        }
    }

    /// Sets the pause after each piece of an SSE reply.
    pub fn with_delay(mut self, pause: Duration) -> Self {
        if let Self::Sse { delay, .. } = &mut self {
            *delay = pause;
        }
        self
    }

    /// Sets how an SSE reply ends.
    pub fn with_end(mut self, how: BodyEnd) -> Self {
        if let Self::Sse { end, .. } = &mut self {
            *end = how;
        }
        self
    }

    /// A JSON reply with `status` and the extra `headers`.
    pub fn json(status: u16, headers: &[(&str, &str)], body: &Value) -> Self {
        Self::Fixed {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            content_type: "application/json".into(),
            body: body.to_string().into_bytes(),
        }
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync + 'static;

/// The server. See the [crate documentation](crate).
pub struct MockServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<Request>>>,
    accept: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Starts a server on a free port of 127.0.0.1 that answers every
    /// request with `handler`.
    ///
    /// # Errors
    /// When no port can be bound.
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let accept = {
            let stop = Arc::clone(&stop);
            let requests = Arc::clone(&requests);
            thread::spawn(move || {
                for connection in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(connection) = connection else { continue };
                    let stop = Arc::clone(&stop);
                    let requests = Arc::clone(&requests);
                    let handler = Arc::clone(&handler);
                    thread::spawn(move || {
                        let _ = serve(connection, &*handler, &requests, &stop);
                    });
                }
            })
        };
        Ok(Self {
            addr,
            stop,
            requests,
            accept: Some(accept),
        })
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A base URL for the adapters: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The server's origin, `http://127.0.0.1:PORT`: a base URL that means
    /// the same as [`base_url`](Self::base_url) for every provider.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Reads one request, answers it and closes the connection.
fn serve(
    stream: TcpStream,
    handler: &Handler,
    requests: &Mutex<Vec<Request>>,
    stop: &AtomicBool,
) -> io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let request = Request {
        method,
        path,
        headers,
        body,
    };
    let reply = handler(&request);
    if let Ok(mut requests) = requests.lock() {
        requests.push(request);
    }
    let mut out = stream.try_clone()?;
    match reply {
        Reply::Fixed {
            status,
            headers,
            content_type,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
                reason(status),
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            out.write_all(head.as_bytes())?;
            out.write_all(&body)?;
            out.flush()?;
        }
        Reply::Sse {
            status,
            content_type,
            pieces,
            delay,
            end,
        } => {
            let head = format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
                reason(status)
            );
            out.write_all(head.as_bytes())?;
            out.flush()?;
            for piece in pieces {
                if stop.load(Ordering::SeqCst) {
                    return Ok(());
                }
                write_chunk(&mut out, &piece)?;
                if !delay.is_zero() {
                    thread::sleep(delay);
                }
            }
            match end {
                BodyEnd::Complete => {
                    out.write_all(b"0\r\n\r\n")?;
                    out.flush()?;
                }
                BodyEnd::Disconnect => {}
                BodyEnd::Hang => wait_for_peer(&stream, stop)?,
                BodyEnd::KeepAlive(period) => {
                    let mut comment = String::new();
                    let _ = encode_comment("keep-alive", &mut comment);
                    while !stop.load(Ordering::SeqCst) {
                        write_chunk(&mut out, comment.as_bytes())?;
                        thread::sleep(period);
                    }
                }
                BodyEnd::Endless(piece) => {
                    while !stop.load(Ordering::SeqCst) {
                        write_chunk(&mut out, &piece)?;
                    }
                }
            }
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
    Ok(())
}

fn write_chunk(out: &mut TcpStream, piece: &[u8]) -> io::Result<()> {
    if piece.is_empty() {
        return Ok(());
    }
    write!(out, "{:x}\r\n", piece.len())?;
    out.write_all(piece)?;
    out.write_all(b"\r\n")?;
    out.flush()
}

/// Blocks until the client closes the connection or the server stops.
fn wait_for_peer(stream: &TcpStream, stop: &AtomicBool) -> io::Result<()> {
    let mut stream = stream.try_clone()?;
    stream.set_read_timeout(Some(Duration::from_millis(20)))?;
    let mut buf = [0u8; 256];
    while !stop.load(Ordering::SeqCst) {
        match stream.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
