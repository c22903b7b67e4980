//! Deadlines: abort a call when a future (a runtime's timer) completes.

use alloc::boxed::Box;
use core::future::Future;
use core::pin::pin;

use futures_util::future::{self, Either};

use super::abort::{AbortController, AbortSignal};
use super::cause::{ErrorCause, TimeoutKind};
use super::stream::{ModelDriver, ModelStream};
use super::{Model, StreamOptions};
use crate::message::Context;

/// Starts a call on `model` that is aborted when `deadline` completes.
///
/// The core has no clock: `deadline` is any future, typically a runtime's
/// sleep (the adapter crates' `stream_with_timeout` pass theirs). The call
/// gets the signal of a new [`AbortController`], which aborts when the
/// deadline completes or when the signal the caller passed in `options`
/// aborts, whichever comes first (an already aborted caller signal aborts at
/// once). Mid-stream, the call ends with `error(aborted)` and what was
/// produced so far.
///
/// The deadline is polled as part of the stream's driver, before each of the
/// producer's steps, and dropped with it: a call that ends, or whose
/// consumer goes away, leaves no timer behind. The returned stream is still
/// self-driven, or can have its driver spawned. If the model's stream had no
/// driver (its producer runs elsewhere), the deadline alone becomes the
/// driver.
///
/// When the deadline ends the call, its
/// [`error_cause`](ModelStream::error_cause) is
/// [`Timeout(Total)`](super::TimeoutKind::Total), whatever the model
/// recorded (it only saw its signal abort).
///
/// ```
/// use agentstream::message::{assistant, text, user, Context, StopReason};
/// use agentstream::model::{stream_with_deadline, ScriptedModel, ScriptedTurn, StreamOptions};
/// use core::num::NonZeroUsize;
///
/// let model = ScriptedModel::new([ScriptedTurn::message(assistant([text("abcdef")], StopReason::Stop))
///     .chunked(NonZeroUsize::new(3).unwrap())]);
/// let context = Context::from_messages([user("hi").into()]);
/// // A deadline that has already passed aborts the call before it starts.
/// let mut stream = stream_with_deadline(&model, &context, StreamOptions::default(), async {});
/// let message = futures_executor::block_on(stream.result());
/// assert_eq!(message.stop_reason, StopReason::Aborted);
/// assert_eq!(message.text(), "");
/// ```
pub fn stream_with_deadline<M, D>(
    model: &M,
    context: &Context,
    mut options: StreamOptions,
    deadline: D,
) -> ModelStream
where
    M: Model + ?Sized,
    D: Future<Output = ()> + Send + 'static,
{
    let controller = AbortController::new();
    let caller = options.signal.take();
    if caller.as_ref().is_some_and(AbortSignal::is_aborted) {
        controller.abort();
    }
    options.signal = Some(controller.signal());
    let mut stream = model.stream(context, options);
    let pin_cause = stream.cause_pinner();
    let watchdog = async move {
        let caller_aborted = async move {
            match caller {
                Some(signal) => signal.aborted().await,
                None => future::pending().await,
            }
        };
        if let Either::Left(_) = future::select(pin!(deadline), pin!(caller_aborted)).await {
            // The deadline, not the caller, ends the call.
            pin_cause(ErrorCause::Timeout(TimeoutKind::Total, None));
        }
        controller.abort();
    };
    let driver: ModelDriver = match stream.take_driver() {
        Some(driver) => Box::pin(run_until_done(watchdog, driver)),
        None => Box::pin(watchdog),
    };
    stream.set_driver(driver);
    stream
}

/// Drives `driver` to its end while `watchdog` may abort it; the watchdog is
/// dropped as soon as the driver is done.
async fn run_until_done(watchdog: impl Future<Output = ()>, driver: ModelDriver) {
    let watchdog = async move {
        watchdog.await;
        // Aborted: keep the driver running until it has pushed its `error`.
        future::pending::<()>().await;
    };
    // The watchdog is polled first, so an abort is seen before the driver's
    // next step.
    match future::select(pin!(watchdog), driver).await {
        Either::Left(((), _)) | Either::Right(((), _)) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{assistant, text, user, StopReason};
    use crate::model::{ErrorCause, ScriptedModel, ScriptedTurn, TimeoutKind};

    #[test]
    fn the_deadline_and_the_callers_abort_have_their_own_causes() {
        let turn = || ScriptedTurn::message(assistant([text("abc")], StopReason::Stop));
        let model = ScriptedModel::new([turn(), turn(), turn()]);
        let context = Context::from_messages([user("hi").into()]);
        let mut stream = stream_with_deadline(&model, &context, StreamOptions::default(), async {});
        let message = futures_executor::block_on(stream.result());
        assert_eq!(message.stop_reason, StopReason::Aborted);
        assert!(matches!(
            stream.error_cause(),
            Some(ErrorCause::Timeout(TimeoutKind::Total, None))
        ));

        let controller = AbortController::new();
        controller.abort();
        let options = StreamOptions::default().with_signal(controller.signal());
        let mut stream = stream_with_deadline(&model, &context, options, future::pending());
        let message = futures_executor::block_on(stream.result());
        assert_eq!(message.stop_reason, StopReason::Aborted);
        assert!(matches!(stream.error_cause(), Some(ErrorCause::Aborted)));

        let mut stream = stream_with_deadline(
            &model,
            &context,
            StreamOptions::default(),
            future::pending(),
        );
        let message = futures_executor::block_on(stream.result());
        assert_eq!(message.text(), "abc");
        assert!(stream.error_cause().is_none());
    }
}
