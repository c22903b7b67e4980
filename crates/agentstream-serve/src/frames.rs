//! Helpers the protocol encoders share: SSE events written one after
//! another into one buffer (no allocation per event), splitting deltas
//! into chunks, and the pump that carries a call's events to its response
//! body.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use agentstream::model::{ModelEvent, ModelStream};
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::{FutureExt, StreamExt};
use hyper::body::Frame;
use serde_json::Value;

use crate::error::ApiError;
use crate::script::Step;
use crate::wire::Wire;
use crate::{anthropic, google, openai, responses};

/// SSE events written one after another into one buffer, with where each
/// ends, so a response sends what is ready as one frame and a script step
/// can still count events.
///
/// An event is written as [`start`](Self::start), its JSON payload
/// (compact JSON holds no line break, so the data is one `data:` line),
/// then [`end`](Self::end): the same bytes `agentstream_wire`'s
/// `encode_event` writes for such an event.
#[derive(Debug, Default)]
pub(crate) struct Events {
    buffer: BytesMut,
    /// Where each event not taken yet ends, as an offset in `buffer`.
    ends: VecDeque<usize>,
}

impl Events {
    /// No events yet, with room for `bytes` of them.
    pub(crate) fn with_capacity(bytes: usize) -> Self {
        Self {
            buffer: BytesMut::with_capacity(bytes),
            ends: VecDeque::with_capacity(16),
        }
    }

    /// Starts an event with an optional event type (never `message` nor
    /// holding a line break: the names used here are constants).
    pub(crate) fn start(&mut self, event: Option<&str>) -> &mut Self {
        if let Some(name) = event {
            self.raw("event: ").raw(name).raw("\n");
        }
        self.raw("data: ")
    }

    /// Ends the event started last.
    pub(crate) fn end(&mut self) {
        self.raw("\n\n");
        self.ends.push_back(self.buffer.len());
    }

    /// Appends `text` as it is (JSON text, or the SSE framing).
    pub(crate) fn raw(&mut self, text: &str) -> &mut Self {
        self.buffer.extend_from_slice(text.as_bytes());
        self
    }

    /// Appends `text` as a JSON string, quotes included.
    pub(crate) fn string(&mut self, text: &str) -> &mut Self {
        if plain(text) {
            self.buffer.reserve(text.len() + 2);
            self.raw("\"").raw(text).raw("\"");
        } else {
            // Writing a `&str` into memory cannot fail.
            let _ = serde_json::to_writer((&mut self.buffer).writer(), text);
        }
        self
    }

    /// Appends `n` as a JSON number.
    pub(crate) fn number(&mut self, n: u64) -> &mut Self {
        self.raw(itoa::Buffer::new().format(n))
    }

    /// Appends `value` as compact JSON.
    pub(crate) fn value(&mut self, value: &Value) -> &mut Self {
        // A `Value` always serializes.
        let _ = serde_json::to_writer((&mut self.buffer).writer(), value);
        self
    }

    /// One whole event carrying `payload`.
    pub(crate) fn json(&mut self, event: Option<&str>, payload: &Value) {
        self.start(event).value(payload).end();
    }

    /// The bytes of the events written and not taken yet.
    pub(crate) fn bytes(&self) -> usize {
        self.buffer.len()
    }

    /// How many events are written and not taken yet.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The first `count` events (at most all), as one piece of bytes.
    pub(crate) fn take(&mut self, count: usize) -> Bytes {
        let count = count.min(self.ends.len());
        let Some(cut) = count.checked_sub(1).map(|last| self.ends[last]) else {
            return Bytes::new();
        };
        self.ends.drain(..count);
        for end in &mut self.ends {
            *end -= cut;
        }
        self.buffer.split_to(cut).freeze()
    }

    /// Every event, each as its own text.
    pub(crate) fn into_strings(mut self) -> Vec<String> {
        let mut strings = Vec::with_capacity(self.len());
        while self.len() > 0 {
            let event = self.take(1);
            // Only text is ever written.
            strings.push(String::from_utf8_lossy(&event).into_owned());
        }
        strings
    }
}

/// Appends `text` as a JSON string, quotes included (for text written
/// once per call; events use [`Events::string`]).
pub(crate) fn push_json_str(out: &mut String, text: &str) {
    if plain(text) {
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        // A `&str` always serializes.
        out.push_str(&serde_json::to_string(text).unwrap_or_default());
    }
}

/// Whether `text` is its own JSON string body: no quote, backslash or
/// control character, the only characters serde_json escapes. Such text
/// is copied as it is, the same bytes serde_json writes, without its
/// writer's calls per piece. (An escaper of our own for the other texts
/// was slower than serde_json's: 86.2k -> 87.6k instructions per call.)
fn plain(text: &str) -> bool {
    !text.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Splits `text` into up to `chunks` pieces at character boundaries; an
/// empty text is one empty piece.
pub(crate) fn split(text: &str, chunks: usize) -> impl Iterator<Item = &str> {
    let size = text.len().div_ceil(chunks.max(1)).max(1);
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        if current.len() <= size {
            rest = None;
            return Some(current);
        }
        let mut cut = size;
        while !current.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = current.split_at(cut);
        rest = Some(tail);
        Some(piece)
    })
}

/// The room a pump's buffer starts with.
pub(crate) const EVENTS_CAPACITY: usize = 4 << 10;

/// The most bytes of events gathered into one frame while the model has
/// more ready.
const FRAME_BYTES: usize = 64 << 10;

/// How long a cut waits for the events before it to be written.
const CUT_GRACE: Duration = Duration::from_millis(20);

