//! A pump whose stream is shaped: paced by the turn's [timing](crate::timing),
//! rewritten by its [quirks](crate::quirks), and touched by
//! [chaos](crate::Chaos). Used only for the calls that ask for one of
//! them; every other call takes the plain pump's path unchanged.

use agentstream_wire::server::{Events, Wire};
use bytes::Bytes;
use hyper::body::Frame;

use super::{next_event, Item, Pump};
use crate::chaos::{malformed, Chaos, Injected, Kind};
use crate::manner::Manner;
use crate::quirks::{message_utf8_split, utf8_split, Memory, Quirks};
use crate::script::Step;
use crate::timing::{Rng, Timing};

/// Where what chaos injected goes when the stream ends (or the client goes away).
pub(crate) type Note = Box<dyn FnOnce(Injected) + Send>;

/// The shaping of one stream.
pub(crate) struct Shape {
    timing: Option<Timing>,
    quirks: Quirks,
    memory: Memory,
    chaos: Chaos,
    rng: Rng,
    /// SSE events the encoder and the quirks wrote so far.
    written: usize,
    injected: Injected,
    note: Option<Note>,
    /// The second half of a frame split inside a character, sent next.
    held: Option<Bytes>,
    /// A character was split already.
    split: bool,
    /// The wait before the first event is behind.
    started: bool,
    /// Chaos cut the stream: nothing after it is decided or written.
    cut: bool,
    /// The script's cut or error, after this many encoded events (as the
    /// script counts them, before the quirks), until that many are admitted;
    /// the step then counts the events written in their place.
    step_at: Option<usize>,
    /// Encoded events admitted so far.
    encoded: usize,
    /// The stream is binary event-stream messages (Bedrock), not SSE: each
    /// message is passed as it is (no quirk but `splitUtf8` applies).
    binary: bool,
}

impl Shape {
    /// The shaping of a call written with `manner` and `chaos`, drawing
    /// from `rng`; `note` gets what chaos injected.
    pub(crate) fn new(manner: Manner, chaos: Chaos, rng: Rng, note: Note) -> Self {
        Self {
            timing: manner.timing,
            quirks: manner.quirks,
            memory: Memory::default(),
            chaos,
            rng,
            written: 0,
            injected: Injected::default(),
            note: Some(note),
            held: None,
            split: false,
            started: false,
            cut: false,
            step_at: None,
            encoded: 0,
            binary: false,
        }
    }

    /// The same shaping of a binary event stream (Bedrock's): timing paces
    /// each message and `splitUtf8` splits a character inside a message's
    /// payload; chaos is not applied to it.
    pub(crate) fn binary(mut self, binary: bool) -> Self {
        self.binary = binary;
        self
    }

    /// Takes the script's cut or error out of `step` (its count is of
    /// encoded events); `admit` puts it back, counted in written events,
    /// once that many encoded events are in.
    fn hold_step(&mut self, step: &mut Step, pending: &Events, sent: usize) {
        if let Step::Cut { after_events } | Step::StreamError { after_events, .. } = step {
            if *after_events == 0 {
                *after_events = sent + pending.len();
            } else {
                self.step_at = Some(*after_events);
                *after_events = usize::MAX;
            }
        }
    }

