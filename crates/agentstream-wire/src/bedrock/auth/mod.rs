//! Bedrock authentication (placeholder docs, rewritten below).

mod canonical;
mod date;
pub mod sigv4;

pub use canonical::{split_url, UrlParts};
pub use date::{AmzDate, DateStamp, MAX_SIGNING_TIME};
