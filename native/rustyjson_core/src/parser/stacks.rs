//! The parser's working storage: the open containers and the values and keys built so far.

use super::{ChunkedStack, Frame, RefusedKey};

/// The parser's working storage, reusable across parses (a caller may keep one per thread to save the
/// allocations on small documents).
pub struct Stacks<V, K> {
    /// In chunks: a deep document's containers grow it without copying it (see `ChunkedStack`).
    pub(super) frames: ChunkedStack<Frame>,
    pub(super) values: Vec<V>,
    pub(super) keys: Vec<K>,
    /// Where each key of `keys` starts (its opening quote), kept only with [`super::Limits::duplicate_keys_error`].
    pub(super) key_starts: Vec<usize>,
    pub(super) scratch: Vec<u8>,
    /// Paused right after a value, which is the last of `values`.
    pub(super) held: bool,
    /// Paused before an object key (a long one), not a value.
    pub(super) at_key: bool,
    /// A refused key not yet reported.
    pub(super) refused: Option<RefusedKey>,
    /// What the containers closed so far count against [`super::Limits::max_term_bytes`].
    pub(super) term_bytes: usize,
}

impl<V, K> Stacks<V, K> {
    /// The bytes the stacks hold now (what a parse that ran out of memory had already taken).
    pub(crate) fn held_bytes(&self) -> usize {
        use std::mem::size_of;
        self.frames.held_bytes()
            + self.values.capacity() * size_of::<V>()
            + self.keys.capacity() * size_of::<K>()
            + self.key_starts.capacity() * size_of::<usize>()
            + self.scratch.capacity()
    }
}

impl<V, K> Default for Stacks<V, K> {
    fn default() -> Self {
        Stacks {
            frames: ChunkedStack::default(),
            values: Vec::new(),
            keys: Vec::new(),
            key_starts: Vec::new(),
            scratch: Vec::new(),
            held: false,
            term_bytes: 0,
            at_key: false,
            refused: None,
        }
    }
}

impl<V, K> Stacks<V, K> {
    /// The values and keys of the containers still open (after [`Progress::Paused`](super::Progress::Paused)).
    pub fn pending(&mut self) -> (&mut [V], &mut [K]) {
        (&mut self.values, &mut self.keys)
    }

    /// Empties the stacks (before a parse: one that failed or was dropped while paused may have left them full).
    #[inline(always)]
    pub(super) fn clear(&mut self) {
        self.held = false;
        self.term_bytes = 0;
        self.at_key = false;
        self.refused = None;
        self.frames.clear();
        self.values.clear();
        self.keys.clear();
        self.key_starts.clear();
        self.scratch.clear();
    }

    /// Drops storage a big document grew rather than keep it for the next parse. Only a document of more than
    /// [`Self::KEEP`] bytes can grow any of it past that (each frame, value and key takes at least a byte).
    pub(super) fn release_large(&mut self) {
        if self.frames.capacity() > Self::KEEP {
            self.frames = ChunkedStack::default();
        }
        if self.values.capacity() > Self::KEEP {
            self.values = Vec::new();
        }
        if self.keys.capacity() > Self::KEEP {
            self.keys = Vec::new();
        }
        if self.key_starts.capacity() > Self::KEEP {
            self.key_starts = Vec::new();
        }
        if self.scratch.capacity() > 16 * Self::KEEP {
            self.scratch = Vec::new();
        }
    }

    /// The most entries a stack keeps between parses (the scratch buffer, 16 times as many bytes).
    pub(super) const KEEP: usize = 4096;
}
