//! Our own clients pointed at a server, for the tests and the bench.

// Each test binary that includes this module uses its part.
#![allow(dead_code)]

use std::sync::Arc;

use agentstream::model::Model;
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
