//! Rules over real HTTP: each match key, regular expressions, `times`,
//! `nth`, rules before the ordered turns, `--strict`'s error in each
//! provider's shape, `GET /v1/unused`, the past-the-end status, and
//! scripts refused when they load.

use agentstream::message::{user, Context};
use agentstream::model::{Model, StreamOptions, EXHAUSTED_MESSAGE};
use agentstream_serve::{Api, Script, Server, EXHAUSTED_STATUS, UNMATCHED_CODE};
use serde_json::{json, Value};

mod support;

/// One message of a conversation, written in each API's shape.
#[derive(Clone, Copy)]
enum Said<'a> {
    User(&'a str),
    /// The assistant called the tool `name` (id `c1`).
    Call(&'a str),
    /// The tool `name` answered `text` to `c1`.
    Result(&'a str, &'a str),
}

/// A request body for `api`: its model, system prompt, offered tools and
/// conversation.
fn body(api: Api, model: &str, system: &str, tools: &[&str], said: &[Said<'_>]) -> Value {
    match api {
        Api::OpenAi => {
            let mut messages = vec![json!({"role": "system", "content": system})];
            for s in said {
                messages.push(match *s {
                    Said::User(text) => json!({"role": "user", "content": text}),
                    Said::Call(name) => json!({"role": "assistant", "content": null,
                        "tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": name, "arguments": "{}"}}]}),
                    Said::Result(_, text) => {
                        json!({"role": "tool", "tool_call_id": "c1", "content": text})
                    }
                });
            }
            let tools: Vec<Value> = tools
                .iter()
                .map(|n| json!({"type": "function", "function": {"name": n, "parameters": {}}}))
                .collect();
            json!({"model": model, "messages": messages, "tools": tools})
        }
        Api::Anthropic => {
            let messages: Vec<Value> = said
                .iter()
                .map(|s| match *s {
                    Said::User(text) => json!({"role": "user", "content": text}),
                    Said::Call(name) => json!({"role": "assistant", "content": [
                        {"type": "tool_use", "id": "c1", "name": name, "input": {}}]}),
                    Said::Result(_, text) => json!({"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "c1", "content": text}]}),
                })
                .collect();
            let tools: Vec<Value> = tools
                .iter()
                .map(|n| json!({"name": n, "input_schema": {"type": "object"}}))
                .collect();
            json!({"model": model, "max_tokens": 100, "system": system,
                   "messages": messages, "tools": tools})
        }
        Api::Responses => {
            let input: Vec<Value> = said
                .iter()
                .map(|s| match *s {
                    Said::User(text) => json!({"role": "user", "content": text}),
                    Said::Call(name) => json!({"type": "function_call", "call_id": "c1",
                        "name": name, "arguments": "{}"}),
                    Said::Result(_, text) => {
                        json!({"type": "function_call_output", "call_id": "c1", "output": text})
                    }
                })
                .collect();
            let tools: Vec<Value> = tools
                .iter()
                .map(|n| json!({"type": "function", "name": n, "parameters": {}}))
                .collect();
            json!({"model": model, "instructions": system, "input": input, "tools": tools})
        }
        Api::Gemini => {
            let contents: Vec<Value> = said
                .iter()
                .map(|s| match *s {
                    Said::User(text) => json!({"role": "user", "parts": [{"text": text}]}),
                    Said::Call(name) => json!({"role": "model", "parts": [
                        {"functionCall": {"name": name, "args": {}}}]}),
                    Said::Result(name, text) => json!({"role": "user", "parts": [
                        {"functionResponse": {"name": name, "response": {"output": text}}}]}),
                })
                .collect();
            let declarations: Vec<Value> = tools.iter().map(|n| json!({"name": n})).collect();
            json!({"systemInstruction": {"parts": [{"text": system}]}, "contents": contents,
                   "tools": [{"functionDeclarations": declarations}]})
        }
        _ => unreachable!("the four APIs"),
    }
}

const APIS: [Api; 4] = [Api::OpenAi, Api::Anthropic, Api::Responses, Api::Gemini];

/// The non-streaming call URL for `api` (Gemini names the model in the path).
fn call_url(server: &Server, api: Api, model: &str) -> String {
    let base = server.url();
    match api {
        Api::OpenAi => format!("{base}/chat/completions"),
        Api::Anthropic => format!("{base}/messages"),
        Api::Responses => format!("{base}/responses"),
        Api::Gemini => format!(
            "{}/v1beta/models/{model}:generateContent",
            base.trim_end_matches("/v1")
        ),
        _ => unreachable!("the four APIs"),
    }
}

/// POSTs a request and reads the status and the JSON body.
async fn call(server: &Server, api: Api, model: &str, body: &Value) -> (u16, Value) {
    let response = support::post_json(&call_url(server, api, model), body.to_string()).await;
    let status = response.status().as_u16();
    let bytes = response.bytes().await.unwrap();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
    (status, value)
}

/// The answer's text, in `api`'s non-streaming shape.
fn answer_text(api: Api, body: &Value) -> String {
    let text = match api {
        Api::OpenAi => &body["choices"][0]["message"]["content"],
        Api::Anthropic => &body["content"][0]["text"],
        Api::Responses => &body["output"][0]["content"][0]["text"],
        Api::Gemini => &body["candidates"][0]["content"]["parts"][0]["text"],
        _ => unreachable!("the four APIs"),
    };
    text.as_str()
        .unwrap_or_else(|| panic!("no text in {body}"))
        .to_owned()
}

/// The error's message, in `api`'s error shape.
fn error_message(body: &Value) -> String {
    body["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("no error message in {body}"))
        .to_owned()
}

async fn get(url: &str) -> Value {
    let bytes = reqwest::get(url).await.unwrap().bytes().await.unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

async fn serve(script: Value, strict: bool) -> Server {
    let script = Script::from_value(script).unwrap();
    Server::from_rules_script(script)
        .strict(strict)
        .bind("127.0.0.1:0")
        .await
        .unwrap()
}

/// A text call on OpenAI's API with the user's `text`; the answer's text,
/// or the error's message.
async fn ask(server: &Server, said: &[Said<'_>]) -> (u16, String) {
    let body = body(Api::OpenAi, "gpt-test", "be brief", &["weather"], said);
    let (status, reply) = call(server, Api::OpenAi, "gpt-test", &body).await;
    if status == 200 {
        (status, answer_text(Api::OpenAi, &reply))
    } else {
        (status, error_message(&reply))
    }
}

/// A model, a system prompt, the tools offered, the conversation, and the
/// answer wanted.
type Case<'a> = (&'a str, &'a str, &'a [&'a str], Vec<Said<'a>>, &'a str);

#[tokio::test]
async fn every_match_key_picks_its_rule_through_all_four_apis() {
    let server = serve(
        json!({"rules": [
            {"name": "by model", "match": {"model": "special"}, "reply": "model"},
            {"match": {"toolResult": "18C"}, "reply": "tool result"},
            {"match": {"hasToolResult": true}, "reply": "some tool result"},
            {"match": {"turn": 1}, "reply": "turn one"},
            {"match": {"system": "pirate"}, "reply": "system"},
            {"match": {"tool": "calendar"}, "reply": "tool"},
            {"match": {"lastUserText": "weather"}, "reply": "last user text"},
        ]}),
        true,
    )
    .await;
    for api in APIS {
        let cases: [Case<'_>; 7] = [
            ("special-1", "x", &["t"], vec![Said::User("hi")], "model"),
            (
                "m",
                "x",
                &["weather"],
                vec![
                    Said::User("hi"),
                    Said::Call("weather"),
                    Said::Result("weather", "18C"),
                ],
                "tool result",
            ),
            (
                "m",
                "x",
                &["weather"],
                vec![
                    Said::User("hi"),
                    Said::Call("weather"),
                    Said::Result("weather", "rain"),
                ],
                "some tool result",
            ),
            (
                "m",
                "x",
                &["t"],
                vec![Said::User("hi"), Said::Call("t"), Said::User("and?")],
                "turn one",
            ),
            (
                "m",
                "talk like a pirate",
                &["t"],
                vec![Said::User("hi")],
                "system",
            ),
            (
                "m",
                "x",
                &["weather", "calendar"],
                vec![Said::User("hi")],
                "tool",
            ),
            (
                "m",
                "x",
                &["t"],
                vec![Said::User("the weather?")],
                "last user text",
            ),
        ];
        for (model, system, tools, said, want) in cases {
            let request = body(api, model, system, tools, &said);
            let (status, reply) = call(&server, api, model, &request).await;
            assert_eq!(status, 200, "{api:?} {want}: {reply}");
            assert_eq!(answer_text(api, &reply), want, "{api:?}");
        }
    }
    server.shutdown().await;
}

#[tokio::test]
async fn regex_times_and_a_reply_list_whose_last_turn_repeats() {
    let server = serve(
        json!({"rules": [
            {"match": {"lastUserText": {"regex": "^wea.her$"}}, "reply": ["one", "two"]},
            {"match": {"lastUserText": "limited"}, "reply": ["a", "b"], "times": 1},
        ], "turns": ["ordered"]}),
        false,
    )
    .await;
    // The list is played in order, then its last turn repeats.
    for want in ["one", "two", "two", "two"] {
        assert_eq!(
            ask(&server, &[Said::User("weather")]).await,
            (200, want.into())
        );
    }
    // Anchored: a longer text does not match; it goes to the turns.
    assert_eq!(
        ask(&server, &[Said::User("the weather")]).await,
        (200, "ordered".into())
    );
    // `times: 1`: once, then the rule is passed over (the turns are used up).
    assert_eq!(
        ask(&server, &[Said::User("limited")]).await,
        (200, "a".into())
    );
    let (status, message) = ask(&server, &[Said::User("limited")]).await;
    assert_eq!((status, message.as_str()), (400, EXHAUSTED_MESSAGE));
    server.shutdown().await;
}

#[tokio::test]
async fn nth_counts_the_requests_that_reached_the_rule() {
    let server = serve(
        json!({"rules": [
            {"match": {"lastUserText": "go", "nth": 2}, "reply": "second go"},
            {"match": {"lastUserText": "go"}, "reply": "any go"},
        ]}),
        false,
    )
    .await;
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.push(ask(&server, &[Said::User("go")]).await.1);
    }
    // A request that does not hold the other keys is not counted.
    ask(&server, &[Said::User("stop")]).await;
    answers.push(ask(&server, &[Said::User("go")]).await.1);
    assert_eq!(answers, ["any go", "second go", "any go", "any go"]);
    server.shutdown().await;
}

#[tokio::test]
async fn rules_come_before_the_turns_and_take_none_of_them() {
    let server = serve(
        json!({"rules": [{"match": {"lastUserText": "ping"}, "reply": "pong"}],
               "turns": ["first", {"httpError": {"status": 429, "message": "slow down"}}, "third"]}),
        false,
    )
    .await;
    let mut got = Vec::new();
    for text in ["ping", "a", "ping", "b", "ping", "c", "d"] {
        got.push(ask(&server, &[Said::User(text)]).await);
    }
    let want: Vec<(u16, String)> = [
        (200, "pong"),
        (200, "first"),
        (200, "pong"),
        (429, "slow down"),
        (200, "pong"),
        (200, "third"),
        (EXHAUSTED_STATUS, EXHAUSTED_MESSAGE),
    ]
    .into_iter()
    .map(|(s, t)| (s, t.to_owned()))
    .collect();
    assert_eq!(got, want);
    assert_eq!(server.calls(), 7);
    server.shutdown().await;
}

#[tokio::test]
async fn strict_names_the_nearest_rule_in_each_providers_error_shape() {
    let server = serve(
        json!({"rules": [
            {"name": "calendar", "match": {"tool": "calendar"}, "reply": "no"},
            {"name": "weather", "match": {"model": "m", "lastUserText": "weather"}, "reply": "sunny"},
        ]}),
        true,
    )
    .await;
    let want = "rules[1] (\"weather\"): lastUserText \"hello\" does not contain \"weather\"";
    for api in APIS {
        let request = body(api, "m", "x", &["t"], &[Said::User("hello")]);
        let (status, reply) = call(&server, api, "m", &request).await;
        assert_eq!(status, 400, "{api:?}: {reply}");
        let message = error_message(&reply);
        assert!(message.contains(want), "{api:?}: {message}");
        assert!(message.contains("strict"), "{message}");
        match api {
            Api::OpenAi | Api::Responses => {
                assert_eq!(reply["error"]["code"], UNMATCHED_CODE);
                assert_eq!(reply["error"]["type"], "invalid_request_error");
            }
            Api::Anthropic => {
                assert_eq!(reply["type"], "error");
                assert_eq!(reply["error"]["type"], "invalid_request_error");
            }
            _ => {
                assert_eq!(reply["error"]["code"], 400);
                assert_eq!(reply["error"]["status"], "INVALID_ARGUMENT");
            }
        }
    }
    // A rule that would match but used its `times` up is told as such.
    let server = serve(
        json!({"rules": [{"match": {"lastUserText": "hi"}, "reply": "x", "times": 1}]}),
        true,
    )
    .await;
    assert_eq!(ask(&server, &[Said::User("hi")]).await.0, 200);
    let (status, message) = ask(&server, &[Said::User("hi")]).await;
    assert_eq!(status, 400);
    assert!(
        message.contains("rules[0]: it already answered its 1 times"),
        "{message}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn without_strict_the_same_call_gets_the_plain_past_the_end_answer() {
    let server = serve(
        json!({"rules": [{"name": "weather", "match": {"lastUserText": "weather"}, "reply": "x"}]}),
        false,
    )
    .await;
    let (status, message) = ask(&server, &[Said::User("hello")]).await;
    assert_eq!((status, message.as_str()), (400, EXHAUSTED_MESSAGE));
    server.shutdown().await;
}

#[tokio::test]
async fn a_call_past_the_end_gets_a_status_the_sdks_do_not_retry() {
    // The SDKs retry 408, 409, 429 and 5xx.
    assert!(![408, 409, 429].contains(&EXHAUSTED_STATUS) && EXHAUSTED_STATUS < 500);
    let server = serve(json!(["only"]), false).await;
    assert_eq!(
        ask(&server, &[Said::User("hi")]).await,
        (200, "only".into())
    );
    for api in APIS {
        let request = body(api, "m", "x", &["t"], &[Said::User("again")]);
        let (status, reply) = call(&server, api, "m", &request).await;
        assert_eq!(status, 400, "{api:?}: {reply}");
        assert_eq!(error_message(&reply), EXHAUSTED_MESSAGE, "{api:?}");
    }
    // Each call was made once: nothing retried it.
    assert_eq!(server.calls(), 5);
    // Our own client, streaming, sees the same answer and does not retry.
    let model = support::client(support::Protocol::OpenAi, &server);
    let context = Context::from_messages([user("more").into()]);
    let message = model
        .stream(&context, StreamOptions::default())
        .result()
        .await;
    let error = message.error_message.unwrap_or_default();
    assert!(
        error.contains("400") && error.contains(EXHAUSTED_MESSAGE),
        "{error}"
    );
    assert_eq!(server.calls(), 6);
    server.shutdown().await;
}

#[tokio::test]
async fn unused_lists_the_rules_and_turns_that_never_answered() {
    let server = serve(
        json!({"rules": [
            {"name": "used", "match": {"lastUserText": "a"}, "reply": "A"},
            {"name": "never", "match": {"lastUserText": "zzz"}, "reply": "Z"},
            {"match": {"lastUserText": "b"}, "reply": "B"},
        ], "turns": ["one", "two", "three"]}),
        false,
    )
    .await;
    let url = format!("{}/unused", server.url());
    let all = get(&url).await;
    assert_eq!(
        all,
        json!({"rules": [{"index": 0, "name": "used"}, {"index": 1, "name": "never"},
                         {"index": 2, "name": null}], "turns": [0, 1, 2]})
    );
    ask(&server, &[Said::User("a")]).await;
    ask(&server, &[Said::User("c")]).await;
    ask(&server, &[Said::User("b")]).await;
    let listed = get(&url).await;
    let want = json!({"rules": [{"index": 1, "name": "never"}], "turns": [1, 2]});
    assert_eq!(listed, want);
    assert_eq!(server.unused(), want);
    // Only GET.
    let response = support::post_json(&url, "{}").await;
    assert_eq!(response.status(), 405);
    server.shutdown().await;
}

#[tokio::test]
async fn rule_replies_stream_fail_and_give_tool_calls_their_ids() {
    let tool_turn = json!({"role": "assistant", "content": [
        {"type": "toolCall", "id": "", "name": "weather", "arguments": {"city": "Paris"}}],
        "stopReason": "toolUse"});
    let server = serve(
        json!({"rules": [
            {"match": {"lastUserText": "limit"}, "reply": {"httpError": {"status": 429, "message": "slow"}}},
            {"match": {"lastUserText": "tool"}, "reply": tool_turn},
            {"match": {"lastUserText": "stream"}, "reply": "streamed text"},
        ]}),
        true,
    )
    .await;
    assert_eq!(
        ask(&server, &[Said::User("limit")]).await,
        (429, "slow".into())
    );
    let model = support::client(support::Protocol::OpenAi, &server);
    let streamed = model
        .stream(
            &Context::from_messages([user("stream").into()]),
            StreamOptions::default(),
        )
        .result()
        .await;
    assert_eq!(streamed.text(), "streamed text");
    let mut ids = Vec::new();
    for _ in 0..2 {
        let request = body(Api::OpenAi, "m", "x", &["weather"], &[Said::User("tool")]);
        let (status, reply) = call(&server, Api::OpenAi, "m", &request).await;
        assert_eq!(status, 200, "{reply}");
        let calls = &reply["choices"][0]["message"]["tool_calls"];
        assert_eq!(calls[0]["function"]["name"], "weather");
        ids.push(calls[0]["id"].as_str().unwrap().to_owned());
    }
    // Each call gets ids of its own.
    assert_ne!(ids[0], ids[1]);
    assert!(ids.iter().all(|id| id.starts_with("call_")), "{ids:?}");
    server.shutdown().await;
}

#[test]
fn hostile_scripts_are_refused_when_they_load() {
    let huge = "a{1000}{1000}";
    let long = "x".repeat(5000);
    for (script, path, words) in [
        (
            json!({"rules": [{"match": {"lastUserText": {"regex": huge}}, "reply": "x"}]}),
            "$.rules[0].match.lastUserText.regex",
            "compiles to more than",
        ),
        (
            json!({"rules": [{"match": {"system": {"regex": long}}, "reply": "x"}]}),
            "$.rules[0].match.system.regex",
            "past the limit",
        ),
        (
            json!({"rules": [{"match": {"model": {"regex": "("}}, "reply": "x"}]}),
            "$.rules[0].match.model.regex",
            "invalid regular expression",
        ),
        (
            json!({"rules": [{"reply": "x"}, {"match": {"lastUser": "hi"}, "reply": "x"}]}),
            "$.rules[1].match.lastUser",
            "unknown match key \"lastUser\"",
        ),
        (
            json!({"rules": [{"reply": "x", "time": 2}]}),
            "$.rules[0].time",
            "unknown rule key \"time\"",
        ),
        (
            json!({"rules": [{"match": {"turn": "1"}, "reply": "x"}]}),
            "$.rules[0].match.turn",
            "expected a count",
        ),
        (
            json!({"rules": [{"match": {"hasToolResult": 1}, "reply": "x"}]}),
            "$.rules[0].match.hasToolResult",
            "expected true or false",
        ),
        (
            json!({"rules": [{"match": {"tool": 3}, "reply": "x"}]}),
            "$.rules[0].match.tool",
            "expected a string or",
        ),
        (
            json!({"rules": [{"match": {"nth": 0}, "reply": "x"}]}),
            "$.rules[0].match.nth",
            "counts from 1",
        ),
        (
            json!({"rules": [{"match": {}, "reply": []}]}),
            "$.rules[0].reply",
            "at least one turn",
        ),
        (
            json!({"rules": [{"match": {}}]}),
            "$.rules[0]",
            "missing field \"reply\"",
        ),
        (
            json!({"rules": [{"reply": {"byRequest": [{"turn": "x"}]}}]}),
            "$.rules[0].reply",
            "cannot be byRequest",
        ),
        (
            json!({"rules": [{"reply": "x", "times": -1}]}),
            "$.rules[0].times",
            "expected a count",
        ),
        (json!({"rules": {}}), "$.rules", "expected an array"),
        (json!({"turn": []}), "$.turn", "unknown script key"),
        (json!({"turns": [{"role": "user"}]}), "$.turns[0].role", ""),
        (json!([{"role": "user"}]), "$[0].role", ""),
        (
            json!("text"),
            "$",
            "expected an array of turns or an object",
        ),
    ] {
        let error = Script::from_value(script.clone()).unwrap_err();
        assert_eq!(error.path(), path, "{script}: {error}");
        assert!(error.reason().contains(words), "{script}: {error}");
    }
}
