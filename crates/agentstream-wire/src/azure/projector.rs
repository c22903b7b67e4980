//! [`AzureResponsesProjector`]: the OpenAI Responses projection under
//! Pi's api id `azure-openai-responses`.

use alloc::vec::Vec;

use agentstream::message::AssistantMessage;
use agentstream::model::ModelEvent;

use crate::responses::projector::ResponsesProjection;
use crate::sse::{Frame, Projection, Projector, SseEvent};

/// Pi's `api` id of Azure OpenAI Responses.
pub const AZURE_OPENAI_RESPONSES_API: &str = "azure-openai-responses";

/// The projector of an Azure OpenAI Responses stream: Azure streams
/// OpenAI's Responses events (its `content_filters` on the response object
/// are not read), so every rule is [`ResponsesProjection`]'s; only the
/// `api` the messages record differs.
///
/// ```
/// use agentstream_wire::azure::AzureResponsesProjector;
///
/// let mut projector = AzureResponsesProjector::new("gpt-5", "azure-openai-responses");
/// let mut events = Vec::new();
/// for data in [
///     r#"{"type":"response.created","response":{"id":"resp_1"}}"#,
///     r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":5,"output_tokens":1,"total_tokens":6}}}"#,
/// ] {
///     projector.push_data(data, &mut events);
/// }
/// let message = events.last().unwrap().terminal_message().unwrap();
/// assert_eq!(message.api, "azure-openai-responses");
/// ```
pub type AzureResponsesProjector = Projector<AzureResponsesProjection>;

/// [`ResponsesProjection`] recording the api `azure-openai-responses`.
#[derive(Debug)]
pub struct AzureResponsesProjection(ResponsesProjection);

impl Projection for AzureResponsesProjection {
    const API: &'static str = AZURE_OPENAI_RESPONSES_API;

    fn for_header(header: &AssistantMessage) -> Self {
        Self(ResponsesProjection::for_header(header))
    }

    fn on_event(&mut self, frame: &mut Frame, event: &SseEvent, out: &mut Vec<ModelEvent>) {
        self.0.on_event(frame, event, out);
    }

    fn on_data(&mut self, frame: &mut Frame, data: &str, out: &mut Vec<ModelEvent>) {
        self.0.on_data(frame, data, out);
    }

    fn on_end(&mut self, frame: &mut Frame, out: &mut Vec<ModelEvent>) {
        self.0.on_end(frame, out);
    }

    fn settle(&mut self, frame: &Frame, message: &mut AssistantMessage) {
        self.0.settle(frame, message);
    }
}
