//! The walker: its state, its stack of frames (one per open container), how a walk fails, and the main loop that
//! writes a term without recursion.

use std::cell::RefCell;
use std::collections::HashSet;
use std::mem::ManuallyDrop;
use std::ptr;
use std::sync::Arc;
use std::time::Instant;

use crate::term;
use crate::term::hamt::Tags;
use crate::term::read::Reads;
use rustler::sys::{
    enif_get_list_cell, enif_get_map_value, enif_make_list_from_array, enif_map_iterator_destroy,
    enif_map_iterator_get_pair, enif_term_type, ErlNifEnv, ErlNifMapIterator, ErlNifTerm,
    ErlNifTermType,
};
use rustler::{Encoder, Env, OwnedBinary, Term};
use rustyjson_core::escape::Mode;
use rustyjson_core::overflow::Overflow;
use rustyjson_core::pretty::Pretty;

use super::atoms;
use super::budget::{Mark, BYTES_PER_UNIT_SHIFT, CHECK_EVERY};
use super::options::Options;
use super::output::Out;
use super::templates::Template;
use super::values::step_map_iterator;
use rustyjson_core::key_cache::{KeyCache, KeyUse};

pub(super) enum Fail {
    InvalidByte(u8, ErlNifTerm),
    Unsupported(ErlNifTerm),
    /// A repeated key (`maps: :strict`): its escaped text, without quotes.
    DuplicateKey(Vec<u8>),
    /// A list whose last tail is not `[]` (the tail).
    ImproperList(ErlNifTerm),
    /// The term needs Elixir (a struct, a fragment function, an unusual key): resolve there and call again.
    Elixir,
    Budget,
    /// The output passed its ceiling, or the allocator refused it (`rustyjson_core::overflow`).
    Overflow(Overflow),
}

impl Fail {
    pub(super) fn into_term(self, env: Env) -> Term {
        let t = |raw| unsafe { Term::new(env, raw) };
        let reason = match self {
            Fail::InvalidByte(b, original) => (atoms::invalid_byte(), b, t(original)).encode(env),
            Fail::Unsupported(value) => (atoms::unsupported(), t(value)).encode(env),
            Fail::DuplicateKey(key) => {
                let mut bin = OwnedBinary::new(key.len());
                bin.as_mut_slice().copy_from_slice(&key);
                (atoms::duplicate_key(), bin.release(env)).encode(env)
            }
            Fail::ImproperList(tail) => (atoms::improper_list(), t(tail)).encode(env),
            Fail::Elixir | Fail::Budget => atoms::elixir().encode(env),
            Fail::Overflow(why) => overflow_reason(env, why),
        };
        (atoms::error(), reason).encode(env)
    }
}

/// `{:output_limit, needed, limit}` or `{:out_of_memory, needed}`: what `RustyJson.EncodeError` words.
pub(crate) fn overflow_reason(env: Env, why: Overflow) -> Term {
    match why {
        Overflow::Limit { needed, limit } => {
            (atoms::output_limit(), needed as u64, limit as u64).encode(env)
        }
        Overflow::Memory { needed } => (atoms::out_of_memory(), needed as u64).encode(env),
    }
}

/// The keys an object has written so far (`maps: :strict`). Boxed so frames stay small: most walks have none.
#[allow(clippy::box_collection)]
pub(super) type KeySet = Box<HashSet<Vec<u8>>>;

