//! Our [`AbortSignal`] and the host's `AbortController`, bridged both
//! ways.

use std::sync::Arc;

use agentstream::model::{AbortController, AbortSignal};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

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
/// It listens to the JavaScript signal's `abort` event; dropping the bridge
/// removes the listener (the [`signal`](Self::signal)s it gave out stay
/// valid and simply never abort from then on). Keep it alive for the calls
/// that use its signal.
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
pub struct JsAbortBridge {
    /// Shared with the listener, which aborts it.
    controller: Arc<AbortController>,
    target: web_sys::AbortSignal,
    /// `None` when the signal had aborted already, or cannot be listened to.
    listener: Option<Closure<dyn FnMut()>>,
}

impl std::fmt::Debug for JsAbortBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsAbortBridge")
            .field("aborted", &self.controller.is_aborted())
            .finish_non_exhaustive()
    }
}

impl JsAbortBridge {
    /// Bridges `js`.
    pub fn new(js: &web_sys::AbortSignal) -> Self {
        let controller = Arc::new(AbortController::new());
        let mut listener = None;
        if js.aborted() {
            controller.abort();
        } else {
            let relay = Arc::clone(&controller);
            let callback = Closure::<dyn FnMut()>::new(move || relay.abort());
            let added =
                js.add_event_listener_with_callback("abort", callback.as_ref().unchecked_ref());
            // An object that is not an event target cannot be listened to:
            // its signal then never aborts.
            if added.is_ok() {
                listener = Some(callback);
            }
        }
        Self {
            controller,
            target: js.clone(),
            listener,
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

impl Drop for JsAbortBridge {
    fn drop(&mut self) {
        if let Some(listener) = self.listener.take() {
            let _ = self
                .target
                .remove_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
        }
    }
}
