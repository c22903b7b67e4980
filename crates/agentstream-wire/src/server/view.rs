//! A request message read in one pass without a generic JSON tree: its
//! `role` and `content`, and the few other fields its protocol's decoder
//! reads. Strings are borrowed from the body where they hold no escape;
//! a field of another type than the decoder reads is dropped, as the
//! decoders ignore what they do not know; a repeated field keeps its
//! last value, as a JSON map does. Read from a body's text or from a
//! `serde_json::Value`, a message gives the same view.

use crate::server::prelude::*;
use alloc::borrow::Cow;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// The visits of a JSON scalar (a boolean, a number, `null`), each
/// giving `$make` of the scalar as a JSON value.
macro_rules! visit_scalars {
    ($make:expr) => {
        fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
            Ok($make(Value::Bool(b)))
        }
        fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
            Ok($make(Value::from(n)))
        }
        fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
            Ok($make(Value::from(n)))
        }
        fn visit_f64<E>(self, n: f64) -> Result<Self::Value, E> {
            Ok($make(Value::from(n)))
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($make(Value::Null))
        }
    };
}
pub(crate) use visit_scalars;

/// One message of a request.
pub(crate) struct MessageView<'a> {
    /// `role`, when a string.
    pub(crate) role: Option<Cow<'a, str>>,
    /// `content`.
    pub(crate) content: Content<'a>,
    /// The other fields the decoder asked for, those present.
    fields: Vec<(&'static str, Value)>,
}

impl MessageView<'_> {
    /// The field `name` (one the decoder asked for), when present.
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.fields
            .iter()
            .find_map(|(field, value)| (*field == name).then_some(value))
    }

    /// The string at `name`, or empty.
    pub(crate) fn str(&self, name: &str) -> String {
        self.get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }
}

/// A message's `content`: a string, borrowed when it can be, or any other
/// JSON value (`null` when absent).
pub(crate) enum Content<'a> {
    Text(Cow<'a, str>),
    Other(Value),
}

impl Content<'_> {
    /// A string, or the `text` of an array of parts joined by
    /// `separator` (see [`joined_text`]).
    pub(crate) fn joined(self, separator: &str) -> String {
        match self {
            Content::Text(text) => text.into_owned(),
            Content::Other(value) => joined_text(&value, separator),
        }
    }
}

/// Reads a message, keeping the fields named in `fields` besides `role`
/// and `content`. Only an object is a message: call it on one.
pub(crate) struct MessageFields(pub(crate) &'static [&'static str]);

impl<'de> DeserializeSeed<'de> for MessageFields {
    type Value = MessageView<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MessageFields {
    type Value = MessageView<'de>;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let Parts {
            role,
            content,
            fields,
        } = read_message(map, self.0)?;
        Ok(MessageView {
            role,
            content: content.unwrap_or(Content::Other(Value::Null)),
            fields,
        })
    }
}

/// A message's parts as [`read_message`] reads them: its content and
/// fields as `C` and `F`.
pub(crate) struct Parts<'a, C, F> {
    role: Option<Cow<'a, str>>,
    content: Option<C>,
    fields: Vec<(&'static str, F)>,
}

/// A message's parts: its `role` (when a string), its `content` (when
/// present) as `C`, and the fields named in `wanted`, those present, each
/// as `F`. A repeated key keeps its last value, as a JSON map does; other
/// keys are skipped.
fn read_message<'de, A, C, F>(
    mut map: A,
    wanted: &'static [&'static str],
) -> Result<Parts<'de, C, F>, A::Error>
where
    A: MapAccess<'de>,
    C: Deserialize<'de>,
    F: Deserialize<'de>,
{
    let (mut role, mut content, mut fields) = (None, None, Vec::new());
    while let Some(Key(name)) = map.next_key::<Key<'de>>()? {
        match &*name {
            "role" => role = map.next_value::<Lenient<'de>>()?.0,
            "content" => content = Some(map.next_value()?),
            other => match wanted.iter().find(|wanted| **wanted == other) {
                Some(field) => {
                    let value: F = map.next_value()?;
                    fields.retain(|(name, _)| name != field);
                    fields.push((*field, value));
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            },
        }
    }
    Ok(Parts {
        role,
        content,
        fields,
    })
}

/// A message read while its body is parsed, before it is decoded: its
/// `role`, and its `content` and the fields its decoder asked for each
/// kept as the text it spans. [`view`](Self::view) parses them when the
/// message is decoded, so the JSON trees of one message at a time are
/// alive, however many messages the body holds.
pub(crate) type HeldView<'a> = Parts<'a, &'a RawValue, &'a RawValue>;

impl<'a> HeldView<'a> {
    /// The message's view: what [`MessageFields`] reads from the message.
    pub(crate) fn view(self) -> Result<MessageView<'a>, serde_json::Error> {
        let content = match self.content.map(RawValue::get) {
            // A string without an escape is the text between its quotes.
            Some(text) => match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                Some(inner) if !inner.contains('\\') => Content::Text(Cow::Borrowed(inner)),
                _ => Content::deserialize(&mut serde_json::Deserializer::from_str(text))?,
            },
            None => Content::Other(Value::Null),
        };
        let fields = self
            .fields
            .into_iter()
            .map(|(name, raw)| Ok((name, serde_json::from_str(raw.get())?)))
            .collect::<Result<_, serde_json::Error>>()?;
        Ok(MessageView {
            role: self.role,
            content,
            fields,
        })
    }
}

/// Reads a message as a [`HeldView`] keeping the fields named besides
/// `role` and `content`: the same keys, the same last-one-wins, as
/// [`MessageFields`]. Only an object is a message: call it on one.
pub(crate) struct HeldFields(pub(crate) &'static [&'static str]);

impl<'de> Visitor<'de> for HeldFields {
    type Value = HeldView<'de>;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        read_message(map, self.0)
    }
}

/// A string, or `None` for a value of any other type (skipped).
struct Lenient<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for Lenient<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LenientVisitor;
        impl<'de> Visitor<'de> for LenientVisitor {
            type Value = Lenient<'de>;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Lenient(Some(Cow::Borrowed(text))))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Lenient(Some(Cow::Owned(text.to_owned()))))
            }
            visit_scalars!(|_| Lenient(None));
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Lenient(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Lenient(None))
            }
        }
        deserializer.deserialize_any(LenientVisitor)
    }
}

impl<'de> Deserialize<'de> for Content<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = Content<'de>;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(text.to_owned())))
            }
            visit_scalars!(Content::Other);
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(SeqAccessDeserializer::new(seq)).map(Content::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(MapAccessDeserializer::new(map)).map(Content::Other)
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

/// An object key, borrowed from the body unless it holds an escape.
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// A content that is a string, or the `text` of an array of parts joined
/// by `separator`.
pub(crate) fn joined_text(content: &Value, separator: &str) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(separator),
        _ => String::new(),
    }
}
