//! [`Local`]: a value with JavaScript handles inside, marked `Send` because
//! this target has a single thread.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

// `wasm32-unknown-unknown` built with the `atomics` target feature can share
// memory between threads (Web Workers); then a JS handle must not move.
#[cfg(target_feature = "atomics")]
compile_error!(
    "agentstream-wasm marks JavaScript handles `Send` because this target has one thread; \
     it does not support the `atomics` target feature"
);

pin_project_lite::pin_project! {
#[derive(Debug)]
/// Wraps a value that holds JavaScript handles (`JsValue`, closures,
/// promises), which are `!Send`, so it can live in the `Send` futures the
/// core asks for (a `Send` driver, a
/// [`Pause`](agentstream::rt::Pause)).
///
/// Sound because of the target: `wasm32-unknown-unknown` without the
/// `atomics` feature (refused above) runs exactly one thread, so a value can
/// never be sent to, or observed from, another thread.
pub(crate) struct Local<T> {
        #[pin]
        pub(crate) inner: T,
    }
}

impl<T> Local<T> {
    /// Wraps `inner`.
    pub(crate) fn new(inner: T) -> Self {
        Self { inner }
    }
}

// SAFETY: see the type's documentation: there is no second thread.
unsafe impl<T> Send for Local<T> {}

impl<F: Future> Future for Local<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.project().inner.poll(cx)
    }
}
