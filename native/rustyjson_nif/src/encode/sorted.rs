//! `sort_keys: true`: a map's pairs listed, sorted by their keys' strings (the key as converted: a binary as is,
//! an atom's text, an integer's or float's digits) in byte order, and written from a `Frame::Sorted`.
//!
//! The order is that of the key strings before JSON escaping, so it is the same in every `escape:` mode. The
//! sort is stable over `Map.to_list/1` order: keys that convert to the same string (`:a` and `"a"`) keep that
//! order, or are a duplicate under `maps: :strict` (checked when written, as for any map).

use std::borrow::Cow;

use crate::term::map_order::{self, Order};
use rustler::sys::{
    enif_get_double, enif_get_int64, enif_get_uint64, enif_map_iterator_destroy,
    enif_map_iterator_get_pair, enif_term_type, ErlNifTerm, ErlNifTermType,
};
use rustyjson_core::buffer::Buffer;
use rustyjson_core::number;

use super::output::Out;
use super::values::step_map_iterator;
use super::walker::{Fail, Frame, Walker};

impl<'o> Walker<'o> {
    /// Opens a non-empty plain map with its pairs sorted by key. `flat`: its keys and values when it is a flat
    /// map (read in place), otherwise it is listed with the iterator in `Map.to_list/1` order.
    #[cold]
    pub(super) fn open_sorted(
        &mut self,
        term: ErlNifTerm,
        size: usize,
        flat: Option<(*const ErlNifTerm, *const ErlNifTerm, usize)>,
        out: &mut Out,
    ) -> Result<(), Fail> {
        // Listing, converting and sorting cost about n log n compares of short strings; a big map waits for the
        // dirty scheduler rather than overrun the slice.
        let log = (usize::BITS - size.leading_zeros()) as usize;
        self.afford(size.saturating_mul(1 + log / 2))?;
        let pairs = match flat {
            // SAFETY: a flat map's `len` keys and values, valid for the call.
            Some((keys, vals, len)) => (0..len)
                .map(|i| unsafe { (*keys.add(i), *vals.add(i)) })
                .collect(),
            None => self.listed_pairs(term, size)?,
        };
        let mut keyed = Vec::with_capacity(pairs.len());
        for (key, val) in pairs {
            keyed.push((self.key_text(key)?, key, val));
        }
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        let pairs = keyed.into_iter().map(|(_, key, val)| (key, val)).collect();
        out.push(b'{');
        self.push_listed(pairs, None, 0);
        Ok(())
    }

    /// Pushes the frame of a map whose pairs were listed up front (`Frame::Sorted`), `count` of them started.
    pub(super) fn push_listed(
        &mut self,
        pairs: Vec<(ErlNifTerm, ErlNifTerm)>,
        map: Option<ErlNifTerm>,
        count: usize,
    ) {
        let seen = self.seen_set();
        self.stack.push(Frame::Sorted {
            pairs,
            count,
            seen,
            map,
        });
    }

    /// A hash map's pairs in `Map.to_list/1` order (so equal key strings keep that order).
    fn listed_pairs(
        &self,
        term: ErlNifTerm,
        size: usize,
    ) -> Result<Vec<(ErlNifTerm, ErlNifTerm)>, Fail> {
        let env = self.env;
        let Some((mut iter, backwards)) = self.map_iterator(term, size) else {
            // An order not learned: Elixir lists (and sorts) such maps.
            return Err(match map_order::get() {
                Order::Unknown => Fail::Elixir,
                _ => Fail::Unsupported(term),
            });
        };
        let mut pairs = Vec::with_capacity(size);
        loop {
            let (mut key, mut val) = (ErlNifTerm::default(), ErlNifTerm::default());
            if unsafe { enif_map_iterator_get_pair(env, &mut iter, &mut key, &mut val) } == 0 {
                break;
            }
            pairs.push((key, val));
            if !unsafe { step_map_iterator(env, &mut iter, backwards) } {
                break;
            }
        }
        unsafe { enif_map_iterator_destroy(env, &mut iter) };
        Ok(pairs)
    }

    /// The string a key is written as, unescaped (what keys sort by). Keys the NIF does not convert go to Elixir,
    /// as when they are written.
    fn key_text(&mut self, key: ErlNifTerm) -> Result<Cow<'static, [u8]>, Fail> {
        let env = self.env;
        match unsafe { enif_term_type(env, key) } {
            ErlNifTermType::ERL_NIF_TERM_TYPE_BITSTRING => {
                self.binary(key).map(Cow::Borrowed).ok_or(Fail::Elixir)
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM => self
                .with_atom_text(key, |text| Cow::Owned(text.to_vec()))
                .ok_or(Fail::Unsupported(key)),
            ErlNifTermType::ERL_NIF_TERM_TYPE_INTEGER => {
                let (mut i, mut u) = (0i64, 0u64);
                if unsafe { enif_get_int64(env, key, &mut i) } != 0 {
                    return Ok(Cow::Owned(i.to_string().into_bytes()));
                }
                if unsafe { enif_get_uint64(env, key, &mut u) } != 0 {
                    return Ok(Cow::Owned(u.to_string().into_bytes()));
                }
                Ok(Cow::Owned(self.big_integer_digits(key)?.into_bytes()))
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_FLOAT => {
                let mut f = 0.0;
                unsafe { enif_get_double(env, key, &mut f) };
                let mut text = Buffer::with_capacity(32);
                number::write_f64(&mut text, f);
                Ok(Cow::Owned(text.into_vec()))
            }
            _ => Err(Fail::Elixir),
        }
    }
}
