//! Append-only text shared between snapshots.
//!
//! A [`Rope`] is a persistent list of shared chunks: appending creates one
//! node that points at the previous ones, so every older `Rope` value stays
//! valid and unchanged, and taking a snapshot is an `Arc` clone.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Immutable text made of shared chunks. Cloning is O(1).
#[derive(Clone, Default)]
pub(crate) struct Rope {
    last: Option<Arc<Chunk>>,
}

struct Chunk {
    text: Arc<str>,
    /// Total length in bytes up to and including this chunk.
    len: usize,
    prev: Option<Arc<Chunk>>,
}

impl Rope {
    /// Returns this text followed by `chunk`; `self` is unchanged.
    pub(crate) fn appended(&self, chunk: Arc<str>) -> Self {
        let len = self.len() + chunk.len();
        Self {
            last: Some(Arc::new(Chunk {
                text: chunk,
                len,
                prev: self.last.clone(),
            })),
        }
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.last.as_ref().map_or(0, |chunk| chunk.len)
    }

    /// Copies the text out, in O(length).
    pub(crate) fn to_text(&self) -> String {
        let mut chunks = Vec::new();
        let mut cursor = self.last.as_deref();
        while let Some(chunk) = cursor {
            chunks.push(&*chunk.text);
            cursor = chunk.prev.as_deref();
        }
        let mut text = String::with_capacity(self.len());
        for chunk in chunks.iter().rev() {
            text.push_str(chunk);
        }
        text
    }
}

impl Drop for Chunk {
    /// Unlinks the chain iteratively: a text streamed as a million deltas
    /// must not overflow the stack when its last snapshot is dropped.
    fn drop(&mut self) {
        let mut prev = self.prev.take();
        while let Some(chunk) = prev {
            match Arc::try_unwrap(chunk) {
                Ok(mut chunk) => prev = chunk.prev.take(),
                Err(_) => break, // still shared by another snapshot
            }
        }
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
