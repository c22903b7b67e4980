//! A small JavaScript-facing API (the `js-api` feature): a scripted model
//! whose calls are async iterables of Pi's JSON events, for `for await`.
//!
//! ```js
//! const { ScriptedModel } = require("./pkg/agentstream.js");
//! const model = new ScriptedModel(JSON.stringify([
//!   { role: "assistant", content: [{ type: "text", text: "hello" }], stopReason: "stop" },
//! ]), 2);
//! for await (const event of model.stream("hi")) console.log(event.type);
//! ```

use std::cell::RefCell;
use std::num::NonZeroUsize;
use std::rc::Rc;

use agentstream::message::{user, Context};
use agentstream::model::{Model, ModelStream, ScriptedTurn, StreamOptions};
use agentstream::rt::Runtime;
use futures_util::StreamExt;
use js_sys::{Function, Object, Promise, Reflect, Symbol};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};
use wasm_bindgen_futures::{future_to_promise, JsFuture};

/// The largest script [`JsScriptedModel::new`] parses: 16 MiB of JSON.
pub const MAX_SCRIPT_BYTES: usize = 16 * 1024 * 1024;

/// `ScriptedModel` in JavaScript: answers each call with the next scripted
/// turn, as the Rust
/// [`ScriptedModel`](agentstream::model::ScriptedModel) does.
///
/// ```no_run
/// use agentstream_wasm::js::JsScriptedModel;
///
/// let script = r#"[{"role": "assistant", "content": [{"type": "text", "text": "hi"}], "stopReason": "stop"}]"#;
/// let model = JsScriptedModel::new(script, Some(2)).unwrap();
/// let _events = model.stream("hello"); // an async iterable, for JavaScript
/// ```
#[wasm_bindgen(js_name = ScriptedModel)]
#[derive(Debug)]
pub struct JsScriptedModel {
    model: agentstream::model::ScriptedModel,
}

#[wasm_bindgen(js_class = ScriptedModel)]
impl JsScriptedModel {
    /// A model playing `script`: a JSON array of turns in Pi's JSON (an
    /// assistant message, or a failure `{"stopReason": "error", …}`), each
    /// text split into `chunks` deltas when given.
    ///
    /// # Errors
    /// The script is longer than [`MAX_SCRIPT_BYTES`], not JSON, not an
    /// array, or a turn does not parse (the message names its index and
    /// JSON path).
    #[wasm_bindgen(constructor)]
    pub fn new(script: &str, chunks: Option<u32>) -> Result<JsScriptedModel, JsError> {
        if script.len() > MAX_SCRIPT_BYTES {
            return Err(JsError::new(&format!(
                "the script is {} bytes, more than the {MAX_SCRIPT_BYTES} accepted",
                script.len()
            )));
        }
        let value: serde_json::Value = serde_json::from_str(script)
            .map_err(|e| JsError::new(&format!("the script is not JSON: {e}")))?;
        let serde_json::Value::Array(items) = value else {
            return Err(JsError::new("the script must be a JSON array of turns"));
        };
        let chunks = chunks.and_then(|n| NonZeroUsize::new(n as usize));
        let turns = items
            .into_iter()
            .enumerate()
            .map(|(index, item)| {
                let turn = ScriptedTurn::from_value(item)
                    .map_err(|e| JsError::new(&format!("turn {index}: {e}")))?;
                Ok(match chunks {
                    Some(chunks) => turn.chunked(chunks),
                    None => turn,
                })
            })
            .collect::<Result<Vec<_>, JsError>>()?;
        Ok(Self {
            model: agentstream::model::ScriptedModel::new(turns),
        })
    }

    /// Starts a call with one user message, `prompt`, and returns its
    /// events as an [`EventIterator`](JsEventIterator), an async iterable
    /// (`for await`): each event is Pi's JSON (`{type: "text_delta", delta,
    /// …}`), the last one `done` or `error` with the final message.
    /// Leaving the loop early cancels the call.
    pub fn stream(&self, prompt: &str) -> JsValue {
        let context = Context::from_messages([user(prompt).into()]);
        let stream =
            crate::EventLoop.spawn_stream(self.model.stream(&context, StreamOptions::default()));
        let iterator = JsValue::from(JsEventIterator {
            state: Rc::new(RefCell::new(Iteration {
                stream: Some(stream),
                last: None,
            })),
        });
        // wasm-bindgen cannot name a method `[Symbol.asyncIterator]`: the
        // class's prototype gets it here (the same function every time).
        let prototype = Reflect::get_prototype_of(&iterator);
        if let Ok(prototype) = prototype {
            let key: JsValue = Symbol::async_iterator().into();
            if !Reflect::has(&prototype, &key).unwrap_or(true) {
                let _ = Reflect::set(&prototype, &key, &Function::new_no_args("return this"));
            }
        }
        iterator
    }
}

/// The events of one call of a [`ScriptedModel`](JsScriptedModel), in
/// JavaScript: the async iterator protocol (`next()`, `return()`,
/// `[Symbol.asyncIterator]`). Dropping it (JavaScript's garbage collector,
/// or `free()`) cancels the call.
#[wasm_bindgen(js_name = EventIterator)]
pub struct JsEventIterator {
    state: Rc<RefCell<Iteration>>,
}

impl std::fmt::Debug for JsEventIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsEventIterator")
            .field("ended", &self.state.borrow().stream.is_none())
            .finish_non_exhaustive()
    }
}

#[wasm_bindgen(js_class = EventIterator)]
impl JsEventIterator {
    /// The next event: a promise of `{value, done}`. Calls made before the
    /// previous one resolved are answered in order.
    pub fn next(&self) -> Promise {
        let previous = self.state.borrow_mut().last.take();
        let state = Rc::clone(&self.state);
        let promise = future_to_promise(async move {
            if let Some(previous) = previous {
                let _ = JsFuture::from(previous).await;
            }
            // Out of the cell while awaiting: no borrow is held across it.
            let taken = state.borrow_mut().stream.take();
            let Some(mut stream) = taken else {
                return Ok(step(&JsValue::UNDEFINED, true));
            };
            let Some(event) = stream.next().await else {
                return Ok(step(&JsValue::UNDEFINED, true));
            };
            state.borrow_mut().stream = Some(stream);
            let json = serde_json::to_string(&event).map_err(|e| {
                JsValue::from(JsError::new(&format!("an event did not serialize: {e}")))
            })?;
            Ok(step(&js_sys::JSON::parse(&json)?, false))
        });
        self.state.borrow_mut().last = Some(promise.clone());
        promise
    }

    /// Ends the iteration early (what `break` in `for await` calls): the
    /// call is cancelled and later `next()` calls resolve to `done`.
    #[wasm_bindgen(js_name = "return")]
    pub fn finish(&self) -> Promise {
        self.state.borrow_mut().stream = None;
        Promise::resolve(&step(&JsValue::UNDEFINED, true))
    }
}

/// What an iterator's steps share.
struct Iteration {
    /// `None` once the stream ended or the loop left early.
    stream: Option<ModelStream>,
    /// The last `next()` promise: a new one waits for it, so the events
    /// come in order however many `next()` calls are pending.
    last: Option<Promise>,
}

/// `{value, done}`, the result of an async iterator's step.
fn step(value: &JsValue, done: bool) -> JsValue {
    let result = Object::new();
    let _ = Reflect::set(&result, &"value".into(), value);
    let _ = Reflect::set(&result, &"done".into(), &done.into());
    result.into()
}
