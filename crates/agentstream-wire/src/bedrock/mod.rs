//! Amazon Bedrock (temporary: only the `auth` module of the sigv4 branch).

pub mod auth;
