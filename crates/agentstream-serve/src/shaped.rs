//! A pump whose stream is shaped: paced by the turn's [timing](crate::timing),
//! rewritten by its [quirks](crate::quirks), and touched by
//! [chaos](crate::Chaos). Used only for the calls that ask for one of
//! them; every other call takes the plain pump's path unchanged.

use agentstream_wire::server::{Events, Wire};
use bytes::Bytes;
use hyper::body::Frame;

use super::{next_event, Item, Pump};
use crate::chaos::{malformed, malformed_message, Chaos, Injected, Kind};
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
    /// payload, chaos drops, breaks or cuts messages.
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
                let message = events.take(1);
                self.encoded += 1;
                match self.decide() {
                    _ if self.cut => {}
                    Some(Kind::Drop) => {}
                    Some(Kind::Malformed) => pending.frame(&malformed_message(&message)),
                    Some(Kind::Disconnect) => {
                        self.cut = true;
                        self.disconnect(step, sent + pending.len());
                    }
                    None => pending.frame(&message),
                }
                if self.step_at == Some(self.encoded) {
                    self.place_step(step, sent + pending.len());
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
                match self.decide() {
                    _ if self.cut => {}
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
                        self.disconnect(step, sent + pending.len());
                    }
                    None => pending.raw(&event).end(),
                }
            }
            if step_now {
                self.place_step(step, sent + pending.len());
            }
        }
    }
}

impl Shape {
    /// Chaos's decision for the next written event (counted even after a
    /// cut), noted when it injects something; `None` once cut.
    fn decide(&mut self) -> Option<Kind> {
        let number = self.written;
        self.written += 1;
        if self.cut || self.chaos.is_off() {
            return None;
        }
        let kind = self.chaos.decide(&mut self.rng)?;
        self.injected.0.push((number, kind));
        Some(kind)
    }

    /// The script's cut or error, its encoded events all admitted, comes
    /// after `at` written events (unless chaos cut the stream first).
    fn place_step(&mut self, step: &mut Step, at: usize) {
        if self.cut {
            return;
        }
        self.step_at = None;
        if let Step::Cut { after_events } | Step::StreamError { after_events, .. } = step {
            *after_events = at;
        }
    }

    /// Chaos's disconnect after `at` written events becomes `step`'s cut,
    /// unless the script's own cut or error comes first.
    fn disconnect(&mut self, step: &mut Step, at: usize) {
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
#[path = "shaped_tests.rs"]
mod shaped_tests;
