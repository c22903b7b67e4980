//! The listening task: accepts connections within the connection cap and
//! closes those that take too long to send a request's headers.
//!
//! The header timeout is kept here rather than by hyper's
//! `header_read_timeout`. hyper arms a timer for every request it waits
//! for and wakes the connection once more after each response to start
//! it; on the serve bench with 50 clients that cost 0.02–0.05 of bare
//! hyper's calls per second. Here a connection notes when it last went
//! idle (one clock read per request), and the accept loop looks at every
//! connection once per grain (a sixteenth of the timeout, between 1 ms
//! and 1 s), closing those idle for longer than the timeout: a header
//! timeout fires at most one grain late.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::MissedTickBehavior;

use crate::edge;
use crate::state::State;

/// What the listening task enforces.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// How long a connection may wait for a request's headers.
    pub(crate) header_timeout: Duration,
    pub(crate) max_connections: usize,
}

/// The finest and the coarsest grain at which header timeouts are checked.
const GRAIN: (Duration, Duration) = (Duration::from_millis(1), Duration::from_secs(1));

/// How often header timeouts are checked for `timeout`.
fn grain(timeout: Duration) -> Duration {
    (timeout / 16).clamp(GRAIN.0, GRAIN.1)
}

/// Nanoseconds since the listening task started: the times connections
/// note, in one atomic word.
#[derive(Debug, Clone, Copy)]
struct Clock(Instant);

