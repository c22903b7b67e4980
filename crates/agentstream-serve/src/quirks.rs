//! Real stream quirks, on purpose: a turn (or a rule's reply) may ask for
//! `"quirks": [NAME, …]`, and its stream is then written as some real
//! provider wrote it, each quirk a rewrite of the encoded stream taken from
//! a recorded real stream that shows it (three have none that could be
//! found: their source is the reports of live streams that the table
//! names, with what was searched). Client code must survive these;
//! each is tested to decode, through this workspace's own projector, to the
//! same Pi message as the turn without it (or the difference noted).
//!
//! | quirk | API | what the stream does | source | our projector | pi-ai 0.73.1 |
//! |---|---|---|---|---|---|
//! | `emptyDeltas` | Chat Completions | every chunk with a delta is preceded by a chunk whose delta is `{"content": ""}` | `/work/shared/fixtures/openai-sse/openai-text.sse` (its opening chunk's `content: ""`) and `crates/agentstream-wire/tests/fixtures/openai/reasoning-then-text.sse` (`content: ""` beside each reasoning delta) | yes | yes |
//! | `pingFlood` | Anthropic | a `ping` event before every event | `/work/shared/fixtures/anthropic-sse/anthropic-text-ping.sse` (a `ping` between events) | yes | yes |
//! | `toolCallsOnIndex0` | Chat Completions | every tool call's chunks say `index: 0`; the calls are told apart by their `id`, sent on every chunk of a call | `crates/agentstream-wire/tests/fixtures/openai/calls-without-index.chunks.jsonl` and `/work/shared/fixtures/mistral-sse/mistral-tool-call.chunks.jsonl` (calls with no `index`, which clients read as 0, told apart by id) | **no**: joins the calls' arguments into one call, which fails to parse | **no**: keeps the first call, loses the second |
//! | `toolCallsInOneChunk` | Chat Completions | a tool call's id, name and whole arguments come in one chunk | `/work/shared/fixtures/mistral-sse/mistral-tool-call.chunks.jsonl` (a whole call in one chunk) and `crates/agentstream-wire/tests/fixtures/openai/whole-and-empty-arguments.chunks.jsonl` | yes | yes |
//! | `inputTokensInDelta` | Anthropic | `message_delta`'s `usage` repeats `input_tokens` and the cache counts of `message_start` | `/work/shared/fixtures/anthropic-sse/anthropic-thinking-signature.chunks.jsonl` (its `message_delta` usage has `input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`) | yes | yes |
//! | `outputIndexGaps` | Responses | every `output_index` is one more than the encoder's, so the first item is at 1 and index 0 never comes | `/work/shared/fixtures/openai-responses-sse/genai-reasoning-tools.sse` (the function call at `output_index` 1, behind an encrypted reasoning item that gives a client no block) | yes | yes |
//! | `partialArgs` | Gemini | each `functionCall` part becomes Gemini 3's streamed form: the name with `willContinue: true`, one part per top-level argument as `partialArgs` (`jsonPath` `$.KEY` and `stringValue`, `numberValue`, `boolValue`, `nullValue`, `structValue` or `listValue`; a string of two characters or more split in two entries, the first with `willContinue: true`), then an empty `functionCall` ending the call; each a payload of its own | `/work/shared/fixtures/google-sse/google-no-args-tool-call.chunks.jsonl` (gemini-3-flash-preview) | yes | **no**: 0.73.1 reads no `partialArgs`, every part becomes a call with `{}` arguments |
//! | `splitUtf8` | every API | the first multi-byte character of the stream is split across two network writes (two body frames) | a transport property, not a payload one: every recorded stream above with non-ASCII text can arrive so, as TCP segments fall | yes | yes (all four APIs) |
//! | `repeatedRole` | Chat Completions | every chunk's delta says `role: "assistant"`, tool-call fragments and finish chunks too | anomalyco/opencode @ 1808fe8, `packages/llm/test/fixtures/recordings/openai-compatible-chat/openrouter-streams-tool-call.json` (MIT; OpenRouter, openai/gpt-4o-mini; its body is `crates/agentstream-wire/tests/fixtures/openai-sse/openrouter-tool-call.sse`, which also shows the comment and the usage on a finish chunk) and alibaba/higress @ c12176d, `plugins/wasm-rust/extensions/ai-data-masking/test/raw_message.txt` (Apache-2.0; Ollama, `fp_ollama`) | yes | yes |
//! | `noToolCallIds` | Chat Completions | no tool call has an `id`, on any chunk; calls are told apart by `index` only | no recorded stream found (searched: id-less `tool_calls` chunk shapes in public code, which are hand-written tests; issue trackers). Reported from live streams: continuedev/continue#13225 (Ollama, gpt-oss:20b: "the first tool-call delta contains an index but no id"), anomalyco/opencode#25925 (NVIDIA's moonshotai/kimi-k2.5), anomalyco/opencode#47954 (GLM-5.2 through Mistral's endpoint) | yes, ids made from the call's position (`call_0`, `call_1`) | **no**: both calls get the id `""`, so their results cannot be told apart |
//! | `usageOnlyFinalChunk` | Chat Completions | the usage rides on the chunk that carries `finish_reason`, and no usage chunk with `choices: []` follows (the rewrite moves the usage a client asked for with `stream_options.include_usage`) | `/work/shared/fixtures/mistral-sse/mistral-text.chunks.jsonl`, also `crates/agentstream-wire/tests/fixtures/mistral-sse/` (vercel/ai @ ed857f5, Apache-2.0; usage on the last chunk, `finish_reason: "stop"`); OpenRouter's recordings above put it on a chunk with `choices` and `finish_reason` too | yes | yes |
//! | `reasoningContent` | Chat Completions | thinking arrives in `delta.reasoning`, not in `delta.reasoning_content` as the encoder writes it | charmbracelet/fantasy @ a909365, `providertests/testdata/TestOpenRouterCommon/gpt-5/multi_tool_streaming.yaml` (Apache-2.0; OpenRouter, openai/gpt-5: `"reasoning": "**Executing"` beside `content: ""`) | yes; the thinking block's `thinkingSignature` is `reasoning`, the field's name, as Pi's | yes, with the same `thinkingSignature` |
//! | `keepAliveComments` | Chat Completions | two `: OPENROUTER PROCESSING` comment lines before the first event, and one before each later event | anomalyco/opencode @ 1808fe8, `packages/llm/test/fixtures/recordings/openai-compatible-chat/openrouter-gpt-5-5-drives-a-tool-loop.json` (MIT; two comments before the first chunk); the later ones as OpenRouter documents them, sent "occasionally … to prevent connection timeouts" (<https://openrouter.ai/docs/api-reference/streaming>) | yes | yes |
//! | `completedWithoutOutput` | Responses | `response.completed` carries `output: []` though every item was streamed | no recorded stream found (searched: Responses fixtures in public code, issue trackers). Reported from live streams of ChatGPT's Codex backend (`chatgpt.com/backend-api/codex`, gpt-5.4): bytedance/deer-flow#1928, NousResearch/hermes-agent#5758 (streamed `function_call` items too), sipeed/picoclaw#2674 (the terminal response dumped: `output: []`, `status: "completed"`, `output_tokens: 95`) | yes | yes |
//! | `noCallIds` | Gemini | the `functionCall` parts, without `id`, come in the payload that ends the answer (with `finishReason` and `usageMetadata`), not one payload each before it | anomalyco/opencode @ 8d97b38, `packages/llm/test/fixtures/recordings/gemini/streams-tool-call.json` (MIT; gemini-2.5-flash: one payload with the call, no `id`, `finishReason: STOP` and the usage). The encoder writes no call ids already (newer models send them: `/work/shared/fixtures/google-sse/genai-tool.sse`), so the quirk gives the rest of that recording's shape | yes | yes |
//! | `interleavedToolBlocks` | Anthropic | the `tool_use` blocks of a turn all start, then their `input_json_delta`s (each block's arguments in two halves) come in turns, then they all stop, so a block starts before the previous one stopped and gets deltas while another is open | no recorded stream found (searched: Anthropic SSE fixtures here and in public code, issue trackers); Anthropic's own streams write blocks one after another. Anthropic-compatible servers write this: praxis-proxy/ai#266 and #273 (an OpenAI-to-Anthropic proxy that, fixed, opens a block per call index, routes later deltas to their block and closes every open block at the end), and clients are asked to route by `index` (envoyproxy/ai-gateway#2579) | yes | yes |
//!
//! The last two columns: whether the client's final message equals the
//! one of the same turn without the quirk (tool-call ids aside on Gemini,
//! where the client makes them from each call's own response id). Ours is
//! `tests/chaos_quirks.rs`; pi-ai's is `oracle/pi-ai/quirks.mjs` (a finding,
//! not a test), run on 2026-12-06.
//!
//! A quirk named in a script that is not in this table is an error when
//! the script loads. A quirk valid for some APIs, asked of a request in
//! another, answers that request with HTTP 400 in the provider's error
//! shape naming the quirk and its API. Bedrock's stream (binary AWS
//! event-stream messages) takes `splitUtf8` (the split falls inside a
//! message's payload, never in its prelude, headers or checksum) and a
//! turn's timing; every other quirk belongs to another API there.
//!
//! Four quirks hold an event until the next one arrives
//! (`toolCallsInOneChunk`, `usageOnlyFinalChunk`, `noCallIds`,
//! `interleavedToolBlocks`). A script's `cutAfterEvents` (or stream error)
//! counts the events as the encoder writes them, before the quirks: after
//! the N-th, what a quirk holds is written in its shape as far as it has
//! come (a call's start without the arguments not yet arrived, the finish
//! chunk without a usage chunk that never came, the held Gemini calls in a
//! payload of their own, the held Anthropic blocks interleaved without
//! their stops), then the cut or the error event. Chaos's `disconnect`
//! writes what is held before it cuts too; `drop` and `malformed` act on
//! the events the quirks wrote.

