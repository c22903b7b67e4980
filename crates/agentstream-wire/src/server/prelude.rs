//! The names `std`'s prelude gives and `alloc` does not, for the server
//! half (written against `std` first; the crate is `no_std`).

pub(crate) use alloc::borrow::ToOwned;
pub(crate) use alloc::format;
pub(crate) use alloc::string::{String, ToString};
pub(crate) use alloc::vec;
pub(crate) use alloc::vec::Vec;
