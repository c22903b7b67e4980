//! Property test: random operation sequences against a small reference model
#![cfg(not(loom))]
//! of the EventStream contract, checking every output and every wake count.

mod support;

use std::collections::VecDeque;
use std::task::Poll;

use agentstream::event_stream::{EventStream, RefusalReason, ResultFuture, StreamError};
use futures_util::StreamExt;
use proptest::prelude::*;
use support::CountingWaker;

#[derive(Debug, Clone)]
enum Op {
    Push(u8),
    Finish(u8),
    Fail(u8),
    /// Poll the consumer with one of two wakers (two successive consumers).
    Poll(usize),
    NewResult,
    PollResult(usize),
    DropResult(usize),
    DropConsumer,
    DropProducer,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u8>().prop_map(Op::Push),
        1 => any::<u8>().prop_map(Op::Finish),
        1 => any::<u8>().prop_map(Op::Fail),
        4 => (0..2usize).prop_map(Op::Poll),
        1 => Just(Op::NewResult),
        2 => (0..4usize).prop_map(Op::PollResult),
        1 => (0..4usize).prop_map(Op::DropResult),
        1 => Just(Op::DropConsumer),
        1 => Just(Op::DropProducer),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ModelState {
    Open,
    Finished(u8),
    Failed(u8),
    ProducerDropped,
}

impl ModelState {
    fn outcome(self) -> Option<Result<u8, StreamError<u8>>> {
        match self {
            Self::Open => None,
            Self::Finished(r) => Some(Ok(r)),
            Self::Failed(e) => Some(Err(StreamError::Failed(e))),
            Self::ProducerDropped => Some(Err(StreamError::ProducerDropped)),
        }
    }
}

struct ModelAwaiter {
    real: ResultFuture<u8, u8>,
    waker: CountingWaker,
    parked: bool,
    expected_wakes: usize,
}

struct Model {
    state: ModelState,
    queue: VecDeque<u8>,
    consumer_ended: bool,
    parked: Option<usize>,
    expected_wakes: [usize; 2],
    awaiters: Vec<ModelAwaiter>,
}

impl Model {
    fn refusal(&self) -> Option<RefusalReason> {
        match self.state {
            ModelState::Open => None,
            ModelState::Finished(_) => Some(RefusalReason::Finished),
            _ => Some(RefusalReason::Failed),
        }
    }

    fn terminate(&mut self, state: ModelState) {
        self.state = state;
        if let Some(id) = self.parked.take() {
            self.expected_wakes[id] += 1;
        }
        for awaiter in &mut self.awaiters {
            if std::mem::take(&mut awaiter.parked) {
                awaiter.expected_wakes += 1;
            }
        }
    }
}

fn run(ops: Vec<Op>) {
    let (producer, consumer) = EventStream::<u8, u8, u8>::channel();
    let mut producer = Some(producer);
    let mut consumer = Some(consumer);
    let wakers = [CountingWaker::new(), CountingWaker::new()];
    let mut model = Model {
        state: ModelState::Open,
        queue: VecDeque::new(),
        consumer_ended: false,
        parked: None,
        expected_wakes: [0, 0],
        awaiters: Vec::new(),
    };

    for op in ops {
        match op {
            Op::Push(event) => {
                let Some(real) = &producer else { continue };
                let expected = match model.refusal() {
                    Some(reason) => Err(reason),
                    None if consumer.is_none() && model.awaiters.is_empty() => {
                        Err(RefusalReason::Closed)
                    }
                    None if consumer.is_none() => Ok(()),
                    None => {
                        model.queue.push_back(event);
                        if let Some(id) = model.parked.take() {
                            model.expected_wakes[id] += 1;
                        }
                        Ok(())
                    }
                };
                assert_eq!(real.push(event).map_err(|e| e.reason()), expected);
            }
            Op::Finish(value) | Op::Fail(value) => {
                let Some(real) = &producer else { continue };
                let finish = matches!(op, Op::Finish(_));
                let expected = model.refusal().map_or(Ok(()), Err);
                let actual = if finish {
                    real.finish(value).map_err(|e| e.reason())
                } else {
                    real.fail(value).map_err(|e| e.reason())
                };
                assert_eq!(actual, expected);
                if expected.is_ok() {
                    model.terminate(if finish {
                        ModelState::Finished(value)
                    } else {
                        ModelState::Failed(value)
                    });
                }
            }
            Op::Poll(id) => {
                let Some(real) = &mut consumer else { continue };
                let expected = if let Some(event) = model.queue.pop_front() {
                    Poll::Ready(Some(Ok(event)))
                } else if model.consumer_ended {
                    Poll::Ready(None)
                } else {
                    match model.state.outcome() {
                        None => {
                            if let Some(previous) = model.parked.replace(id) {
                                if previous != id {
                                    model.expected_wakes[previous] += 1;
                                }
                            }
                            Poll::Pending
                        }
                        Some(outcome) => {
                            model.consumer_ended = true;
                            Poll::Ready(outcome.err().map(Err))
                        }
                    }
                };
                assert_eq!(wakers[id].poll(&mut real.next()), expected);
            }
            Op::NewResult => {
                let Some(real) = &consumer else { continue };
                if model.awaiters.len() < 4 {
                    model.awaiters.push(ModelAwaiter {
                        real: real.result(),
                        waker: CountingWaker::new(),
                        parked: false,
                        expected_wakes: 0,
                    });
                }
            }
            Op::PollResult(index) => {
                let Some(awaiter) = model.awaiters.get_mut(index) else {
                    continue;
                };
                let expected = match model.state.outcome() {
                    Some(outcome) => Poll::Ready(outcome),
                    None => {
                        awaiter.parked = true;
                        Poll::Pending
                    }
                };
                assert_eq!(awaiter.waker.poll(&mut awaiter.real), expected);
            }
            Op::DropResult(index) => {
                if index < model.awaiters.len() {
                    let awaiter = model.awaiters.remove(index);
                    let ModelAwaiter { real, waker, .. } = awaiter;
                    drop(real);
                    assert_eq!(waker.live_clones(), 0);
                }
            }
            Op::DropConsumer => {
                if consumer.take().is_some() {
                    model.queue.clear();
                    model.parked = None;
                }
            }
            Op::DropProducer => {
                if producer.take().is_some() && model.state == ModelState::Open {
                    model.terminate(ModelState::ProducerDropped);
                }
            }
        }
        for (waker, expected) in wakers.iter().zip(model.expected_wakes) {
            assert_eq!(waker.wakes(), expected, "consumer wakes");
        }
        for awaiter in &model.awaiters {
            assert_eq!(
                awaiter.waker.wakes(),
                awaiter.expected_wakes,
                "awaiter wakes"
            );
        }
    }
}

#[path = "support/props.rs"]
mod props;

proptest! {
    #![proptest_config(props::config(1000, 16))]

    #[test]
    fn event_stream_matches_the_reference_model(ops in proptest::collection::vec(op(), 0..60)) {
        run(ops);
    }
}
