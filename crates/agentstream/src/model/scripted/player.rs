//! Plays one scripted turn: projects its message onto model events.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use futures_util::future::select;

use super::turn::ScriptedTurn;
use super::EXHAUSTED_MESSAGE;
use crate::message::{
    assistant, AssistantMessage, ContentBlock, StopReason, TextContent, ThinkingContent, ToolCall,
};
use crate::model::abort::{AbortSignal, ABORTED_MESSAGE};
use crate::model::cause::ErrorCause;
use crate::model::event::{terminal_reason, ErrorReason, EventCause, ModelEvent};
use crate::model::partial::{PartialBuilder, PartialMessage};
use crate::model::stream::ModelProducer;
use crate::rt::Pause;
use crate::yield_now::yield_now;

/// The producer of one scripted call.
pub(super) async fn play(
    mut out: ModelProducer,
    turn: Option<Arc<ScriptedTurn>>,
    signal: Option<AbortSignal>,
    pacer: Option<Pause>,
) {
    yield_now().await;
    if signal.as_ref().is_some_and(AbortSignal::is_aborted) {
        let mut error = assistant([], StopReason::Aborted);
        error.error_message = Some(ABORTED_MESSAGE.into());
        let cause = signal
            .as_ref()
            .map_or(ErrorCause::Aborted, AbortSignal::cause);
        let _ = out.push(ModelEvent::error(ErrorReason::Aborted, error).with_cause(cause));
        return;
    }
    let Some(turn) = turn else {
        let mut error = assistant([], StopReason::Error);
        error.error_message = Some(EXHAUSTED_MESSAGE.into());
        let _ = out.push(ModelEvent::error(ErrorReason::Error, error));
        return;
    };
    let message = turn.shared_final_message();
    if turn.full_sequence && turn.is_empty_failure() {
        if let Some(Err(reason)) = terminal_reason(&message.stop_reason) {
            // With the full sequence, a failed call with nothing streamed is
            // one lone `error`, as when a provider's HTTP request itself
            // fails (pi-ai's shape). The short trace plays it through the
            // normal projection (`start → error`), as chapter 04 does.
            let cause = (reason == ErrorReason::Aborted).then_some(ErrorCause::Aborted);
            let _ = out.push(ModelEvent::Error {
                reason,
                error: message,
                cause: cause.into(),
            });
            return;
        }
    }
    // The header is every field but the content, which the player streams
    // from `message` itself.
    let header = AssistantMessage {
        content: Vec::new(),
        api: message.api.clone(),
        provider: message.provider.clone(),
        model: message.model.clone(),
        usage: message.usage.clone(),
        stop_reason: StopReason::Stop,
        error_message: None,
        timestamp: message.timestamp,
        extra: message.extra.clone(),
    };
    let mut player = Player {
        out,
        builder: PartialBuilder::new(header),
        chunks: turn.chunks.get(),
        full_sequence: turn.full_sequence,
        deltas: 0,
        signal,
        pacer,
    };
    let partial = player.builder.snapshot();
    player.emit(ModelEvent::Start { partial });
    for block in &message.content {
        if player.play_block(block).await.is_err() {
            let error = player
                .builder
                .to_error_message(StopReason::Aborted, ABORTED_MESSAGE);
            let cause = player
                .signal
                .as_ref()
                .map_or(ErrorCause::Aborted, AbortSignal::cause);
            player.emit(ModelEvent::error(ErrorReason::Aborted, error).with_cause(cause));
            return;
        }
    }
    let terminal = match terminal_reason(&message.stop_reason) {
        Some(Ok(reason)) => ModelEvent::Done { reason, message },
        Some(Err(reason)) => ModelEvent::Error {
            reason,
            error: message,
            cause: EventCause::NONE,
        },
        None => {
            let error_message = alloc::format!(
                "ScriptedModel cannot end a turn with stopReason \"{}\"",
                message.stop_reason.as_str()
            );
            let error = player
                .builder
                .to_error_message(StopReason::Error, error_message);
            ModelEvent::error(ErrorReason::Error, error)
        }
    };
    player.emit(terminal);
}

/// Projects one scripted message onto events.
struct Player {
    out: ModelProducer,
    builder: PartialBuilder,
    chunks: usize,
    full_sequence: bool,
    /// Deltas emitted so far; a pause precedes every delta but the first.
    deltas: usize,
    signal: Option<AbortSignal>,
    pacer: Option<Pause>,
}

/// The signal aborted between two deltas.
struct AbortedMidStream;

impl Player {
    fn emit(&mut self, event: ModelEvent) {
        // Refused only when nobody observes the call; the script plays on
        // regardless, so the trace does not depend on the consumer.
        let _ = self.out.push(event);
    }

    /// Waits between two deltas; `Err` if the signal aborted meanwhile.
    async fn pause(&self) -> Result<(), AbortedMidStream> {
        match (&self.pacer, &self.signal) {
            (Some(pacer), Some(signal)) => {
                select(pacer.start(), signal.aborted()).await;
            }
            (Some(pacer), None) => pacer.start().await,
            (None, _) => yield_now().await,
        }
        match &self.signal {
            Some(signal) if signal.is_aborted() => Err(AbortedMidStream),
            _ => Ok(()),
        }
    }

