//! Civil dates of the proleptic Gregorian calendar and days since the
//! Unix epoch (1970-01-01), both ways, for every date arithmetic of the
//! workspace: session timestamps (`new Date(…)`), HTTP dates
//! (`Retry-After`) and SigV4's `x-amz-date`. The era arithmetic of
//! Howard Hinnant's `days_from_civil` and `civil_from_days`: 400-year
//! eras of 146,097 days, years counted from March so the leap day ends
//! one; exact for every `i64` day count whose year fits in `i64`.
//!
//! ```
//! use agentstream::civil::{civil_from_days, days_from_civil};
//!
//! assert_eq!(days_from_civil(2000, 2, 29), 11_016);
//! assert_eq!(civil_from_days(11_016), (2000, 2, 29));
//! assert_eq!(days_from_civil(1969, 12, 31), -1);
//! ```

/// Days from 0000-03-01 to 1970-01-01.
const EPOCH_SHIFT: i64 = 719_468;

/// Days in a 400-year era.
const ERA_DAYS: i64 = 146_097;

/// Days from 1970-01-01 to `year`-`month`-`day` (negative before it).
///
/// `month` is 1 to 12; a `day` past the month's end rolls over into the
/// next month (February 30 of a common year is March 2), as JavaScript's
/// `Date` reads it.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let month = i64::from(month);
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let march_month = (month + 9) % 12;
    let day_of_year = (153 * march_month + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * ERA_DAYS + day_of_era - EPOCH_SHIFT
}

/// The `(year, month, day)` of `days` after 1970-01-01 (before it when
/// negative); `month` is 1 to 12, `day` 1 to 31.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + EPOCH_SHIFT;
    let era = z.div_euclid(ERA_DAYS);
    let day_of_era = z.rem_euclid(ERA_DAYS);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let march_month = (5 * day_of_year + 2) / 153;
    // Both are bounded (1 to 31, 1 to 12): the conversions never fail.
    let day = u32::try_from(day_of_year - (153 * march_month + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if march_month < 10 {
        march_month + 3
    } else {
        march_month - 9
    })
    .unwrap_or(1);
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_days() {
        for (days, date) in [
            (0, (1970, 1, 1)),
            (-1, (1969, 12, 31)),
            (-719_468, (0, 3, 1)),
            (11_016, (2000, 2, 29)),
            (47_541, (2100, 3, 1)),
            (2_932_896, (9999, 12, 31)),
        ] {
            assert_eq!(civil_from_days(days), date, "{days}");
            assert_eq!(days_from_civil(date.0, date.1, date.2), days, "{date:?}");
        }
        // JavaScript's rollover: 2025-02-30 is 2025-03-02.
        assert_eq!(days_from_civil(2025, 2, 30), days_from_civil(2025, 3, 2));
    }

    /// Each day is the one after the day before by the calendar's own
    /// rules (month lengths, leap years), from 1600 to 2400, both ways.
    #[test]
    fn days_follow_one_another() {
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let month_len = |y: i64, m: u32| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let start = days_from_civil(1600, 1, 1);
        let mut previous = civil_from_days(start);
        assert_eq!(previous, (1600, 1, 1));
        for days in start + 1..=days_from_civil(2400, 12, 31) {
            let (y, m, d) = previous;
            let expected = if d < month_len(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
            assert_eq!(civil_from_days(days), expected, "{days}");
            assert_eq!(days_from_civil(expected.0, expected.1, expected.2), days);
            previous = expected;
        }
    }
}
