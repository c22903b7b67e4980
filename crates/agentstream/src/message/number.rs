//! JavaScript-compatible number output.
//!
//! JavaScript has one number type and prints an integral value without a
//! fraction (`0`, `3`), while serde writes an `f64` as `0.0`. Costs are `f64`
//! in this model; writing them through [`JsNumber`] makes the output match
//! what Pi writes byte for byte more often. Non-integral values are written
//! by serde_json's shortest round-trip formatting, so they parse back to the
//! bit-identical `f64` (the workspace enables `float_roundtrip` for parsing).

use serde::{Serialize, Serializer};

/// 2^64 as an `f64`: the first value that no longer fits in a `u64`.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
/// -2^63 as an `f64`: the smallest value that fits in an `i64`.
const MINUS_TWO_POW_63: f64 = -9_223_372_036_854_775_808.0;

/// Serializes an `f64` the way `JSON.stringify` would for integral values:
/// `3.0` is written as `3`. Everything else, including
/// non-finite values (which serde_json writes as `null`, like JavaScript),
/// is written as an ordinary `f64`.
///
/// `-0.0` is written as `-0.0`, unlike JavaScript (which writes `0`), so
/// that every float comes back bit-identical.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct JsNumber(pub(crate) f64);

impl Serialize for JsNumber {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.is_sign_negative() && v == 0.0 {
            serializer.serialize_f64(v)
        } else if (0.0..TWO_POW_64).contains(&v) && v == (v as u64) as f64 {
            serializer.serialize_u64(v as u64)
        } else if (MINUS_TWO_POW_63..0.0).contains(&v) && v == (v as i64) as f64 {
            serializer.serialize_i64(v as i64)
        } else {
            serializer.serialize_f64(v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    fn out(v: f64) -> String {
        serde_json::to_string(&JsNumber(v)).unwrap()
    }

    #[test]
    fn integral_values_print_without_fraction() {
        assert_eq!(out(0.0), "0");
        assert_eq!(out(-0.0), "-0.0");
        assert_eq!(out(3.0), "3");
        assert_eq!(out(-42.0), "-42");
        assert_eq!(out(1e19), "10000000000000000000");
    }

    #[test]
    fn fractions_round_trip_bit_identically() {
        for v in [
            0.07902124999999999,
            4e-05,
            0.030275,
            0.1 + 0.2,
            f64::MIN_POSITIVE,
            1e300,
        ] {
            let text = out(v);
            let back: f64 = serde_json::from_str(&text).unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{text}");
        }
    }

    #[test]
    fn non_finite_values_become_null() {
        assert_eq!(out(f64::NAN), "null");
        assert_eq!(out(f64::INFINITY), "null");
    }
}