use agentstream::message::DecodeError;
use agentstream_wire::Api;
use bytes::Bytes;
use serde_json::Value;

mod reshape;
use reshape::{halves, interleave, streamed_call, HeldBlock};

/// One quirk of the catalogue (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quirk {
    EmptyDeltas,
    PingFlood,
    ToolCallsOnIndex0,
    ToolCallsInOneChunk,
    InputTokensInDelta,
    OutputIndexGaps,
    PartialArgs,
    SplitUtf8,
    RepeatedRole,
    NoToolCallIds,
    UsageOnlyFinalChunk,
    ReasoningContent,
    KeepAliveComments,
    CompletedWithoutOutput,
    NoCallIds,
    InterleavedToolBlocks,
}

impl Quirk {
    const ALL: [Quirk; 16] = [
        Quirk::EmptyDeltas,
        Quirk::PingFlood,
        Quirk::ToolCallsOnIndex0,
        Quirk::ToolCallsInOneChunk,
        Quirk::InputTokensInDelta,
        Quirk::OutputIndexGaps,
        Quirk::PartialArgs,
        Quirk::SplitUtf8,
        Quirk::RepeatedRole,
        Quirk::NoToolCallIds,
        Quirk::UsageOnlyFinalChunk,
        Quirk::ReasoningContent,
        Quirk::KeepAliveComments,
        Quirk::CompletedWithoutOutput,
        Quirk::NoCallIds,
        Quirk::InterleavedToolBlocks,
    ];

