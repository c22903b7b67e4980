//! The generated table's size and a few entries checked against pi-ai
//! 0.73.1's `models.generated.js`.

use agentstream_models::{
    all_models, clamp_thinking_level, get_model, models, providers, supported_thinking_levels,
    Compat, InputKind, ThinkingLevel,
};

#[test]
fn the_catalogue_has_pi_ai_s_969_models_of_31_providers() {
    assert_eq!(providers().len(), 31);
    assert_eq!(all_models().count(), 969);
    let sum: usize = providers().map(|p| models(p).len()).sum();
    assert_eq!(sum, 969);
    assert!(models("no-such-provider").is_empty());
    // Each model sits under its own provider, once.
    for p in providers() {
        for m in models(p) {
            assert_eq!(m.provider, p);
            assert_eq!(
                models(p).iter().filter(|n| n.id == m.id).count(),
                1,
                "{p}/{}",
                m.id
            );
        }
    }
}

#[test]
fn known_entries_match_pi_ai() {
    let nova = get_model("amazon-bedrock", "amazon.nova-lite-v1:0").unwrap();
    assert_eq!(nova.name, "Nova Lite");
    assert_eq!(nova.api, "bedrock-converse-stream");
    assert_eq!(
        nova.base_url,
        "https://bedrock-runtime.us-east-1.amazonaws.com"
    );
    assert_eq!(nova.input, [InputKind::Text, InputKind::Image]);
    assert_eq!(
        (nova.cost.input, nova.cost.output, nova.cost.cache_read),
        (0.06, 0.24, 0.015)
    );
    assert_eq!((nova.context_window, nova.max_tokens), (300_000, 8192));
    assert!(!nova.reasoning && nova.compat.is_none() && nova.headers.is_none());

    let opus = get_model("anthropic", "claude-opus-4-5").unwrap();
    assert!(opus.reasoning);
    assert_eq!(opus.cost.cache_read * 10.0, opus.cost.input);

    let copilot = models("github-copilot");
    let headers = copilot[0].headers.unwrap();
    assert!(headers.contains(&("Copilot-Integration-Id", "vscode-chat")));
}

#[test]
fn compat_flags_and_level_maps_are_carried() {
    let with_format = all_models()
        .filter_map(|m| m.compat.and_then(|c| c.thinking_format))
        .collect::<std::collections::BTreeSet<_>>();
    // The catalogue sets three formats; pi-ai detects the others
    // (openai, openrouter, qwen-chat-template) from the base URL.
    assert_eq!(
        with_format.into_iter().collect::<Vec<_>>(),
        ["deepseek", "qwen", "zai"]
    );
    assert!(all_models().any(|m| m
        .compat
        .is_some_and(|c| c != Compat::NONE && c.max_tokens_field.is_some())));

    // A model whose map lists xhigh supports it; a non-reasoning one supports only off.
    let xhigh = all_models()
        .find(|m| {
            m.reasoning
                && m.thinking_level_value(ThinkingLevel::Xhigh)
                    .flatten()
                    .is_some()
        })
        .unwrap();
    assert_eq!(
        supported_thinking_levels(xhigh).last(),
        Some(ThinkingLevel::Xhigh)
    );
    let plain = all_models().find(|m| !m.reasoning).unwrap();
    assert_eq!(
        clamp_thinking_level(plain, ThinkingLevel::High),
        ThinkingLevel::Off
    );
    // A reasoning model without xhigh clamps it down to high.
    let no_xhigh = all_models()
        .find(|m| m.reasoning && m.thinking_level_map.is_none())
        .unwrap();
    assert_eq!(
        clamp_thinking_level(no_xhigh, ThinkingLevel::Xhigh),
        ThinkingLevel::High
    );
}

#[test]
fn two_turns_cost_less_with_the_prompt_cache() {
    // A 10,000-token prefix resent on the second turn: fresh both times, or
    // written once and read back at the cache-read price.
    let m = get_model("anthropic", "claude-sonnet-4-5").unwrap();
    let uncached = m.cost_of(10_000, 500, 0, 0) + m.cost_of(10_600, 500, 0, 0);
    let cached = m.cost_of(0, 500, 0, 10_000) + m.cost_of(600, 500, 10_000, 0);
    assert!(cached < uncached, "{cached} vs {uncached}");
    let expected = (10_000.0 * m.cost.cache_write
        + 600.0 * m.cost.input
        + 10_000.0 * m.cost.cache_read
        + 1_000.0 * m.cost.output)
        / 1e6;
    assert!((cached - expected).abs() < 1e-12);
}
