//! What prompt caching saves on a two-turn run, priced from pi-ai's
//! catalogue: Anthropic's Claude Sonnet 4.5 configured by
//! `config_from_catalogue` (which carries the catalogue's prices), two
//! responses decoded by its stream as the provider sends them, once
//! without caching (every turn sends the whole prefix as fresh input) and
//! once with it (turn one writes the prefix to the cache, turn two reads
//! it back and writes only what was added). Each usage's cost must be
//! pi-ai's `calculateCost`: each part's tokens times its price per
//! million, the total their sum.

use agentstream::message::Usage;
use agentstream::model::ModelEvent;
use agentstream_wire::catalogue::{config_from_catalogue, CatalogueConfig};

/// One Anthropic response of `output` text tokens whose request had these
/// uncached, cache-read and cache-written input tokens.
fn response(input: u64, cache_read: u64, cache_write: u64, output: u64) -> String {
    format!(
        "event: message_start\n\
         data: {{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"usage\":{{\"input_tokens\":{input},\"cache_read_input_tokens\":{cache_read},\"cache_creation_input_tokens\":{cache_write},\"output_tokens\":1}}}}}}\n\n\
         event: content_block_start\n\
         data: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n\
         event: content_block_delta\n\
         data: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"ok\"}}}}\n\n\
         event: content_block_stop\n\
         data: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n\
         event: message_delta\n\
         data: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\"}},\"usage\":{{\"output_tokens\":{output}}}}}\n\n\
         event: message_stop\n\
         data: {{\"type\":\"message_stop\"}}\n\n"
    )
}

/// The usage of `body` as the catalogue model's stream reports it.
fn usage_of(config: &CatalogueConfig, body: &str) -> Usage {
    let CatalogueConfig::Anthropic(config) = config else {
        panic!("claude-sonnet-4-5 is an anthropic-messages model");
    };
    let mut stream = config.open_stream(None);
    let mut events: Vec<ModelEvent> = stream.feed(body.as_bytes()).collect();
    events.extend(stream.finish_input());
    let message = events
        .last()
        .and_then(ModelEvent::terminal_message)
        .expect("a terminal event");
    message.usage.clone()
}

/// pi-ai's `calculateCost` total, from the catalogue's prices.
fn pi_cost(m: &agentstream_models::Model, u: &Usage) -> f64 {
    let per = |price: f64, tokens: u64| price / 1_000_000.0 * tokens as f64;
    per(m.cost.input, u.input)
        + per(m.cost.output, u.output)
        + per(m.cost.cache_read, u.cache_read)
        + per(m.cost.cache_write, u.cache_write)
}

#[test]
fn a_two_turn_run_costs_less_with_prompt_caching() {
    let m =
        agentstream_models::get_model("anthropic", "claude-sonnet-4-5").expect("in the catalogue");
    let config = config_from_catalogue(m, Some("sk-test")).unwrap();
    // A 10,000-token prefix (system prompt, tools) and a 200-token prompt;
    // turn one answers in 400 tokens, a 1,000-token tool result follows,
    // turn two answers in 300.
    let uncached = [response(10_200, 0, 0, 400), response(11_600, 0, 0, 300)];
    // With caching (pi-ai's default markers): turn one writes the whole
    // request to the cache; turn two reads it and writes the 1,400 new
    // tokens.
    let cached = [response(0, 0, 10_200, 400), response(0, 10_200, 1_400, 300)];
    let mut totals = [0.0, 0.0];
    for (total, turns) in totals.iter_mut().zip([&uncached, &cached]) {
        for body in turns {
            let usage = usage_of(&config, body);
            assert!(usage.cost.total > 0.0);
            let expected = pi_cost(m, &usage);
            assert!((usage.cost.total - expected).abs() < 1e-12, "{usage:?}");
            assert_eq!(
                usage.cost.total,
                usage.cost.input
                    + usage.cost.output
                    + usage.cost.cache_read
                    + usage.cost.cache_write
            );
            *total += usage.cost.total;
        }
    }
    let [without, with] = totals;
    // $3 input, $15 output, $0.30 cache read, $3.75 cache write per
    // million: 21,800 × 3 + 700 × 15 = $0.0759 without caching;
    // 11,600 × 3.75 + 10,200 × 0.30 + 700 × 15 = $0.05706 with it.
    assert!((without - 0.0759).abs() < 1e-12, "{without}");
    assert!((with - 0.05706).abs() < 1e-12, "{with}");
    // Turn two alone: $0.0393 against $0.01281, a third of the price.
    assert!(with < without);
}
