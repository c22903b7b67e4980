//! The error of starting a server.

use std::fmt;

/// The server could not start listening.
#[derive(Debug)]
pub struct BindError {
    address: String,
    source: std::io::Error,
}

impl BindError {
    pub(crate) fn new(address: impl Into<String>, source: std::io::Error) -> Self {
        Self {
            address: address.into(),
            source,
        }
    }
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot listen on {}", self.address)
    }
}

impl core::error::Error for BindError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.source)
    }
}
