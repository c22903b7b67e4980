//! Append-only text shared between snapshots.
//!
//! A [`Rope`] is a persistent list of shared chunks: appending creates one
//! node that points at the previous ones, so every older `Rope` value stays
//! valid and unchanged, and taking a snapshot is an `Arc` clone.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use super::persistent::List;

/// Immutable text made of shared chunks. Cloning is O(1).
#[derive(Clone, Default)]
pub(crate) struct Rope {
    chunks: List<Chunk>,
}

struct Chunk {
    text: Arc<str>,
    /// Total length in bytes up to and including this chunk.
    len: usize,
}

impl Rope {
    /// Returns this text followed by `chunk`; `self` is unchanged.
    pub(crate) fn appended(&self, chunk: Arc<str>) -> Self {
        let len = self.len() + chunk.len();
        Self {
            chunks: self.chunks.pushed(Chunk { text: chunk, len }),
        }
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.chunks.last().map_or(0, |chunk| chunk.len)
    }

    /// The newest chunk, if any.
    pub(crate) fn last_chunk(&self) -> Option<&str> {
        self.chunks.last().map(|chunk| &*chunk.text)
    }

    /// Whether `self` is `earlier` with one chunk appended, sharing its
    /// nodes (O(1)); what `appended` returns always is.
    pub(crate) fn is_one_append_after(&self, earlier: &Rope) -> bool {
        self.chunks.is_one_push_after(&earlier.chunks)
    }

    /// The chunks, oldest first.
    fn chunks_in_order(&self) -> Vec<&str> {
        let mut chunks: Vec<&str> = self.chunks.iter().map(|chunk| &*chunk.text).collect();
        chunks.reverse();
        chunks
    }

    /// Copies the text out, in O(length).
    pub(crate) fn to_text(&self) -> String {
        let mut text = String::with_capacity(self.len());
        for chunk in self.chunks_in_order() {
            text.push_str(chunk);
        }
        text
    }
}

/// Writes the text chunk by chunk, without copying it into one string.
impl fmt::Display for Rope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.chunks_in_order()
            .into_iter()
            .try_for_each(|chunk| f.write_str(chunk))
    }
}

/// Serializes as a JSON string, streamed from the chunks
/// ([`Serializer::collect_str`](serde::Serializer::collect_str): serde_json
/// escapes each chunk straight into its output).
impl serde::Serialize for Rope {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_stay_unchanged_after_appends() {
        let empty = Rope::default();
        let a = empty.appended("ab".into());
        let b = a.appended("cd".into());
        assert_eq!(
            (empty.to_text(), a.to_text(), b.to_text()),
            ("".into(), "ab".into(), "abcd".into())
        );
        assert_eq!(b.len(), 4);
    }

    #[test]
    fn dropping_a_long_rope_does_not_recurse() {
        let chunk: Arc<str> = "x".into();
        let mut rope = Rope::default();
        for _ in 0..if cfg!(miri) { 1_000 } else { 200_000 } {
            rope = rope.appended(chunk.clone());
        }
        drop(rope);
    }
}