/// `repr(C, u8)`: the layout is defined (RFC 2195: a `u8` tag, then each variant's fields as a `repr(C)`
/// struct), so a flat map's frame can be written in place ([`Walker::push_flat`]), and `count`, first in
/// every variant, is read from one place whatever the variant (no table of offsets on the walk's every step).
#[repr(C, u8)]
pub(super) enum Frame {
    /// `count` elements started; `tail` the rest of the list.
    List { count: usize, tail: ErlNifTerm },
    /// `count` pairs started; the iterator is on the last one started (or on the first when `count` is 0).
    Map {
        count: usize,
        map: ErlNifTerm,
        // Inline: an iterator holds pointers into the map (or to its own heap-allocated work stack), never into
        // itself, so it may move with the stack vector (rustler's MapIterator moves it too).
        iter: ErlNifMapIterator,
        backwards: bool,
        seen: Option<KeySet>,
    },
    /// A flat map (up to 32 keys) read in place: `count` of `len` pairs started.
    Flat {
        count: usize,
        map: ErlNifTerm,
        keys: *const ErlNifTerm,
        vals: *const ErlNifTerm,
        len: usize,
        seen: Option<KeySet>,
        /// Whether the keys are written, recorded or copied (`key_cache`).
        keys_use: KeyUse,
    },
    /// A derived struct written from its template: `count` fields started. `keys`/`vals` point into the map when
    /// it is flat (null otherwise).
    Struct {
        count: usize,
        map: ErlNifTerm,
        template: Arc<Template>,
        keys: *const ErlNifTerm,
        vals: *const ErlNifTerm,
    },
    /// A map's pairs listed up front, `count` of them started: in key order under `sort_keys: true`
    /// (`sorted.rs`; `map` None), or a hash map's read from its trie in `Map.to_list/1` order (`map` Some).
    Sorted {
        count: usize,
        pairs: Vec<(ErlNifTerm, ErlNifTerm)>,
        seen: Option<KeySet>,
        map: Option<ErlNifTerm>,
    },
    /// An ordered object: a list of `{key, value}` (`RustyJson.OrderedObject`, `RustyJson.Encode.keyword/2`).
    Pairs {
        count: usize,
        tail: ErlNifTerm,
        seen: Option<KeySet>,
    },
}

/// The fields of [`Frame::Flat`], in its order: what [`Walker::push_flat`] writes after the tag.
#[repr(C)]
pub(super) struct FlatFields {
    pub(super) count: usize,
    pub(super) map: ErlNifTerm,
    pub(super) keys: *const ErlNifTerm,
    pub(super) vals: *const ErlNifTerm,
    pub(super) len: usize,
    pub(super) seen: Option<KeySet>,
    pub(super) keys_use: KeyUse,
}

/// [`Frame::Flat`] as `repr(C, u8)` lays it out.
#[repr(C)]
struct FlatFrame {
    tag: u8,
    fields: FlatFields,
}

/// `Frame::Flat`'s tag: its place among the variants.
const FLAT_TAG: u8 = 2;

const _: () = assert!(std::mem::size_of::<FlatFrame>() <= std::mem::size_of::<Frame>());
const _: () = assert!(std::mem::align_of::<FlatFrame>() == std::mem::align_of::<Frame>());

impl Frame {
    pub(super) fn count(&self) -> usize {
        match self {
            Frame::List { count, .. }
            | Frame::Map { count, .. }
            | Frame::Flat { count, .. }
            | Frame::Struct { count, .. }
            | Frame::Sorted { count, .. }
            | Frame::Pairs { count, .. } => *count,
        }
    }
}

