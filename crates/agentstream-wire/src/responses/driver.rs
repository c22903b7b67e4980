//! The [`SseProjector`] the SSE driver needs, for [`ResponsesProjector`].

use alloc::string::String;
use alloc::vec::Vec;

use agentstream::model::ModelEvent;

use super::projector::ResponsesProjector;
use crate::driver::SseProjector;
use crate::limits::Limits;
use crate::sse::SseEvent;

impl SseProjector for ResponsesProjector {
    fn push_event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        self.push_data(&event.data, out);
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        ResponsesProjector::finish(self, out);
    }

    fn abort(&mut self, out: &mut Vec<ModelEvent>) {
        ResponsesProjector::abort(self, out);
    }

    fn interrupt(&mut self, message: String, out: &mut Vec<ModelEvent>) {
        ResponsesProjector::interrupt(self, message, out);
    }

    fn fail(&mut self, message: String, out: &mut Vec<ModelEvent>) {
        ResponsesProjector::fail(self, message, out);
    }

    fn is_finished(&self) -> bool {
        ResponsesProjector::is_finished(self)
    }

    fn set_limits(&mut self, limits: Limits) {
        ResponsesProjector::set_limits(self, limits);
    }
}