    /// Its name in a script.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Quirk::EmptyDeltas => "emptyDeltas",
            Quirk::PingFlood => "pingFlood",
            Quirk::ToolCallsOnIndex0 => "toolCallsOnIndex0",
            Quirk::ToolCallsInOneChunk => "toolCallsInOneChunk",
            Quirk::InputTokensInDelta => "inputTokensInDelta",
            Quirk::OutputIndexGaps => "outputIndexGaps",
            Quirk::PartialArgs => "partialArgs",
            Quirk::SplitUtf8 => "splitUtf8",
            Quirk::RepeatedRole => "repeatedRole",
            Quirk::NoToolCallIds => "noToolCallIds",
            Quirk::UsageOnlyFinalChunk => "usageOnlyFinalChunk",
            Quirk::ReasoningContent => "reasoningContent",
            Quirk::KeepAliveComments => "keepAliveComments",
            Quirk::CompletedWithoutOutput => "completedWithoutOutput",
            Quirk::NoCallIds => "noCallIds",
            Quirk::InterleavedToolBlocks => "interleavedToolBlocks",
        }
    }

    /// The API it belongs to; `None`: every API.
    fn api(self) -> Option<Api> {
        match self {
            Quirk::EmptyDeltas
            | Quirk::ToolCallsOnIndex0
            | Quirk::ToolCallsInOneChunk
            | Quirk::RepeatedRole
            | Quirk::NoToolCallIds
            | Quirk::UsageOnlyFinalChunk
            | Quirk::ReasoningContent
            | Quirk::KeepAliveComments => Some(Api::OpenAi),
            Quirk::PingFlood | Quirk::InputTokensInDelta | Quirk::InterleavedToolBlocks => {
                Some(Api::Anthropic)
            }
            Quirk::OutputIndexGaps | Quirk::CompletedWithoutOutput => Some(Api::Responses),
            Quirk::PartialArgs | Quirk::NoCallIds => Some(Api::Gemini),
            Quirk::SplitUtf8 => None,
        }
    }

    /// Rewrites one SSE event (its text without the closing blank line)
    /// into the events written in its place.
    fn rewrite(self, memory: &mut Memory, event: String, out: &mut Vec<String>) {
        match self {
            Quirk::EmptyDeltas => {
                if let Some(empty) = with_data(&event, |payload| {
                    let delta = payload.pointer_mut("/choices/0/delta")?;
                    let filled = delta.as_object().is_some_and(|d| !d.is_empty());
                    filled.then(|| *delta = serde_json::json!({"content": ""}))
                }) {
                    out.push(empty);
                }
                out.push(event);
            }
            Quirk::PingFlood => {
                out.push("event: ping\ndata: {\"type\": \"ping\"}".to_owned());
                out.push(event);
            }
            Quirk::ToolCallsOnIndex0 => {
                let changed = with_data(&event, |payload| {
                    let calls = payload
                        .pointer_mut("/choices/0/delta/tool_calls")?
                        .as_array_mut()?;
                    for call in calls {
                        let index = call.get("index").and_then(Value::as_u64)?;
                        match call.get("id").and_then(Value::as_str) {
                            Some(id) => memory.ids.push((index, id.to_owned())),
                            None => {
                                let id = memory.ids.iter().find(|(i, _)| *i == index)?;
                                call["id"] = Value::String(id.1.clone());
                            }
                        }
                        call["index"] = Value::from(0);
                    }
                    Some(())
                });
                out.push(changed.unwrap_or(event));
            }
            Quirk::ToolCallsInOneChunk => {
                let Some(payload) = data(&event) else {
                    out.extend(memory.held.take());
                    out.push(event);
                    return;
                };
                let call = payload.pointer("/choices/0/delta/tool_calls/0");
                let starts = call.is_some_and(|c| c.get("id").is_some());
                let arguments = call
                    .and_then(|c| c.pointer("/function/arguments"))
                    .and_then(Value::as_str);
                match (&mut memory.held, starts, arguments) {
                    (Some(held), false, Some(more)) => {
                        // The held start gets this chunk's arguments.
                        if let Some(merged) = with_data(held, |start| {
                            let whole = start
                                .pointer_mut("/choices/0/delta/tool_calls/0/function/arguments")?;
                            let so_far = whole.as_str().unwrap_or_default().to_owned();
                            *whole = Value::String(so_far + more);
                            Some(())
                        }) {
                            *held = merged;
                        }
                    }
                    (_, true, _) => {
                        out.extend(memory.held.take());
                        memory.held = Some(event);
                    }
                    _ => {
                        out.extend(memory.held.take());
                        out.push(event);
                    }
                }
            }
            Quirk::InputTokensInDelta => {
                let changed = with_data(&event, |payload| {
                    match payload.get("type").and_then(Value::as_str)? {
                        "message_start" => {
                            memory.input = payload.pointer("/message/usage").cloned();
                            None
                        }
                        "message_delta" => {
                            let start = memory.input.as_ref()?.as_object()?;
                            let usage = payload.get_mut("usage")?.as_object_mut()?;
                            for key in [
                                "input_tokens",
                                "cache_creation_input_tokens",
                                "cache_read_input_tokens",
                            ] {
                                if let Some(value) = start.get(key) {
                                    usage.insert(key.to_owned(), value.clone());
                                }
                            }
                            Some(())
                        }
                        _ => None,
                    }
                });
                out.push(changed.unwrap_or(event));
            }
            Quirk::OutputIndexGaps => {
                let changed = with_data(&event, |payload| {
                    let index = payload.get_mut("output_index")?;
                    *index = Value::from(index.as_u64()?.saturating_add(1));
                    Some(())
                });
                out.push(changed.unwrap_or(event));
            }
            Quirk::PartialArgs => match data(&event).and_then(|payload| streamed_call(&payload)) {
                Some(payloads) => out.extend(payloads.iter().map(|p| format!("data: {p}"))),
                None => out.push(event),
            },
            Quirk::SplitUtf8 => out.push(event),
            Quirk::RepeatedRole => {
                let changed = with_data(&event, |payload| {
                    let delta = payload.pointer_mut("/choices/0/delta")?.as_object_mut()?;
                    if delta.contains_key("role") {
                        return None;
                    }
                    delta.insert("role".to_owned(), Value::from("assistant"));
                    Some(())
                });
                out.push(changed.unwrap_or(event));
            }
            Quirk::NoToolCallIds => {
                let changed = with_data(&event, |payload| {
                    let calls = payload
                        .pointer_mut("/choices/0/delta/tool_calls")?
                        .as_array_mut()?;
                    let mut removed = false;
                    for call in calls.iter_mut().filter_map(Value::as_object_mut) {
                        removed |= call.remove("id").is_some();
                    }
                    removed.then_some(())
                });
                out.push(changed.unwrap_or(event));
            }
            Quirk::UsageOnlyFinalChunk => {
                let Some(finish) = memory.finish.take() else {
                    let finishes = data(&event).is_some_and(|payload| {
                        payload
                            .pointer("/choices/0/finish_reason")
                            .is_some_and(|reason| !reason.is_null())
                    });
                    if finishes {
                        memory.finish = Some(event);
                    } else {
                        out.push(event);
                    }
                    return;
                };
                let usage = data(&event)
                    .filter(|p| {
                        p.get("choices")
                            .and_then(Value::as_array)
                            .is_some_and(Vec::is_empty)
                    })
                    .and_then(|mut payload| payload.get_mut("usage").map(Value::take));
                let merged = usage.and_then(|usage| {
                    with_data(&finish, |payload| {
                        payload.as_object_mut()?.insert("usage".to_owned(), usage);
                        Some(())
                    })
                });
                match merged {
                    Some(merged) => out.push(merged),
                    None => {
                        out.push(finish);
                        out.push(event);
                    }
                }
            }
            Quirk::ReasoningContent => {
                let changed = with_data(&event, |payload| {
                    let delta = payload.pointer_mut("/choices/0/delta")?.as_object_mut()?;
                    let reasoning = delta.remove("reasoning_content")?;
                    delta.insert("reasoning".to_owned(), reasoning);
                    Some(())
                });
                out.push(changed.unwrap_or(event));
            }
            Quirk::KeepAliveComments => {
                let comments = if memory.commented { 1 } else { 2 };
                memory.commented = true;
                out.extend((0..comments).map(|_| ": OPENROUTER PROCESSING".to_owned()));
                out.push(event);
            }
            Quirk::CompletedWithoutOutput => {
                let changed = with_data(&event, |payload| {
                    if payload.get("type").and_then(Value::as_str)? != "response.completed" {
                        return None;
                    }
                    let output = payload.pointer_mut("/response/output")?;
                    *output = Value::Array(Vec::new());
                    Some(())
                });
                out.push(changed.unwrap_or(event));
            }
            Quirk::InterleavedToolBlocks => {
                let payload = data(&event);
                let kind = payload
                    .as_ref()
                    .and_then(|p| p.get("type"))
                    .and_then(Value::as_str);
                let index = payload
                    .as_ref()
                    .and_then(|p| p.get("index"))
                    .and_then(Value::as_u64);
                let tool_start = kind == Some("content_block_start")
                    && payload
                        .as_ref()
                        .and_then(|p| p.pointer("/content_block/type"))
                        == Some(&Value::from("tool_use"));
                let held = index.and_then(|i| memory.blocks.iter().position(|b| b.index == i));
                match (kind, held) {
                    _ if tool_start => memory.blocks.push(HeldBlock {
                        index: index.unwrap_or_default(),
                        start: event,
                        deltas: Vec::new(),
                        stop: None,
                    }),
                    (Some("content_block_delta"), Some(at)) => {
                        memory.blocks[at].deltas.extend(halves(&event));
                    }
                    (Some("content_block_stop"), Some(at)) => memory.blocks[at].stop = Some(event),
                    _ => {
                        interleave(std::mem::take(&mut memory.blocks), out);
                        out.push(event);
                    }
                }
            }
            Quirk::NoCallIds => {
                let Some(mut payload) = data(&event) else {
                    out.push(event);
                    return;
                };
                let ends = payload.pointer("/candidates/0/finishReason").is_some();
                let Some(parts) = payload
                    .pointer_mut("/candidates/0/content/parts")
                    .and_then(Value::as_array_mut)
                else {
                    out.push(event);
                    return;
                };
                let only_calls = !parts.is_empty()
                    && parts.iter().all(|part| part.get("functionCall").is_some());
                if only_calls && !ends {
                    for call in parts.iter_mut().filter_map(|p| p.get_mut("functionCall")) {
                        if let Some(call) = call.as_object_mut() {
                            call.remove("id");
                        }
                    }
                    memory.calls.append(parts);
                } else if ends && !memory.calls.is_empty() {
                    let mut all = std::mem::take(&mut memory.calls);
                    all.append(parts);
                    *parts = all;
                    out.push(format!("data: {payload}"));
                } else {
                    out.extend(memory.calls.drain(..).map(|part| {
                        let mut one = payload.clone();
                        if let Some(slot) = one.pointer_mut("/candidates/0/content/parts") {
                            *slot = Value::Array(vec![part]);
                        }
                        format!("data: {one}")
                    }));
                    out.push(event);
                }
            }
        }
    }
}

