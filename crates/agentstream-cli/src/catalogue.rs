//! pi-ai's model catalogue on the command line: `--model PROVIDER/ID`
//! resolved to a catalogue model, and the Chat Completions compat flags
//! pi-ai would use for it.

use agentstream_models::{get_model, Model};
use agentstream_wire::openai::{Compat, ThinkingFormat};

/// The catalogue model `spec` names as `PROVIDER/ID` (the id may hold
/// `/` itself, as OpenRouter's do), if any.
pub fn lookup(spec: &str) -> Option<&'static Model> {
    let (provider, id) = spec.split_once('/')?;
    get_model(provider, id)
}

/// The compat flags pi-ai's Chat Completions provider uses for `m`: the
/// catalogue's own flags over what pi-ai detects from the provider and
/// the base URL (the detected values for the flags `Compat` has).
pub fn compat(m: &Model) -> Compat {
    let flags = m.compat.unwrap_or_default();
    let url = m.base_url;
    let moonshot = m.provider.starts_with("moonshotai") || url.contains("api.moonshot.");
    let gateway =
        m.provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
    let non_standard = [
        "cerebras",
        "xai",
        "opencode",
        "zai",
        "cloudflare-workers-ai",
    ]
    .contains(&m.provider)
        || moonshot
        || gateway
        || [
            "cerebras.ai",
            "api.x.ai",
            "chutes.ai",
            "deepseek.com",
            "api.z.ai",
            "opencode.ai",
            "api.cloudflare.com",
        ]
        .iter()
        .any(|host| url.contains(host));
    let detected_field = if url.contains("chutes.ai") || moonshot || gateway {
        "max_tokens"
    } else {
        "max_completion_tokens"
    };
    let developer = flags.supports_developer_role.unwrap_or(!non_standard);
    let mut compat = Compat::default()
        .with_max_completion_tokens(
            flags.max_tokens_field.unwrap_or(detected_field) != "max_tokens",
        )
        .with_developer_role(m.reasoning && developer)
        .with_stream_options(flags.supports_usage_in_streaming != Some(false))
        .with_detected_caching(m.provider, url, m.id);
    let deepseek = m.provider == "deepseek" || url.contains("deepseek.com");
    compat.session_affinity_headers = flags.send_session_affinity_headers.unwrap_or(false);
    compat.store = flags.supports_store.unwrap_or(!non_standard);
    compat.strict_tools = flags.supports_strict_mode.unwrap_or(!moonshot && !gateway);
    compat.tool_result_name = flags.requires_tool_result_name.unwrap_or(false);
    compat.reasoning_content_on_assistant = m.reasoning
        && flags
            .requires_reasoning_content_on_assistant_messages
            .unwrap_or(deepseek);
    let zai = m.provider == "zai" || url.contains("api.z.ai");
    let grok = m.provider == "xai" || url.contains("api.x.ai");
    compat.thinking_format = flags
        .thinking_format
        .and_then(ThinkingFormat::parse)
        .unwrap_or_else(|| ThinkingFormat::detect(m.provider, url));
    compat.reasoning_effort = flags
        .supports_reasoning_effort
        .unwrap_or(!grok && !zai && !moonshot && !gateway);
    compat
}

#[cfg(test)]
mod tests {
    use super::*;

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
