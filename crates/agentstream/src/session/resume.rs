//! [`Agent::from_session`]: an agent resumed from a session's context.

use super::{convert_to_llm, SessionContext};
use crate::agent::{Agent, ToolSet};
use crate::model::Model;

impl<M: Model> Agent<M> {
    /// An idle agent whose transcript is `context`'s messages after the
    /// default [`convert_to_llm`] (summaries, branch summaries and custom
    /// messages as Pi's default conversions make them), as Pi's
    /// `AgentSession` resumes a session. The context's `model` and
    /// `thinking_level` are the caller's to apply (to `model` and the
    /// options' reasoning effort).
    pub fn from_session(model: M, tools: ToolSet<'static>, context: &SessionContext) -> Self {
        Self::new(model, tools).with_messages(convert_to_llm(&context.messages))
    }
}