/// The protocol a stream is encoded in.
pub(crate) enum Encoder {
    OpenAi(openai::StreamEncoder),
    Anthropic(anthropic::StreamEncoder),
    Responses(responses::StreamEncoder),
    Google(google::StreamEncoder),
}

impl Encoder {
    /// Appends the SSE events of `step`.
    pub(crate) fn encode(&mut self, step: Wire<'_>, out: &mut Events) {
        match self {
            Encoder::OpenAi(e) => e.encode_into(step, out),
            Encoder::Anthropic(e) => e.encode_into(step, out),
            Encoder::Responses(e) => e.encode_into(step, out),
            Encoder::Google(e) => e.encode_into(step, out),
        }
    }

    fn error(&mut self, error: &ApiError, out: &mut Events) {
        match self {
            Encoder::OpenAi(e) => e.error_into(error, out),
            Encoder::Anthropic(e) => e.error_into(error, out),
            Encoder::Responses(e) => e.error_into(error, out),
            Encoder::Google(e) => e.error_into(error, out),
        }
    }
}

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
        while self.pending.len() == 0 && !self.finished {
            match next_event(&mut self.events).await {
                Some(event) => self.encode(&event),
                None => self.finished = true,
            }
        }
        self.encode_ready();
        if self.until_step() == Some(0) && (self.pending.len() > 0 || self.finished) {
            return self.step_frame().await;
        }
        if self.pending.len() == 0 {
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

/// Asserts that two SSE texts are the same frames: the same lines, each
/// `data:` payload the same JSON value (the key order of a `serde_json`
/// tree depends on whether some crate of the build turns on its
/// `preserve_order` feature, so bytes are not compared).
#[cfg(test)]
pub(crate) fn assert_same_frames(left: &str, right: &str) {
    let lines = |text: &str| -> Vec<Result<Value, String>> {
        text.split('\n')
            .map(|line| match line.strip_prefix("data: ") {
                Some(data) => serde_json::from_str(data).map_err(|e| format!("{e}: {data}")),
                None => Err(line.to_owned()),
            })
            .collect()
    };
    assert_eq!(lines(left), lines(right), "{left}\n!=\n{right}");
}

/// The SSE text of one event carrying `payload`, as `agentstream_wire`
/// encodes it: what the encoders' text must match.
#[cfg(test)]
pub(crate) fn wire_event(event: Option<&str>, payload: &Value) -> String {
    let mut sse = agentstream_wire::sse::SseEvent::message(payload.to_string());
    if let Some(name) = event {
        sse = sse.with_event(name);
    }
    let mut out = String::new();
    agentstream_wire::sse::encode_event(&sse, &mut out).unwrap();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_the_bytes_serde_json_writes() {
        let ascii: String = (0..=0x7f_u8).map(char::from).collect();
        for text in [
            "",
            "plain",
            "a \"quote\"",
            "back\\slash",
            "tab\tnew\nline",
            "\u{0}\u{1f}",
            "\u{7f} del",
            "caf\u{e9} \u{1f600}",
            "</script>",
            "\u{2028}",
            "\u{8}\u{c}\r\u{b}\u{1b}[0m",
            "\"\\\"",
            "end\\",
            &ascii,
        ] {
            let expected = serde_json::to_string(text).unwrap();
            let mut events = Events::default();
            events.string(text);
            assert_eq!(events.buffer.as_ref(), expected.as_bytes(), "{text:?}");
            let mut out = String::from("x");
            push_json_str(&mut out, text);
            assert_eq!(out, format!("x{expected}"));
        }
    }

    #[test]
    fn numbers_are_decimal() {
        let mut events = Events::default();
        events.number(0).raw(",").number(u64::MAX);
        assert_eq!(events.buffer.as_ref(), format!("0,{}", u64::MAX).as_bytes());
    }

    fn split(text: &str, chunks: usize) -> Vec<&str> {
        super::split(text, chunks).collect()
    }

    #[test]
    fn split_keeps_text_and_char_boundaries() {
        assert_eq!(split("", 3), [""]);
        assert_eq!(split("abcdef", 1), ["abcdef"]);
        assert_eq!(split("abcdef", 3), ["ab", "cd", "ef"]);
        assert_eq!(split("abcdefg", 3), ["abc", "def", "g"]);
        assert_eq!(split("ab", 5), ["a", "b"]);
        assert_eq!(split("héllo wörld", 4).concat(), "héllo wörld");
        assert!(split("日本語テキスト", 4).len() <= 4);
    }

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
        let encoder = || Encoder::OpenAi(openai::StreamEncoder::new("id", "m", 0).with_chunks(3));
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

    #[test]
    fn events_are_the_wire_encoders_bytes_and_are_taken_whole() {
        let payloads = [
            (None, json!({"a": "line\nbreak\r\n \"q\" é 😀 \u{1}"})),
            (Some("content_block_stop"), json!({"index": 3})),
            (Some("ping"), json!({"type": "ping"})),
        ];
        let mut events = Events::default();
        let mut expected = Vec::new();
        for (name, payload) in &payloads {
            events.json(*name, payload);
            expected.push(wire_event(*name, payload));
        }
        assert_eq!(events.len(), 3);
        assert_eq!(events.take(2), expected[..2].concat().as_bytes());
        assert_eq!(events.len(), 1);
        events.start(None).string("x\"y").raw(",").number(42).end();
        assert_eq!(
            events.into_strings(),
            [expected[2].clone(), "data: \"x\\\"y\",42\n\n".to_owned()]
        );
        assert_eq!(Events::default().take(5), Bytes::new());
    }
}
