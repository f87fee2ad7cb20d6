//! The walk's time budget: work units, looks at the clock, and the marks where a walk out of time can stop.

use std::time::{Duration, Instant};

use rustler::sys::{enif_make_list_cell, ErlNifTerm};

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

/// How a checkpoint's frame is rebuilt: from the rest of its list (lists and ordered objects, at once, however
/// far the walk had got) or from its map (flat maps and structs at once; a hash map's iterator stepped again).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Resume {
    List = 0,
    Pairs = 1,
    Map = 2,
}

impl Resume {
    pub(super) fn from_tag(tag: u32) -> Option<Resume> {
        [Resume::List, Resume::Pairs, Resume::Map]
            .into_iter()
            .find(|r| *r as u32 == tag)
    }
}

/// Where a walk stopped when its time ran out: the output up to `mark.len`, and each open frame as
/// `(how it is rebuilt, count, term)`, the term a subterm of the call's argument (kept alive and moved by the
/// collector as the arguments of the next call are). None when a frame cannot be carried (sorted pairs).
pub(super) struct Checkpoint {
    pub(super) frames: Option<Vec<(Resume, usize, ErlNifTerm)>>,
    /// Map elements a resume steps over again (hash map iterators); lists and flat maps cost nothing.
    pub(super) rewalk: usize,
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
        let depth = self.mark.depth;
        let mut rewalk = 0;
        let frames = self.stack[..depth]
            .iter()
            .enumerate()
            .map(|(level, frame)| {
                // The top frame may have moved on by one element since the mark (the walk stopped in it): the
                // element taken is put back in front of the rest of the list, in a new list cell.
                let top = level + 1 == depth;
                let count = if top { self.mark.count } else { frame.count() };
                let back = top && frame.count() != count;
                let rest = |tail: ErlNifTerm, taken: ErlNifTerm| {
                    if back {
                        unsafe { enif_make_list_cell(self.env, taken, tail) }
                    } else {
                        tail
                    }
                };
                Some(match frame {
                    Frame::List { tail, .. } => {
                        (Resume::List, count, rest(*tail, self.failed_value))
                    }
                    Frame::Pairs { tail, .. } => {
                        (Resume::Pairs, count, rest(*tail, self.taken_pair))
                    }
                    Frame::Map { map, .. } => {
                        rewalk += count;
                        (Resume::Map, count, *map)
                    }
                    Frame::Flat { map, .. } | Frame::Struct { map, .. } => {
                        (Resume::Map, count, *map)
                    }
                    Frame::Sorted {
                        map: Some(map),
                        pairs,
                        ..
                    } => {
                        rewalk += pairs.len();
                        (Resume::Map, count, *map)
                    }
                    Frame::Sorted { map: None, .. } => return None,
                })
            })
            .collect();
        Checkpoint { frames, rewalk }
    }
}
