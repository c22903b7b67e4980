//! The pump that carries a call's events to its response body, encoded
//! by the protocol's stream encoder into the wire crate's
//! [`Events`].

use std::io;
use std::time::Duration;

use agentstream::model::{ModelEvent, ModelStream};
use agentstream_wire::server::{Encoder, Events, Wire};
use bytes::Bytes;
use futures_util::{FutureExt, StreamExt};
use hyper::body::Frame;

use crate::script::Step;

#[path = "shaped.rs"]
mod shaped;
pub(crate) use shaped::Shape;

/// The room a pump's buffer starts with.
pub(crate) const EVENTS_CAPACITY: usize = 4 << 10;

/// The most bytes of events gathered into one frame while the model has
/// more ready.
const FRAME_BYTES: usize = 64 << 10;

/// How long a cut waits for the events before it to be written.
const CUT_GRACE: Duration = Duration::from_millis(20);

type Item = Result<Frame<Bytes>, io::Error>;

/// One call's events on their way to its response body, polled by the
/// connection itself: the events ready at once go out as one frame (one
/// write), and the client going away drops the pump, which aborts the
/// call (through `guard`, dropped with it).
pub(crate) struct Pump<G> {
    encoder: Encoder,
    step: Step,
    delay: Duration,
    events: ModelStream,
    /// SSE events encoded and not sent yet.
    pending: Events,
    /// SSE events sent.
    sent: usize,
    /// The model's terminal event was encoded.
    finished: bool,
    /// The body ended (a stream error or cut was sent).
    done: bool,
    _guard: G,
}

/// The next event of `events`, polled without a waker first: a model
/// that yields between deltas (as the scripted player does) has its next
/// event ready at once, and the wake it asks for while this task runs
/// would only reschedule the task (on tokio's multi-thread runtime, a task
/// woken while it runs also wakes a parked worker, which finds nothing to
/// do). Only a model with nothing ready is awaited.
pub(crate) async fn next_event(events: &mut ModelStream) -> Option<ModelEvent> {
    match events.next().now_or_never() {
        Some(event) => event,
        None => events.next().await,
    }
}

impl<G: Send + 'static> Pump<G> {
    /// A pump for `events` whose `first` event was taken already.
    pub(crate) fn new(
        encoder: Encoder,
        step: Step,
        delay: Duration,
        first: &ModelEvent,
        events: ModelStream,
        guard: G,
    ) -> Self {
        let mut pump = Self {
            encoder,
            step,
            delay,
            events,
            // Most turns' events fit, so the buffer never grows.
            pending: Events::with_capacity(EVENTS_CAPACITY),
            sent: 0,
            finished: false,
            done: false,
            _guard: guard,
        };
        pump.encode(first);
        pump
    }

    /// The response body's frames.
    pub(crate) fn frames(self) -> impl futures_util::Stream<Item = Item> + Send {
        futures_util::stream::unfold(self, Self::next)
    }

    fn encode(&mut self, event: &ModelEvent) {
        self.finished |= event.is_terminal();
        self.encoder.encode(Wire::from(event), &mut self.pending);
    }

    /// Encodes the events the model has ready now (without a delay, they
    /// go in the same frame, up to [`FRAME_BYTES`]).
    fn encode_ready(&mut self) {
        while self.delay.is_zero() && !self.finished && self.pending.bytes() < FRAME_BYTES {
            match self.events.next().now_or_never() {
                Some(Some(event)) => self.encode(&event),
                Some(None) => self.finished = true,
                None => break,
            }
        }
    }

    /// SSE events to send before the step's error or cut, if it has one.
    fn until_step(&self) -> Option<usize> {
        match &self.step {
            Step::StreamError { after_events, .. } | Step::Cut { after_events } => {
                Some(after_events.saturating_sub(self.sent))
            }
            _ => None,
        }
    }

    async fn next(mut self) -> Option<(Item, Self)> {
        if self.done {
            return None;
        }
        // Events that write nothing (a text block's start, in OpenAI's
        // form) are skipped: the body ends only after the terminal event.
        while self.pending.is_empty() && !self.finished {
            match next_event(&mut self.events).await {
                Some(event) => self.encode(&event),
                None => self.finished = true,
            }
        }
        self.encode_ready();
        if self.until_step() == Some(0) && (!self.pending.is_empty() || self.finished) {
            return self.step_frame().await;
        }
        if self.pending.is_empty() {
            return None;
        }
        if !self.delay.is_zero() {
            if self.sent > 0 {
                tokio::time::sleep(self.delay).await;
            }
            self.sent += 1;
            return Some((Ok(Frame::data(self.pending.take(1))), self));
        }
        let count = self
            .until_step()
            .map_or(self.pending.len(), |n| n.min(self.pending.len()));
        self.sent += count;
        Some((Ok(Frame::data(self.pending.take(count))), self))
    }

    /// The step's error event, or its cut.
    async fn step_frame(mut self) -> Option<(Item, Self)> {
        self.done = true;
        match std::mem::replace(&mut self.step, Step::Model) {
            Step::StreamError { error, .. } => {
                let mut out = Events::default();
                self.encoder.error(&error, &mut out);
                let count = out.len();
                Some((Ok(Frame::data(out.take(count))), self))
            }
            _ => {
                // hyper drops its write buffer when a body fails: give it a
                // moment to write out the events before the cut.
                tokio::time::sleep(CUT_GRACE).await;
                Some((Err(io::Error::other("the script cut the connection")), self))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The frames a pump sends for a scripted turn, and the events the
    /// encoder gives for the same turn one by one.
    fn pumped(delay: Duration) -> (Vec<Bytes>, String) {
        use agentstream::message::{assistant, text, tool_call, user, Context, StopReason};
        use agentstream::model::{Model, ScriptedModel, StreamOptions};
        let turn = assistant(
            [
                text("Let me look that up."),
                tool_call("call_1", "weather", json!({"city": "Paris"})),
            ],
            StopReason::ToolUse,
        );
        let context = Context::from_messages([user("weather?").into()]);
        let stream =
            || ScriptedModel::new([turn.clone()]).stream(&context, StreamOptions::default());
        let encoder = || {
            Encoder::OpenAi(
                agentstream_wire::openai::encode::StreamEncoder::new("id", "m", 0).with_chunks(3),
            )
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut events = stream();
            let first = events.next().await.unwrap();
            let frames: Vec<Bytes> = Pump::new(encoder(), Step::Model, delay, &first, events, ())
                .frames()
                .map(|frame| frame.unwrap().into_data().unwrap())
                .collect()
                .await;
            let mut one_by_one = Events::default();
            let mut encoder = encoder();
            let mut events = stream();
            while let Some(event) = events.next().await {
                encoder.encode(Wire::from(&event), &mut one_by_one);
            }
            (frames, one_by_one.into_strings().concat())
        })
    }

    #[test]
    fn a_turn_whose_events_are_ready_goes_out_as_one_frame() {
        // The scripted player has every event ready: the whole turn goes
        // out at once (the first event with the rest), the same bytes as
        // event by event.
        let (frames, expected) = pumped(Duration::ZERO);
        assert_eq!(frames.len(), 1, "{frames:?}");
        assert_eq!(String::from_utf8_lossy(&frames[0]), expected);
        // With a delay, one frame per event, and the events that write
        // nothing (the text block's start and end) do not end the body.
        let (frames, expected) = pumped(Duration::from_millis(1));
        assert_eq!(String::from_utf8_lossy(&frames.concat()), expected);
        assert_eq!(frames.len(), expected.matches("\n\n").count());
    }
}
