//! [`PieceLengths`]: the sizes of the pieces a recorded body arrived in,
//! kept as LEB128 varints (one byte per piece under 128 bytes, two under
//! 16 KiB) rather than a machine word each: a body recorded in 1-byte
//! pieces costs one byte per byte for its lengths, not eight.

/// The sizes of the pieces a body arrived in, in order, adding up to the
/// body's length (checked when made). Read with [`iter`](Self::iter).
///
/// ```
/// use agentstream_serve::cassette::PieceLengths;
///
/// let lengths = PieceLengths::parse(b"3\n\n2\n", 5).expect("they add up to 5");
/// assert_eq!(lengths.iter().collect::<Vec<_>>(), [3, 2]);
/// assert_eq!(lengths.count(), 2);
/// assert!(PieceLengths::parse(b"3\n", 5).is_none());
/// assert_eq!(PieceLengths::one(5).iter().collect::<Vec<_>>(), [5]);
/// ```
#[derive(Clone, PartialEq, Eq, Default)]
pub struct PieceLengths {
    varints: Box<[u8]>,
    count: usize,
}

impl PieceLengths {
    /// A body of `len` bytes in one piece (a cassette without
    /// `response.body.lengths`).
    #[must_use]
    pub fn one(len: usize) -> Self {
        let mut lengths = Builder::default();
        lengths.push(len);
        lengths.build()
    }

    /// The lengths of `text` (the `response.body.lengths` format: one
    /// decimal count per line, blank lines skipped), or `None` when a
    /// line is not a count or the counts do not add up to `total`.
    #[must_use]
    pub fn parse(text: &[u8], total: usize) -> Option<Self> {
        let mut lengths = Builder::default();
        let mut sum = 0usize;
        for line in text.split(|&b| b == b'\n') {
            let line = std::str::from_utf8(line).ok()?.trim();
            if !line.is_empty() {
                let n: usize = line.parse().ok()?;
                sum = sum.checked_add(n)?;
                lengths.push(n);
            }
        }
        (sum == total).then(|| lengths.build())
    }

    /// The lengths, in order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let mut at = 0;
        std::iter::from_fn(move || self.next_at(&mut at))
    }

    /// How many pieces there are.
    #[must_use]
    pub fn count(&self) -> usize {
        self.count
    }

    /// The bytes held for the lengths.
    pub(crate) fn held(&self) -> usize {
        self.varints.len()
    }

    /// The length at `*at` (a position in the varints), moving `at` past
    /// it; `None` after the last.
    pub(crate) fn next_at(&self, at: &mut usize) -> Option<usize> {
        let mut n = 0u64;
        let mut shift = 0u32;
        loop {
            let byte = *self.varints.get(*at)?;
            *at += 1;
            n |= u64::from(byte & 0x7f) << shift.min(63);
            shift += 7;
            if byte & 0x80 == 0 {
                return Some(usize::try_from(n).unwrap_or(usize::MAX));
            }
        }
    }
}

impl std::fmt::Debug for PieceLengths {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Lengths being encoded.
#[derive(Default)]
struct Builder {
    varints: Vec<u8>,
    count: usize,
}

impl Builder {
    fn push(&mut self, n: usize) {
        self.count += 1;
        let mut n = n as u64;
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                self.varints.push(byte);
                return;
            }
            self.varints.push(byte | 0x80);
        }
    }

    fn build(self) -> PieceLengths {
        PieceLengths {
            varints: self.varints.into_boxed_slice(),
            count: self.count,
        }
    }
}

/// The arrival times of `response.body.times` (one decimal count of
/// milliseconds since the request was sent per line, one line per piece,
/// blank lines skipped), or `None` when a line is not a count. A
/// cassette recorded before the file existed has none: it plays without
/// pauses whatever the replay speed.
#[must_use]
pub fn parse_times(text: &[u8]) -> Option<Vec<u64>> {
    let mut times = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let line = std::str::from_utf8(line).ok()?.trim();
        if !line.is_empty() {
            times.push(line.parse().ok()?);
        }
    }
    Some(times)
}

#[cfg(test)]
mod tests {
    use super::PieceLengths;

    #[test]
    fn lengths_take_a_byte_or_two_each_and_read_back() {
        let lengths = PieceLengths::parse(b"1\n127\n128\n\n16383\n1361\n", 18_000).unwrap();
        // 1 + 1 + 2 + 2 + 2 bytes for five pieces, not 40.
        assert_eq!(lengths.held(), 8);
        assert_eq!(lengths.count(), 5);
        assert_eq!(
            lengths.iter().collect::<Vec<_>>(),
            [1, 127, 128, 16383, 1361]
        );
        let huge = usize::MAX / 2;
        assert_eq!(PieceLengths::one(huge).iter().collect::<Vec<_>>(), [huge]);
    }

    #[test]
    fn times_read_back_and_what_is_not_a_count_is_refused() {
        assert_eq!(
            super::parse_times(b"0\n12\n\n 340 \n"),
            Some(vec![0, 12, 340])
        );
        assert_eq!(super::parse_times(b""), Some(vec![]));
        assert!(super::parse_times(b"1\n-2\n").is_none());
        assert!(super::parse_times(b"1.5\n").is_none());
    }

    #[test]
    fn lengths_that_do_not_add_up_or_are_not_counts_are_refused() {
        assert!(PieceLengths::parse(b"1\n", 3).is_none());
        assert!(PieceLengths::parse(b"x\n", 0).is_none());
        assert!(PieceLengths::parse(b"-1\n", 0).is_none());
        assert!(PieceLengths::parse(b"\xff\n", 0).is_none());
        let max = usize::MAX.to_string();
        let overflow = format!("{max}\n1\n");
        assert!(PieceLengths::parse(overflow.as_bytes(), 0).is_none());
        assert_eq!(PieceLengths::parse(b"", 0).map(|l| l.count()), Some(0));
    }
}
