//! The [`SseProjector`] the SSE driver needs, for [`GeminiProjector`].

use alloc::string::String;
use alloc::vec::Vec;

use agentstream::model::ModelEvent;

use super::projector::GeminiProjector;
use crate::driver::SseProjector;
use crate::limits::Limits;
use crate::sse::SseEvent;

impl SseProjector for GeminiProjector {
    fn push_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        self.push_data(&event.data, out);
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        GeminiProjector::finish(self, out);
    }

    fn abort(&mut self, out: &mut Vec<ModelEvent>) {
        GeminiProjector::abort(self, out);
    }

    fn interrupt(&mut self, message: String, out: &mut Vec<ModelEvent>) {
        GeminiProjector::interrupt(self, message, out);
    }

    fn fail(&mut self, message: String, out: &mut Vec<ModelEvent>) {
        GeminiProjector::fail(self, message, out);
    }

    fn is_finished(&self) -> bool {
        GeminiProjector::is_finished(self)
    }

    fn set_limits(&mut self, limits: Limits) {
        GeminiProjector::set_limits(self, limits);
    }
}
