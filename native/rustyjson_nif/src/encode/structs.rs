//! Structs: fragments, ordered objects, derived structs written from their templates, holes left for Elixir, and
//! struct module lookups.

use std::mem::MaybeUninit;
use std::ptr;
use std::sync::Arc;

use rustler::sys::{
    enif_get_map_value, enif_get_tuple, enif_inspect_iolist_as_binary, enif_make_list_from_array,
    enif_make_map_remove, enif_term_type, ErlNifBinary, ErlNifTerm, ErlNifTermType,
};

use super::atoms;
use super::budget::{BYTES_PER_UNIT_SHIFT, CHECK_EVERY};
use super::output::Out;
use super::templates::{template, Template};
use super::walker::{Fail, Frame, Walker};

/// Fragments of iolists with more list cells than this are written by Elixir (a hole).
const FRAGMENT_PIECES: usize = 50_000;

impl<'o> Walker<'o> {
    /// A struct: a fragment, a registered derived struct (written here from its template), or a hole for Elixir.
    /// Under `protocol: false`, other structs are their fields: `Some(map)` for `open_map` to open in its place.
    #[inline(never)]
    pub(super) fn open_struct(
        &mut self,
        term: ErlNifTerm,
        module: ErlNifTerm,
        size: usize,
        out: &mut Out,
    ) -> Result<Option<ErlNifTerm>, Fail> {
        if module == self.fragment && size == 3 {
            return self.write_fragment(term, out).map(|()| None);
        }
        if let Some(kind) = self.calendar_kind(module) {
            if self.write_calendar(term, kind, out).is_some() {
                return Ok(None);
            }
            return self.hole(term, out).map(|()| None);
        }
        if module == self.ordered_object && size == 2 {
            if let Some(pairs) = self.ordered_pairs(term) {
                return self.open_pairs(pairs, out).map(|()| None);
            }
        }
        if self.structs_as_maps {
            return self.plain_struct(term, module, out);
        }
        self.open_derived(term, module, size, out).map(|()| None)
    }

    /// A derived struct written from its template, or a hole for Elixir.
    fn open_derived(
        &mut self,
        term: ErlNifTerm,
        module: ErlNifTerm,
        size: usize,
        out: &mut Out,
    ) -> Result<(), Fail> {
        match self.walk_template(module) {
            Some(template) if template.size == size => {
                if template.fields.is_empty() {
                    out.extend(b"{}");
                    return Ok(());
                }
                let (keys, vals) = self.struct_values(term, &template);
                out.push(b'{');
                self.stack.push(Frame::Struct {
                    map: term,
                    template,
                    keys,
                    vals,
                    count: 0,
                });
                Ok(())
            }
            _ => self.hole(term, out),
        }
    }

    /// A struct under `protocol: false` (RustyJson 0.3's way): its fields as a map without `__struct__`, whatever
    /// its implementation says (`open_map` opens it: a loop there, not a call, so `open_map` stays inlined in its
    /// one caller); MapSet, Range, URI and Decimal, and an ordered object that is not one, are holes that Elixir
    /// writes (in 0.3's forms: `RustyJson.Plain`; or its error).
    #[cold]
    #[inline(never)]
    fn plain_struct(
        &mut self,
        term: ErlNifTerm,
        module: ErlNifTerm,
        out: &mut Out,
    ) -> Result<Option<ErlNifTerm>, Fail> {
        let held = [
            atoms::map_set(),
            atoms::range(),
            atoms::uri(),
            atoms::decimal(),
        ];
        if module == self.ordered_object || held.iter().any(|a| a.as_c_arg() == module) {
            return self.hole(term, out).map(|()| None);
        }
        let mut fields = ErlNifTerm::default();
        // SAFETY: `term` is a map holding `__struct__`; the new map is a term of this call's environment.
        if unsafe { enif_make_map_remove(self.env, term, self.struct_key, &mut fields) } == 0 {
            return Err(Fail::Unsupported(term));
        }
        Ok(Some(fields))
    }

    /// A term of no other kind: a tuple written as an array where they are (`protocol: false`,
    /// `config :rusty_json, tuples_and_uris: true`), else unsupported.
    #[cold]
    #[inline(never)]
    pub(super) fn other_value(
        &mut self,
        term: ErlNifTerm,
        kind: ErlNifTermType,
        out: &mut Out,
    ) -> Result<(), Fail> {
        match kind {
            ErlNifTermType::ERL_NIF_TERM_TYPE_TUPLE if self.tuples => self.open_tuple(term, out),
            _ => Err(Fail::Unsupported(term)),
        }
    }

