//! Answers written once and filled in per call.
//!
//! A plain scripted turn is written from its message (see
//! [`answer`](crate::answer)); only the answer's id and its `created`
//! time change from one call of the same turn to the next. A turn that
//! answers again (a repeated script element, a rule's reply, a model that
//! plays one shared turn) is kept as a *template*: the bytes it wrote,
//! with the places of the id and the time marked, so a call copies the
//! bytes and fills those in instead of encoding the message again.
//!
//! A template is made only on a turn's second answer (a turn that
//! answers once costs one lookup; a message made for one call, which
//! nothing else holds, not even that), and only after it has proved itself:
//! it is made from the answer written with one made-up id and time, and
//! filled in with a second pair it must give the bytes the encoder writes
//! for that pair. Anything else the id or the time might change (an id
//! escaped, cut, or used to make another) fails that check, and the turn
//! is then always encoded. At most [`MAX_TEMPLATES`] turns are kept,
//! each with its message (so a message's address is never reused while
//! it names a template).

use std::sync::{Arc, Mutex};

use agentstream::message::AssistantMessage;
use agentstream::model::DoneReason;
use agentstream_wire::Api;
use bytes::{BufMut, Bytes, BytesMut};

/// How many turns the server keeps templates (or first answers) of.
pub(crate) const MAX_TEMPLATES: usize = 64;

/// The two made-up ids and times a template is made and checked with:
/// text no encoder writes by itself.
const PROBES: [(&str, u64); 2] = [
    ("agentstream_template_probe_Qz7", 9_111_111_111),
    ("agentstream_template_probe_Kx4", 8_222_222_222),
];

/// What decides an answer's bytes besides its id and time (the server's
/// chunks and pings are the same for every call).
pub(crate) struct Key<'a> {
    /// The turn's message: the same one, not an equal one.
    pub(crate) message: &'a Arc<AssistantMessage>,
    pub(crate) api: Api,
    /// The model named in the answer.
    pub(crate) name: &'a str,
    pub(crate) include_usage: bool,
    pub(crate) full_sequence: bool,
    pub(crate) reason: DoneReason,
}

/// A kept turn: its key's parts, owned, and what is known of it.
struct Entry {
    message: Arc<AssistantMessage>,
    api: Api,
    name: String,
    include_usage: bool,
    full_sequence: bool,
    reason: DoneReason,
    known: Known,
}

impl Entry {
    fn is(&self, key: &Key<'_>) -> bool {
        Arc::ptr_eq(&self.message, key.message)
            && self.api == key.api
            && self.include_usage == key.include_usage
            && self.full_sequence == key.full_sequence
            && self.reason == key.reason
            && self.name == key.name
    }
}

/// What is known of a kept turn.
#[derive(Clone)]
enum Known {
    /// It answered once.
    Seen,
    /// Its template.
    Ready(Arc<Template>),
    /// Its answer cannot be filled in: always encoded.
    Unusable,
}

/// The templates of a server: the kept turns, the oldest replaced first.
#[derive(Default)]
pub(crate) struct Templates {
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    entries: Vec<Entry>,
    /// The entry replaced next once there are [`MAX_TEMPLATES`].
    next: usize,
}

impl std::fmt::Debug for Templates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Templates").finish_non_exhaustive()
    }
}

impl Templates {
    /// The answer `write(id, created)` writes for `key`, from its template
    /// when it has one; its template is made on its second answer.
    pub(crate) fn answer(
        &self,
        key: &Key<'_>,
        id: &str,
        created: u64,
        write: impl Fn(&str, u64) -> Bytes,
    ) -> Bytes {
        // A message nothing else holds (a copy made for this call, to
        // give its tool calls ids) cannot answer again.
        if Arc::strong_count(key.message) == 1 {
            return write(id, created);
        }
        let known = self.known(key);
        match known {
            Some(Known::Ready(template)) => template.fill(id, created),
            Some(Known::Unusable) => write(id, created),
            Some(Known::Seen) => {
                let template = Template::proved(&write);
                let body = match &template {
                    Some(template) => template.fill(id, created),
                    None => write(id, created),
                };
                let known = template.map_or(Known::Unusable, |t| Known::Ready(Arc::new(t)));
                self.set(key, known);
                body
            }
            None => {
                self.set(key, Known::Seen);
                write(id, created)
            }
        }
    }

    fn known(&self, key: &Key<'_>) -> Option<Known> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let entry = kept.entries.iter().find(|entry| entry.is(key))?;
        Some(entry.known.clone())
    }

    fn set(&self, key: &Key<'_>, known: Known) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = kept.entries.iter_mut().find(|entry| entry.is(key)) {
            entry.known = known;
            return;
        }
        let entry = Entry {
            message: key.message.clone(),
            api: key.api,
            name: key.name.to_owned(),
            include_usage: key.include_usage,
            full_sequence: key.full_sequence,
            reason: key.reason,
            known,
        };
        if kept.entries.len() < MAX_TEMPLATES {
            kept.entries.push(entry);
            return;
        }
        let at = kept.next % MAX_TEMPLATES;
        kept.next = at + 1;
        if let Some(slot) = kept.entries.get_mut(at) {
            *slot = entry;
        }
    }
}

