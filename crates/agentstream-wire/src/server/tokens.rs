//! The token counts the OpenAI-shaped and Gemini usage objects share.

use agentstream::message::Usage;

/// The prompt count (input + cacheRead: the providers count cached tokens
/// inside the prompt) and the total (`totalTokens`, or prompt + output).
pub(crate) fn prompt_and_total(usage: &Usage) -> (u64, u64) {
    let prompt = usage.input.saturating_add(usage.cache_read);
    let total = usage
        .total_tokens
        .unwrap_or_else(|| prompt.saturating_add(usage.output));
    (prompt, total)
}