    /// A tuple written as an array: its elements as a list, walked as lists are (a frame pushed here, not a call
    /// of `write_value`, which would make it recursive and no longer inlined in the walk).
    fn open_tuple(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let mut arity = 0;
        let mut elements: *const ErlNifTerm = ptr::null();
        // SAFETY: `term` is a tuple of this call's environment; its elements are read before anything is built.
        if unsafe { enif_get_tuple(self.env, term, &mut arity, &mut elements) } == 0 {
            return Err(Fail::Unsupported(term));
        }
        if arity == 0 {
            out.extend(b"[]");
            return Ok(());
        }
        let list = unsafe { enif_make_list_from_array(self.env, elements, arity as u32) };
        out.push(b'[');
        self.stack.push(Frame::List {
            tail: list,
            count: 0,
        });
        Ok(())
    }

    /// The `{module, id}` of each template this encode wrote from, with those of its earlier slices (`carried`):
    /// reported with the result for Elixir to check (`templates::reported`).
    pub(super) fn templates_to_report(
        &self,
        mut carried: Vec<(ErlNifTerm, u64)>,
    ) -> Vec<(ErlNifTerm, u64)> {
        for (module, template) in &self.templates {
            let used = (*module, template.id);
            if !carried.contains(&used) {
                carried.push(used);
            }
        }
        carried
    }

    /// The template of the derived struct `module` as this walk writes it (sorted or not), if registered.
    pub(super) fn walk_template(&mut self, module: ErlNifTerm) -> Option<Arc<Template>> {
        if let Some((_, t)) = self.templates.iter().find(|(m, _)| *m == module) {
            return Some(t.clone());
        }
        let found = template(module)?.for_walk(self.sort);
        self.templates.push((module, found.clone()));
        Some(found)
    }

    /// Where a struct's values are read in place: its flat map's keys and values (null when not flat).
    pub(super) fn struct_values(
        &self,
        term: ErlNifTerm,
        template: &Template,
    ) -> (*const ErlNifTerm, *const ErlNifTerm) {
        match self.reads.flatmap(term) {
            Some((keys, vals, len)) if len == template.size => (keys, vals),
            _ => (ptr::null(), ptr::null()),
        }
    }

    /// Leaves `term` for Elixir to write at this point of the output (compact output only; pretty output goes the
    /// resolving way, which re-indents what the protocol returns).
    #[cold]
    fn hole(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        if self.pretty.is_some() {
            return Err(Fail::Elixir);
        }
        self.spend(CHECK_EVERY / 8);
        self.holes.push((out.len(), term));
        Ok(())
    }

    /// The module of a struct (a map whose `__struct__` is an atom).
    pub(super) fn struct_module(&self, map: ErlNifTerm) -> Option<ErlNifTerm> {
        let mut module = ErlNifTerm::default();
        let found = unsafe { enif_get_map_value(self.env, map, self.struct_key, &mut module) } != 0
            && matches!(
                unsafe { enif_term_type(self.env, module) },
                ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM
            );
        found.then_some(module)
    }

    /// True when an open map is a struct: an error met inside it may not be one (the protocol decides what a
    /// struct writes), so the struct goes to Elixir first.
    pub(super) fn inside_struct(&self) -> bool {
        self.stack.iter().any(|frame| match frame {
            Frame::Map { map, .. } | Frame::Flat { map, .. } => self.struct_module(*map).is_some(),
            _ => false,
        }) || self.below_inside_struct()
    }

    /// The pairs list of a `%RustyJson.OrderedObject{values: pairs}` (a list): how ordered objects, keyword lists
    /// given to `RustyJson.Encode.keyword/2` and maps with unusual keys (resolved in Elixir) are written.
    pub(super) fn ordered_pairs(&self, map: ErlNifTerm) -> Option<ErlNifTerm> {
        let env = self.env;
        let (mut module, mut values) = (ErlNifTerm::default(), ErlNifTerm::default());
        let found = unsafe { enif_get_map_value(env, map, self.struct_key, &mut module) } != 0
            && module == self.ordered_object
            && unsafe { enif_get_map_value(env, map, self.values_key, &mut values) } != 0
            && matches!(
                unsafe { enif_term_type(env, values) },
                ErlNifTermType::ERL_NIF_TERM_TYPE_LIST
            );
        found.then_some(values)
    }