/// A place in a template filled per call.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Hole {
    Id,
    Created,
}

/// An answer's bytes with the places of its id and time.
#[derive(Debug)]
pub(crate) struct Template {
    /// The answer as written with the first probe, holes included.
    text: Bytes,
    /// Each hole: where it starts in `text`, how long it is there, what
    /// fills it; in order.
    holes: Vec<(usize, usize, Hole)>,
}

impl Template {
    /// The template of what `write` writes, if filling it in with the
    /// second probe gives what `write` writes for that probe.
    pub(crate) fn proved(write: &impl Fn(&str, u64) -> Bytes) -> Option<Template> {
        let [(id, created), (other_id, other_created)] = PROBES;
        let template = Self::of(write(id, created), id, created);
        (template.fill(other_id, other_created) == write(other_id, other_created))
            .then_some(template)
    }

    /// `text` with every `id` and every `created` (in decimal) as a hole.
    fn of(text: Bytes, id: &str, created: u64) -> Template {
        let mut digits = itoa::Buffer::new();
        let created = digits.format(created).as_bytes();
        let id = id.as_bytes();
        let mut holes = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let rest = &text[at..];
            if rest.starts_with(id) {
                holes.push((at, id.len(), Hole::Id));
                at += id.len();
            } else if rest.starts_with(created) {
                holes.push((at, created.len(), Hole::Created));
                at += created.len();
            } else {
                at += 1;
            }
        }
        Template { text, holes }
    }

    /// The answer with `id` and `created` in its holes.
    pub(crate) fn fill(&self, id: &str, created: u64) -> Bytes {
        let mut digits = itoa::Buffer::new();
        let created = digits.format(created).as_bytes();
        let mut out = BytesMut::with_capacity(self.text.len() + self.holes.len() * 24);
        let mut from = 0;
        for &(at, len, hole) in &self.holes {
            out.put_slice(self.text.get(from..at).unwrap_or_default());
            out.put_slice(match hole {
                Hole::Id => id.as_bytes(),
                Hole::Created => created,
            });
            from = at + len;
        }
        out.put_slice(self.text.get(from..).unwrap_or_default());
        out.freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(id: &str, created: u64) -> Bytes {
        Bytes::from(format!(
            "data: {{\"id\":\"{id}\",\"created\":{created},\"text\":\"hi\"}}\n\ndata: {{\"id\":\"{id}\"}}\n\n"
        ))
    }

    #[test]
    fn a_template_fills_in_the_id_and_time_as_the_writer_writes_them() {
        let template = Template::proved(&writer).expect("a template");
        assert_eq!(template.holes.len(), 3);
        for (id, created) in [("chatcmpl-agentstream-7", 1_700_000_000), ("", 0)] {
            assert_eq!(template.fill(id, created), writer(id, created));
        }
    }

    #[test]
    fn an_answer_that_uses_its_id_otherwise_gets_no_template() {
        // The id written backwards after it, and the id changed: neither
        // is a hole.
        let mirrored = |id: &str, _: u64| {
            Bytes::from(format!("{id}:{}", id.chars().rev().collect::<String>()))
        };
        assert!(Template::proved(&mirrored).is_none());
        let shouted =
            |id: &str, created: u64| Bytes::from(format!("{}{created}", id.to_uppercase()));
        assert!(Template::proved(&shouted).is_none());
    }

    #[test]
    fn a_turn_gets_its_template_on_its_second_answer_and_keeps_it() {
        let templates = Templates::default();
        let message = Arc::new(agentstream::message::assistant(
            [agentstream::message::text("hi")],
            agentstream::message::StopReason::Stop,
        ));
        // The script's hold on it.
        let _script = message.clone();
        let key = Key {
            message: &message,
            api: Api::OpenAi,
            name: "m",
            include_usage: false,
            full_sequence: false,
            reason: DoneReason::Stop,
        };
        let calls = std::cell::Cell::new(0);
        let counting = |id: &str, created: u64| {
            calls.set(calls.get() + 1);
            writer(id, created)
        };
        for (i, created) in [(0, 10), (1, 11), (2, 12), (3, 13)] {
            let id = format!("id-{i}");
            assert_eq!(
                templates.answer(&key, &id, created, counting),
                writer(&id, created)
            );
        }
        // Once for the first answer, twice to make and prove the
        // template on the second, then never.
        assert_eq!(calls.get(), 3);
        // Another message, even an equal one, is another turn.
        let equal = Arc::new((*message).clone());
        let _held = equal.clone();
        let other = Key {
            message: &equal,
            ..key
        };
        templates.answer(&other, "x", 1, counting);
        assert_eq!(calls.get(), 4);
        assert_eq!(templates.kept.lock().unwrap().entries.len(), 2);
        // A message nothing else holds is written and not kept.
        let alone = Arc::new((*message).clone());
        let alone = Key {
            message: &alone,
            ..key
        };
        for _ in 0..3 {
            templates.answer(&alone, "x", 1, counting);
        }
        assert_eq!(calls.get(), 7);
        assert_eq!(templates.kept.lock().unwrap().entries.len(), 2);
    }
}
