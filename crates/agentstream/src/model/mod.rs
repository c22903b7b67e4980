//! The model boundary: the [`ModelEvent`] protocol, the [`Model`] trait,
//! cancellation, and the deterministic [`ScriptedModel`].
//!
//! A [`Model`] turns a [`Context`] into a [`ModelStream`]: a stream of
//! [`ModelEvent`]s that ends with exactly one `done` or `error`, plus the
//! final [`AssistantMessage`](crate::message::AssistantMessage). Code
//! written against `Model` cannot tell the scripted double from a real
//! provider.

mod abort;
mod cause;
mod deadline;
mod event;
mod partial;
mod persistent;
mod protocol;
mod retry;
mod rope;
mod scripted;
mod stream;

pub use abort::{AbortController, AbortSignal, Aborted, ABORTED_MESSAGE};
pub use cause::{
    ErrorCause, HttpFailure, ProviderFailure, RetryAfter, SharedError, TimeoutKind, RETRY_AFTER_MAX,
};
pub use deadline::stream_with_deadline;
pub use event::{DoneReason, ErrorReason, ModelEvent};
pub use partial::{PartialBuilder, PartialMessage};
pub use protocol::validate_events;
pub use retry::{Jitter, RetryModel, RetryPolicy};
pub use scripted::{
    ScriptStep, ScriptedFailure, ScriptedModel, ScriptedReply, ScriptedTurn, EXHAUSTED_MESSAGE,
};
pub use stream::{
    AssistantMessageEventStream, AssistantMessageProducer, LocalModelDriver, LocalModelStream,
    ModelDriver, ModelResult, ModelStream, ResultHandle, PRODUCER_DROPPED_MESSAGE,
};

use crate::message::Context;

/// Options of one model call.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct StreamOptions {
    /// Aborts the call when its controller aborts.
    pub signal: Option<AbortSignal>,
}

impl StreamOptions {
    /// Options with `signal` set.
    pub fn with_signal(mut self, signal: AbortSignal) -> Self {
        self.signal = Some(signal);
        self
    }
}

/// Something that answers a context with a stream of model events.
///
/// `stream` returns synchronously; the events come later, when the returned
/// [`ModelStream`] is polled (or its driver is spawned). Failures are never
/// returned here: they arrive as the stream's `error` event.
pub trait Model {
    /// Starts a call.
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream;
}

impl<M: Model + ?Sized> Model for &M {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        (**self).stream(context, options)
    }
}

impl<M: Model + ?Sized> Model for alloc::boxed::Box<M> {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        (**self).stream(context, options)
    }
}

impl<M: Model + ?Sized> Model for alloc::sync::Arc<M> {
    fn stream(&self, context: &Context, options: StreamOptions) -> ModelStream {
        (**self).stream(context, options)
    }
}