impl Clock {
    fn now(self) -> u64 {
        u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// The bit of [`Activity::busy`] set by the sweep that closes the
/// connection: no request starts after it.
const CLOSED: usize = 1 << (usize::BITS - 1);

/// What a connection's requests tell the listening task.
struct Activity {
    clock: Clock,
    /// Requests being answered (0: the connection is idle, or a request's
    /// headers are still arriving), and [`CLOSED`] once the sweep closes
    /// it.
    busy: AtomicUsize,
    /// When `busy` last became 0 (or the connection opened).
    idle_since: AtomicU64,
}

impl Activity {
    fn new(clock: Clock) -> Arc<Self> {
        Arc::new(Self {
            clock,
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(clock.now()),
        })
    }

    /// Marks the connection closed if it waits for a request's headers,
    /// and has for longer than `timeout` at `now`; whether it did. A
    /// request starting at the same moment wins: the connection stays.
    fn close_if_waited_past(&self, timeout: Duration, now: u64) -> bool {
        let timeout = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        now.saturating_sub(self.idle_since.load(Ordering::Acquire)) > timeout
            && self
                .busy
                .compare_exchange(0, CLOSED, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    fn is_idle(&self) -> bool {
        self.busy.load(Ordering::Acquire) == 0
    }
}

/// Counts a request as being answered until dropped (with its response
/// body); the last one to end marks the connection idle.
struct Busy(Arc<Activity>);

impl Busy {
    /// Counts a request starting; `None` if the sweep closed the
    /// connection first (its headers came after the timeout).
    fn start(activity: &Arc<Activity>) -> Option<Self> {
        if activity.busy.fetch_add(1, Ordering::AcqRel) & CLOSED != 0 {
            activity.busy.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Self(activity.clone()))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        // The time first: a sweep that sees `busy` at 0 sees it too.
        let now = self.0.clock.now();
        if self.0.busy.load(Ordering::Acquire) == 1 {
            self.0.idle_since.store(now, Ordering::Release);
        }
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An open connection: its task, and what its requests tell.
struct Open {
    abort: AbortHandle,
    activity: Arc<Activity>,
}

/// Accepts connections until told to stop, at most `max_connections` at
/// once: past the cap, the oldest connection that is not being answered
/// (idle, or still sending its headers) is closed to make room, and when
/// every connection is being answered the new one waits for one to end.
/// Every grain, the connections that waited for a request's headers
/// longer than the header timeout are closed. Dropping the set aborts the
/// connections still open.
pub(crate) async fn accept(
    listener: TcpListener,
    shared: Arc<State>,
    limits: Limits,
    mut stopped: oneshot::Receiver<()>,
) {
    let mut connections = JoinSet::new();
    let mut open: VecDeque<Open> = VecDeque::new();
    let mut http = http1::Builder::new();
    // The header timeout is this loop's (see the module docs).
    http.header_read_timeout(None);
    let clock = Clock(Instant::now());
    let mut sweeps = tokio::time::interval(grain(limits.header_timeout));
    sweeps.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let sweep = |open: &mut VecDeque<Open>| {
        let now = clock.now();
        open.retain(|connection| {
            let late = connection
                .activity
                .close_if_waited_past(limits.header_timeout, now);
            if late {
                connection.abort.abort();
            }
            !late
        });
    };
    let forget = |open: &mut VecDeque<Open>, id: tokio::task::Id| {
        open.retain(|c| c.abort.id() != id);
    };
    loop {
        let stream = tokio::select! {
            _ = &mut stopped => break,
            _ = sweeps.tick(), if !open.is_empty() => {
                sweep(&mut open);
                continue;
            }
            Some(ended) = connections.join_next_with_id(), if !connections.is_empty() => {
                forget(&mut open, ended.map_or_else(|e| e.id(), |(id, ())| id));
                continue;
            }
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of file descriptors and the like: try again soon.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        while open.len() >= limits.max_connections {
            if let Some(k) = open.iter().position(|c| c.activity.is_idle()) {
                if let Some(idle) = open.remove(k) {
                    idle.abort.abort();
                }
                continue;
            }
            tokio::select! {
                _ = &mut stopped => return,
                _ = sweeps.tick() => sweep(&mut open),
                Some(ended) = connections.join_next_with_id() => {
                    forget(&mut open, ended.map_or_else(|e| e.id(), |(id, ())| id));
                }
                () = tokio::time::sleep(Duration::from_millis(10)) => {}
            }
        }
        let _ = stream.set_nodelay(true);
        let activity = Activity::new(clock);
        let (shared, counter) = (shared.clone(), activity.clone());
        let connection = http.serve_connection(
            TokioIo::new(stream),
            hyper::service::service_fn(move |request| {
                let busy = Busy::start(&counter);
                let shared = shared.clone();
                async move {
                    let Some(busy) = busy else {
                        // The connection is being closed: the request is
                        // not answered (nor numbered, nor logged).
                        return Ok(edge::too_late());
                    };
                    let response = edge::handle(shared, request).await?;
                    // The request counts as answered until its body ends.
                    Ok::<_, std::convert::Infallible>(response.map(|body| {
                        body.map_frame(move |frame| {
                            let _answering = &busy;
                            frame
                        })
                        .boxed_unsync()
                    }))
                }
            }),
        );
        // A connection error (client gone, timed out) ends this
        // connection only.
        let abort = connections.spawn(async move {
            let _ = connection.await;
        });
        open.push_back(Open { abort, activity });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grains_are_a_sixteenth_of_the_timeout_within_bounds() {
        assert_eq!(grain(Duration::from_secs(30)), Duration::from_secs(1));
        assert_eq!(grain(Duration::from_millis(160)), Duration::from_millis(10));
        assert_eq!(grain(Duration::ZERO), Duration::from_millis(1));
    }

    #[test]
    fn a_connection_waits_for_headers_only_while_no_request_is_answered() {
        let activity = Activity::new(Clock(Instant::now()));
        let timeout = Duration::from_secs(30);
        let opened = activity.idle_since.load(Ordering::Acquire);
        let (early, late) = (opened + 29_000_000_000, opened + 31_000_000_000);
        assert!(!activity.close_if_waited_past(timeout, early));
        let busy = Busy::start(&activity).unwrap();
        let again = Busy::start(&activity).unwrap();
        assert!(!activity.close_if_waited_past(timeout, late), "answering");
        drop(busy);
        assert!(!activity.is_idle(), "one request still answered");
        drop(again);
        assert!(activity.is_idle());
        // Idle again from the moment the last answer ended.
        let idle = activity.idle_since.load(Ordering::Acquire);
        assert!(idle >= opened);
        assert!(!activity.close_if_waited_past(timeout, idle + 29_000_000_000));
        assert!(activity.close_if_waited_past(timeout, idle + 31_000_000_000));
        // Closed: no request starts any more.
        assert!(Busy::start(&activity).is_none());
        assert!(Busy::start(&activity).is_none());
    }

    #[test]
    fn a_request_that_starts_first_keeps_its_connection() {
        let activity = Activity::new(Clock(Instant::now()));
        let late = activity.idle_since.load(Ordering::Acquire) + 31_000_000_000;
        let busy = Busy::start(&activity).unwrap();
        assert!(!activity.close_if_waited_past(Duration::from_secs(30), late));
        drop(busy);
        assert!(activity.is_idle());
    }
}
