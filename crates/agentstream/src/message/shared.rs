//! A message behind a reference count: what the agent's events carry, so
//! that one message is not copied once per event that mentions it.

use alloc::sync::Arc;

use serde::ser::{Serialize, Serializer};

use super::{AssistantMessage, Message, ToolResultMessage, UnknownMessage, UserMessage};

/// A [`Message`] whose content is shared (`Arc`): cloning it is O(1) and
/// never copies the content.
///
/// The agent loop's events carry messages this way: a prompt's or a tool
/// result's `message_start` and `message_end`, an assistant message's
/// `message_end` and `turn_end` (and the model's own terminal event), and
/// `agent_end`'s list all hold the same allocation. It serializes exactly
/// as the [`Message`] it holds, and decodes as one.
///
/// Compare it with a [`Message`] directly (`==` works both ways); take the
/// message out with [`into_message`](Self::into_message) (without a copy
/// when this is the last handle) or [`to_message`](Self::to_message).
///
/// ```
/// use agentstream::message::{user, Message, SharedMessage};
///
/// let message: Message = user("hi").into();
/// let shared = SharedMessage::from(message.clone());
/// let again = shared.clone(); // no copy of the content
/// assert_eq!(again, message);
/// assert_eq!(again.role(), "user");
/// assert_eq!(
///     serde_json::to_string(&shared).unwrap(),
///     serde_json::to_string(&message).unwrap(),
/// );
/// drop(shared);
/// assert_eq!(again.into_message(), message); // the last handle: moved out
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum SharedMessage {
    /// A user message.
    User(Arc<UserMessage>),
    /// An assistant message.
    Assistant(Arc<AssistantMessage>),
    /// A tool result.
    ToolResult(Arc<ToolResultMessage>),
    /// A message with a `role` this model does not know, kept verbatim.
    Unknown(Arc<UnknownMessage>),
}

impl SharedMessage {
    /// The message's `role` tag.
    pub fn role(&self) -> &str {
        match self {
            Self::User(_) => "user",
            Self::Assistant(_) => "assistant",
            Self::ToolResult(_) => "toolResult",
            Self::Unknown(m) => &m.role,
        }
    }

    /// A copy of the message.
    pub fn to_message(&self) -> Message {
        self.clone().into_message()
    }

    /// The message, moved out when this is its last handle and copied
    /// otherwise.
    pub fn into_message(self) -> Message {
        match self {
            Self::User(m) => Message::User(Arc::unwrap_or_clone(m)),
            Self::Assistant(m) => Message::Assistant(Arc::unwrap_or_clone(m)),
            Self::ToolResult(m) => Message::ToolResult(Arc::unwrap_or_clone(m)),
            Self::Unknown(m) => Message::Unknown(Arc::unwrap_or_clone(m)),
        }
    }

    /// Whether both handles share one allocation (one message, not two
    /// equal ones).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::User(a), Self::User(b)) => Arc::ptr_eq(a, b),
            (Self::Assistant(a), Self::Assistant(b)) => Arc::ptr_eq(a, b),
            (Self::ToolResult(a), Self::ToolResult(b)) => Arc::ptr_eq(a, b),
            (Self::Unknown(a), Self::Unknown(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// The assistant message, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Self::Assistant(m) => Some(m),
            _ => None,
        }
    }
}

impl From<Message> for SharedMessage {
    fn from(message: Message) -> Self {
        match message {
            Message::User(m) => Self::User(Arc::new(m)),
            Message::Assistant(m) => Self::Assistant(Arc::new(m)),
            Message::ToolResult(m) => Self::ToolResult(Arc::new(m)),
            Message::Unknown(m) => Self::Unknown(Arc::new(m)),
        }
    }
}

impl From<SharedMessage> for Message {
    fn from(message: SharedMessage) -> Self {
        message.into_message()
    }
}

impl From<Arc<AssistantMessage>> for SharedMessage {
    fn from(message: Arc<AssistantMessage>) -> Self {
        Self::Assistant(message)
    }
}

impl From<Arc<ToolResultMessage>> for SharedMessage {
    fn from(message: Arc<ToolResultMessage>) -> Self {
        Self::ToolResult(message)
    }
}

impl PartialEq<Message> for SharedMessage {
    fn eq(&self, other: &Message) -> bool {
        match (self, other) {
            (Self::User(a), Message::User(b)) => **a == *b,
            (Self::Assistant(a), Message::Assistant(b)) => **a == *b,
            (Self::ToolResult(a), Message::ToolResult(b)) => **a == *b,
            (Self::Unknown(a), Message::Unknown(b)) => **a == *b,
            _ => false,
        }
    }
}

impl PartialEq<SharedMessage> for Message {
    fn eq(&self, other: &SharedMessage) -> bool {
        other == self
    }
}

impl Serialize for SharedMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::User(m) => m.serialize(serializer),
            Self::Assistant(m) => m.serialize(serializer),
            Self::ToolResult(m) => m.serialize(serializer),
            Self::Unknown(m) => m.serialize(serializer),
        }
    }
}

impl<'de> serde::Deserialize<'de> for SharedMessage {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Message::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::{assistant, text, tool_result, user, StopReason};

    fn messages() -> [Message; 4] {
        [
            user("hi").into(),
            assistant([text("hello")], StopReason::Stop).into(),
            tool_result("c1", "echo", "ok", false).into(),
            Message::from_value(json!({"role": "system", "content": "be brief"})).unwrap(),
        ]
    }

    #[test]
    fn serializes_and_decodes_as_the_message_it_holds() {
        for message in messages() {
            let shared = SharedMessage::from(message.clone());
            let json = serde_json::to_string(&message).unwrap();
            assert_eq!(serde_json::to_string(&shared).unwrap(), json);
            let back: SharedMessage = serde_json::from_str(&json).unwrap();
            assert_eq!(back, shared);
            assert_eq!(shared.role(), message.role());
        }
    }

    #[test]
    fn compares_with_messages_by_role_and_content() {
        let all = messages();
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate() {
                let shared = SharedMessage::from(a.clone());
                assert_eq!(shared == *b, i == j, "{i} vs {j}");
                assert_eq!(*b == shared, i == j, "{j} vs {i}");
            }
        }
    }

    #[test]
    fn the_last_handle_gives_its_message_without_a_copy() {
        let shared = SharedMessage::from(Message::from(user("hi")));
        let SharedMessage::User(arc) = &shared else {
            panic!("a user message");
        };
        let content = match &arc.content {
            crate::message::UserContent::Text(text) => text.as_ptr(),
            crate::message::UserContent::Blocks(_) => panic!("text content"),
        };
        assert!(shared.ptr_eq(&shared.clone()));
        let copy = shared.to_message();
        let Message::User(copied) = &copy else {
            panic!("a user message");
        };
        let crate::message::UserContent::Text(copied) = &copied.content else {
            panic!("text content");
        };
        assert_ne!(copied.as_ptr(), content, "to_message copies while shared");
        let Message::User(moved) = shared.into_message() else {
            panic!("a user message");
        };
        let crate::message::UserContent::Text(moved) = &moved.content else {
            panic!("text content");
        };
        assert_eq!(moved.as_ptr(), content, "the last handle is moved out");
        let copy = SharedMessage::from(copy);
        assert!(!copy.ptr_eq(&SharedMessage::from(copy.to_message())));
        assert!(copy.as_assistant().is_none());
    }
}
