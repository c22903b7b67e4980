//! pi-ai's model catalogue on the command line: `--model PROVIDER/ID`
//! resolved to a catalogue model (configured by the wire crate's
//! [`catalogue`](agentstream_wire::catalogue), see `provider.rs`).

use agentstream_models::{get_model, Model};

/// The catalogue model `spec` names as `PROVIDER/ID` (the id may hold
/// `/` itself, as OpenRouter's do), if any.
pub fn lookup(spec: &str) -> Option<&'static Model> {
    let (provider, id) = spec.split_once('/')?;
    get_model(provider, id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentstream_wire::catalogue::compat;
    use agentstream_wire::openai::ThinkingFormat;

    #[test]
    fn catalogue_models_resolve_by_provider_and_id() {
        let m = lookup("openrouter/anthropic/claude-sonnet-4").unwrap();
        assert_eq!(
            (m.provider, m.id),
            ("openrouter", "anthropic/claude-sonnet-4")
        );
        assert!(compat(m).anthropic_cache_control);
        assert!(lookup("gpt-4o").is_none());
        assert!(lookup("openai/no-such-model").is_none());
        let groq = lookup("groq/llama-3.3-70b-versatile").unwrap();
        let c = compat(groq);
        assert!(c.max_completion_tokens && !c.prompt_cache_key && c.long_cache_retention);
        assert_eq!(c.thinking_format, ThinkingFormat::OpenAi);
        let deepseek = lookup("deepseek/deepseek-v4-flash").unwrap();
        assert_eq!(compat(deepseek).thinking_format, ThinkingFormat::DeepSeek);
    }
}
