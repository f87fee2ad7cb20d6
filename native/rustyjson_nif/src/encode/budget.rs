//! The walk's time budget: work units, looks at the clock, and the marks where a walk out of time can stop.

use std::time::{Duration, Instant};

use crate::term;
use rustler::sys::{
    enif_get_map_size, enif_make_list_cell, enif_make_uint64, ErlNifEnv, ErlNifTerm,
};

use super::stats;

use super::walker::{Fail, Frame, Walker};

/// How long one slice of an encode may run on a normal scheduler before it yields.
const TIME_LIMIT: Duration = Duration::from_micros(800);

/// Work units between two looks at the clock. A unit is a value (two for a string, three for a float) or 32 bytes
/// of a string, fragment or indentation; 512 of them take 3-15 µs.
pub(super) const CHECK_EVERY: usize = 512;

/// What writing one open frame into a checkpoint costs (two list cells made on the process heap: 5-10 ns measured
/// on OTP 25): a slice that opened many containers stops earlier, so that its checkpoint too fits in the slice.
const NS_PER_SAVED_FRAME: u64 = 10;

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
/// far the walk had got) or from its map (flat maps and structs at once; a hash map's iterator stepped again, or
/// its pairs listed again). The tag also says what a resume costs (`steps`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Resume {
    List = 0,
    Pairs = 1,
    /// A flat map read in place.
    Flat = 2,
    /// A derived struct (told apart from maps for `inside_struct`).
    Struct = 3,
    /// A hash map whose iterator is stepped up to `count` again.
    Stepped = 4,
    /// A hash map whose pairs are listed again (all of them).
    Listed = 5,
}

/// A checkpoint entry's first word: `count << TAG_BITS | how`.
pub(super) const TAG_BITS: u32 = 3;

impl Resume {
    pub(super) fn from_tag(tag: u64) -> Option<Resume> {
        use Resume::*;
        [List, Pairs, Flat, Struct, Stepped, Listed]
            .into_iter()
            .find(|r| *r as u64 == tag)
    }
}

/// Where a walk stopped when its time ran out: the output up to `mark.len`, and the open frames as an Erlang list,
/// top first, of two cells each, `[count << TAG_BITS | how, term | frames under it]`, the terms subterms of the
/// call's argument (kept alive and moved by the collector as the arguments of the next call are). The list's tail
/// is the part of the previous checkpoint's list the walk never reached (`Walker::below`), shared, not copied: a
/// checkpoint makes cells for the frames its slice pushed or took up, not for every open frame, so deep nesting
/// costs a slice O(1), not O(depth).
pub(super) struct Checkpoint {
    /// None when a frame cannot be carried (sorted pairs).
    pub(super) frames: Option<ErlNifTerm>,
    /// How many open frames the list holds (0: nothing open).
    pub(super) depth: usize,
    /// Map elements a resume steps over again (hash maps), in all open frames; lists and flat maps cost nothing.
    pub(super) rewalk: usize,
}

/// What a checkpoint's frame costs to take up again, in hash map elements stepped over or listed (a flat map's
/// iterator, where flat maps are not read in place, steps at most 31 times in one small block: nothing).
pub(super) fn steps(env: *mut ErlNifEnv, how: Resume, count: usize, map: ErlNifTerm) -> usize {
    let size = || {
        let mut size = 0;
        unsafe { enif_get_map_size(env, map, &mut size) };
        size
    };
    match how {
        Resume::Stepped if size() > FLAT_MAP_MAX => count,
        Resume::Listed => size(),
        Resume::Stepped | Resume::List | Resume::Pairs | Resume::Flat | Resume::Struct => 0,
    }
}

/// The most keys a flat map holds (a larger map is a hash map).
const FLAT_MAP_MAX: usize = 32;

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
            Some(started) if started.elapsed() + self.checkpoint_cost() >= TIME_LIMIT => {
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
            if started.elapsed() + cost + self.checkpoint_cost() > TIME_LIMIT {
                return Err(Fail::Budget);
            }
            self.budget = 0;
        }
        self.spend(units);
        Ok(())
    }

    /// The resumption point after a `Fail::Budget`: the frames on the stack up to the mark, consed onto `below`.
    pub(super) fn checkpoint(&self) -> Checkpoint {
        let env = self.env;
        let depth = self.mark.depth;
        let (mut list, mut rewalk) = (self.below, self.below_rewalk);
        let small = &term::layout(env).writes;
        for (index, frame) in self.stack[..depth].iter().enumerate() {
            // The top frame may have moved on by one element since the mark (the walk stopped in it): the
            // element taken is put back in front of the rest of the list, in a new list cell.
            let top = index + 1 == depth;
            let count = if top { self.mark.count } else { frame.count() };
            let back = top && frame.count() != count;
            let rest = |tail: ErlNifTerm, taken: ErlNifTerm| {
                if back {
                    unsafe { enif_make_list_cell(env, taken, tail) }
                } else {
                    tail
                }
            };
            let (how, term) = match frame {
                Frame::List { tail, .. } => (Resume::List, rest(*tail, self.failed_value)),
                Frame::Pairs { tail, .. } => (Resume::Pairs, rest(*tail, self.taken_pair)),
                Frame::Map { map, .. } => (Resume::Stepped, *map),
                Frame::Flat { map, .. } => (Resume::Flat, *map),
                Frame::Struct { map, .. } => (Resume::Struct, *map),
                Frame::Sorted { map: Some(map), .. } => (Resume::Listed, *map),
                Frame::Sorted { map: None, .. } => {
                    return Checkpoint {
                        frames: None,
                        depth: 0,
                        rewalk: 0,
                    }
                }
            };
            let meta = (count as u64) << TAG_BITS | how as u64;
            let meta = match i64::try_from(meta).ok().and_then(|m| small.small(m)) {
                Some(immediate) => immediate,
                None => unsafe { enif_make_uint64(env, meta) },
            };
            list = unsafe { enif_make_list_cell(env, meta, enif_make_list_cell(env, term, list)) };
            rewalk += steps(env, how, count, term);
        }
        stats::frames_saved(depth);
        Checkpoint {
            frames: Some(list),
            depth: self.below_depth + depth,
            rewalk,
        }
    }

    /// What writing a checkpoint of the frames on the stack would cost now (it is written after the time is up).
    #[inline]
    fn checkpoint_cost(&self) -> Duration {
        Duration::from_nanos(self.stack.len() as u64 * NS_PER_SAVED_FRAME)
    }
}