pub(super) struct Walker<'o> {
    pub(super) env: *mut ErlNifEnv,
    /// The running VM's read layout (`term::read`).
    pub(super) reads: Reads,
    /// Hash maps read from their tries (`term::hamt::read_pairs`), when that was learned to hold.
    pub(super) trie_reads: Option<Tags>,
    pub(super) mode: Mode,
    pub(super) strict: bool,
    /// `sort_keys: true` (maps are opened by `open_sorted`, derived structs use their sorted templates).
    pub(super) sort: bool,
    pub(super) pretty: Option<&'o Pretty>,
    /// Units left before the next look at the clock.
    pub(super) budget: usize,
    /// On a normal scheduler: the walk has a time limit (none on a dirty one).
    pub(super) limited: bool,
    /// When the clock started: at the first look at it (after `CHECK_EVERY` units, a few µs of work, or before one
    /// big piece), so a small encode never reads the clock (two reads were a quarter of encoding `1`).
    pub(super) started: Option<Instant>,
    pub(super) exhausted: bool,
    pub(super) mark: Mark,
    /// The value whose writing stopped the walk (set only then).
    pub(super) failed_value: ErlNifTerm,
    /// The `{key, value}` pair an ordered object's frame took last.
    pub(super) taken_pair: ErlNifTerm,
    pub(super) atom_cache: Vec<(ErlNifTerm, u32, u32)>,
    pub(super) atom_bytes: Vec<u8>,
    /// An atom was written before the cache existed.
    pub(super) atom_seen: bool,
    pub(super) nil: ErlNifTerm,
    /// `[]` (an immediate: every empty list is this word).
    pub(super) empty_list: ErlNifTerm,
    pub(super) true_: ErlNifTerm,
    pub(super) false_: ErlNifTerm,
    pub(super) struct_key: ErlNifTerm,
    pub(super) fragment: ErlNifTerm,
    pub(super) iodata_key: ErlNifTerm,
    pub(super) ordered_object: ErlNifTerm,
    pub(super) values_key: ErlNifTerm,
    pub(super) stack: Vec<Frame>,
    /// The open frames under `stack` not yet taken up since the walk resumed: the rest of the checkpoint's list
    /// (`budget::Checkpoint`, top first; `[]` when none), `below_depth` of them, whose resumes step over
    /// `below_rewalk` map elements. The walk takes the top one up when the stack empties (`pull_below`).
    pub(super) below: ErlNifTerm,
    pub(super) below_depth: usize,
    pub(super) below_rewalk: usize,
    /// A frame of `below` did not fit its term: the walk stopped, and the call starts over.
    pub(super) restart: bool,
    /// Where Elixir must insert a struct's JSON (output offset, term); compact output only.
    pub(super) holes: Vec<(usize, ErlNifTerm)>,
    /// Templates met in this call (a few modules; saves the global table's lock).
    pub(super) templates: Vec<(ErlNifTerm, Arc<Template>)>,
    /// The written keys of flat maps with the same keys: this thread's kept cache, taken once the call has opened
    /// `FLAT_MAPS_BEFORE_KEY_CACHE` flat maps (a small encode never touches it).
    pub(super) key_cache: KeyCache,
    pub(super) flat_maps: u32,
    // RustyJson 0.3's ways (read only for structs and terms of no other kind).
    /// `protocol: false`: structs not written natively are written as maps of their fields.
    pub(super) structs_as_maps: bool,
    /// Tuples are written as arrays.
    pub(super) tuples: bool,
}

/// Flat maps a call opens before it uses the key cache.
const FLAT_MAPS_BEFORE_KEY_CACHE: u32 = 16;

impl Drop for Walker<'_> {
    fn drop(&mut self) {
        self.clear_stack();
        give_back_stack(std::mem::take(&mut self.stack));
        if self.flat_maps == FLAT_MAPS_BEFORE_KEY_CACHE {
            give_back_key_cache(std::mem::take(&mut self.key_cache));
        }
    }
}

thread_local! {
    // The walk's stack, kept (empty) by each scheduler thread between calls: a small encode then allocates
    // nothing for it. ManuallyDrop: no thread-exit destructor runs in this library.
    static STACK: RefCell<ManuallyDrop<Vec<Frame>>> = const { RefCell::new(ManuallyDrop::new(Vec::new())) };
}

thread_local! {
    // The key cache, kept by each scheduler thread between calls (cleared): its slots and buffers are set up once.
    static KEY_CACHE: RefCell<ManuallyDrop<KeyCache>> = RefCell::new(ManuallyDrop::new(KeyCache::default()));
}

fn take_key_cache() -> KeyCache {
    KEY_CACHE
        .with(|c| c.try_borrow_mut().map(|mut c| std::mem::take(&mut **c)))
        .unwrap_or_default()
}

fn give_back_key_cache(mut cache: KeyCache) {
    cache.clear();
    KEY_CACHE.with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            **c = cache;
        }
    });
}

/// This thread's kept stack (empty), or a new one.
fn take_stack() -> Vec<Frame> {
    STACK
        .with(|s| s.try_borrow_mut().map(|mut s| std::mem::take(&mut **s)))
        .unwrap_or_default()
}

