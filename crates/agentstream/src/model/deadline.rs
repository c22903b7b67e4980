//! Deadlines: abort a call when a future (a runtime's timer) completes.
//! The public face is [`rt::stream_with_timeout`](crate::rt::stream_with_timeout).

use alloc::boxed::Box;
use core::future::Future;
use core::pin::pin;

use futures_util::future::{self, Either};

use super::abort::{AbortController, AbortSignal};
use super::cause::{ErrorCause, TimeoutKind};
use super::stream::{ModelStream, SendDriver};
use super::{Model, StreamOptions};
use crate::message::Context;

/// Starts a call on `model` that is aborted when `deadline` completes:
/// the body of [`rt::stream_with_timeout`](crate::rt::stream_with_timeout),
/// which documents the behaviour; `deadline` is the timer's sleep.
pub(crate) fn stream_with_deadline<M, D>(
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
    let watchdog = async move {
        let caller_aborted = async move {
            match caller {
                Some(signal) => signal.aborted().await,
                None => future::pending().await,
            }
        };
        match future::select(pin!(deadline), pin!(caller_aborted)).await {
            // The deadline, not the caller, ends the call: the model
            // attaches the signal's cause to its `error`.
            Either::Left(_) => controller.abort_with(ErrorCause::Timeout(TimeoutKind::Total, None)),
            Either::Right(_) => controller.abort(),
        }
    };
    let driver: SendDriver = match stream.take_driver() {
        Some(driver) => Box::pin(run_until_done(watchdog, driver)),
        None => Box::pin(watchdog),
    };
    stream.set_driver(driver);
    stream
}

/// Drives `driver` to its end while `watchdog` may abort it; the watchdog is
/// dropped as soon as the driver is done.
async fn run_until_done(watchdog: impl Future<Output = ()>, driver: SendDriver) {
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