impl Quirk {
    /// Writes what this quirk holds, in its shape as far as it can be: the
    /// stream stops here (a cut, an error or a disconnect follows).
    fn flush(self, memory: &mut Memory, out: &mut Vec<String>) {
        match self {
            Quirk::ToolCallsInOneChunk => out.extend(memory.held.take()),
            Quirk::UsageOnlyFinalChunk => out.extend(memory.finish.take()),
            Quirk::InterleavedToolBlocks => interleave(std::mem::take(&mut memory.blocks), out),
            Quirk::NoCallIds if !memory.calls.is_empty() => {
                let parts = std::mem::take(&mut memory.calls);
                let payload = serde_json::json!({"candidates": [
                    {"content": {"role": "model", "parts": parts}, "index": 0}]});
                out.push(format!("data: {payload}"));
            }
            _ => {}
        }
    }
}

/// What the quirks of one stream remember between its events.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    /// `toolCallsOnIndex0`: each call's id by its index.
    ids: Vec<(u64, String)>,
    /// `toolCallsInOneChunk`: a call's first chunk, gathering its arguments.
    held: Option<String>,
    /// `inputTokensInDelta`: `message_start`'s usage.
    input: Option<Value>,
    /// `usageOnlyFinalChunk`: the chunk with the finish reason, waiting
    /// for the usage chunk behind it.
    finish: Option<String>,
    /// `keepAliveComments`: the first event had its comments.
    commented: bool,
    /// `noCallIds`: the `functionCall` parts waiting for the payload that
    /// ends the answer.
    calls: Vec<Value>,
    /// `interleavedToolBlocks`: the `tool_use` blocks written so far, held
    /// until the next event of another kind.
    blocks: Vec<HeldBlock>,
}

