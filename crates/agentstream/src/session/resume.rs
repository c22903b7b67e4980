//! [`Agent::from_session`]: an agent resumed from a session's context.

use super::{convert_to_llm, SessionContext};
use crate::agent::{Agent, ToolSet};
use crate::model::{Model, ThinkingLevel};

impl<M: Model> Agent<M> {
    /// An idle agent whose transcript is `context`'s messages after the
    /// default [`convert_to_llm`] (summaries, branch summaries and custom
    /// messages as Pi's default conversions make them), as Pi's
    /// `AgentSession` resumes a session, holding the context's thinking
    /// level (its last `thinking_level_change`, see
    /// [`Agent::set_thinking_level`]; a name that is no level leaves none).
    /// The context's `model` is the caller's to apply.
    ///
    /// ```
    /// use agentstream::agent::{Agent, ToolSet};
    /// use agentstream::model::{ScriptedModel, ThinkingLevel};
    /// use agentstream::session::{build_session_context, parse_session, Leaf};
    ///
    /// let jsonl = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}
    /// {"type":"thinking_level_change","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","thinkingLevel":"high"}"#;
    /// let session = parse_session(jsonl).unwrap();
    /// let context = build_session_context(&session.entries, Leaf::Last).unwrap();
    /// let model = ScriptedModel::new(Vec::<agentstream::model::ScriptStep>::new());
    /// let agent = Agent::from_session(model, ToolSet::new(), &context);
    /// assert_eq!(agent.thinking_level(), Some(ThinkingLevel::High));
    /// ```
    pub fn from_session(model: M, tools: ToolSet<'static>, context: &SessionContext) -> Self {
        let agent = Self::new(model, tools).with_messages(convert_to_llm(&context.messages));
        agent.set_thinking_level(ThinkingLevel::parse(&context.thinking_level));
        agent
    }
}
