//! The request context: system prompt, conversation and tools.

use alloc::string::String;
use alloc::vec::Vec;

use serde::ser::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::decode::{
    array, deserialize_via_from_value, object, optional, required, string, take_non_null,
    DecodeError, Written,
};
use super::Message;

/// What a model is asked with: `{"systemPrompt"?, "messages", "tools"?}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Context {
    /// `systemPrompt`, if any.
    pub system_prompt: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call, if any. `Some(vec![])` (written as
    /// `"tools": []`) differs from `None` (no `tools` key).
    pub tools: Option<Vec<Tool>>,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

/// A tool the model may call: `{"name", "description", "parameters"}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tool {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: Value,
    /// Fields this model does not know, kept for the round trip.
    pub extra: Map<String, Value>,
}

impl Context {
    /// A context holding `messages`, with no system prompt and no tools.
    ///
    /// ```
    /// use agentstream::message::{user, Context};
    ///
    /// let context = Context::from_messages([user("hello").into()]);
    /// assert_eq!(context.messages.len(), 1);
    /// ```
    pub fn from_messages(messages: impl IntoIterator<Item = Message>) -> Self {
        Self {
            messages: messages.into_iter().collect(),
            ..Self::default()
        }
    }

    /// Decodes a context from JSON.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let (mut system_prompt, mut messages, mut tools) = (None, None, None);
        let mut extra = Map::new();
        for (key, value) in object(value)? {
            match key.as_str() {
                "systemPrompt" => take_non_null(&mut system_prompt, &mut extra, key, value),
                "messages" => messages = Some(value),
                "tools" => take_non_null(&mut tools, &mut extra, key, value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        Ok(Context {
            system_prompt: optional("systemPrompt", system_prompt, string)?,
            messages: required("messages", messages, |v| array(v, Message::from_value))?,
            tools: optional("tools", tools, |v| array(v, Tool::from_value))?,
            extra,
        })
    }
}

impl Tool {
    /// Decodes a tool definition from JSON.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let (mut name, mut description, mut parameters) = (None, None, None);
        let mut extra = Map::new();
        for (key, value) in object(value)? {
            match key.as_str() {
                "name" => name = Some(value),
                "description" => description = Some(value),
                "parameters" => parameters = Some(value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        Ok(Tool {
            name: required("name", name, string)?,
            description: required("description", description, string)?,
            parameters: required("parameters", parameters, Ok)?,
            extra,
        })
    }
}

impl Serialize for Context {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.opt(&mut map, "systemPrompt", &self.system_prompt)?;
        w.entry(&mut map, "messages", &self.messages)?;
        w.opt(&mut map, "tools", &self.tools)?;
        w.finish(map, &self.extra)
    }
}

impl Serialize for Tool {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut w = Written::new();
        w.entry(&mut map, "name", &self.name)?;
        w.entry(&mut map, "description", &self.description)?;
        w.entry(&mut map, "parameters", &self.parameters)?;
        w.finish(map, &self.extra)
    }
}

deserialize_via_from_value!(Context, Tool);
