//! A persistent singly linked list, newest first: the shared spine of
//! [`Rope`](super::rope::Rope) and of a snapshot's block list.
//!
//! Pushing creates one node that points at the previous ones, so every
//! older list value stays valid and unchanged, and cloning is an `Arc`
//! clone.

use alloc::sync::Arc;

/// A list of `T`, newest first. Cloning is O(1).
pub(crate) struct List<T> {
    last: Option<Arc<Node<T>>>,
}

struct Node<T> {
    value: T,
    prev: Option<Arc<Node<T>>>,
}

impl<T> List<T> {
    /// The empty list.
    pub(crate) const fn new() -> Self {
        Self { last: None }
    }

    /// This list with `value` pushed in front; `self` is unchanged.
    pub(crate) fn pushed(&self, value: T) -> Self {
        Self {
            last: Some(Arc::new(Node {
                value,
                prev: self.last.clone(),
            })),
        }
    }

    /// The newest value.
    pub(crate) fn last(&self) -> Option<&T> {
        self.last.as_deref().map(|node| &node.value)
    }

    /// The list without its newest value.
    pub(crate) fn without_last(&self) -> Self {
        Self {
            last: self.last.as_ref().and_then(|node| node.prev.clone()),
        }
    }

    /// Whether `self` is `earlier` with exactly one value pushed: the same
    /// nodes, not only equal values (O(1)).
    pub(crate) fn is_one_push_after(&self, earlier: &Self) -> bool {
        let prev = self.last.as_ref().map(|node| &node.prev);
        match (prev, &earlier.last) {
            (Some(None), None) => true,
            (Some(Some(prev)), Some(earlier)) => Arc::ptr_eq(prev, earlier),
            _ => false,
        }
    }

    /// Newest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        let mut cursor = self.last.as_deref();
        core::iter::from_fn(move || {
            let node = cursor?;
            cursor = node.prev.as_deref();
            Some(&node.value)
        })
    }
}

impl<T> Clone for List<T> {
    fn clone(&self) -> Self {
        Self {
            last: self.last.clone(),
        }
    }
}

impl<T> Default for List<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for Node<T> {
    /// Unlinks the chain iteratively: a text streamed as a million deltas
    /// must not overflow the stack when its last snapshot is dropped.
    fn drop(&mut self) {
        let mut prev = self.prev.take();
        while let Some(node) = prev {
            match Arc::try_unwrap(node) {
                Ok(mut node) => prev = node.prev.take(),
                Err(_) => break, // still shared by another list
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_values_stay_unchanged() {
        let empty = List::new();
        let one = empty.pushed(1);
        let two = one.pushed(2);
        assert_eq!(empty.iter().count(), 0);
        assert_eq!(one.iter().copied().collect::<alloc::vec::Vec<_>>(), [1]);
        assert_eq!(two.iter().copied().collect::<alloc::vec::Vec<_>>(), [2, 1]);
        assert_eq!(two.last(), Some(&2));
        assert_eq!(two.without_last().last(), Some(&1));
    }

    #[test]
    fn dropping_a_long_list_does_not_recurse() {
        let mut list = List::new();
        for i in 0..if cfg!(miri) { 1_000 } else { 200_000 } {
            list = list.pushed(i);
        }
        let shared = list.without_last();
        drop(list);
        assert_eq!(
            shared.iter().count(),
            if cfg!(miri) { 999 } else { 199_999 }
        );
    }
}