    /// Passes encoded events through the quirks and chaos into `pending`;
    /// a disconnect becomes `step`'s cut (unless the script's own error or
    /// cut comes first). `sent` events were sent already.
    fn admit(&mut self, mut events: Events, pending: &mut Events, step: &mut Step, sent: usize) {
        if self.binary {
            while !events.is_empty() {
                pending.frame(&events.take(1));
                self.encoded += 1;
                if self.step_at == Some(self.encoded) {
                    self.step_at = None;
                    if let Step::Cut { after_events } | Step::StreamError { after_events, .. } =
                        step
                    {
                        *after_events = sent + pending.len();
                    }
                }
            }
            return;
        }
        for event in events.into_strings() {
            let text = event.strip_suffix("\n\n").unwrap_or(&event).to_owned();
            let mut rewritten = Vec::new();
            self.quirks.rewrite(&mut self.memory, text, &mut rewritten);
            self.encoded += 1;
            let step_now = self.step_at == Some(self.encoded);
            if step_now {
                // What the quirks hold came before the cut: it is written.
                self.quirks.flush(&mut self.memory, &mut rewritten);
            }
            for event in rewritten {
                let number = self.written;
                self.written += 1;
                if self.cut {
                    continue;
                }
                let kind = if self.chaos.is_off() {
                    None
                } else {
                    self.chaos.decide(&mut self.rng)
                };
                if let Some(kind) = kind {
                    self.injected.0.push((number, kind));
                }
                match kind {
                    Some(Kind::Drop) => {}
                    Some(Kind::Malformed) => pending.raw(&malformed(&event)).end(),
                    Some(Kind::Disconnect) => {
                        self.cut = true;
                        // What the quirks hold came before this event.
                        let mut held = Vec::new();
                        self.quirks.flush(&mut self.memory, &mut held);
                        for event in &held {
                            pending.raw(event).end();
                        }
                        let at = sent + pending.len();
                        let earlier = match step {
                            Step::Cut { after_events } | Step::StreamError { after_events, .. } => {
                                *after_events <= at
                            }
                            _ => false,
                        };
                        if !earlier {
                            self.step_at = None;
                            *step = Step::Cut { after_events: at };
                        }
                    }
                    None => pending.raw(&event).end(),
                }
            }
            if step_now && !self.cut {
                self.step_at = None;
                if let Step::Cut { after_events } | Step::StreamError { after_events, .. } = step {
                    *after_events = sent + pending.len();
                }
            }
        }
    }
}

impl Drop for Shape {
    fn drop(&mut self) {
        if let Some(note) = self.note.take() {
            note(std::mem::take(&mut self.injected));
        }
    }
}

