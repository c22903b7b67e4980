//! The Pi-compatible message IR.
