//! Golden files: compare text line by line with a checked-in file, with a
//! readable diff on failure, and rewrite the file on request.

use std::path::Path;

/// The environment variable that rewrites golden files instead of
/// comparing: `AGENTSTREAM_BLESS=1 cargo test ...`.
pub const BLESS_VAR: &str = "AGENTSTREAM_BLESS";

/// The most lines a diff compares with the line-by-line alignment; longer
/// files are compared position by position (the diff is then less tidy,
/// never wrong about equality).
const MAX_ALIGNED_LINES: usize = 2000;

/// Compares `actual` (one entry per line) with the file at `path`.
///
/// With [`BLESS_VAR`] set to `1`, writes `actual` to `path` instead (and
/// creates its directory). Otherwise a missing file or a difference
/// panics with a diff: `-` lines are the golden file's, `+` lines are
/// `actual`'s, each with its line number, and unchanged lines are left out
/// but for one of context on each side.
///
/// # Panics
/// When the file differs from `actual`, or cannot be read or written.
pub fn assert_golden(path: &Path, actual: &[String]) {
    assert_golden_by(path, actual, |expected, actual| expected == actual);
}

/// Like [`assert_golden`], with `same(expected_line, actual_line)` deciding
/// whether two lines match: for JSON lines, compare parsed values, so that
/// the order of object keys (which serde_json's `preserve_order` feature
/// changes for a whole build) does not matter.
///
/// # Panics
/// When the file differs from `actual`, or cannot be read or written.
pub fn assert_golden_by(path: &Path, actual: &[String], same: impl Fn(&str, &str) -> bool) {
    if blessing() {
        return bless(path, actual);
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "cannot read golden file {}: {e}\n(run with {BLESS_VAR}=1 to create it)",
            path.display()
        )
    });
    assert_golden_text(path, &expected, actual, same);
}

/// Like [`assert_golden_by`] with the golden file's text already at hand
/// (`include_str!`, for runs that cannot open files, such as Miri's);
/// `path` is where [`BLESS_VAR`] writes and what failures name.
///
/// # Panics
/// When `expected` differs from `actual`, or the file cannot be written.
pub fn assert_golden_text(
    path: &Path,
    expected: &str,
    actual: &[String],
    same: impl Fn(&str, &str) -> bool,
) {
    if blessing() {
        return bless(path, actual);
    }
    let expected: Vec<&str> = expected.lines().collect();
    let actual: Vec<&str> = actual.iter().map(String::as_str).collect();
    let equal =
        expected.len() == actual.len() && expected.iter().zip(&actual).all(|(e, a)| same(e, a));
    if !equal {
        panic!(
            "{} differs from this run ({BLESS_VAR}=1 rewrites it):\n{}",
            path.display(),
            line_diff_by(&expected, &actual, &same)
        );
    }
}

fn blessing() -> bool {
    std::env::var(BLESS_VAR).is_ok_and(|v| v == "1")
}

fn bless(path: &Path, actual: &[String]) {
    let mut text = actual.join("\n");
    text.push('\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create the golden directory");
    }
    std::fs::write(path, text).expect("write the golden file");
}

/// A line diff of `expected` and `actual`: `-N: line` for a line only in
/// `expected`, `+N: line` for a line only in `actual`, `  N: line` for
/// context, `...` between distant hunks.
pub fn line_diff(expected: &[&str], actual: &[&str]) -> String {
    line_diff_by(expected, actual, &|e: &str, a: &str| e == a)
}

/// Like [`line_diff`], with `same` deciding which lines match.
pub fn line_diff_by(
    expected: &[&str],
    actual: &[&str],
    same: &dyn Fn(&str, &str) -> bool,
) -> String {
    let ops = if expected.len() <= MAX_ALIGNED_LINES && actual.len() <= MAX_ALIGNED_LINES {
        align(expected, actual, same)
    } else {
        by_position(expected, actual, same)
    };
    let mut out = String::new();
    let mut last_printed: Option<usize> = None;
    for (i, op) in ops.iter().enumerate() {
        let near_change = |j: usize| ops.get(j).is_some_and(|op| !matches!(op, Op::Same(..)));
        let show = match op {
            Op::Same(..) => near_change(i + 1) || (i > 0 && near_change(i - 1)),
            _ => true,
        };
        if !show {
            continue;
        }
        if last_printed.is_some_and(|p| p + 1 < i) || (last_printed.is_none() && i > 0) {
            out.push_str("...\n");
        }
        last_printed = Some(i);
        let line = match op {
            Op::Same(e) => format!("  {}: {}\n", e + 1, expected[*e]),
            Op::Removed(e) => format!("-{}: {}\n", e + 1, expected[*e]),
            Op::Added(a) => format!("+{}: {}\n", a + 1, actual[*a]),
        };
        out.push_str(&line);
    }
    if last_printed.is_some_and(|p| p + 1 < ops.len()) {
        out.push_str("...\n");
    }
    out
}

enum Op {
    Same(usize),
    Removed(usize),
    Added(usize),
}

/// The edit script of a longest common subsequence of lines.
fn align(expected: &[&str], actual: &[&str], same: &dyn Fn(&str, &str) -> bool) -> Vec<Op> {
    let (n, m) = (expected.len(), actual.len());
    // lcs[i][j]: the LCS length of expected[i..] and actual[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if same(expected[i], actual[j]) {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut ops) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && same(expected[i], actual[j]) {
            ops.push(Op::Same(i));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(Op::Removed(i));
            i += 1;
        } else {
            ops.push(Op::Added(j));
            j += 1;
        }
    }
    ops
}

fn by_position(expected: &[&str], actual: &[&str], same: &dyn Fn(&str, &str) -> bool) -> Vec<Op> {
    let mut ops = Vec::new();
    for k in 0..expected.len().max(actual.len()) {
        match (expected.get(k), actual.get(k)) {
            (Some(e), Some(a)) if same(e, a) => ops.push(Op::Same(k)),
            (e, a) => {
                if e.is_some() {
                    ops.push(Op::Removed(k));
                }
                if a.is_some() {
                    ops.push(Op::Added(k));
                }
            }
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::line_diff;

    #[test]
    fn the_diff_shows_changed_lines_with_numbers_and_one_line_of_context() {
        let expected = ["a", "b", "c", "d", "e", "f"];
        let actual = ["a", "b", "C", "d", "e", "f", "g"];
        let diff = line_diff(&expected, &actual);
        assert_eq!(
            diff,
            "...\n  2: b\n-3: c\n+3: C\n  4: d\n...\n  6: f\n+7: g\n"
        );
    }

    #[test]
    fn a_custom_comparison_decides_which_lines_match() {
        let same = |e: &str, a: &str| e.eq_ignore_ascii_case(a);
        assert_eq!(
            super::line_diff_by(&["A", "b"], &["a", "c"], &same),
            "  1: A\n-2: b\n+2: c\n"
        );
    }

    #[test]
    fn equal_inputs_give_an_empty_diff() {
        assert_eq!(line_diff(&["x", "y"], &["x", "y"]), "");
    }
}
