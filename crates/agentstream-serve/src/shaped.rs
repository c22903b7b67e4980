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
use crate::quirks::{utf8_split, Memory, Quirks};
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
        }
    }

    /// Passes encoded events through the quirks and chaos into `pending`;
    /// a disconnect becomes `step`'s cut (unless the script's own error or
    /// cut comes first). `sent` events were sent already.
    fn admit(&mut self, events: Vec<String>, pending: &mut Events, step: &mut Step, sent: usize) {
        for event in events {
            let text = event.strip_suffix("\n\n").unwrap_or(&event).to_owned();
            let mut rewritten = Vec::new();
            self.quirks.rewrite(&mut self.memory, text, &mut rewritten);
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
                        let at = sent + pending.len();
                        let earlier = match step {
                            Step::Cut { after_events } | Step::StreamError { after_events, .. } => {
                                *after_events <= at
                            }
                            _ => false,
                        };
                        if !earlier {
                            *step = Step::Cut { after_events: at };
                        }
                    }
                    None => pending.raw(&event).end(),
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
        let first = std::mem::take(&mut self.pending).into_strings();
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
            shape.admit(
                encoded.into_strings(),
                &mut self.pending,
                &mut self.step,
                self.sent,
            );
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
            if let Some(at) = utf8_split(&bytes) {
                shape.split = true;
                shape.held = Some(bytes.split_off(at));
            }
        }
        Some((Ok(Frame::data(bytes)), (self, shape)))
    }
}
