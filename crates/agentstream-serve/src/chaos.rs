//! Chaos: events dropped, broken or cut, at random but reproducibly.
//!
//! `--chaos drop=P,malformed=P,disconnect=P` ([`ServerBuilder::chaos`](crate::ServerBuilder::chaos);
//! any of the three, each a probability from 0 to 1) applies to every
//! streamed answer the model gives (not to HTTP errors, cassettes or the
//! proxy); a request's [`CHAOS_HEADER`] (`x-agentstream-chaos`, the same
//! syntax) replaces it for that request (`x-agentstream-chaos: drop=0`
//! turns it off). For each SSE event of the stream, in order, with the
//! call's generator (the server's seed, the call's number and its test
//! id, see [`timing`](crate::timing)):
//!
//! - `disconnect`: the connection is cut before this event (the events
//!   before it are written first); nothing more is decided;
//! - else `malformed`: the event is written with its `data:` line cut in
//!   the middle of its JSON (for example `data: {"choices":[{"del` and
//!   the closing blank line), so the payload does not parse;
//! - else `drop`: the event is not written.
//!
//! What was injected is in the request log, as `"chaos": [{"event": N,
//! "kind": "drop"|"malformed"|"disconnect"}, …]` (`N` counting the
//! stream's SSE events from 0, as the encoder wrote them): in `GET
//! /v1/requests` (present once the stream injected something) and, in the
//! `--requests` file, as a line `{"call", "test"?, "chaos"}` written when
//! the stream ends.
//!
//! Bedrock's binary stream gets the same, per event-stream message (`N`
//! counting messages): `malformed` writes the message again with its JSON
//! payload cut in half and a valid prelude, headers and CRCs, so the
//! client's decoder yields it and its JSON parse fails (our Bedrock client
//! ends the stream with an error event; boto3 1.43.11's `converse_stream`,
//! tried by hand on 2026-12-06, raises nothing and yields each such event
//! with an empty body, `{'contentBlockDelta': {}}`).

use agentstream_wire::server::ApiError;
use serde_json::{json, Value};

use crate::timing::Rng;

/// The request header that sets a request's chaos, replacing the
/// server's: `x-agentstream-chaos: drop=P,malformed=P,disconnect=P`.
pub const CHAOS_HEADER: &str = "x-agentstream-chaos";

/// The probabilities of each kind of chaos, per SSE event.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Chaos {
    drop: f64,
    malformed: f64,
    disconnect: f64,
}

/// What chaos did to one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Drop,
    Malformed,
    Disconnect,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Drop => "drop",
            Kind::Malformed => "malformed",
            Kind::Disconnect => "disconnect",
        }
    }
}

impl Chaos {
    /// Parses `drop=P,malformed=P,disconnect=P` (any of the three, in any
    /// order; spaces around items allowed).
    ///
    /// ```
    /// use agentstream_serve::Chaos;
    ///
    /// assert!(Chaos::parse("drop=0.1, disconnect=0.01").is_ok());
    /// let error = Chaos::parse("drop=0.1,lag=2").unwrap_err();
    /// assert!(error.contains("lag=2"));
    /// ```
    ///
    /// # Errors
    /// A message naming the bad item: an unknown kind, a kind given twice,
    /// or a probability that is not a number from 0 to 1.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut chaos = Self::default();
        let mut seen: Vec<&str> = Vec::new();
        for item in text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
        {
            let bad = |why: &str| format!("bad chaos item {item:?}: {why}");
            let (kind, p) = item.split_once('=').ok_or_else(|| bad("expected KIND=P"))?;
            let kind = kind.trim();
            if !["drop", "malformed", "disconnect"].contains(&kind) {
                return Err(bad("the kinds are drop, malformed and disconnect"));
            }
            let p: f64 = p
                .trim()
                .parse()
                .ok()
                .filter(|p: &f64| (0.0..=1.0).contains(p))
                .ok_or_else(|| bad("the probability must be a number from 0 to 1"))?;
            if seen.contains(&kind) {
                return Err(bad("given twice"));
            }
            seen.push(kind);
            match kind {
                "drop" => chaos.drop = p,
                "malformed" => chaos.malformed = p,
                _ => chaos.disconnect = p,
            }
        }
        Ok(chaos)
    }

    /// The chaos of a request's [`CHAOS_HEADER`] value.
    pub(crate) fn of_header(value: &[u8]) -> Result<Self, ApiError> {
        std::str::from_utf8(value)
            .map_err(|_| "not UTF-8".to_owned())
            .and_then(Self::parse)
            .map_err(|why| ApiError::new(400, format!("the {CHAOS_HEADER} header: {why}")))
    }

    /// Whether no event is ever touched.
    pub(crate) fn is_off(&self) -> bool {
        self.drop == 0.0 && self.malformed == 0.0 && self.disconnect == 0.0
    }

    /// What happens to the next event.
    pub(crate) fn decide(&self, rng: &mut Rng) -> Option<Kind> {
        // Every draw is made, so one kind's probability does not move the
        // others' draws.
        let (cut, broken, dropped) = (rng.unit(), rng.unit(), rng.unit());
        if cut < self.disconnect {
            Some(Kind::Disconnect)
        } else if broken < self.malformed {
            Some(Kind::Malformed)
        } else if dropped < self.drop {
            Some(Kind::Drop)
        } else {
            None
        }
    }
}

