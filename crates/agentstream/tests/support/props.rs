//! The property tests' configuration: few cases under Miri, and no failure
//! files (Miri isolates the file system).

use proptest::test_runner::Config;

/// `cases` cases natively, `miri_cases` under Miri, no failure files.
pub fn config(cases: u32, miri_cases: u32) -> Config {
    Config {
        cases: if cfg!(miri) { miri_cases } else { cases },
        failure_persistence: None,
        ..Config::default()
    }
}
