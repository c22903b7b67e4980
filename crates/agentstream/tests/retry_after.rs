//! `Retry-After` parsing on arbitrary input: never a panic, and every
//! delay within `RETRY_AFTER_MAX`.

use core::time::Duration;

use agentstream::model::{RetryAfter, RETRY_AFTER_MAX};
use proptest::prelude::*;

#[path = "support/props.rs"]
mod props;

proptest! {
    #![proptest_config(props::config(256, 8))]

    #[test]
    fn any_text_parses_or_is_refused(text in ".{0,64}", now in any::<u64>()) {
        if let Some(parsed) = RetryAfter::parse(&text) {
            prop_assert!(parsed.delay(now) <= RETRY_AFTER_MAX);
        }
    }

    #[test]
    fn any_number_of_seconds_saturates(seconds in any::<u128>()) {
        let parsed = RetryAfter::parse(&seconds.to_string());
        let expected = Duration::from_secs(u64::try_from(seconds).unwrap_or(u64::MAX)).min(RETRY_AFTER_MAX);
        prop_assert_eq!(parsed, Some(RetryAfter::Delay(expected)));
    }

    #[test]
    fn dates_near_the_format_never_panic(
        day in 0u32..40, month in 0usize..13, year in 0u32..10_000,
        hour in 0u32..30, minute in 0u32..70, second in 0u32..70,
    ) {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "Foo"];
        let text = format!("Mon, {day:02} {} {year:04} {hour:02}:{minute:02}:{second:02} GMT", months[month]);
        if let Some(RetryAfter::At { unix_seconds }) = RetryAfter::parse(&text) {
            prop_assert!(year >= 1970 && month < 12 && (1..=31).contains(&day));
            prop_assert!(unix_seconds < 253_402_300_800 + 86_400);
        }
    }
}
