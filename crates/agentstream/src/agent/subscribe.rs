//! An [`Agent`](super::Agent)'s subscribers: any number of event streams
//! and callbacks, attached and detached at any time (the policy is on
//! [`Subscription`]).

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::pin::Pin;
use core::task::{Context as TaskContext, Poll, Waker};

use futures_core::{FusedStream, Stream};

use super::events::AgentEvent;
use super::maybe_send::{MaybeSend, MaybeSync};
use crate::sync::Lock;

/// The number of unread events a subscriber may fall behind by before it
/// loses the oldest ones: enough for a long turn streamed token by token
/// while the subscriber's task waits for the run's task to yield.
pub const DEFAULT_SUBSCRIBER_CAPACITY: usize = 16_384;

/// A subscriber fell behind by more than its capacity and lost this many
/// of its oldest unread events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lagged {
    /// How many events it missed.
    pub missed: u64,
}

impl fmt::Display for Lagged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the subscriber fell behind and missed {} events",
            self.missed
        )
    }
}

impl core::error::Error for Lagged {}

/// Identifies a callback subscriber, for
/// [`Agent::unsubscribe`](super::Agent::unsubscribe).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubscriberId(u64);

trait Callback: MaybeSend + MaybeSync {
    fn call(&self, event: &AgentEvent);
}

impl<F: Fn(&AgentEvent) + MaybeSend + MaybeSync> Callback for F {
    fn call(&self, event: &AgentEvent) {
        self(event)
    }
}

#[derive(Clone)]
enum Sink {
    Queue(Arc<Queue>),
    Callback(SubscriberId, Arc<dyn Callback>),
}

struct Queue {
    state: Lock<QueueState>,
}

struct QueueState {
    events: VecDeque<Arc<AgentEvent>>,
    capacity: usize,
    missed: u64,
    waker: Option<Waker>,
    /// The agent is gone: no more events will come.
    ended: bool,
}

impl Queue {
    /// Queues `event`; returns the waker to wake (outside the lock).
    fn push(&self, event: &Arc<AgentEvent>) -> Option<Waker> {
        self.state.with(|state| {
            if state.events.len() >= state.capacity {
                state.events.pop_front();
                state.missed += 1;
            }
            state.events.push_back(Arc::clone(event));
            state.waker.take()
        })
    }

    fn end(&self) -> Option<Waker> {
        self.state.with(|state| {
            state.ended = true;
            state.waker.take()
        })
    }
}

/// The subscriber list: a copy-on-write snapshot, so publishing takes the
/// list's lock only to clone one `Arc`, and no two locks are ever held at
/// once.
pub(crate) struct Hub {
    sinks: Arc<Lock<Arc<[Sink]>>>,
    next_id: Lock<u64>,
}

impl Hub {
    pub(crate) fn new() -> Self {
        Self {
            sinks: Arc::new(Lock::new(Arc::from(Vec::new()))),
            next_id: Lock::new(0),
        }
    }

    /// Replaces the list by an edited copy, under the lock (so that two
    /// edits never lose one another); the old list, and any subscriber the
    /// edit removed, is dropped outside it.
    fn edit(sinks: &Lock<Arc<[Sink]>>, f: impl FnOnce(&mut Vec<Sink>)) {
        let replaced = sinks.with(|sinks| {
            let mut list: Vec<Sink> = sinks.iter().cloned().collect();
            f(&mut list);
            core::mem::replace(sinks, Arc::from(list))
        });
        drop(replaced);
    }

    pub(crate) fn subscribe(&self, capacity: usize) -> Subscription {
        let queue = Arc::new(Queue {
            state: Lock::new(QueueState {
                events: VecDeque::new(),
                capacity: capacity.max(1),
                missed: 0,
                waker: None,
                ended: false,
            }),
        });
        let sink = Sink::Queue(Arc::clone(&queue));
        Self::edit(&self.sinks, |list| list.push(sink));
        Subscription {
            queue,
            sinks: Arc::clone(&self.sinks),
        }
    }

    pub(crate) fn subscribe_fn(
        &self,
        callback: impl Fn(&AgentEvent) + MaybeSend + MaybeSync + 'static,
    ) -> SubscriberId {
        let id = self.next_id.with(|next| {
            *next += 1;
            SubscriberId(*next)
        });
        let sink = Sink::Callback(id, Arc::new(callback));
        Self::edit(&self.sinks, |list| list.push(sink));
        id
    }

