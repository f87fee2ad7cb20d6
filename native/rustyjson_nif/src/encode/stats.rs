//! Counts of the encoder's scheduling work, for tests that bound work by count rather than time (`encode_stats/0`):
//! checkpoints made, frames written into them and frames taken up again. Relaxed atomics touched once per slice
//! (and once per frame taken up, which is rare next to the values written).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

static CHECKPOINTS: AtomicU64 = AtomicU64::new(0);
static FRAMES_SAVED: AtomicU64 = AtomicU64::new(0);
static FRAMES_RESTORED: AtomicU64 = AtomicU64::new(0);

/// A checkpoint that wrote `frames` frames (the ones its slice pushed or took up; the rest is shared).
pub(super) fn frames_saved(frames: usize) {
    CHECKPOINTS.fetch_add(1, Relaxed);
    FRAMES_SAVED.fetch_add(frames as u64, Relaxed);
}

pub(super) fn frame_restored() {
    FRAMES_RESTORED.fetch_add(1, Relaxed);
}

/// `[checkpoints, frames saved, frames restored]` since the library was loaded.
pub fn snapshot() -> [u64; 3] {
    [&CHECKPOINTS, &FRAMES_SAVED, &FRAMES_RESTORED].map(|n| n.load(Relaxed))
}