    async fn play_block(&mut self, block: &ContentBlock) -> Result<(), AbortedMidStream> {
        if matches!(block, ContentBlock::Image(_) | ContentBlock::Unknown(_)) {
            // Blocks with no events of their own (images, unknown types)
            // appear in the next snapshot.
            self.builder.push_complete(block.clone());
            return Ok(());
        }
        // The pause before a block's first delta comes before the block is
        // opened: an abort there leaves no empty block behind.
        if self.chunks > 1 && self.deltas > 0 {
            self.pause().await?;
        }
        let (kind, index, streamed) = match block {
            ContentBlock::Text(content) => (
                Streamed::Text,
                self.builder.start_text(TextContent {
                    text: String::new(),
                    text_signature: content.text_signature.clone(),
                    extra: content.extra.clone(),
                }),
                Cow::Borrowed(content.text.as_str()),
            ),
            ContentBlock::Thinking(content) => (
                Streamed::Thinking,
                self.builder.start_thinking(ThinkingContent {
                    thinking: String::new(),
                    thinking_signature: content.thinking_signature.clone(),
                    redacted: content.redacted,
                    extra: content.extra.clone(),
                }),
                Cow::Borrowed(content.thinking.as_str()),
            ),
            ContentBlock::ToolCall(call) => {
                let template = ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: serde_json::Map::new(),
                    thought_signature: call.thought_signature.clone(),
                    raw_arguments: None,
                    extra: call.extra.clone(),
                };
                // The full sequence shows the arguments as pi-ai does
                // (parsed so far); the short trace as chapter 04 does
                // (`{}` and the raw JSON text).
                let index = if self.full_sequence {
                    self.builder.start_tool_call(template)
                } else {
                    self.builder.start_tool_call_raw(template)
                };
                let raw = serde_json::to_string(&call.arguments).unwrap_or_default();
                (Streamed::ToolCall, index, Cow::Owned(raw))
            }
            // Blocks with no events of their own (images, unknown types)
            // appear in the next snapshot.
            ContentBlock::Image(_) | ContentBlock::Unknown(_) => return Ok(()),
        };
        if self.full_sequence {
            let partial = self.builder.snapshot();
            self.emit(kind.start_event(index, partial));
        }
        self.stream_text(index, &streamed, kind).await?;
        let content_index = index;
        match block {
            ContentBlock::ToolCall(call) => {
                // One copy of the call, shared by the snapshot and the event.
                let call = Arc::new(call.clone());
                self.builder.complete_tool_call(index, call.clone());
                let partial = self.builder.snapshot();
                self.emit(ModelEvent::ToolCallEnd {
                    content_index,
                    tool_call: call,
                    partial,
                });
            }
            ContentBlock::Text(_) if self.full_sequence => {
                let (content, partial) = (streamed.into_owned(), self.builder.snapshot());
                self.emit(ModelEvent::TextEnd {
                    content_index,
                    content,
                    partial,
                });
            }
            ContentBlock::Thinking(_) if self.full_sequence => {
                let (content, partial) = (streamed.into_owned(), self.builder.snapshot());
                self.emit(ModelEvent::ThinkingEnd {
                    content_index,
                    content,
                    partial,
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// Streams `text` into block `index` as up to `self.chunks` deltas.
    async fn stream_text(
        &mut self,
        index: usize,
        text: &str,
        kind: Streamed,
    ) -> Result<(), AbortedMidStream> {
        for (n, piece) in split_chunks(text, self.chunks).enumerate() {
            if n > 0 {
                self.pause().await?;
            }
            self.deltas += 1;
            let delta: Arc<str> = piece.into();
            self.builder.append(index, delta.clone());
            let partial = self.builder.snapshot();
            self.emit(kind.delta_event(index, delta, partial));
        }
        Ok(())
    }
}

/// The kinds of block whose text is streamed as deltas.
#[derive(Clone, Copy)]
enum Streamed {
    Text,
    Thinking,
    ToolCall,
}

impl Streamed {
    fn start_event(self, content_index: usize, partial: PartialMessage) -> ModelEvent {
        match self {
            Self::Text => ModelEvent::TextStart {
                content_index,
                partial,
            },
            Self::Thinking => ModelEvent::ThinkingStart {
                content_index,
                partial,
            },
            Self::ToolCall => ModelEvent::ToolCallStart {
                content_index,
                partial,
            },
        }
    }

    fn delta_event(
        self,
        content_index: usize,
        delta: Arc<str>,
        partial: PartialMessage,
    ) -> ModelEvent {
        match self {
            Self::Text => ModelEvent::TextDelta {
                content_index,
                delta,
                partial,
            },
            Self::Thinking => ModelEvent::ThinkingDelta {
                content_index,
                delta,
                partial,
            },
            Self::ToolCall => ModelEvent::ToolCallDelta {
                content_index,
                delta,
                partial,
            },
        }
    }
}

/// Splits `text` into at most `chunks` pieces of about equal byte length,
/// at character boundaries. An empty text gives one empty piece.
fn split_chunks(text: &str, chunks: usize) -> impl Iterator<Item = &str> {
    let target = text.len().div_ceil(chunks.max(1)).max(1);
    let mut rest = Some(text);
    core::iter::from_fn(move || {
        let current = rest?;
        if current.len() <= target {
            rest = None;
            return Some(current);
        }
        let mut cut = target;
        while !current.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = current.split_at(cut);
        rest = if tail.is_empty() { None } else { Some(tail) };
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::split_chunks;
    use alloc::vec::Vec;

    #[test]
    fn split_chunks_respects_counts_and_char_boundaries() {
        let pieces = |t, n| split_chunks(t, n).collect::<Vec<_>>();
        assert_eq!(pieces("", 3), [""]);
        assert_eq!(pieces("abcdef", 1), ["abcdef"]);
        assert_eq!(pieces("abcdef", 3), ["ab", "cd", "ef"]);
        assert_eq!(pieces("abcdefg", 3), ["abc", "def", "g"]);
        assert_eq!(pieces("ab", 5), ["a", "b"]);
        assert_eq!(pieces("héllo", 2).concat(), "héllo");
        assert!(pieces("日本語テキスト", 4).len() <= 4);
    }
}