/// `event`'s `data:` payload, when it is JSON.
fn data(event: &str) -> Option<Value> {
    let at = event.rfind("data: ")?;
    serde_json::from_str(&event[at + 6..]).ok()
}

/// `event` with its `data:` payload changed by `change`; `None` when the
/// payload is not JSON or `change` changes nothing.
fn with_data(event: &str, change: impl FnOnce(&mut Value) -> Option<()>) -> Option<String> {
    let at = event.rfind("data: ")?;
    let mut payload = data(event)?;
    change(&mut payload)?;
    Some(format!("{}data: {payload}", &event[..at]))
}

/// The quirks a turn asks for, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Quirks(Vec<Quirk>);

impl Quirks {
    /// Parses `[NAME, …]`.
    ///
    /// # Errors
    /// A [`DecodeError`] at the index of an unknown name (listing the
    /// catalogue), or of a value that is not a string.
    pub(crate) fn from_value(value: Value) -> Result<Self, DecodeError> {
        let Value::Array(items) = value else {
            return Err(DecodeError::new(format!(
                "expected an array of quirk names, found {value}"
            )));
        };
        let mut quirks = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let quirk = item
                .as_str()
                .and_then(|name| Quirk::ALL.into_iter().find(|q| q.name() == name))
                .ok_or_else(|| {
                    let known: Vec<&str> = Quirk::ALL.iter().map(|q| q.name()).collect();
                    DecodeError::new(format!("unknown quirk {item}; known: {}", known.join(", ")))
                        .within_index(i)
                })?;
            if !quirks.contains(&quirk) {
                quirks.push(quirk);
            }
        }
        Ok(Self(quirks))
    }

    /// No quirks.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The first quirk that `api` does not have, by name with its API.
    pub(crate) fn foreign(&self, api: Api) -> Option<String> {
        self.0.iter().find_map(|quirk| match quirk.api() {
            Some(own) if own != api => Some(format!(
                "the quirk {} is a quirk of {} streams, not of {}",
                quirk.name(),
                own.pi_api(),
                api.pi_api()
            )),
            _ => None,
        })
    }

    /// Whether the stream's first multi-byte character is split in two writes.
    pub(crate) fn splits_utf8(&self) -> bool {
        self.0.contains(&Quirk::SplitUtf8)
    }

    /// Rewrites one encoded SSE event (without its closing blank line)
    /// through every quirk, in order, into `out`.
    pub(crate) fn rewrite(&self, memory: &mut Memory, event: String, out: &mut Vec<String>) {
        let mut events = vec![event];
        for quirk in &self.0 {
            let mut next = Vec::with_capacity(events.len() + 1);
            for event in events {
                quirk.rewrite(memory, event, &mut next);
            }
            events = next;
        }
        out.extend(events);
    }

    /// Writes what the quirks hold into `out` (each held event through the
    /// quirks after the one that held it), leaving `memory` holding nothing:
    /// the stream stops after these events.
    pub(crate) fn flush(&self, memory: &mut Memory, out: &mut Vec<String>) {
        for (at, quirk) in self.0.iter().enumerate() {
            let mut events = Vec::new();
            quirk.flush(memory, &mut events);
            for later in &self.0[at + 1..] {
                let mut next = Vec::with_capacity(events.len());
                for event in events {
                    later.rewrite(memory, event, &mut next);
                }
                events = next;
            }
            out.extend(events);
        }
    }
}

/// Where `bytes` is cut to split its first multi-byte character in two:
/// after that character's first byte; `None` when all of it is ASCII.
pub(crate) fn utf8_split(bytes: &Bytes) -> Option<usize> {
    bytes.iter().position(|b| *b >= 0xC0).map(|at| at + 1)
}

/// Where `bytes`, whole event-stream messages, are cut to split the first
/// multi-byte character of a message's payload in two (after its first
/// byte; never in a prelude, header or checksum); `None` when every
/// payload is ASCII or the messages do not parse.
pub(crate) fn message_utf8_split(bytes: &[u8]) -> Option<usize> {
    let word = |at: usize| -> Option<usize> {
        let four: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
        usize::try_from(u32::from_be_bytes(four)).ok()
    };
    let mut at = 0;
    while at < bytes.len() {
        let total = word(at)?;
        let headers = word(at.checked_add(4)?)?;
        let start = at.checked_add(12)?.checked_add(headers)?;
        let end = at.checked_add(total)?.checked_sub(4)?;
        let payload = bytes.get(start..end)?;
        if let Some(first) = payload.iter().position(|b| *b >= 0xC0) {
            return Some(start + first + 1);
        }
        at = at.checked_add(total)?;
    }
    None
}
