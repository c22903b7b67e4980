//! Our [`AbortSignal`] and the host's `AbortController`, bridged both
//! ways.

use std::sync::Arc;

use agentstream::model::{AbortController, AbortSignal};
use gloo_events::EventListener;
use wasm_bindgen::JsValue;

/// A JavaScript `AbortSignal` that aborts when `signal` aborts (at once if
/// it already has), for handing our cancellation to JavaScript APIs such as
/// `fetch`.
///
/// The bridge is a task on the event loop parked on
/// [`AbortSignal::aborted`]: until `signal` aborts, that task (a few dozen
/// bytes and a clone of the signal) stays parked, even after the JavaScript
/// signal is gone. Bridge a signal once, not per attempt.
///
/// # Errors
/// The host has no `AbortController` (the error is what it threw).
///
/// ```no_run
/// use agentstream_wasm::agentstream::model::AbortController;
///
/// let controller = AbortController::new();
/// let js = agentstream_wasm::to_js_signal(&controller.signal()).unwrap();
/// controller.abort();
/// // `js.aborted()` becomes true in a later microtask.
/// ```
pub fn to_js_signal(signal: &AbortSignal) -> Result<web_sys::AbortSignal, JsValue> {
    let controller = web_sys::AbortController::new()?;
    let js = controller.signal();
    if signal.is_aborted() {
        controller.abort();
    } else {
        let aborted = signal.aborted();
        wasm_bindgen_futures::spawn_local(async move {
            aborted.await;
            controller.abort();
        });
    }
    Ok(js)
}

/// Our [`AbortSignal`], aborted when a JavaScript `AbortSignal` aborts (at
/// once if it already has), for as long as the bridge lives.
///
/// It listens to the JavaScript signal's `abort` event (a
/// [`gloo_events::EventListener`]); dropping the bridge removes the
/// listener (the [`signal`](Self::signal)s it gave out stay valid and
/// simply never abort from then on). Keep it alive for the calls that use
/// its signal.
///
/// ```no_run
/// use agentstream_wasm::JsAbortBridge;
///
/// let js = web_sys::AbortController::new().unwrap();
/// let bridge = JsAbortBridge::new(&js.signal());
/// let signal = bridge.signal();
/// js.abort(); // the `abort` event fires synchronously
/// assert!(signal.is_aborted());
/// ```
#[derive(Debug)]
pub struct JsAbortBridge {
    /// Shared with the listener, which aborts it.
    controller: Arc<AbortController>,
    /// Removes itself from the JavaScript signal when dropped.
    _listener: EventListener,
}

impl JsAbortBridge {
    /// Bridges `js`.
    pub fn new(js: &web_sys::AbortSignal) -> Self {
        let controller = Arc::new(AbortController::new());
        if js.aborted() {
            controller.abort();
        }
        // An aborted signal never fires `abort` again: listening to it is
        // harmless, and keeps the bridge one shape.
        let relay = Arc::clone(&controller);
        let listener = EventListener::once(js, "abort", move |_| relay.abort());
        Self {
            controller,
            _listener: listener,
        }
    }

    /// A signal that aborts when the JavaScript signal does.
    pub fn signal(&self) -> AbortSignal {
        self.controller.signal()
    }

    /// Whether the JavaScript signal has aborted (as far as the bridge saw).
    pub fn is_aborted(&self) -> bool {
        self.controller.is_aborted()
    }
}
