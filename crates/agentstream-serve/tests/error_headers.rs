//! Scripted HTTP errors answer with the provider's headers and body, for
//! each of the four APIs (see `agentstream_serve::error_headers`).

use agentstream_serve::{ServeTurn, Server};
use serde_json::{json, Value};

/// The path and a body of a call to each API.
fn calls() -> [(&'static str, &'static str, Value); 4] {
    let user = json!([{"role": "user", "content": "hi"}]);
    [
        (
            "openai",
            "/v1/chat/completions",
            json!({"model": "m", "messages": user}),
        ),
        (
            "anthropic",
            "/v1/messages",
            json!({"model": "m", "max_tokens": 9, "messages": user}),
        ),
        (
            "responses",
            "/v1/responses",
            json!({"model": "m", "input": [{"role": "user", "content": "hi"}]}),
        ),
        (
            "gemini",
            "/v1beta/models/m:generateContent",
            json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
        ),
    ]
}

async fn server(element: Value, times: usize) -> Server {
    let turns: Vec<ServeTurn> = (0..times)
        .map(|_| ServeTurn::from_value(element.clone()).unwrap())
        .collect();
    Server::from_script(turns)
        .bind("127.0.0.1:0")
        .await
        .unwrap()
}

async fn post(base: &str, path: &str, body: &Value) -> (u16, reqwest::header::HeaderMap, Value) {
    let root = base.strip_suffix("/v1").unwrap_or(base);
    let response = reqwest::Client::new()
        .post(format!("{root}{path}"))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    (status, headers, body)
}

fn header<'h>(headers: &'h reqwest::header::HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn a_rate_limit_has_each_providers_headers_and_body() {
    let server = server(
        json!({"httpError": {"status": 429, "message": "slow down", "retryAfter": 2}}),
        4,
    )
    .await;
    for (api, path, body) in calls() {
        let (status, headers, body) = post(&server.url(), path, &body).await;
        assert_eq!(status, 429, "{api}");
        assert_eq!(header(&headers, "retry-after"), Some("2"), "{api}");
        match api {
            "anthropic" => {
                assert_eq!(body["type"], "error");
                assert_eq!(body["error"]["type"], "rate_limit_error");
                assert!(header(&headers, "request-id").unwrap().starts_with("req_"));
                assert_eq!(
                    header(&headers, "anthropic-ratelimit-requests-limit"),
                    Some("50")
                );
                assert_eq!(
                    header(&headers, "anthropic-ratelimit-requests-remaining"),
                    Some("0")
                );
                assert_eq!(
                    header(&headers, "anthropic-ratelimit-tokens-remaining"),
                    Some("0")
                );
                for reset in ["requests", "tokens"] {
                    let reset = header(&headers, &format!("anthropic-ratelimit-{reset}-reset"));
                    let reset = reset.unwrap().as_bytes();
                    // 2026-12-06T07:10:00.000Z
                    assert_eq!(
                        (reset.len(), reset[10], reset[23]),
                        (24, b'T', b'Z'),
                        "{reset:?}"
                    );
                }
                assert!(headers.get("x-ratelimit-limit-requests").is_none());
            }
            "gemini" => {
                assert_eq!(body["error"]["code"], 429);
                assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED");
                assert_eq!(
                    body["error"]["details"][0],
                    json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"})
                );
                assert!(headers.get("x-request-id").is_none());
                assert!(headers.get("request-id").is_none());
            }
            _ => {
                assert_eq!(body["error"]["type"], "requests", "{api}");
                assert!(header(&headers, "x-request-id")
                    .unwrap()
                    .starts_with("req_"));
                assert_eq!(header(&headers, "x-ratelimit-limit-requests"), Some("500"));
                assert_eq!(header(&headers, "x-ratelimit-limit-tokens"), Some("30000"));
                assert_eq!(
                    header(&headers, "x-ratelimit-remaining-requests"),
                    Some("0")
                );
                assert_eq!(header(&headers, "x-ratelimit-remaining-tokens"), Some("0"));
                assert_eq!(header(&headers, "x-ratelimit-reset-requests"), Some("2s"));
                assert_eq!(header(&headers, "x-ratelimit-reset-tokens"), Some("2s"));
                assert!(headers.get("anthropic-ratelimit-requests-limit").is_none());
            }
        }
    }
    server.shutdown().await;
}

#[tokio::test]
async fn the_status_picks_the_type_and_only_anthropics_429_waits_by_default() {
    for (status, anthropic, gemini, openai) in [
        (529, "overloaded_error", "UNAVAILABLE", "server_error"),
        (503, "api_error", "UNAVAILABLE", "server_error"),
        (500, "api_error", "INTERNAL", "server_error"),
        (404, "not_found_error", "NOT_FOUND", "invalid_request_error"),
        (429, "rate_limit_error", "RESOURCE_EXHAUSTED", "requests"),
    ] {
        let server = server(json!({"httpError": {"status": status, "message": "no"}}), 4).await;
        for (api, path, body) in calls() {
            let (got, headers, body) = post(&server.url(), path, &body).await;
            assert_eq!(got, status, "{api}");
            let (kind, retry) = match api {
                "anthropic" => (&body["error"]["type"], (status == 429).then_some("1")),
                "gemini" => (&body["error"]["status"], None),
                _ => (&body["error"]["type"], None),
            };
            let want = match api {
                "anthropic" => anthropic,
                "gemini" => gemini,
                _ => openai,
            };
            assert_eq!(kind, want, "{api} {status}");
            assert_eq!(header(&headers, "retry-after"), retry, "{api} {status}");
            if api == "openai" || api == "responses" {
                // Not rate limited: one request and some tokens used.
                let left = if status == 429 { "0" } else { "499" };
                assert_eq!(
                    header(&headers, "x-ratelimit-remaining-requests"),
                    Some(left)
                );
            }
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_script_sets_headers_of_its_own() {
    let server = server(
        json!({"httpError": {"status": 429, "message": "slow", "retryAfter": 0,
               "headers": {"X-Should-Retry": "false", "x-ratelimit-limit-requests": 7,
                           "anthropic-ratelimit-requests-limit": "8"}}}),
        2,
    )
    .await;
    let [openai, anthropic, ..] = calls();
    let (_, headers, _) = post(&server.url(), openai.1, &openai.2).await;
    assert_eq!(header(&headers, "x-should-retry"), Some("false"));
    assert_eq!(header(&headers, "x-ratelimit-limit-requests"), Some("7"));
    assert_eq!(header(&headers, "retry-after"), Some("0"));
    let (_, headers, _) = post(&server.url(), anthropic.1, &anthropic.2).await;
    assert_eq!(
        header(&headers, "anthropic-ratelimit-requests-limit"),
        Some("8")
    );
    assert_eq!(header(&headers, "retry-after"), Some("0"));
    server.shutdown().await;
}