/// `event` (an SSE event's text, without its closing blank line) with
/// its last `data:` line cut in the middle of its payload.
pub(crate) fn malformed(event: &str) -> String {
    let data = event.rfind("data: ").map_or(0, |at| at + 6);
    let mut cut = data + (event.len() - data) / 2;
    // Payload of at least 2 bytes keeps at least one; never mid-character.
    while cut > data && !event.is_char_boundary(cut) {
        cut -= 1;
    }
    if cut == data && event.len() > data {
        cut = data + event[data..].chars().next().map_or(0, char::len_utf8);
    }
    event[..cut].to_owned()
}

/// An event-stream `message` (Bedrock's) with its payload cut in half
/// (the JSON broken, as [`malformed`] breaks an SSE event's), written again
/// with a valid prelude, headers and CRCs: a client's decoder yields it and
/// its JSON parse fails. A message that does not decode is given back as
/// it is.
pub(crate) fn malformed_message(message: &[u8]) -> Vec<u8> {
    use agentstream_wire::eventstream::{encode_event, EventStreamDecoder};
    let mut decoder = EventStreamDecoder::new();
    decoder.feed(message);
    let Some(Ok(decoded)) = decoder.next_message() else {
        return message.to_vec();
    };
    let event_type = decoded.header_str(":event-type").unwrap_or("chunk");
    let payload = decoded.payload();
    let half = &payload[..payload.len() / 2];
    let mut out = Vec::with_capacity(message.len());
    match encode_event(event_type, half, &mut out) {
        Ok(()) => out,
        Err(_) => message.to_vec(),
    }
}

/// What chaos did to one stream: each touched event's number and kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Injected(pub(crate) Vec<(usize, Kind)>);

impl Injected {
    /// `[{"event": N, "kind": K}, …]`.
    pub(crate) fn to_json(&self) -> Value {
        self.0
            .iter()
            .map(|(event, kind)| json!({"event": event, "kind": kind.name()}))
            .collect()
    }
}

/// What chaos injected in the answers still listed, by test id and call
/// number (the newest [`MAX_KEPT_REQUESTS`](crate::MAX_KEPT_REQUESTS)).
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    entries: std::collections::BTreeMap<(Option<String>, usize), Injected>,
    order: std::collections::VecDeque<(Option<String>, usize)>,
}

impl Ledger {
    /// Notes what chaos did to call `call` of `test`.
    pub(crate) fn note(&mut self, test: Option<&str>, call: usize, injected: Injected) {
        let key = (test.map(str::to_owned), call);
        if self.entries.insert(key.clone(), injected).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > crate::MAX_KEPT_REQUESTS {
            if let Some(old) = self.order.pop_front() {
                self.entries.remove(&old);
            }
        }
    }

    /// The entries of `test` alone.
    pub(crate) fn of_test(&self, test: Option<&str>) -> Self {
        let mut copy = Self::default();
        for ((of, call), injected) in &self.entries {
            if of.as_deref() == test {
                copy.note(test, *call, injected.clone());
            }
        }
        copy
    }

    /// `line` (a request's JSON line, `{"call":N,…}`) with its `"chaos"`
    /// field added, when chaos touched that call of `test`.
    pub(crate) fn splice(&self, test: Option<&str>, line: bytes::Bytes) -> bytes::Bytes {
        let Some(call) = call_of(&line) else {
            return line;
        };
        let key = (test.map(str::to_owned), call);
        match (self.entries.get(&key), line.strip_suffix(b"}")) {
            (Some(injected), Some(head)) => {
                let mut out = Vec::with_capacity(line.len() + 32 * injected.0.len());
                out.extend_from_slice(head);
                out.extend_from_slice(b",\"chaos\":");
                out.extend_from_slice(injected.to_json().to_string().as_bytes());
                out.push(b'}');
                out.into()
            }
            _ => line,
        }
    }
}

/// The call number a request's line starts with.
fn call_of(line: &[u8]) -> Option<usize> {
    let rest = line.strip_prefix(b"{\"call\":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_checked_and_named() {
        assert_eq!(
            Chaos::parse("drop=0.5").unwrap(),
            Chaos {
                drop: 0.5,
                ..Chaos::default()
            }
        );
        for (bad, named) in [
            ("drop=2", "drop=2"),
            ("drop=x", "drop=x"),
            ("lag=0.1", "lag=0.1"),
            ("lag=2", "the kinds are"),
            ("drop", "drop"),
            ("drop=0.1,drop=0.2", "drop=0.2"),
            ("drop=NaN", "drop=NaN"),
        ] {
            let error = Chaos::parse(bad).unwrap_err();
            assert!(error.contains(named), "{bad}: {error}");
        }
        assert!(Chaos::parse("").unwrap().is_off());
    }

    #[test]
    fn certain_chaos_always_happens_and_none_never() {
        let mut rng = Rng::for_call(1, None, 0);
        let all = Chaos::parse("disconnect=1").unwrap();
        let none = Chaos::parse("drop=0").unwrap();
        for _ in 0..100 {
            assert_eq!(all.decide(&mut rng), Some(Kind::Disconnect));
            assert_eq!(none.decide(&mut rng), None);
        }
    }

    #[test]
    fn a_malformed_event_does_not_parse() {
        let event = "event: ping\ndata: {\"type\":\"ping\"}";
        let broken = malformed(event);
        assert_eq!(broken, "event: ping\ndata: {\"type\"");
        let payload = broken.rsplit("data: ").next().unwrap();
        assert!(serde_json::from_str::<Value>(payload).is_err());
    }
}
