//! Marking the [`Agent`] idle when a run ends, and [`WaitForIdle`].

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context as TaskContext, Poll};

use super::Agent;

/// Marks the agent idle when the run ends or its future is dropped, and
/// wakes [`WaitForIdle`].
pub(super) struct Idle<'a, M>(pub(super) &'a Agent<M>);

impl<M> Drop for Idle<'_, M> {
    fn drop(&mut self) {
        let (waiters, abort) = self.0.inner.with(|inner| {
            inner.running = false;
            inner.streaming = None;
            inner.pending.clear();
            (core::mem::take(&mut inner.idle), inner.abort.take())
        });
        drop(abort);
        waiters.wake_all();
    }
}

/// Resolves once the [`Agent`] has no run going. Created by
/// [`Agent::wait_for_idle`].
#[must_use = "futures do nothing unless polled"]
pub struct WaitForIdle<'a, M> {
    agent: &'a Agent<M>,
    key: Option<usize>,
}

impl<'a, M> WaitForIdle<'a, M> {
    /// Waits for `agent`.
    pub(super) fn new(agent: &'a Agent<M>) -> Self {
        WaitForIdle { agent, key: None }
    }
}

impl<M> Future for WaitForIdle<'_, M> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        let this = self.get_mut();
        let key = &mut this.key;
        let (idle, replaced) = this.agent.inner.with(|inner| {
            if inner.running {
                (false, inner.idle.park(key, cx.waker()))
            } else {
                (true, None)
            }
        });
        drop(replaced);
        if idle {
            this.key = None;
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl<M> Drop for WaitForIdle<'_, M> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            let waker = self.agent.inner.with(|inner| inner.idle.remove(key));
            drop(waker);
        }
    }
}

impl<M> fmt::Debug for WaitForIdle<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitForIdle").finish_non_exhaustive()
    }
}
