//! `new Date(value).getTime()` for the values found in session entries.
//!
//! Pi turns an entry's ISO 8601 `timestamp` into the milliseconds of a
//! synthesized message with JavaScript's `Date`. This reads the ECMAScript
//! date-time string format (`YYYY`, `YYYY-MM`, `YYYY-MM-DD`, each
//! optionally followed by `THH:mm`, `:ss`, `.sss` and `Z` or `±HH:mm`;
//! expanded `±YYYYYY` years). An unparsable value gives `NaN`, which
//! `JSON.stringify` writes as `null`.
//!
//! Differences from V8, documented: a date-time without an offset is read
//! as UTC (JavaScript reads it in the local time zone; Pi always writes
//! `Z`), and V8's lenient fallback formats (`"Nov 20 2025"`) are `null`.

use serde_json::Value;

/// JavaScript's largest time value (±100,000,000 days).
const MAX_TIME: i64 = 8_640_000_000_000_000;

/// `new Date(value).getTime()` as JSON: a number, or `null` for `NaN`.
pub fn js_date_millis(value: Option<&Value>) -> Value {
    let millis = match value {
        None => None,
        Some(Value::Null) => Some(0),
        Some(Value::Bool(b)) => Some(i64::from(*b)),
        Some(Value::Number(n)) => n.as_f64().and_then(time_clip),
        Some(Value::String(s)) => parse_iso(s),
        Some(_) => None,
    };
    millis.map_or(Value::Null, Value::from)
}

fn time_clip(f: f64) -> Option<i64> {
    if !f.is_finite() || f.abs() > MAX_TIME as f64 {
        return None;
    }
    // `as` truncates toward zero, as TimeClip does.
    Some(f as i64)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, n: usize) -> Option<i64> {
        let slice = self.bytes.get(self.pos..self.pos + n)?;
        let mut v = 0i64;
        for &b in slice {
            if !b.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(b - b'0');
        }
        self.pos += n;
        Some(v)
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.bytes.get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn done(&self) -> bool {
        self.pos == self.bytes.len()
    }
}

/// Parses the ECMAScript date-time string format to milliseconds.
pub(crate) fn parse_iso(s: &str) -> Option<i64> {
    let mut c = Cursor {
        bytes: s.as_bytes(),
        pos: 0,
    };
    let year = if c.eat(b'+') {
        c.digits(6)?
    } else if c.eat(b'-') {
        let y = c.digits(6)?;
        if y == 0 {
            return None;
        }
        -y
    } else {
        c.digits(4)?
    };
    let (mut month, mut day) = (1, 1);
    if c.eat(b'-') {
        month = c.digits(2)?;
        if !(1..=12).contains(&month) {
            return None;
        }
        if c.eat(b'-') {
            day = c.digits(2)?;
            // V8 takes any day up to 31 and rolls over (Feb 30 is Mar 2).
            if !(1..=31).contains(&day) {
                return None;
            }
        }
    }
    let (mut h, mut mi, mut sec, mut ms, mut offset) = (0, 0, 0, 0, 0);
    if c.eat(b'T') {
        h = c.digits(2)?;
        if !c.eat(b':') {
            return None;
        }
        mi = c.digits(2)?;
        if c.eat(b':') {
            sec = c.digits(2)?;
            if c.eat(b'.') {
                let start = c.pos;
                let mut scale = 100;
                while let Some(d) = c.bytes.get(c.pos).filter(|b| b.is_ascii_digit()) {
                    ms += i64::from(d - b'0') * scale;
                    scale /= 10;
                    c.pos += 1;
                }
                if c.pos == start {
                    return None;
                }
            }
        }
        if h > 24 || mi > 59 || sec > 59 || (h == 24 && (mi > 0 || sec > 0 || ms > 0)) {
            return None;
        }
        if c.eat(b'Z') {
        } else if c.bytes.get(c.pos).is_some_and(|b| *b == b'+' || *b == b'-') {
            let sign = if c.eat(b'+') {
                1
            } else {
                c.pos += 1;
                -1
            };
            let oh = c.digits(2)?;
            if !c.eat(b':') {
                return None;
            }
            let om = c.digits(2)?;
            if oh > 23 || om > 59 {
                return None;
            }
            offset = sign * (oh * 60 + om);
        }
    }
    if !c.done() {
        return None;
    }
    // Checked above: 1 to 12 and 1 to 31.
    let (month, day) = (u32::try_from(month).ok()?, u32::try_from(day).ok()?);
    let days = crate::civil::days_from_civil(year, month, day);
    let t = days * 86_400_000 + h * 3_600_000 + mi * 60_000 + sec * 1000 + ms - offset * 60_000;
    (t.abs() <= MAX_TIME).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_pi_writes_and_what_javascript_reads() {
        assert_eq!(
            parse_iso("2025-11-20T23:33:50.805Z"),
            Some(1_763_681_630_805)
        );
        assert_eq!(parse_iso("1970-01-01"), Some(0));
        assert_eq!(parse_iso("1970-01-01T01:00+01:00"), Some(0));
        assert_eq!(parse_iso("2024-02-29T00:00:00Z"), Some(1_709_164_800_000));
        assert_eq!(
            parse_iso("2025-02-30T00:00:00.000Z"),
            Some(1_740_873_600_000)
        );
        assert_eq!(parse_iso("2025-02-32"), None);
        assert_eq!(parse_iso("not a date"), None);
        assert_eq!(parse_iso("-000000-01-01"), None);
        assert_eq!(js_date_millis(None), Value::Null);
        assert_eq!(js_date_millis(Some(&json!(null))), json!(0));
        assert_eq!(js_date_millis(Some(&json!(12.9))), json!(12));
        assert_eq!(js_date_millis(Some(&json!(9e15))), Value::Null);
    }
}