/// Keeps an emptied stack for the next call on this thread, unless a deep document grew it large.
fn give_back_stack(stack: Vec<Frame>) {
    const KEEP: usize = 256;
    if stack.is_empty() && stack.capacity() <= KEEP {
        STACK.with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                **s = stack;
            }
        });
    }
}

impl<'o> Walker<'o> {
    pub(super) fn new(env: Env, options: &'o Options, limited: bool) -> Self {
        let a = |atom: rustler::Atom| atom.encode(env).as_c_arg();
        let empty_list = unsafe { enif_make_list_from_array(env.as_c_arg(), ptr::null(), 0) };
        Walker {
            env: env.as_c_arg(),
            reads: term::layout(env.as_c_arg()).reads,
            trie_reads: term::layout(env.as_c_arg()).hash_map_reads,
            mode: options.mode,
            strict: options.strict,
            sort: options.sort,
            structs_as_maps: options.structs_as_maps,
            tuples: options.tuples,
            pretty: options.pretty.as_ref(),
            budget: if limited { CHECK_EVERY } else { usize::MAX },
            limited,
            started: None,
            exhausted: false,
            mark: Mark::default(),
            failed_value: ErlNifTerm::default(),
            taken_pair: ErlNifTerm::default(),
            atom_cache: Vec::new(),
            atom_bytes: Vec::new(),
            atom_seen: false,
            nil: a(atoms::nil()),
            empty_list,
            true_: a(atoms::true_()),
            false_: a(atoms::false_()),
            struct_key: a(atoms::__struct__()),
            fragment: a(atoms::fragment()),
            iodata_key: a(atoms::iodata()),
            ordered_object: a(atoms::ordered_object()),
            values_key: a(atoms::values()),
            stack: take_stack(),
            below: empty_list,
            below_depth: 0,
            below_rewalk: 0,
            restart: false,
            holes: Vec::new(),
            templates: Vec::new(),
            key_cache: KeyCache::default(),
            flat_maps: 0,
        }
    }

    pub(super) fn clear_stack(&mut self) {
        for frame in self.stack.drain(..) {
            if let Frame::Map { mut iter, .. } = frame {
                unsafe { enif_map_iterator_destroy(self.env, &mut iter) };
            }
        }
    }

    /// What a flat map of `len` keys at `keys` (its keys tuple's elements) does with its keys.
    #[inline]
    pub(super) fn keys_use(&mut self, keys: *const ErlNifTerm, len: usize) -> KeyUse {
        if self.flat_maps < FLAT_MAPS_BEFORE_KEY_CACHE {
            self.flat_maps += 1;
            if self.flat_maps == FLAT_MAPS_BEFORE_KEY_CACHE {
                self.key_cache = take_key_cache();
            }
            return KeyUse::Write;
        }
        // SAFETY: a flat map's `len` keys; ErlNifTerm is a transparent machine word.
        let words = unsafe { std::slice::from_raw_parts(keys as *const usize, len) };
        self.key_cache.open(keys as usize, words)
    }

    /// How many containers are open (the indentation level).
    #[inline]
    pub(super) fn depth(&self) -> usize {
        self.below_depth + self.stack.len()
    }

    /// Pushes a flat map's frame, written field by field where it goes. (As a `Frame` value, through
    /// `Vec::push`, it was built on the machine stack with stores of 1 to 8 bytes and copied 16 bytes at a time:
    /// a failed store forwarding on every map opened, a fifth of the walk on a document of small objects.)
    #[inline(always)]
    pub(super) fn push_flat(&mut self, fields: FlatFields) {
        if self.stack.len() == self.stack.capacity() {
            self.stack.reserve(1);
        }
        let len = self.stack.len();
        // SAFETY: the slot at `len` is within the capacity and unused; `FlatFrame` is `Frame::Flat`'s layout
        // (`repr(C, u8)`, FLAT_TAG its place), so the slot then holds that variant.
        unsafe {
            let slot = self.stack.as_mut_ptr().add(len) as *mut FlatFrame;
            std::ptr::addr_of_mut!((*slot).tag).write(FLAT_TAG);
            std::ptr::addr_of_mut!((*slot).fields).write(fields);
            self.stack.set_len(len + 1);
        }
        debug_assert!(matches!(self.stack.last(), Some(Frame::Flat { .. })));
    }