    /// Key and value of a `{key, value}` tuple.
    pub(super) fn pair(&self, pair: ErlNifTerm) -> Option<(ErlNifTerm, ErlNifTerm)> {
        let mut arity = 0;
        let mut elems: *const ErlNifTerm = ptr::null();
        if unsafe { enif_get_tuple(self.env, pair, &mut arity, &mut elems) } == 0 || arity != 2 {
            return None;
        }
        Some(unsafe { (*elems, *elems.add(1)) })
    }

    /// A fragment made from iodata (`RustyJson.Fragment.new/1` keeps it in `iodata`) is written here; one with only
    /// an `encode` function is a hole for Elixir, which calls it.
    fn write_fragment(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let env = self.env;
        let mut iodata = ErlNifTerm::default();
        if unsafe { enif_get_map_value(env, term, self.iodata_key, &mut iodata) } == 0 {
            return Err(Fail::Unsupported(term));
        }
        let kind = unsafe { enif_term_type(env, iodata) };
        if matches!(kind, ErlNifTermType::ERL_NIF_TERM_TYPE_LIST) && !self.few_pieces(iodata) {
            // erl_nif flattens a list in one go: a long one is written by Elixir, whose flattening yields.
            return self.hole(term, out);
        }
        match kind {
            ErlNifTermType::ERL_NIF_TERM_TYPE_BITSTRING
            | ErlNifTermType::ERL_NIF_TERM_TYPE_LIST => {
                let mut bin: ErlNifBinary = unsafe { MaybeUninit::zeroed().assume_init() };
                if unsafe { enif_inspect_iolist_as_binary(env, iodata, &mut bin) } == 0 {
                    return Err(Fail::Unsupported(term));
                }
                let bytes = unsafe { std::slice::from_raw_parts(bin.data, bin.size) };
                // Pretty output costs what it writes: nesting in a short fragment makes long lines.
                let written = match self.pretty {
                    Some(p) => p.reformatted_len(bytes, self.depth()),
                    None => bytes.len() as u64,
                };
                self.afford(
                    usize::try_from(written).unwrap_or(usize::MAX) >> BYTES_PER_UNIT_SHIFT,
                )?;
                match self.pretty {
                    Some(p) => p.reformat(out, bytes, self.depth(), written),
                    None => out.extend(bytes),
                }
                Ok(())
            }
            _ => self.hole(term, out),
        }
    }

    /// Whether the iolist `list` has at most `FRAGMENT_PIECES` list cells in all (nested lists counted), which
    /// erl_nif then flattens in well under a slice.
    fn few_pieces(&self, list: ErlNifTerm) -> bool {
        let mut lists = vec![list];
        let mut cells = 0;
        while let Some(mut list) = lists.pop() {
            while let Some((head, tail)) = self.list_cell(list) {
                cells += 1;
                if cells > FRAGMENT_PIECES {
                    return false;
                }
                let kind = unsafe { enif_term_type(self.env, head) };
                if matches!(kind, ErlNifTermType::ERL_NIF_TERM_TYPE_LIST) {
                    lists.push(head);
                }
                list = tail;
            }
        }
        true
    }

    /// Opens an ordered object (a list of `{key, value}`).
    fn open_pairs(&mut self, pairs: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        if unsafe { rustler::sys::enif_is_empty_list(self.env, pairs) } != 0 {
            out.extend(b"{}");
            return Ok(());
        }
        out.push(b'{');
        let seen = self.seen_set();
        self.stack.push(Frame::Pairs {
            tail: pairs,
            count: 0,
            seen,
        });
        Ok(())
    }

    /// Writes the key of a `{key, value}` pair and returns the value.
    pub(super) fn write_pair_key(
        &mut self,
        pair: ErlNifTerm,
        out: &mut Out,
    ) -> Result<ErlNifTerm, Fail> {
        let (key, value) = self.pair(pair).ok_or(Fail::Unsupported(pair))?;
        self.write_key(key, out)?;
        self.colon(out);
        Ok(value)
    }
}