impl<G: Send + 'static> Pump<G> {
    /// The response body's frames, shaped by `shape`.
    pub(crate) fn shaped(
        mut self,
        mut shape: Shape,
    ) -> impl futures_util::Stream<Item = Item> + Send {
        // The first event, encoded by `new`, goes through the quirks and
        // chaos too.
        let first = std::mem::take(&mut self.pending);
        shape.hold_step(&mut self.step, &self.pending, self.sent);
        shape.admit(first, &mut self.pending, &mut self.step, self.sent);
        futures_util::stream::unfold((self, shape), |(pump, shape)| pump.next_shaped(shape))
    }

    async fn next_shaped(mut self, mut shape: Shape) -> Option<(Item, (Self, Shape))> {
        if let Some(held) = shape.held.take() {
            return Some((Ok(Frame::data(held)), (self, shape)));
        }
        if self.done {
            return None;
        }
        if !std::mem::replace(&mut shape.started, true) {
            if let Some(timing) = shape.timing {
                tokio::time::sleep(timing.first(&mut shape.rng)).await;
            }
        }
        while self.pending.is_empty() && !self.finished {
            let Some(event) = next_event(&mut self.events).await else {
                self.finished = true;
                break;
            };
            if let Some(timing) = shape.timing {
                let wait = timing.before(&event, &mut shape.rng);
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
            }
            let mut encoded = Events::default();
            self.finished |= event.is_terminal();
            self.encoder.encode(Wire::from(&event), &mut encoded);
            shape.admit(encoded, &mut self.pending, &mut self.step, self.sent);
        }
        if self.until_step() == Some(0) && (!self.pending.is_empty() || self.finished) {
            let (item, pump) = self.step_frame().await?;
            return Some((item, (pump, shape)));
        }
        if self.pending.is_empty() {
            return None;
        }
        let count = if self.delay.is_zero() {
            self.until_step()
                .map_or(self.pending.len(), |n| n.min(self.pending.len()))
        } else {
            if self.sent > 0 {
                tokio::time::sleep(self.delay).await;
            }
            1
        };
        self.sent += count;
        let mut bytes = self.pending.take(count);
        if shape.quirks.splits_utf8() && !shape.split {
            let at = if shape.binary {
                message_utf8_split(&bytes)
            } else {
                utf8_split(&bytes)
            };
            if let Some(at) = at {
                shape.split = true;
                shape.held = Some(bytes.split_off(at));
            }
        }
        Some((Ok(Frame::data(bytes)), (self, shape)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quirks::Quirks;
    use agentstream::message::{assistant, text, user, Context, StopReason};
    use agentstream::model::{Model, ScriptedModel, StreamOptions};
    use agentstream_wire::server::Encoder;
    use futures_util::StreamExt;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    /// The frames of a shaped pump for a text turn, and what chaos noted.
    fn shaped(manner: Manner, chaos: Chaos) -> (Vec<Bytes>, Injected) {
        let turn = assistant([text("Grüße")], StopReason::Stop);
        let context = Context::from_messages([user("hi").into()]);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let noted = Arc::new(Mutex::new(Injected::default()));
        let frames = runtime.block_on(async {
            let mut events = ScriptedModel::new([turn]).stream(&context, StreamOptions::default());
            let first = events.next().await.unwrap();
            let encoder = Encoder::new(agentstream_wire::Api::OpenAi, "id".into(), "m".into(), 0);
            let pump = Pump::new(encoder, Step::Model, Duration::ZERO, &first, events, ());
            let into = noted.clone();
            let note: Note = Box::new(move |injected| *into.lock().unwrap() = injected);
            let shape = Shape::new(manner, chaos, Rng::for_call(1, None, 0), note);
            pump.shaped(shape)
                .map(|frame| frame.unwrap().into_data().unwrap())
                .collect::<Vec<_>>()
                .await
        });
        let injected = noted.lock().unwrap().clone();
        (frames, injected)
    }

    #[test]
    fn split_utf8_writes_a_character_in_two_frames() {
        let manner = Manner {
            timing: None,
            quirks: Quirks::from_value(serde_json::json!(["splitUtf8"])).unwrap(),
        };
        let (frames, _) = shaped(manner, Chaos::default());
        let (plain, _) = shaped(Manner::default(), Chaos::default());
        assert_eq!(frames.concat(), plain.concat());
        let cut = frames
            .iter()
            .position(|frame| std::str::from_utf8(frame).is_err())
            .expect("a frame ending inside a character");
        let joined = [frames[cut].clone(), frames[cut + 1].clone()].concat();
        assert!(std::str::from_utf8(&joined).is_ok());
    }

    #[test]
    fn certain_drop_writes_nothing_and_notes_every_event() {
        let (frames, injected) = shaped(Manner::default(), Chaos::parse("drop=1").unwrap());
        assert!(frames.iter().all(|frame| frame.is_empty()), "{frames:?}");
        let (plain, _) = shaped(Manner::default(), Chaos::default());
        let events = String::from_utf8_lossy(&plain.concat())
            .matches("\n\n")
            .count();
        assert_eq!(injected.0.len(), events);
        assert!(injected.0.iter().all(|(_, kind)| *kind == Kind::Drop));
    }
}

#[cfg(test)]
mod held {
    //! A script's cut or error, or chaos's disconnect, right after an
    //! event a quirk holds: what was held is written before it.
    use super::*;
    use agentstream::message::{
        assistant, text, tool_call, user, AssistantMessage, Context, StopReason,
    };
    use agentstream::model::{Model, ScriptedModel, StreamOptions};
    use agentstream_wire::server::{ApiError, Encoder};
    use agentstream_wire::Api;
    use futures_util::StreamExt;

    /// A turn of two tool calls after a word of text.
    fn calls() -> AssistantMessage {
        assistant(
            [
                text("ok"),
                tool_call("call_1", "lookup", serde_json::json!({"city": "Paris"})),
                tool_call("call_2", "weather", serde_json::json!({"day": "Monday"})),
            ],
            StopReason::ToolUse,
        )
    }

    /// The body a shaped pump writes for `turn` on `api`, and whether it
    /// ended in a cut (an error item).
    fn body(api: Api, step: Step, quirks: &[&str], chaos: Chaos) -> (String, bool) {
        let context = Context::from_messages([user("hi").into()]);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut events =
                ScriptedModel::new([calls()]).stream(&context, StreamOptions::default());
            let first = events.next().await.unwrap();
            let encoder = Encoder::new(api, "id".into(), "m".into(), 0);
            let pump = Pump::new(encoder, step, Duration::ZERO, &first, events, ());
            let manner = Manner {
                timing: None,
                quirks: Quirks::from_value(serde_json::json!(quirks)).unwrap(),
            };
            let shape = Shape::new(manner, chaos, Rng::for_call(7, None, 0), Box::new(|_| {}));
            let mut body = Vec::new();
            let mut stream = std::pin::pin!(pump.shaped(shape));
            while let Some(item) = stream.next().await {
                match item {
                    Ok(frame) => body.extend_from_slice(&frame.into_data().unwrap()),
                    Err(_) => return (String::from_utf8(body).unwrap(), true),
                }
            }
            (String::from_utf8(body).unwrap(), false)
        })
    }

    use std::time::Duration;

    /// The script's two endings after `n` encoded events.
    fn endings(n: usize) -> [Step; 2] {
        [
            Step::Cut { after_events: n },
            Step::StreamError {
                after_events: n,
                error: ApiError::new(500, "scripted failure"),
            },
        ]
    }

    /// Checks that each ending after `n` events of `api` with `quirk`
    /// writes `held` (what the quirk held then) and not `later`.
    fn check(api: Api, quirk: &str, n: usize, held: &str, later: &str) {
        for step in endings(n) {
            let error = matches!(step, Step::StreamError { .. });
            let (body, cut) = body(api, step, &[quirk], Chaos::default());
            assert!(body.contains(held), "{quirk}: {held} missing in {body}");
            assert!(
                !body.contains(later),
                "{quirk}: {later} is past the end: {body}"
            );
            assert_eq!(cut, !error, "{quirk}: {body}");
            if error {
                assert!(body.contains("scripted failure"), "{body}");
                let at = body.find(held).unwrap_or(usize::MAX);
                assert!(at < body.find("scripted failure").unwrap_or(0), "{body}");
            }
        }
    }

    #[test]
    fn tool_calls_in_one_chunk_writes_the_held_start() {
        // Events 0..3: role, text, call_1's start (held, gathering).
        check(Api::OpenAi, "toolCallsInOneChunk", 3, "call_1", "Paris");
    }

    #[test]
    fn usage_only_final_chunk_writes_the_held_finish() {
        // Event 6 is the finish chunk, held for a usage chunk.
        check(
            Api::OpenAi,
            "usageOnlyFinalChunk",
            7,
            "tool_calls\"",
            "[DONE]",
        );
    }

    #[test]
    fn no_call_ids_writes_the_held_call() {
        // Events 0..2: the text, then `lookup`'s call (held for the end).
        check(Api::Gemini, "noCallIds", 2, "lookup", "weather");
    }

    #[test]
    fn interleaved_tool_blocks_writes_the_held_block() {
        // Events 0..6: the text block, then call_1's start and delta (held).
        check(
            Api::Anthropic,
            "interleavedToolBlocks",
            6,
            "Paris",
            "weather",
        );
    }
}

