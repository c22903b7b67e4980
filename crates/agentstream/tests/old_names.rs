//! The stream family's names #36 retired keep a `#[deprecated]` alias for
//! one release: each old name still names the item that replaced it.
#![allow(deprecated)]

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;

use agentstream::message::{assistant, text, StopReason};
use agentstream::model::{
    AssistantMessageEventStream, AssistantMessageProducer, DoneReason, LocalModelDriver,
    ModelDriver, ModelEvent, ModelProducer, ModelResult, ModelStream, ResultHandle,
};
use agentstream::EventStream;

#[test]
fn each_old_name_names_the_item_that_replaced_it() {
    let (producer, mut stream): (AssistantMessageProducer, ModelStream) = ModelStream::channel();
    let _: &ModelProducer = &producer;
    let handle: ResultHandle = stream.result_handle();
    let _: &ModelResult<'static> = &handle;
    let mut producer = producer;
    let message = assistant([text("hi")], StopReason::Stop);
    producer
        .push(ModelEvent::done(DoneReason::Stop, message))
        .unwrap();
    assert_eq!(futures_executor::block_on(handle).text(), "hi");
    assert_eq!(futures_executor::block_on(stream.result()).text(), "hi");
    let driver: Option<ModelDriver> = stream.take_driver();
    let _: Option<Pin<Box<dyn Future<Output = ()> + Send>>> = driver;
    let _: Option<LocalModelDriver> = stream.into_local().take_driver();
    let _: fn() -> AssistantMessageEventStream =
        || EventStream::<ModelEvent, ModelEvent, Infallible>::channel().1;
}