    pub(super) fn seen_set(&self) -> Option<KeySet> {
        if self.strict {
            Some(Box::default())
        } else {
            None
        }
    }

    #[inline(always)]
    pub(super) fn separator(&mut self, out: &mut Out, first: bool) {
        if !first {
            out.push(b',');
        }
        self.newline(out);
    }

    #[inline(always)]
    fn newline(&mut self, out: &mut Out) {
        if self.pretty.is_some() {
            self.pretty_newline(out);
        }
    }

    /// A pretty newline costs its indentation (deep nesting makes long lines).
    #[inline(never)]
    fn pretty_newline(&mut self, out: &mut Out) {
        if let Some(p) = self.pretty {
            let depth = self.depth();
            p.newline(out, depth);
            self.spend((depth * p.indent.len()) >> BYTES_PER_UNIT_SHIFT);
        }
    }

    #[inline]
    pub(super) fn colon(&self, out: &mut Out) {
        out.push(b':');
        if let Some(p) = self.pretty {
            out.extend(&p.after_colon);
        }
    }

    fn close(&mut self, out: &mut Out, byte: u8) {
        self.newline(out);
        out.push(byte);
    }

    #[inline(always)]
    pub(super) fn list_cell(&self, list: ErlNifTerm) -> Option<(ErlNifTerm, ErlNifTerm)> {
        if self.reads.on() {
            return self.reads.cons(list);
        }
        let (mut head, mut tail) = (ErlNifTerm::default(), ErlNifTerm::default());
        if unsafe { enif_get_list_cell(self.env, list, &mut head, &mut tail) } != 0 {
            Some((head, tail))
        } else {
            None
        }
    }