#[cfg(test)]
mod binary {
    //! Bedrock's event stream shaped: timing paces its messages,
    //! `splitUtf8` splits a character inside a payload, a cut counts
    //! messages.
    use super::*;
    use agentstream::message::{assistant, text, user, Context, StopReason};
    use agentstream::model::{Model, ModelEvent, ScriptedModel, StreamOptions};
    use agentstream_wire::bedrock::BedrockStream;
    use agentstream_wire::server::Encoder;
    use agentstream_wire::Api;
    use futures_util::StreamExt;
    use std::time::Duration;

    /// The frames of a shaped Bedrock pump for a text turn, with the
    /// paused clock's time after each frame.
    fn frames(manner: Manner, step: Step) -> (Vec<(Bytes, Duration)>, bool) {
        let turn = assistant([text("Grüße, Welt")], StopReason::Stop);
        let context = Context::from_messages([user("hi").into()]);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            let start = tokio::time::Instant::now();
            let mut events = ScriptedModel::new([turn]).stream(&context, StreamOptions::default());
            let first = events.next().await.unwrap();
            let encoder = Encoder::new(Api::Bedrock, "id".into(), "m".into(), 0);
            let pump = Pump::new(encoder, step, Duration::ZERO, &first, events, ());
            let shape = Shape::new(
                manner,
                Chaos::default(),
                Rng::for_call(3, None, 0),
                Box::new(|_| {}),
            )
            .binary(true);
            let mut out = Vec::new();
            let mut stream = std::pin::pin!(pump.shaped(shape));
            while let Some(item) = stream.next().await {
                match item {
                    Ok(frame) => out.push((frame.into_data().unwrap(), start.elapsed())),
                    Err(_) => return (out, true),
                }
            }
            (out, false)
        })
    }

    /// The text our Bedrock client decodes from `bytes`, fed in pieces.
    fn decoded(pieces: &[Bytes]) -> (String, usize) {
        let mut stream = BedrockStream::new("m", "amazon-bedrock", None);
        let mut events: Vec<ModelEvent> = Vec::new();
        for piece in pieces {
            events.extend(stream.feed(piece));
        }
        events.extend(stream.finish_input());
        let text = events
            .iter()
            .filter_map(|event| match event {
                ModelEvent::TextDelta { delta, .. } => Some(&**delta),
                _ => None,
            })
            .collect();
        (text, events.len())
    }

    fn manner(value: serde_json::Value, timing: Option<serde_json::Value>) -> Manner {
        Manner {
            timing: timing.map(|t| Timing::from_value(t).unwrap()),
            quirks: Quirks::from_value(value).unwrap(),
        }
    }

    #[test]
    fn split_utf8_splits_inside_a_payload_and_decodes_the_same() {
        let (plain, _) = frames(Manner::default(), Step::Model);
        let (split, _) = frames(manner(serde_json::json!(["splitUtf8"]), None), Step::Model);
        let plain: Vec<Bytes> = plain.into_iter().map(|(b, _)| b).collect();
        let split: Vec<Bytes> = split.into_iter().map(|(b, _)| b).collect();
        assert_eq!(split.concat(), plain.concat());
        assert_eq!(split.len(), plain.len() + 1);
        // Some frame ends inside a character: not valid UTF-8 where it ends.
        let at = split
            .iter()
            .position(|frame| frame.last().is_some_and(|b| *b >= 0xC0))
            .expect("a frame ending with a character's first byte");
        assert!(at + 1 < split.len());
        // The cut falls between the two bytes of "ü" (C3 BC), in a payload.
        let end: usize = split[..=at].iter().map(Bytes::len).sum();
        let all = plain.concat();
        assert_eq!(&all[end - 1..=end], "ü".as_bytes());
        assert_eq!(decoded(&split), decoded(&plain));
        assert_eq!(decoded(&split).0, "Grüße, Welt");
    }

    #[test]
    fn timing_paces_the_messages_on_the_paused_clock() {
        let timing = serde_json::json!({"ttftMs": 500, "tokensPerSecond": 4});
        let (paced, _) = frames(manner(serde_json::json!([]), Some(timing)), Step::Model);
        let (plain, _) = frames(Manner::default(), Step::Model);
        assert!(paced[0].1 >= Duration::from_millis(500), "{paced:?}");
        assert!(plain.iter().all(|(_, at)| at.is_zero()), "{plain:?}");
        let last = paced.last().map(|(_, at)| *at).unwrap_or_default();
        assert!(last > Duration::from_millis(500), "{paced:?}");
        let paced: Vec<Bytes> = paced.into_iter().map(|(b, _)| b).collect();
        let plain: Vec<Bytes> = plain.into_iter().map(|(b, _)| b).collect();
        assert_eq!(paced.concat(), plain.concat());
    }

    #[test]
    fn a_cut_counts_messages() {
        let (plain, _) = frames(Manner::default(), Step::Model);
        let all = plain
            .iter()
            .map(|(b, _)| b.clone())
            .collect::<Vec<_>>()
            .concat();
        let (cut, ended) = frames(
            manner(serde_json::json!(["splitUtf8"]), None),
            Step::Cut { after_events: 2 },
        );
        assert!(ended);
        let cut = cut.into_iter().map(|(b, _)| b).collect::<Vec<_>>().concat();
        let first = usize::try_from(u32::from_be_bytes(all[..4].try_into().unwrap())).unwrap();
        let second = usize::try_from(u32::from_be_bytes(
            all[first..first + 4].try_into().unwrap(),
        ))
        .unwrap();
        assert_eq!(cut, all[..first + second]);
    }
}
