//! Resuming a walk: the checkpoint's frames (`budget::Checkpoint`) taken up one at a time, when the walk closes
//! the frame above and needs the next one down, so a slice rebuilds only the frames it reaches.

use rustler::sys::{
    enif_get_map_size, enif_get_uint64, enif_map_iterator_destroy, enif_term_type, ErlNifTerm,
    ErlNifTermType,
};

use super::budget::{steps, Resume, TAG_BITS};
use super::stats;
use super::values::step_map_iterator;
use super::walker::{Frame, Walker};
use rustyjson_core::key_cache::KeyUse;

impl<'o> Walker<'o> {
    /// Pushes the top frame of `below` (which must not be empty) onto the stack and drops it from `below`. False
    /// when the list or its term does not fit a frame (then the call starts over).
    pub(super) fn pull_below(&mut self) -> bool {
        let Some((how, count, term, rest)) = self.saved(self.below) else {
            return false;
        };
        self.below = rest;
        self.below_depth = self.below_depth.saturating_sub(1);
        self.below_rewalk = self
            .below_rewalk
            .saturating_sub(steps(self.env, how, count, term));
        stats::frame_restored();
        // A unit, as opening the container cost one: taking up a million frames is a million units of work.
        self.spend(1);
        match how {
            Resume::List => self.stack.push(Frame::List { tail: term, count }),
            Resume::Pairs => {
                let seen = self.seen_set();
                self.stack.push(Frame::Pairs {
                    tail: term,
                    count,
                    seen,
                });
            }
            Resume::Struct => return self.rebuild_struct_frame(term, count).is_some(),
            Resume::Flat | Resume::Stepped | Resume::Listed => {
                return self.rebuild_map_frame(term, count).is_some()
            }
        }
        true
    }

    /// The top entry of a checkpoint list (`budget::Checkpoint`): how, count, term, and the rest of the list.
    fn saved(&self, list: ErlNifTerm) -> Option<(Resume, usize, ErlNifTerm, ErlNifTerm)> {
        let (meta, rest) = self.list_cell(list)?;
        let (term, rest) = self.list_cell(rest)?;
        let meta = match self.reads.small(meta) {
            Some(m) => u64::try_from(m).ok()?,
            None => {
                let mut m = 0;
                (unsafe { enif_get_uint64(self.env, meta, &mut m) } != 0).then_some(m)?
            }
        };
        let how = Resume::from_tag(meta & ((1 << TAG_BITS) - 1))?;
        Some((how, usize::try_from(meta >> TAG_BITS).ok()?, term, rest))
    }

    /// True when a frame not yet taken up (in `below`) is a map of a struct (not a derived struct's frame).
    pub(super) fn below_inside_struct(&self) -> bool {
        let mut list = self.below;
        while let Some((how, _, term, rest)) = self.saved(list) {
            let map = matches!(how, Resume::Flat | Resume::Stepped | Resume::Listed);
            if map && self.struct_module(term).is_some() {
                return true;
            }
            list = rest;
        }
        false
    }

    /// Pushes the frame for the derived struct `container` positioned after `count` started fields.
    fn rebuild_struct_frame(&mut self, container: ErlNifTerm, count: usize) -> Option<()> {
        let module = self.struct_module(container)?;
        let template = self.walk_template(module)?;
        if count > template.fields.len() {
            return None;
        }
        let (keys, vals) = self.struct_values(container, &template);
        self.stack.push(Frame::Struct {
            map: container,
            template,
            keys,
            vals,
            count,
        });
        Some(())
    }

    /// Pushes the frame for the map (not a struct) `container` positioned after `count` started pairs.
    fn rebuild_map_frame(&mut self, container: ErlNifTerm, count: usize) -> Option<()> {
        let env = self.env;
        match unsafe { enif_term_type(env, container) } {
            ErlNifTermType::ERL_NIF_TERM_TYPE_MAP => {
                if let Some((keys, vals, len)) = self.reads.flatmap(container) {
                    if count > len {
                        return None;
                    }
                    let seen = self.seen_set();
                    self.stack.push(Frame::Flat {
                        map: container,
                        keys,
                        vals,
                        len,
                        count,
                        seen,
                        keys_use: KeyUse::Write,
                    });
                    return Some(());
                }
                let mut size = 0;
                unsafe { enif_get_map_size(env, container, &mut size) };
                if let Some(pairs) = self.trie_pairs(container, size) {
                    if count > pairs.len() {
                        return None;
                    }
                    self.push_listed(pairs, Some(container), count);
                    return Some(());
                }
                let (mut iter, backwards) = self.map_iterator(container, size)?;
                for _ in 1..count {
                    if !unsafe { step_map_iterator(env, &mut iter, backwards) } {
                        unsafe { enif_map_iterator_destroy(env, &mut iter) };
                        return None;
                    }
                }
                let seen = self.seen_set();
                self.stack.push(Frame::Map {
                    map: container,
                    iter,
                    count,
                    backwards,
                    seen,
                });
                Some(())
            }
            _ => None,
        }
    }
}
