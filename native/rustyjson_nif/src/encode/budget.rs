//! The walk's time budget: work units, looks at the clock, and the marks where a walk out of time can stop.

use std::time::{Duration, Instant};

use super::walker::{Fail, Frame, Walker};

/// How long one slice of an encode may run on a normal scheduler before it yields.
const TIME_LIMIT: Duration = Duration::from_micros(800);

/// Work units between two looks at the clock. A unit is a value (two for a string, three for a float) or 32 bytes
/// of a string, fragment or indentation; 512 of them take 3-15 µs.
pub(super) const CHECK_EVERY: usize = 512;

/// What a unit costs at most (non-ASCII text), to judge one big piece (a long string) before starting it.
const NS_PER_UNIT_MAX: u64 = 40;

/// A long string, fragment or indentation costs one work unit per 2^5 bytes.
pub(super) const BYTES_PER_UNIT_SHIFT: u32 = 5;

/// A point between two elements where the walk can be resumed: output length, stack depth, and how many elements
/// the top frame had started.
#[derive(Clone, Copy, Default)]
pub(super) struct Mark {
    pub(super) len: usize,
    pub(super) depth: usize,
    pub(super) count: usize,
}

/// Where a walk stopped when its time ran out: the output up to `mark.len` and each frame's count.
pub(super) struct Checkpoint {
    pub(super) path: Vec<usize>,
}

impl<'o> Walker<'o> {
    /// Counts work; every CHECK_EVERY units the clock says whether the time on this scheduler is up (then the
    /// walk stops at the next mark).
    #[inline(always)]
    pub(super) fn spend(&mut self, units: usize) {
        if self.budget > units {
            self.budget -= units;
        } else {
            self.look_at_clock();
        }
    }

    #[cold]
    #[inline(never)]
    fn look_at_clock(&mut self) {
        match self.started {
            Some(started) if started.elapsed() >= TIME_LIMIT => {
                self.budget = 0;
                self.exhausted = true;
            }
            Some(_) => self.budget = CHECK_EVERY,
            None if self.limited => {
                self.started = Some(Instant::now());
                self.budget = CHECK_EVERY;
            }
            None => self.budget = usize::MAX,
        }
    }

    /// For one big piece of work (a long string or fragment): give up now rather than exceed the time limit.
    #[inline(always)]
    pub(super) fn afford(&mut self, units: usize) -> Result<(), Fail> {
        if units > CHECK_EVERY && self.limited {
            let started = *self.started.get_or_insert_with(Instant::now);
            let cost = Duration::from_nanos(units as u64 * NS_PER_UNIT_MAX);
            if started.elapsed() + cost > TIME_LIMIT {
                return Err(Fail::Budget);
            }
            self.budget = 0;
        }
        self.spend(units);
        Ok(())
    }

    /// The resumption point after a `Fail::Budget`.
    pub(super) fn checkpoint(&self) -> Checkpoint {
        let mut path: Vec<usize> = self.stack[..self.mark.depth]
            .iter()
            .map(Frame::count)
            .collect();
        if let Some(last) = path.last_mut() {
            *last = self.mark.count;
        }
        Checkpoint { path }
    }
}
