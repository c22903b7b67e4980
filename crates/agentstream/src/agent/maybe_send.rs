//! `Send` where the host has threads: [`MaybeSend`], [`MaybeSync`] and
//! [`BoxFuture`].
//!
//! On native targets a tool, a hook or a tool call's future must be `Send`
//! (and the tools `Sync`) so that a multi-threaded runtime can run the
//! agent; on `wasm` targets nothing has to be, so a tool can hold a
//! `JsValue` or an `Rc`. One trait family serves both: these bounds are
//! `Send`/`Sync` on native targets and empty on `target_family = "wasm"`.

use alloc::boxed::Box;
use core::future::Future;
use core::pin::Pin;

/// `Send` on native targets; no bound on `wasm` targets. Implemented for
/// every type that satisfies it.
#[cfg(not(target_family = "wasm"))]
pub trait MaybeSend: Send {}
#[cfg(not(target_family = "wasm"))]
impl<T: Send + ?Sized> MaybeSend for T {}

/// `Send` on native targets; no bound on `wasm` targets. Implemented for
/// every type that satisfies it.
#[cfg(target_family = "wasm")]
pub trait MaybeSend {}
#[cfg(target_family = "wasm")]
impl<T: ?Sized> MaybeSend for T {}

/// `Sync` on native targets; no bound on `wasm` targets. Implemented for
/// every type that satisfies it.
#[cfg(not(target_family = "wasm"))]
pub trait MaybeSync: Sync {}
#[cfg(not(target_family = "wasm"))]
impl<T: Sync + ?Sized> MaybeSync for T {}

/// `Sync` on native targets; no bound on `wasm` targets. Implemented for
/// every type that satisfies it.
#[cfg(target_family = "wasm")]
pub trait MaybeSync {}
#[cfg(target_family = "wasm")]
impl<T: ?Sized> MaybeSync for T {}

/// A boxed future that is `Send` on native targets (and not required to be
/// on `wasm` targets).
#[cfg(not(target_family = "wasm"))]
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A boxed future that is `Send` on native targets (and not required to be
/// on `wasm` targets).
#[cfg(target_family = "wasm")]
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Names a lifetime that an `impl Trait` return type captures (the
/// pre-1.82 spelling of `use<'a>`); implemented for every type.
#[doc(hidden)]
pub trait Captures<'a> {}
impl<T: ?Sized> Captures<'_> for T {}
