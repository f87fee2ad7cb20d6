//! A stack kept in chunks of a fixed size: growing it never copies what it holds, and the fresh memory it touches
//! grows with what is pushed. A `Vec` doubles instead: on a million-deep document one push copies 12 MB into
//! 24 MB of new pages, which on a VM's first call (pages never touched before) held a normal scheduler 37-82 ms in
//! one slice. Chunk by chunk, a slice touches about as many new bytes as it pushes entries.

/// Entries per chunk (a power of two: the length is a shift and an add). Depths up to this keep one chunk, grown
/// as a `Vec` grows.
pub(super) const CHUNK: usize = 4096;

/// What a time-sliced walk sets its byte limit to after a push took a new chunk: it pauses at the next boundary,
/// where its caller looks at the clock. A slice then touches at most one new chunk's pages (96 KiB of parser
/// frames, 224 KiB of locator frames), however many bytes it was given; pages never touched before cost up to
/// ~8 µs each on a virtual machine.
pub(crate) const GROWTH_ENDS_SLICE: usize = 0;

use crate::overflow::{push, try_with_capacity};

pub(crate) struct ChunkedStack<T> {
    /// The chunk pushed to and popped from; never empty while `full` is not.
    top: Vec<T>,
    /// The chunks below it, each holding `CHUNK` entries.
    full: Vec<Vec<T>>,
    /// An emptied chunk kept for the next push past a chunk's end (no allocation when a depth goes back and forth
    /// across a boundary).
    spare: Vec<T>,
}

impl<T> Default for ChunkedStack<T> {
    fn default() -> Self {
        ChunkedStack {
            top: Vec::new(),
            full: Vec::new(),
            spare: Vec::new(),
        }
    }
}

impl<T> ChunkedStack<T> {
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.full.len() * CHUNK + self.top.len()
    }

    /// The bytes its chunks hold.
    pub(crate) fn held_bytes(&self) -> usize {
        (self.full.len() * CHUNK + self.top.capacity() + self.spare.capacity())
            * std::mem::size_of::<T>()
    }

    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.top.is_empty()
    }

    /// Pushes `entry`; true when that took a newly allocated chunk (memory whose pages the pushes to come touch
    /// for the first time: a time-sliced caller ends its slice there, see [`GROWTH_ENDS_SLICE`]).
    #[inline(always)]
    pub(crate) fn push(&mut self, entry: T) -> bool {
        let allocated = self.top.len() == CHUNK && self.next_chunk();
        self.top.push(entry);
        allocated
    }

    #[cold]
    #[inline(never)]
    fn next_chunk(&mut self) -> bool {
        let allocated = self.spare.capacity() != CHUNK;
        let next = if allocated {
            try_with_capacity(CHUNK)
        } else {
            std::mem::take(&mut self.spare)
        };
        push(&mut self.full, std::mem::replace(&mut self.top, next));
        allocated
    }

    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<T> {
        let entry = self.top.pop();
        if self.top.is_empty() && !self.full.is_empty() {
            self.previous_chunk();
        }
        entry
    }

    #[cold]
    #[inline(never)]
    fn previous_chunk(&mut self) {
        let below = self.full.pop().expect("a full chunk");
        self.spare = std::mem::replace(&mut self.top, below);
    }

    #[inline(always)]
    pub(crate) fn last(&self) -> Option<&T> {
        self.top.last()
    }

    #[inline(always)]
    pub(crate) fn last_mut(&mut self) -> Option<&mut T> {
        self.top.last_mut()
    }

    /// Empties the stack, keeping the first chunk's storage.
    pub(crate) fn clear(&mut self) {
        if let Some(first) = self.full.first_mut() {
            std::mem::swap(&mut self.top, first);
        }
        self.top.clear();
        self.full.clear();
    }

    /// The entries its storage holds.
    pub(crate) fn capacity(&self) -> usize {
        self.full.len() * CHUNK + self.top.capacity() + self.spare.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes_and_pops_across_chunks_as_a_vec_does() {
        let mut stack = ChunkedStack::default();
        let mut vec = Vec::new();
        // Up and down across several chunk boundaries, and back and forth across one.
        let moves = [3 * CHUNK + 5, 2 * CHUNK, CHUNK + 1, 2, 1, 2, CHUNK + 3];
        let mut next = 0usize;
        for (i, &target) in moves.iter().enumerate() {
            while vec.len() < target {
                // A new chunk is allocated when the stack first passes each chunk boundary.
                let fresh =
                    vec.len() % CHUNK == 0 && !vec.is_empty() && stack.capacity() <= vec.len();
                assert_eq!(stack.push(next), fresh, "push {next}");
                vec.push(next);
                next += 1;
            }
            while vec.len() > target {
                assert_eq!(stack.pop(), vec.pop());
            }
            assert_eq!(stack.len(), vec.len(), "move {i}");
            assert_eq!(stack.last(), vec.last());
            assert_eq!(stack.is_empty(), vec.is_empty());
        }
        *stack.last_mut().unwrap() = 7;
        assert_eq!(stack.pop(), Some(7));
        while let Some(v) = vec.pop() {
            if vec.len() + 1 == CHUNK + 3 {
                continue; // the entry written over above
            }
            assert_eq!(stack.pop(), Some(v));
        }
        assert_eq!(stack.pop(), None);
        assert!(stack.is_empty());
        assert_eq!(stack.len(), 0);
    }

    #[test]
    fn clear_keeps_one_chunk() {
        let mut stack = ChunkedStack::default();
        for i in 0..3 * CHUNK {
            stack.push(i);
        }
        assert!(stack.capacity() >= 3 * CHUNK);
        stack.clear();
        assert!(stack.is_empty() && stack.last().is_none());
        assert_eq!(stack.len(), 0);
        assert_eq!(stack.capacity(), CHUNK);
        stack.push(1);
        assert_eq!((stack.len(), stack.last()), (1, Some(&1)));
    }
}