    /// Writes `root`, or (when `resume` is true) continues from the frames in `below`.
    pub(super) fn walk(
        &mut self,
        root: ErlNifTerm,
        out: &mut Out,
        resume: bool,
    ) -> Result<(), Fail> {
        let mut value = root;
        let mut pending = !resume;
        loop {
            if pending {
                if let Err(fail) = self.write_value(value, out) {
                    // Out of line: a checkpoint puts the value back in front of the rest of its list.
                    self.failed_value = value;
                    return Err(fail);
                }
            }
            pending = true;
            // Find the next value to write, closing finished containers.
            loop {
                let depth = self.stack.len();
                let Some(count) = self.stack.last().map(Frame::count) else {
                    if self.below == self.empty_list {
                        return Ok(());
                    }
                    if !self.pull_below() {
                        self.restart = true;
                        return Err(Fail::Budget);
                    }
                    continue;
                };
                self.mark = Mark {
                    len: out.len(),
                    depth,
                    count,
                };
                if self.exhausted {
                    return Err(Fail::Budget);
                }
                let env = self.env;
                let top = self.stack.last_mut().unwrap();
                match top {
                    Frame::List { tail, count } => {
                        let cell = if self.reads.on() {
                            self.reads.cons(*tail)
                        } else {
                            let (mut h, mut r) = (ErlNifTerm::default(), ErlNifTerm::default());
                            (unsafe { enif_get_list_cell(env, *tail, &mut h, &mut r) } != 0)
                                .then_some((h, r))
                        };
                        if let Some((head, rest)) = cell {
                            *tail = rest;
                            *count += 1;
                            let first = *count == 1;
                            self.separator(out, first);
                            value = head;
                            break;
                        }
                        if *tail != self.empty_list
                            && unsafe { rustler::sys::enif_is_empty_list(env, *tail) } == 0
                        {
                            return Err(Fail::ImproperList(*tail));
                        }
                        self.stack.pop();
                        self.close(out, b']');
                    }
                    Frame::Map {
                        iter,
                        count,
                        backwards,
                        ..
                    } => {
                        let (mut key, mut val) = (ErlNifTerm::default(), ErlNifTerm::default());
                        let iter_ptr: *mut ErlNifMapIterator = iter;
                        let first = *count == 0;
                        let advanced =
                            first || unsafe { step_map_iterator(env, iter_ptr, *backwards) };
                        if advanced
                            && unsafe {
                                enif_map_iterator_get_pair(env, iter_ptr, &mut key, &mut val)
                            } != 0
                        {
                            if key == self.struct_key
                                && matches!(
                                    unsafe { enif_term_type(env, val) },
                                    ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM
                                )
                            {
                                return Err(Fail::Elixir);
                            }
                            *count += 1;
                            self.separator(out, first);
                            self.write_key(key, out)?;
                            self.colon(out);
                            value = val;
                            break;
                        }
                        if let Some(Frame::Map { mut iter, .. }) = self.stack.pop() {
                            unsafe { enif_map_iterator_destroy(env, &mut iter) };
                        }
                        self.close(out, b'}');
                    }
                    Frame::Flat {
                        keys,
                        vals,
                        len,
                        count,
                        keys_use,
                        ..
                    } => {
                        if *count < *len {
                            let (i, len, keys_use) = (*count, *len, *keys_use);
                            // SAFETY: i < len; the map does not move during the call.
                            let (key, val) = unsafe { (*keys.add(i), *vals.add(i)) };
                            if key == self.struct_key
                                && matches!(
                                    unsafe { enif_term_type(env, val) },
                                    ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM
                                )
                            {
                                return Err(Fail::Elixir);
                            }
                            *count += 1;
                            self.separator(out, i == 0);
                            match keys_use {
                                KeyUse::Cached { first } => {
                                    out.extend(self.key_cache.key(first, i))
                                }
                                KeyUse::Write => self.write_key(key, out)?,
                                KeyUse::Record { slot, first } => {
                                    let start = out.len();
                                    self.write_key(key, out)?;
                                    let written = &out.as_slice()[start..];
                                    self.key_cache.record(slot, first, i, len, written);
                                }
                            }
                            self.colon(out);
                            value = val;
                            break;
                        }
                        self.stack.pop();
                        self.close(out, b'}');
                    }
                    Frame::Struct {
                        map,
                        template,
                        keys,
                        vals,
                        count,
                    } => {
                        let i = *count;
                        if i < template.fields.len() {
                            let field = template.fields[i];
                            let at = template.index[i];
                            // SAFETY: `at` < the flat map's size (checked when the frame was opened).
                            let val = if !vals.is_null()
                                && at < template.size
                                && unsafe { *keys.add(at) } == field
                            {
                                unsafe { *vals.add(at) }
                            } else {
                                let mut v = ErlNifTerm::default();
                                if unsafe { enif_get_map_value(env, *map, field, &mut v) } == 0 {
                                    return Err(Fail::Elixir);
                                }
                                v
                            };
                            // The frame (and its template) stays on the stack while the key is written.
                            let key: *const [u8] = &*template.keys[i];
                            *count += 1;
                            self.separator(out, i == 0);
                            out.extend(unsafe { &*key });
                            self.colon(out);
                            value = val;
                            break;
                        }
                        self.stack.pop();
                        self.close(out, b'}');
                    }
                    Frame::Sorted { pairs, count, .. } => {
                        if let Some(&(key, val)) = pairs.get(*count) {
                            let first = *count == 0;
                            *count += 1;
                            self.separator(out, first);
                            self.write_key(key, out)?;
                            self.colon(out);
                            value = val;
                            break;
                        }
                        self.stack.pop();
                        self.close(out, b'}');
                    }
                    Frame::Pairs { tail, count, .. } => {
                        let (mut head, mut rest) = (ErlNifTerm::default(), ErlNifTerm::default());
                        if unsafe { enif_get_list_cell(env, *tail, &mut head, &mut rest) } != 0 {
                            *tail = rest;
                            *count += 1;
                            let first = *count == 1;
                            self.separator(out, first);
                            self.taken_pair = head;
                            value = self.write_pair_key(head, out)?;
                            break;
                        }
                        self.stack.pop();
                        self.close(out, b'}');
                    }
                }
            }
        }
    }
}
