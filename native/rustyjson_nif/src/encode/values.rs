//! A value: scalars dispatched by type, lists (leading numbers inline) and maps opened as frames.

use std::mem::MaybeUninit;

use crate::term::hamt;
use crate::term::map_order::{self, Order};
use rustler::sys::{
    enif_get_double, enif_get_map_size, enif_map_iterator_create, enif_term_type,
    ErlNifMapIterator, ErlNifMapIteratorEntry, ErlNifTerm, ErlNifTermType,
};
use rustyjson_core::number;

use super::budget::BYTES_PER_UNIT_SHIFT;
use super::output::Out;
use super::walker::{Fail, FlatFields, Frame, Walker};
use rustyjson_core::key_cache::KeyUse;

impl<'o> Walker<'o> {
    /// Writes a scalar, or opens a container and pushes its frame (its elements come from `walk`'s loop, so
    /// nothing here recurses).
    pub(super) fn write_value(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        self.spend(1);
        if let Some(i) = self.reads.small(term) {
            number::write_i64(out, i);
            return Ok(());
        }
        if let Some(f) = self.reads.float(term) {
            // A float costs about three times an integer or a short string.
            self.spend(2);
            number::write_f64(out, f);
            return Ok(());
        }
        if let Some(cell) = self.reads.cons(term) {
            return self.write_list(term, cell, out);
        }
        if let Some(bytes) = self.reads.heap_binary(term) {
            // At most 64 bytes, as the string path below costs them.
            self.spend(1 + (bytes.len() >> BYTES_PER_UNIT_SHIFT));
            return self.write_string(bytes, term, out);
        }
        if let Some(bytes) = self.reads.held_binary(term) {
            self.afford(1 + (bytes.len() >> BYTES_PER_UNIT_SHIFT))?;
            return self.write_string(bytes, term, out);
        }
        let env = self.env;
        match unsafe { enif_term_type(env, term) } {
            ErlNifTermType::ERL_NIF_TERM_TYPE_BITSTRING => {
                let bytes = self.binary(term).ok_or(Fail::Unsupported(term))?;
                // A string costs about twice an integer, plus its length.
                self.afford(1 + (bytes.len() >> BYTES_PER_UNIT_SHIFT))?;
                self.write_string(bytes, term, out)
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_INTEGER => self.write_integer(term, out),
            ErlNifTermType::ERL_NIF_TERM_TYPE_FLOAT => {
                self.spend(2);
                let mut f = 0.0;
                unsafe { enif_get_double(env, term, &mut f) };
                number::write_f64(out, f);
                Ok(())
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM => {
                if term == self.nil {
                    out.extend(b"null");
                } else if term == self.true_ {
                    out.extend(b"true");
                } else if term == self.false_ {
                    out.extend(b"false");
                } else {
                    self.write_atom(term, out)?;
                }
                Ok(())
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_LIST => self.open_list(term, out),
            ErlNifTermType::ERL_NIF_TERM_TYPE_MAP => self.open_map(term, out),
            other => self.other_value(term, other, out),
        }
    }

    /// Writes the list `term` (whose first cell is `cell`): its leading numbers right here (a coordinate pair
    /// never gets a frame), the rest through a frame and `walk`'s loop. Each number costs what it costs in
    /// `write_value`; when the time is up the frame records where the list stopped.
    #[inline(always)]
    fn write_list(
        &mut self,
        term: ErlNifTerm,
        cell: (ErlNifTerm, ErlNifTerm),
        out: &mut Out,
    ) -> Result<(), Fail> {
        out.push(b'[');
        let mut tail = term;
        let mut count = 0;
        if self.pretty.is_none() {
            let mut next = Some(cell);
            while let Some((head, rest)) = next {
                if let Some(i) = self.reads.small(head) {
                    self.separator(out, count == 0);
                    number::write_i64(out, i);
                    self.spend(1);
                } else if let Some(f) = self.reads.float(head) {
                    self.separator(out, count == 0);
                    number::write_f64(out, f);
                    self.spend(3);
                } else {
                    break;
                }
                count += 1;
                tail = rest;
                if self.exhausted {
                    break;
                }
                next = self.reads.cons(rest);
            }
            if tail == self.empty_list && !self.exhausted {
                out.push(b']');
                return Ok(());
            }
        }
        self.stack.push(Frame::List { tail, count });
        Ok(())
    }

    fn open_list(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        if unsafe { rustler::sys::enif_is_empty_list(self.env, term) } != 0 {
            out.extend(b"[]");
            return Ok(());
        }
        out.push(b'[');
        self.stack.push(Frame::List {
            tail: term,
            count: 0,
        });
        Ok(())
    }

    fn open_map(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let env = self.env;
        let mut term = term;
        // (A loop: under `protocol: false` a struct's fields are opened as a map in its place.)
        let (term, size, flat) = loop {
            let mut size = 0;
            unsafe { enif_get_map_size(env, term, &mut size) };
            if size == 0 {
                out.extend(b"{}");
                return Ok(());
            }
            // A struct is known before anything is written: a flat map's keys are scanned (word compares), a
            // larger map is asked. (The walk still checks `__struct__` keys, and `inside_struct` errors, as a
            // safety net.)
            let flat = self.reads.flatmap(term);
            let module = match flat {
                Some((keys, vals, len)) => (0..len)
                    .find(|&i| unsafe { *keys.add(i) } == self.struct_key)
                    .map(|i| unsafe { *vals.add(i) })
                    .filter(|m| {
                        matches!(
                            unsafe { enif_term_type(env, *m) },
                            ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM
                        )
                    }),
                None => self.struct_module(term),
            };
            match module {
                None => break (term, size, flat),
                Some(module) => match self.open_struct(term, module, size, out)? {
                    Some(fields) => term = fields,
                    None => return Ok(()),
                },
            }
        };
        if self.sort {
            return self.open_sorted(term, size, flat, out);
        }
        if let Some((keys, vals, len)) = flat {
            out.push(b'{');
            let seen = self.seen_set();
            // `maps: :strict` checks each key as written: no copies there.
            let keys_use = if seen.is_none() {
                self.keys_use(keys, len)
            } else {
                KeyUse::Write
            };
            self.push_flat(FlatFields {
                count: 0,
                map: term,
                keys,
                vals,
                len,
                seen,
                keys_use,
            });
            return Ok(());
        }
        if self.trie_reads.is_some() && map_order::get() != Order::Unknown {
            // Listing costs a leaf read a pair (a big map waits for the next slice or the dirty scheduler).
            self.afford(size / 2)?;
            if let Some(pairs) = self.trie_pairs(term, size) {
                out.push(b'{');
                self.push_listed(pairs, Some(term), 0);
                return Ok(());
            }
        }
        let Some((iter, backwards)) = self.map_iterator(term, size) else {
            // A hash map in an order not learned is listed by Elixir (`Map.to_list/1`).
            return Err(match map_order::get() {
                Order::Unknown => Fail::Elixir,
                _ => Fail::Unsupported(term),
            });
        };
        out.push(b'{');
        let seen = self.seen_set();
        self.stack.push(Frame::Map {
            map: term,
            iter,
            count: 0,
            backwards,
            seen,
        });
        Ok(())
    }

    /// The pairs of the hash map `map` (`size` of them) in `Map.to_list/1` order, read from its trie; `None`
    /// where trie reads are off, the order is not learned, or the trie holds a node they do not know.
    pub(super) fn trie_pairs(
        &self,
        map: ErlNifTerm,
        size: usize,
    ) -> Option<Vec<(ErlNifTerm, ErlNifTerm)>> {
        let tags = self.trie_reads.as_ref()?;
        let from_head = match map_order::get() {
            Order::FromHead => true,
            Order::FromTail => false,
            Order::Unknown => return None,
        };
        let mut pairs = Vec::with_capacity(size);
        // SAFETY: `map` is a live hash map of the call (more than 32 keys, not a flat map).
        if !unsafe { hamt::read_pairs(map, tags, &mut pairs) } || pairs.len() != size {
            return None;
        }
        if !from_head {
            pairs.reverse();
        }
        Some(pairs)
    }

    /// An iterator over a non-empty map in `Map.to_list/1` order, on its first pair, and whether it runs
    /// backwards. A map of up to 32 keys is a flatmap, whose iterator runs in key order from the head; a larger
    /// (hash) map runs in the direction `map_order` learned (none: `None`).
    pub(super) fn map_iterator(
        &self,
        map: ErlNifTerm,
        size: usize,
    ) -> Option<(ErlNifMapIterator, bool)> {
        let backwards = match (size > 32, map_order::get()) {
            (false, _) | (true, Order::FromHead) => false,
            (true, Order::FromTail) => true,
            (true, Order::Unknown) => return None,
        };
        let entry = if backwards {
            ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_TAIL
        } else {
            ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_HEAD
        };
        let mut iter: ErlNifMapIterator = unsafe { MaybeUninit::zeroed().assume_init() };
        if unsafe { enif_map_iterator_create(self.env, map, &mut iter, entry) } == 0 {
            return None;
        }
        Some((iter, backwards))
    }
}

/// Moves a map iterator to the next pair in `Map.to_list/1` order (backwards on VMs whose iterator lists a large
/// map the other way: `map_iterator`); false past the last pair.
///
/// # Safety
/// `iter` must be a live iterator of a map of `env`.
#[inline(always)]
pub(super) unsafe fn step_map_iterator(
    env: *mut rustler::sys::ErlNifEnv,
    iter: *mut ErlNifMapIterator,
    backwards: bool,
) -> bool {
    let moved = if backwards {
        rustler::sys::enif_map_iterator_prev(env, iter)
    } else {
        rustler::sys::enif_map_iterator_next(env, iter)
    };
    moved != 0
}