    pub(crate) fn unsubscribe(&self, id: SubscriberId) -> bool {
        let mut found = false;
        Self::edit(&self.sinks, |list| {
            let before = list.len();
            list.retain(|sink| !matches!(sink, Sink::Callback(other, _) if *other == id));
            found = list.len() != before;
        });
        found
    }

    pub(crate) fn len(&self) -> usize {
        self.sinks.with(|sinks| sinks.len())
    }

    /// Hands `event` to every subscriber, in subscription order.
    pub(crate) fn publish(&self, event: AgentEvent) {
        let sinks = self.sinks.with(|sinks| Arc::clone(sinks));
        if sinks.is_empty() {
            return;
        }
        let event = Arc::new(event);
        for sink in sinks.iter() {
            match sink {
                Sink::Queue(queue) => {
                    if let Some(waker) = queue.push(&event) {
                        waker.wake();
                    }
                }
                Sink::Callback(_, callback) => callback.call(&event),
            }
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        let sinks = self.sinks.with(|sinks| Arc::clone(sinks));
        for sink in sinks.iter() {
            if let Sink::Queue(queue) = sink {
                if let Some(waker) = queue.end() {
                    waker.wake();
                }
            }
        }
    }
}

impl fmt::Debug for Hub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscribers")
            .field("count", &self.len())
            .finish()
    }
}

/// A stream of every event of an [`Agent`](super::Agent)'s runs from the
/// moment it subscribed, in order; it ends when the agent is dropped.
/// Dropping it unsubscribes.
///
/// # Buffering policy
///
/// Every subscription has its own queue, bounded by its capacity
/// ([`DEFAULT_SUBSCRIBER_CAPACITY`] events unless chosen with
/// [`Agent::subscribe_with_capacity`](super::Agent::subscribe_with_capacity)).
/// The run never waits for a subscriber: publishing an event is one push per
/// queue. A subscriber that falls behind by more than its capacity loses
/// its *oldest* unread events, and its stream then yields one
/// [`Lagged`] error saying how many it missed before the events it still
/// has; the other subscribers are not affected. A dropped subscription
/// leaves the list at once. Events are shared (`Arc<AgentEvent>`): one
/// allocation per event whatever the number of subscribers, and none when
/// there is none.
///
/// # How this differs from Pi
///
/// Pi awaits each listener in subscription order before the loop goes on,
/// so a slow listener slows the run, and a listener's promise is part of
/// the run's settlement. Here a stream subscriber is read at its own pace
/// on its own task, and never stalls the run or another subscriber; the
/// price is the bound above. Callbacks
/// ([`Agent::subscribe_fn`](super::Agent::subscribe_fn)) are called
/// synchronously on the run's task, in order, as Pi calls its listeners,
/// but not awaited: a slow callback slows the run.
#[must_use = "streams do nothing unless polled"]
pub struct Subscription {
    queue: Arc<Queue>,
    sinks: Arc<Lock<Arc<[Sink]>>>,
}

impl Subscription {
    /// How many events are waiting to be read.
    pub fn backlog(&self) -> usize {
        self.queue.state.with(|state| state.events.len())
    }
}

impl Stream for Subscription {
    type Item = Result<Arc<AgentEvent>, Lagged>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let replaced = self.queue.state.with(|state| {
            if state.missed > 0 {
                let missed = core::mem::take(&mut state.missed);
                return Err(Poll::Ready(Some(Err(Lagged { missed }))));
            }
            if let Some(event) = state.events.pop_front() {
                return Err(Poll::Ready(Some(Ok(event))));
            }
            if state.ended {
                return Err(Poll::Ready(None));
            }
            match &state.waker {
                Some(waker) if waker.will_wake(cx.waker()) => Ok(None),
                _ => Ok(state.waker.replace(cx.waker().clone())),
            }
        });
        match replaced {
            Err(ready) => ready,
            // Dropped outside the lock.
            Ok(old) => {
                drop(old);
                Poll::Pending
            }
        }
    }
}

impl FusedStream for Subscription {
    fn is_terminated(&self) -> bool {
        self.queue
            .state
            .with(|state| state.ended && state.events.is_empty() && state.missed == 0)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let queue = &self.queue;
        Hub::edit(&self.sinks, |list| {
            list.retain(|sink| !matches!(sink, Sink::Queue(q) if Arc::ptr_eq(q, queue)));
        });
    }
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("backlog", &self.backlog())
            .finish_non_exhaustive()
    }
}
