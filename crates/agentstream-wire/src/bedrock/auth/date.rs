//! The signing time: UNIX seconds to the civil UTC date SigV4 writes
//! (`YYYYMMDDTHHMMSSZ` and its `YYYYMMDD` scope date), with no clock.

use core::fmt;

use agentstream::civil::civil_from_days;

use super::sigv4::SigningError;

/// The last second SigV4's four-digit year can hold:
/// 9999-12-31T23:59:59Z.
pub const MAX_SIGNING_TIME: u64 = 253_402_300_799;

/// A UTC date and time to the second, as SigV4 writes it.
///
/// Built from UNIX seconds with [`AmzDate::from_unix`]; `Display` prints
/// the `x-amz-date` form, `YYYYMMDDTHHMMSSZ`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmzDate {
    /// The year, 1970 to 9999.
    pub year: u16,
    /// The month, 1 to 12.
    pub month: u8,
    /// The day of the month, 1 to 31.
    pub day: u8,
    /// The hour, 0 to 23.
    pub hour: u8,
    /// The minute, 0 to 59.
    pub minute: u8,
    /// The second, 0 to 59.
    pub second: u8,
}

impl AmzDate {
    /// The civil UTC date of `secs` seconds after the UNIX epoch.
    ///
    /// # Errors
    /// [`SigningError::TimeOutOfRange`] past [`MAX_SIGNING_TIME`].
    pub fn from_unix(secs: u64) -> Result<Self, SigningError> {
        if secs > MAX_SIGNING_TIME {
            return Err(SigningError::TimeOutOfRange(secs));
        }
        let days = secs / 86_400;
        let rem = secs % 86_400;
        // At most 2,932,896 days (the range check): it fits an `i64`.
        let (year, month, day) = civil_from_days(days as i64);
        // Every field is bounded by the range check and the divisions
        // above, so the narrowing casts cannot truncate.
        Ok(Self {
            year: year as u16,
            month: month as u8,
            day: day as u8,
            hour: (rem / 3600) as u8,
            minute: (rem % 3600 / 60) as u8,
            second: (rem % 60) as u8,
        })
    }

    /// The scope date, `YYYYMMDD`.
    pub fn date_stamp(&self) -> DateStamp {
        DateStamp(*self)
    }
}

impl fmt::Display for AmzDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}T{:02}{:02}{:02}Z",
            self.date_stamp(),
            self.hour,
            self.minute,
            self.second
        )
    }
}

/// The `YYYYMMDD` part of an [`AmzDate`], for the credential scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateStamp(AmzDate);

impl fmt::Display for DateStamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}{:02}{:02}", self.0.year, self.0.month, self.0.day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn known_instants() {
        let cases = [
            (0, "19700101T000000Z"),
            (951_782_400, "20000229T000000Z"),
            (951_868_799, "20000229T235959Z"),
            (1_440_938_160, "20150830T123600Z"),
            (4_107_542_400, "21000301T000000Z"),
            (MAX_SIGNING_TIME, "99991231T235959Z"),
        ];
        for (secs, text) in cases {
            assert_eq!(AmzDate::from_unix(secs).unwrap().to_string(), text);
        }
        assert!(AmzDate::from_unix(MAX_SIGNING_TIME + 1).is_err());
    }

    /// Each day is the one after the day before, by the calendar's own
    /// rules (month lengths, leap years), from 1970 to 9999.
    #[test]
    fn days_follow_one_another() {
        let leap = |y: u16| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let month_len = |y: u16, m: u8| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut previous = AmzDate::from_unix(0).unwrap();
        let mut secs = 86_400 + 3_661;
        while secs <= MAX_SIGNING_TIME {
            let date = AmzDate::from_unix(secs).unwrap();
            let expected = if previous.day < month_len(previous.year, previous.month) {
                (previous.year, previous.month, previous.day + 1)
            } else if previous.month < 12 {
                (previous.year, previous.month + 1, 1)
            } else {
                (previous.year + 1, 1, 1)
            };
            assert_eq!((date.year, date.month, date.day), expected, "{date}");
            assert_eq!((date.hour, date.minute, date.second), (1, 1, 1));
            previous = date;
            secs += 86_400;
        }
        assert_eq!(
            (previous.year, previous.month, previous.day),
            (9999, 12, 31)
        );
    }
}
