//! Diagnostics shared by the validators.
