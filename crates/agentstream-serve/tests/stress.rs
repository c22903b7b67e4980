//! Many clients at once against one server: 50 concurrent clients (half
//! OpenAI, half Anthropic, our own clients) make 1,000 calls in all.
//! Every call succeeds, every request is recorded exactly once (each
//! carries a unique marker), and the turns are taken in arrival order:
//! the call the server numbered *k* got turn *k*, and every turn was used
//! once. Nothing here measures time.

use std::collections::BTreeMap;

use agentstream::message::{assistant, text, user, Context, Message, StopReason, UserContent};
use agentstream::model::{ScriptedModel, StreamOptions};
use agentstream_serve::Server;

mod support;
use support::Protocol;

const CLIENTS: usize = 50;
const CALLS: usize = 1_000;

fn marker(client: usize, call: usize) -> String {
    format!("client {client} call {call}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_clients_a_thousand_calls_in_arrival_order() {
    let turns = (0..CALLS).map(|k| assistant([text(format!("turn {k}"))], StopReason::Stop));
    let server = Server::builder(ScriptedModel::new(turns))
        .chunks(2)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let protocol = [Protocol::OpenAi, Protocol::Anthropic][client % 2];
        let model = support::client(protocol, &server);
        tasks.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            for call in 0..CALLS / CLIENTS {
                let marker = marker(client, call);
                let context = Context::from_messages([user(marker.clone()).into()]);
                let message = model
                    .stream(&context, StreamOptions::default())
                    .result()
                    .await;
                answers.push((marker, message));
            }
            answers
        }));
    }
    // The turn text each marker's call got back.
    let mut answers = BTreeMap::new();
    for task in tasks {
        for (marker, message) in task.await.unwrap() {
            assert_eq!(
                (message.stop_reason.clone(), message.error_message.clone()),
                (StopReason::Stop, None),
                "{marker}: {message:?}"
            );
            assert!(answers.insert(marker, message.text()).is_none());
        }
    }
    assert_eq!(answers.len(), CALLS);

    let recorded = server.requests();
    assert_eq!(recorded.len(), CALLS);
    let mut seen = BTreeMap::new();
    for (k, request) in recorded.iter().enumerate() {
        assert_eq!(request.call, k, "calls are numbered in recording order");
        let [Message::User(message)] = request.context.messages.as_slice() else {
            panic!("call {k}: {:?}", request.context.messages)
        };
        // Anthropic clients send the text as a block (the marked block of
        // Pi's default cache retention).
        let marker = match &message.content {
            UserContent::Text(marker) => marker.clone(),
            UserContent::Blocks(blocks) => blocks.iter().filter_map(|b| b.as_text()).collect(),
        };
        let marker = &marker;
        assert!(
            seen.insert(marker.clone(), k).is_none(),
            "{marker} recorded twice"
        );
        // Call k was answered with turn k.
        assert_eq!(answers[marker], format!("turn {k}"), "{marker}");
    }
    // Every client's every call was recorded.
    for client in 0..CLIENTS {
        for call in 0..CALLS / CLIENTS {
            assert!(seen.contains_key(&marker(client, call)));
        }
    }
    server.shutdown().await;
}
