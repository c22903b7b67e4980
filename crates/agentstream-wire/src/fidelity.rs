//! How the final assistant message compares with Pi's, field by field, for
//! both wire protocols (a documentation page; it holds no items).
//!
//! "Pi" is pi-mono's `packages/ai/src/providers/openai-completions.ts` and
//! `anthropic.ts`, with `transform-messages.ts` and `models.ts`
//! (`calculateCost`), as published in `@mariozechner/pi-ai` 0.73.1 (the
//! version the oracles run). Where older versions differ, the table says
//! so. Rows marked **differs** are deliberate; the
//! module documentation of each projector gives the reason. The cut-off
//! and refusal rows are checked against pi-ai's own output by
//! `tests/cut_tool_calls.rs`.
//!
//! # Fields of the final message
//!
//! | Field | OpenAI Chat Completions (here) | Anthropic Messages (here) | Pi |
//! |---|---|---|---|
//! | `content` `text` | `delta.content`; one block per run of text | `text_delta` of a `text` block | same; no `textSignature` on either |
//! | `content` `thinking` | first non-empty of `reasoning_content`, `reasoning`, `reasoning_text`; `thinkingSignature` = that field's name | `thinking_delta`; `thinkingSignature` from `signature_delta` | same (OpenAI: the field name; Anthropic: the signature) |
//! | `thinking` `redacted` | never | `redacted_thinking` → empty thinking, `redacted: true`, its `data` as `thinkingSignature` | later versions the same; older ones skip the block |
//! | `content` `toolCall` | `id`/`name` from the first non-empty fragment, arguments parsed at the end; an id-less call gets `call_N` (**differs**: Pi keeps `""`) | `tool_use` + `input_json_delta`, `""` or nothing → `{}` | same, but Pi parses partial JSON leniently and keeps whatever it got |
//! | unparsable tool arguments | `error` naming the call (**differs**) | `error` naming the call (**differs**) | keeps its lenient parse (partial-json; `{}` when nothing parses), for both |
//! | tool call cut off by length | `finish_reason: "length"`: `done`/`length`, each open call kept, its text completed leniently as a last delta before its `toolcall_end` | `max_tokens`, with or without the call's `content_block_stop`: the same | `done`/`length`, the call kept with its lenient parse |
//! | cut arguments, the completion | a cut escape (`\`, `\u12`) dropped; a lone high half U+FFFD; a member cut after its key or a comma `null` (**differs**: Pi drops it; a suffix cannot take back what the deltas said); a number cut after `-`, `.` or `e` finished with `0` (**differs**: Pi gives `{}`) | same | partial-json's reading; a lone half kept as JavaScript holds it |
//! | cut call, events | its completion delta, then `toolcall_end` | same (**differs**: Pi sends no `toolcall_end` without `content_block_stop`, and leaves `partialJson` and `index` on the final message) | see the two columns |
//! | `api` | `openai-completions` | `anthropic-messages` | same |
//! | `provider` | the configuration's (default `openai`) | the configuration's (default `anthropic`) | `model.provider` |
//! | `model` | the requested id | the requested id | `model.id` |
//! | `responseModel` | the first chunk `model` that differs from the requested id | `message_start.message.model` when it differs (**differs**) | OpenAI: the same rule; Anthropic: not set (0.73.1) |
//! | `responseId` | the first non-empty chunk `id` | `message_start.message.id` | the same in the versions that set it |
//! | `usage.input` | `prompt_tokens` − cache reads − cache writes | `input_tokens` (latest of `message_start`/`message_delta`) | OpenAI: `prompt_tokens` − cached; Anthropic: same |
//! | `usage.output` | `completion_tokens`, plus `reasoning_tokens` only when `total_tokens` shows they were left out (xAI) (**differs**) | `output_tokens`, cumulative | OpenAI: `completion_tokens` alone (0.73.1; xAI's reasoning is left out; 0.58 added `reasoning_tokens` always); Anthropic: same |
//! | `usage.cacheRead` | `prompt_tokens_details.cached_tokens`, else `prompt_cache_hit_tokens` (DeepSeek) | `cache_read_input_tokens` | OpenAI: `cached_tokens` only; Anthropic: same |
//! | `usage.cacheWrite` | `prompt_tokens_details.cache_write_tokens`, else `cache_creation_input_tokens` | `cache_creation_input_tokens` | OpenAI: 0 in the versions read; Anthropic: same |
//! | `usage.totalTokens` | the provider's `total_tokens` (a total below the parts is replaced by their sum, the provider's kept as `providerTotalTokens`); without one, the sum | input + output + cacheRead + cacheWrite | OpenAI: computed as the sum; Anthropic: same |
//! | `usage.cost` | from a [`Pricing`](crate::pricing::Pricing), on the final message only; 0 without one | same | `calculateCost` with the model table on every usage update |
//! | `stopReason` | see below | see below | see below |
//! | `errorMessage` | the provider's message (`message (code: …)`), `finish_reason "X"` named, transport and HTTP errors with status; abort: `Request was aborted` | `"{type}: {message}"` of an `error` event, the stop reason named (a refusal with `stop_details`' category and explanation), …; abort: `Request was aborted` | the SDK's error text; `Provider finish_reason: X` (OpenAI); `An unknown error occurred` for `refusal` and `sensitive` (Anthropic); abort: `Request was aborted` |
//! | `timestamp` | wall-clock ms at the call's start, stamped by the adapter ([`Endpoint::open_stream_at`](crate::endpoint::Endpoint::open_stream_at)); 0 from the bare projector | same | `Date.now()` at the call's start |
//!
//! # Stop reasons
//!
//! | Provider value | Here | Pi |
//! |---|---|---|
//! | OpenAI `stop`, `end` | `stop`, or `toolUse` when the message has tool calls | `stop` (`end` is unknown: throws) |
//! | OpenAI `length` | `length`, open calls completed leniently | `length`, calls parsed leniently |
//! | OpenAI `tool_calls`, `function_call` | `toolUse` (`stop` when there is no call) | `toolUse` |
//! | OpenAI `content_filter` | `error` naming it | `error` |
//! | OpenAI unknown value | `error` naming it | throws → `error` |
//! | OpenAI none, then `[DONE]` | `stop` / `toolUse` | `stop` |
//! | OpenAI body cut before `[DONE]` and without a reason | `error` (truncated) (**differs**) | `stop` |
//! | Anthropic `end_turn`, `stop_sequence` | `stop` | `stop` |
//! | Anthropic `pause_turn` | `stop` (send it back to continue) | `stop` |
//! | Anthropic `max_tokens` | `length`, a cut call completed leniently | `length`, the call parsed leniently |
//! | Anthropic `tool_use` | `toolUse` | `toolUse` |
//! | Anthropic `refusal` | `error` naming it, with `stop_details`' `category` and `explanation` when sent (**differs**) | `error`, `An unknown error occurred` |
//! | Anthropic `model_context_window_exceeded`, `sensitive`, unknown | `error` naming it (never throws) | `sensitive` → `error`; others throw → `error` |
//! | Anthropic body without `message_stop` | `error` (truncated; a stop reason that came is named), even after `max_tokens` | `error`, `Anthropic stream ended before message_stop` |
//!
//! # The request side
//!
//! Both builders first run [`transform_messages`](agentstream::message::transform),
//! Pi's `transformMessages` (failed and aborted turns skipped, `No result
//! provided` results, cross-model thinking as text); its module
//! documentation lists the two places where it differs.
