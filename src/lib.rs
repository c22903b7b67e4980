//! Shared support for the workspace-level conformance suite and benchmarks.
//!
//! This package is not published. It exists so that `tests/` and `benches/`
//! at the workspace root can share helpers.
