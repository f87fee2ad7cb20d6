//! Builds BEAM terms directly from the core parser, with raw erl_nif calls on the hot path.
//!
//! Options arrive as one small integer (see `RustyJson.DecodeOptions`): bits 0-2 the key mode, bit 3
//! `strings: :copy`, bit 4 `objects: :ordered_objects`, bit 5 `floats: :decimals`.

use crate::continuation;
use crate::term::write::{self, Writes};
use crate::term::{self, hamt};
use rustler::sys::{
    enif_alloc_env, enif_consume_timeslice, enif_free_env, enif_get_tuple, enif_make_copy,
    enif_schedule_nif, enif_self, enif_send, ErlNifDirtyTaskFlags, ErlNifPid,
    ERL_NIF_DIRTY_JOB_CPU_BOUND, ERL_NIF_NORMAL_JOB,
};
use rustler::sys::{
    enif_binary_to_term, enif_get_map_size, enif_inspect_binary, enif_make_atom_len,
    enif_make_double, enif_make_existing_atom_len, enif_make_int64, enif_make_list_cell,
    enif_make_list_from_array, enif_make_map_from_arrays, enif_make_map_put, enif_make_new_binary,
    enif_make_new_map, enif_make_sub_binary, enif_make_tuple_from_array, ErlNifBinary,
    ErlNifCharEncoding, ErlNifEnv, ErlNifTerm, ERL_NIF_BIN2TERM_SAFE,
};
use rustler::ResourceArc;
use rustler::{Encoder, Env, Term};
use rustyjson_core::intern::{hash_bytes, ExpectedKey, KeyCache};
use rustyjson_core::parser::{self, Builder, ParseError, Progress, Stacks, Str};
use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::c_int;
use std::mem::ManuallyDrop;
use std::mem::MaybeUninit;
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod atoms {
    rustler::atoms! {
        ok, error, nil, true_ = "true", false_ = "false", badarg, atom, existing_atom,
        __struct__, values, coef, exp, sign,
        ordered_object = "Elixir.RustyJson.OrderedObject",
        decimal = "Elixir.Decimal",
    }
}

const KEYS_STRINGS: u32 = 0;
const KEYS_ATOMS: u32 = 1;
const KEYS_EXISTING_ATOMS: u32 = 2;
const KEYS_COPY: u32 = 3;
const KEYS_INTERN: u32 = 4;
const STRINGS_COPY: u32 = 1 << 3;
const ORDERED_OBJECTS: u32 = 1 << 4;
const FLOAT_DECIMALS: u32 = 1 << 5;

type T = ErlNifTerm;

thread_local! {
    // ManuallyDrop: no thread-exit destructor is registered, so nothing in this library runs after a scheduler
    // thread ends (or after the library is unloaded); the few kilobytes are left to the process.
    static STACKS: RefCell<ManuallyDrop<Stacks<T, Key>>> =
        RefCell::new(ManuallyDrop::new(Stacks::default()));
    // `keys: :intern`'s key cache and shape table, kept per thread too and restarted per call (by generation, so
    // a small document does not pay for clearing ~60 KB of tables).
    static INTERN: RefCell<ManuallyDrop<(KeyCache<T>, Vec<Shape>)>> =
        RefCell::new(ManuallyDrop::new((KeyCache::new(), Vec::new())));
    // Large-object shapes and their tries (`hamt`): no terms in them, so they carry over from call to call.
    static LARGE_SHAPES: RefCell<ManuallyDrop<Vec<LargeShape>>> =
        const { RefCell::new(ManuallyDrop::new(Vec::new())) };
}

/// Large-object shapes remembered (2^LARGE_SHAPE_BITS slots, by a hash of the key bytes).
const LARGE_SHAPE_BITS: u32 = 4;

/// A sequence of keys of a large object (33 to `hamt::MAX_KEYS` binary keys) and, from its second sighting, the
/// trie the VM built for it.
#[derive(Default)]
struct LargeShape {
    hash: u64,
    /// The keys' bytes, one after another, and where each ends.
    bytes: Vec<u8>,
    ends: Vec<u32>,
    template: Option<hamt::Template>,
    /// The trie could not be read (or the keys repeat): leave this shape to the VM.
    refused: bool,
}

impl LargeShape {
    fn holds(&self, hash: u64, keys: &[Key]) -> bool {
        if self.hash != hash || self.ends.len() != keys.len() {
            return false;
        }
        let mut start = 0;
        keys.iter().zip(&self.ends).all(|(k, &end)| {
            let same = &self.bytes[start..end as usize] == k.bytes();
            start = end as usize;
            same
        })
    }

    fn remember(&mut self, hash: u64, keys: &[Key]) {
        self.hash = hash;
        self.bytes.clear();
        self.ends.clear();
        for k in keys {
            self.bytes.extend_from_slice(k.bytes());
            self.ends.push(self.bytes.len() as u32);
        }
        self.template = None;
        self.refused = false;
    }
}

/// A tuple of `terms`.
#[inline(always)]
unsafe fn tuple(env: *mut ErlNifEnv, terms: &[T]) -> T {
    enif_make_tuple_from_array(env, terms.as_ptr(), terms.len() as u32)
}

/// A hash of a key sequence's bytes.
fn keys_hash(keys: &[Key]) -> u64 {
    keys.iter().fold(keys.len() as u64, |h, k| {
        (h.rotate_left(5) ^ hash_bytes(k.bytes())).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    })
}

/// An object key: its term and, for binary keys, its bytes (stable for the whole call: the input or a fresh
/// binary, and no garbage collection runs during a NIF call). `ptr` is null for atom keys.
#[derive(Clone, Copy)]
struct Key {
    term: T,
    ptr: *const u8,
    len: usize,
}

impl Key {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        if self.ptr.is_null() {
            return &[];
        }
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Maps of up to this many keys are flatmaps, whose keys the runtime sorts with an insertion sort of term
/// comparisons; sorting the keys here by their bytes (the same order for binaries) is much cheaper.
const FLATMAP_MAX: usize = write::FLATMAP_MAX;

/// Objects of at most this many keys are built by puts into the empty map: measured cheaper than
/// `enif_make_map_from_arrays` for one key (31 vs 57 ns), dearer from two keys on.
const SMALL_MAP_PUTS: usize = 1;

/// Strings of at most this many bytes are built as heap binaries (copied) even with `strings: :reference`: the
/// garbage collector turns sub-binaries this short into heap binaries anyway (`move_boxed` in erl_gc.h, OTP 22+),
/// and such a heap binary takes at most the five words of a sub-binary.
const HEAP_BIN_MAX: usize = write::HEAP_BIN_MAX;

/// A fresh binary holding `bytes`.
#[inline(always)]
fn copy_binary(env: *mut ErlNifEnv, bytes: &[u8]) -> T {
    copy_binary_key(env, bytes).term
}

/// A fresh binary holding `bytes`, with a pointer to its data.
#[inline(always)]
fn copy_binary_key(env: *mut ErlNifEnv, bytes: &[u8]) -> Key {
    let mut term = MaybeUninit::<T>::uninit();
    unsafe {
        let ptr = enif_make_new_binary(env, bytes.len(), term.as_mut_ptr());
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len());
        Key {
            term: term.assume_init(),
            ptr,
            len: bytes.len(),
        }
    }
}

/// The sorted order of 2..=32 binary keys in `idx` (key bytes order, which is term order for binaries); false
/// when two keys are equal.
#[inline]
fn sort_order(keys: &[Key], idx: &mut [u8; FLATMAP_MAX]) -> bool {
    let n = keys.len();
    if keys.windows(2).all(|w| w[0].bytes() < w[1].bytes()) {
        for (i, x) in idx[..n].iter_mut().enumerate() {
            *x = i as u8;
        }
        return true;
    }
    if keys.windows(2).all(|w| w[0].bytes() > w[1].bytes()) {
        // Strictly descending (as some encoders write maps): reversed, no sort, no duplicates.
        for (i, x) in idx[..n].iter_mut().enumerate() {
            *x = (n - 1 - i) as u8;
        }
        return true;
    }
    for (i, x) in idx[..n].iter_mut().enumerate() {
        *x = i as u8;
    }
    idx[..n].sort_unstable_by(|&a, &b| keys[a as usize].bytes().cmp(keys[b as usize].bytes()));
    idx[..n]
        .windows(2)
        .all(|w| keys[w[0] as usize].bytes() != keys[w[1] as usize].bytes())
}

#[inline(always)]
fn term_bits(t: T) -> usize {
    // SAFETY: ErlNifTerm is a machine word.
    unsafe { std::mem::transmute::<T, usize>(t) }
}

/// Shapes remembered by `keys: :intern` (2^SHAPE_BITS slots).
const SHAPE_BITS: u32 = 5;

/// An object shape under `keys: :intern`: its key terms in document order, their sorted order and the keys
/// tuple in that order.
#[derive(Clone, Copy)]
struct Shape {
    /// Live only when this is the key cache's generation.
    gen: u32,
    n: u8,
    terms: [usize; FLATMAP_MAX],
    idx: [u8; FLATMAP_MAX],
    tuple: Option<T>,
}

impl Shape {
    const EMPTY: Shape = Shape {
        gen: 0,
        n: 0,
        terms: [0; FLATMAP_MAX],
        idx: [0; FLATMAP_MAX],
        tuple: None,
    };
}

/// `keys: :intern`'s state carried from one slice of a detached decode to the next.
struct InternTables {
    cache: KeyCache<T>,
    shapes: Vec<Shape>,
    last_shape: usize,
}

struct TermBuilder<'a> {
    env: *mut ErlNifEnv,
    rust_env: Env<'a>,
    input: T,
    input_bytes: &'a [u8],
    keys: u32,
    copy_strings: bool,
    ordered: bool,
    decimals: bool,
    nil: T,
    true_: T,
    false_: T,
    cache: KeyCache<T>,
    /// The key `keys: :atoms`/`:atoms!` could not turn into an atom.
    failed_key: Option<Vec<u8>>,
    /// Scratch for tuples of ordered objects.
    pairs: Vec<T>,
    /// Scratch for the key terms of large objects.
    key_terms: Vec<T>,
    /// The keys of the last unsorted flatmap (`shape_len` of them) and their sorted order.
    shape: [MaybeUninit<Key>; FLATMAP_MAX],
    shape_len: usize,
    shape_idx: [u8; FLATMAP_MAX],
    /// `keys: :intern`: recent shapes (see `flatmap_interned`), and the slot of the last one used.
    shapes: Vec<Shape>,
    last_shape: usize,
    /// The tables went to the next slice (`suspend_intern`): nothing to give back to the thread.
    intern_suspended: bool,
    /// The running VM's write layouts (`term::write`): which terms are written directly (short binaries, flat
    /// maps and small integers, each on its own), and the immediates fresh words are first filled with.
    writes: &'static Writes,
    heap_binaries: bool,
    flat_maps: bool,
    fills: [T; 4],
    /// The VM's map tags when large objects of a known shape are written from their trie (`term::hamt`), the
    /// shapes, and the immediates their memory is first filled with (grown on first use).
    hash_maps: Option<hamt::Tags>,
    large_shapes: Vec<LargeShape>,
    large_fills: Vec<T>,
    /// On a normal scheduler: large containers are left for a dirty one (`defer_build`), and whether one was.
    defer_large: bool,
    deferred: bool,
}

impl<'a> TermBuilder<'a> {
    /// A builder of terms in `env`; `input` (a binary term of `env`) holds `bytes`, the document.
    fn new(env: Env<'a>, input: T, bytes: &'a [u8], opts_bits: u32) -> Self {
        let raw_env = env.as_c_arg();
        let layout = term::layout(raw_env);
        let mut builder = TermBuilder {
            env: raw_env,
            rust_env: env,
            input,
            input_bytes: bytes,
            keys: opts_bits & 7,
            copy_strings: opts_bits & STRINGS_COPY != 0,
            ordered: opts_bits & ORDERED_OBJECTS != 0,
            decimals: opts_bits & FLOAT_DECIMALS != 0,
            nil: atoms::nil().as_c_arg(),
            true_: atoms::true_().as_c_arg(),
            false_: atoms::false_().as_c_arg(),
            cache: KeyCache::new(),
            failed_key: None,
            pairs: Vec::new(),
            key_terms: Vec::new(),
            // Only the first `shape_len` are ever read: left unwritten, a small decode does not pay for 768 bytes.
            shape: [const { MaybeUninit::uninit() }; FLATMAP_MAX],
            shape_len: 0,
            shape_idx: [0; FLATMAP_MAX],
            shapes: Vec::new(),
            last_shape: 0,
            intern_suspended: false,
            writes: &layout.writes,
            heap_binaries: layout.writes.heap_binaries.is_some(),
            flat_maps: layout.writes.flat_maps.is_some(),
            fills: [atoms::nil().as_c_arg(); 4],
            hash_maps: layout.hash_maps,
            large_shapes: Vec::new(),
            large_fills: Vec::new(),
            defer_large: false,
            deferred: false,
        };
        if builder.keys == KEYS_INTERN {
            INTERN.with(|c| {
                if let Ok(mut c) = c.try_borrow_mut() {
                    builder.cache = std::mem::take(&mut c.0);
                    builder.shapes = std::mem::take(&mut c.1);
                }
            });
            builder.cache.restart();
        }
        builder
    }

    /// `keys: :intern`'s tables, taken out at a yield of a detached decode: its terms stay valid (nothing
    /// collects the decode's own environment), so the next slice goes on with them instead of a restarted
    /// cache, and keys and shapes stay shared across the whole document.
    fn suspend_intern(&mut self) -> Option<InternTables> {
        self.intern_suspended = true;
        (self.keys == KEYS_INTERN).then(|| InternTables {
            cache: std::mem::take(&mut self.cache),
            shapes: std::mem::take(&mut self.shapes),
            last_shape: self.last_shape,
        })
    }

    /// Goes on with the tables of the decode's previous slice; the ones this builder took from the thread go
    /// back to it.
    fn resume_intern(&mut self, tables: InternTables) {
        let fresh_cache = std::mem::replace(&mut self.cache, tables.cache);
        let fresh_shapes = std::mem::replace(&mut self.shapes, tables.shapes);
        self.last_shape = tables.last_shape;
        INTERN.with(|c| {
            if let Ok(mut c) = c.try_borrow_mut() {
                c.0 = fresh_cache;
                c.1 = fresh_shapes;
            }
        });
    }

    /// What the decode returns: the value, or `{:error, position}`, `{:error, {position, token}}` or
    /// `{:error, {:atom | :existing_atom, key}}` (turned into a `RustyJson.DecodeError` in Elixir).
    fn outcome(&mut self, parsed: Result<T, ParseError>, bytes: &[u8]) -> T {
        let env = self.rust_env;
        let term = match parsed {
            Ok(term) => return term,
            Err(ParseError::UnexpectedByte(pos)) | Err(ParseError::UnexpectedEnd(pos)) => {
                (atoms::error(), pos).encode(env)
            }
            Err(ParseError::Token { start, end }) => {
                let token = unsafe { Term::new(env, self.copy_binary(&bytes[start..end])) };
                (atoms::error(), (start, token)).encode(env)
            }
            Err(ParseError::Key { .. }) => {
                let key = self.failed_key.take().unwrap_or_default();
                let key = unsafe { Term::new(env, self.copy_binary(&key)) };
                let tag = if self.keys == KEYS_EXISTING_ATOMS {
                    atoms::existing_atom()
                } else {
                    atoms::atom()
                };
                (atoms::error(), (tag, key)).encode(env)
            }
        };
        term.as_c_arg()
    }

    #[inline(always)]
    fn copy_binary(&self, bytes: &[u8]) -> T {
        if self.heap_binaries && bytes.len() <= HEAP_BIN_MAX {
            return unsafe { self.writes.heap_binary(self.env, &self.fills, bytes) };
        }
        copy_binary(self.env, bytes)
    }

    /// The key at `input[start..end]` (no escapes): a sub-binary unless it is short or `strings: :copy`.
    #[inline(always)]
    fn input_key(&self, start: usize, end: usize) -> Key {
        if self.copy_strings || end - start <= HEAP_BIN_MAX {
            return self.copy_key(&self.input_bytes[start..end]);
        }
        Key {
            term: unsafe { enif_make_sub_binary(self.env, self.input, start, end - start) },
            ptr: self.input_bytes[start..].as_ptr(),
            len: end - start,
        }
    }

    /// A fresh binary holding `bytes`, with a pointer to its data (which stays put for the whole call).
    #[inline(always)]
    fn copy_key(&self, bytes: &[u8]) -> Key {
        if self.heap_binaries && bytes.len() <= HEAP_BIN_MAX {
            let term = unsafe { self.writes.heap_binary(self.env, &self.fills, bytes) };
            return Key {
                term,
                // The binary's own bytes: `bytes` may be the parser's scratch buffer, reused for the next key.
                ptr: self.writes.heap_binary_bytes(term),
                len: bytes.len(),
            };
        }
        copy_binary_key(self.env, bytes)
    }

    #[inline(always)]
    fn binary(&self, s: Str, copy: bool) -> T {
        match s {
            Str::Input { start, end, .. } if !copy && end - start > HEAP_BIN_MAX => unsafe {
                enif_make_sub_binary(self.env, self.input, start, end - start)
            },
            s => self.copy_binary(s.bytes()),
        }
    }

    /// `keys: :atoms` (`existing` false) or `:atoms!`; `None` when the key cannot be (or is not) an atom.
    fn atom(&self, bytes: &[u8], existing: bool) -> Option<T> {
        if bytes.len() <= 255 && bytes.is_ascii() {
            if existing {
                let mut atom = MaybeUninit::<T>::uninit();
                let ok = unsafe {
                    enif_make_existing_atom_len(
                        self.env,
                        bytes.as_ptr() as *const _,
                        bytes.len(),
                        atom.as_mut_ptr(),
                        ErlNifCharEncoding::ERL_NIF_LATIN1,
                    )
                };
                return (ok != 0).then(|| unsafe { atom.assume_init() });
            }
            return Some(unsafe {
                enif_make_atom_len(self.env, bytes.as_ptr() as *const _, bytes.len())
            });
        }
        if bytes.len() > u16::MAX as usize {
            return None;
        }
        // A UTF-8 atom: build it through the external term format (ATOM_UTF8_EXT); the safe flag refuses to
        // create atoms, which is `:atoms!`. The runtime enforces the 255-character limit.
        let mut etf = Vec::with_capacity(bytes.len() + 4);
        etf.push(131);
        etf.push(118);
        etf.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
        etf.extend_from_slice(bytes);
        let mut term = MaybeUninit::<T>::uninit();
        let flags = if existing { ERL_NIF_BIN2TERM_SAFE } else { 0 };
        let read = unsafe {
            enif_binary_to_term(self.env, etf.as_ptr(), etf.len(), term.as_mut_ptr(), flags)
        };
        (read == etf.len()).then(|| unsafe { term.assume_init() })
    }

    fn integer_from_text(&self, text: &[u8]) -> T {
        let big = rustler::BigInt::parse_bytes(text, 10).expect("validated digits");
        big.encode(self.rust_env).as_c_arg()
    }

    /// `Decimal.new(token)` built natively: `%Decimal{sign, coef, exp}`.
    fn decimal(&self, text: &[u8]) -> T {
        let (sign, rest) = match text.first() {
            Some(b'-') => (-1i64, &text[1..]),
            _ => (1, text),
        };
        let (mantissa, exp_part) = match rest.iter().position(|&c| c == b'e' || c == b'E') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        let mut digits = Vec::with_capacity(mantissa.len());
        let mut frac = 0i64;
        let mut seen_dot = false;
        for &c in mantissa {
            if c == b'.' {
                seen_dot = true;
            } else {
                digits.push(c);
                if seen_dot {
                    frac += 1;
                }
            }
        }
        let exp: i64 = if exp_part.is_empty() {
            0
        } else {
            std::str::from_utf8(exp_part)
                .ok()
                .and_then(|s| s.trim_start_matches('+').parse().ok())
                .unwrap_or(0)
        };
        let coef = self.integer_from_text(&digits);
        let keys = [
            atoms::__struct__().as_c_arg(),
            atoms::coef().as_c_arg(),
            atoms::exp().as_c_arg(),
            atoms::sign().as_c_arg(),
        ];
        let values = unsafe {
            [
                atoms::decimal().as_c_arg(),
                coef,
                enif_make_int64(self.env, exp - frac),
                enif_make_int64(self.env, sign),
            ]
        };
        self.map_of(&keys, &values)
    }

    /// A map of 2..=32 binary keys: hand the runtime its keys already sorted, or write it (see `raw`).
    #[inline]
    fn flatmap(&mut self, keys: &[Key], values: &[T]) -> T {
        let n = keys.len();
        // Arrays of same-shaped objects: reuse the previous object's order when its keys are the same.
        // SAFETY: the first `shape_len` entries were written (below) before `shape_len` was set.
        let shape = unsafe {
            std::slice::from_raw_parts(self.shape.as_ptr() as *const Key, self.shape_len)
        };
        let same_shape = shape.len() == n
            && keys
                .iter()
                .zip(shape)
                .all(|(k, s)| k.term == s.term || k.bytes() == s.bytes());
        if !same_shape {
            if !sort_order(keys, &mut self.shape_idx) {
                self.shape_len = 0;
                return self.map_from_keys(keys, values);
            }
            for (slot, k) in self.shape.iter_mut().zip(keys) {
                slot.write(*k);
            }
            self.shape_len = n;
        }
        if !self.flat_maps {
            return self.flatmap_in_shape_order(keys, values);
        }
        let idx = &self.shape_idx[..n];
        let mut buf = [MaybeUninit::<T>::uninit(); FLATMAP_MAX + 2];
        let mut ks = [MaybeUninit::<T>::uninit(); FLATMAP_MAX];
        for ((v, k), &i) in buf[2..].iter_mut().zip(ks.iter_mut()).zip(idx) {
            v.write(values[i as usize]);
            k.write(keys[i as usize].term);
        }
        unsafe {
            let ks = std::slice::from_raw_parts(ks.as_ptr() as *const T, n);
            self.writes
                .flatmap(self.env, tuple(self.env, ks), &mut buf, n)
        }
    }

    /// `keys: :intern` (while its cache hits): interned key terms are one per key, so an object's shape is its
    /// sequence of key terms. A small table of recent shapes gives their sorted order and keys tuple, so objects
    /// of a shape seen before (not only the previous object's: nested objects alternate) cost no comparisons and
    /// share the tuple.
    #[inline]
    fn flatmap_interned(&mut self, keys: &[Key], values: &[T]) -> T {
        let n = keys.len();
        if self.shapes.is_empty() {
            self.shapes = vec![Shape::EMPTY; 1 << SHAPE_BITS];
        }
        let gen = self.cache.generation();
        let same = |shape: &Shape| {
            shape.gen == gen
                && shape.n as usize == n
                && shape.terms[..n]
                    .iter()
                    .zip(keys)
                    .all(|(&t, k)| t == term_bits(k.term))
        };
        // The last object's shape first (an array of same-shaped objects), then by hash (nested shapes).
        let (slot, hit) = if same(&self.shapes[self.last_shape]) {
            (self.last_shape, true)
        } else {
            let mut h = n as u64;
            for k in keys {
                h = (h.rotate_left(5) ^ term_bits(k.term) as u64)
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15);
            }
            let slot = (h >> (64 - SHAPE_BITS)) as usize;
            (slot, same(&self.shapes[slot]))
        };
        self.last_shape = slot;
        let shape = &mut self.shapes[slot];
        if !hit {
            let mut idx = [0u8; FLATMAP_MAX];
            if !sort_order(keys, &mut idx) {
                return self.map_from_keys(keys, values);
            }
            let mut ks = [MaybeUninit::<T>::uninit(); FLATMAP_MAX];
            for (slot, &i) in ks.iter_mut().zip(&idx[..n]) {
                slot.write(keys[i as usize].term);
            }
            let ks = unsafe { std::slice::from_raw_parts(ks.as_ptr() as *const T, n) };
            shape.gen = gen;
            shape.n = n as u8;
            shape.idx = idx;
            for (t, k) in shape.terms.iter_mut().zip(keys) {
                *t = term_bits(k.term);
            }
            shape.tuple = if self.flat_maps {
                Some(unsafe { tuple(self.env, ks) })
            } else {
                None
            };
        }
        let shape = &self.shapes[slot];
        let mut buf = [MaybeUninit::<T>::uninit(); FLATMAP_MAX + 2];
        for (slot, &i) in buf[2..].iter_mut().zip(&shape.idx[..n]) {
            slot.write(values[i as usize]);
        }
        match shape.tuple {
            Some(tuple) => unsafe { self.writes.flatmap(self.env, tuple, &mut buf, n) },
            None => {
                let mut ks = [MaybeUninit::<T>::uninit(); FLATMAP_MAX];
                for (slot, &i) in ks.iter_mut().zip(&shape.idx[..n]) {
                    slot.write(keys[i as usize].term);
                }
                let ks = unsafe { std::slice::from_raw_parts(ks.as_ptr() as *const T, n) };
                let vs = unsafe { std::slice::from_raw_parts(buf[2..].as_ptr() as *const T, n) };
                self.map_of(ks, vs)
            }
        }
    }

    /// A map of 33 to `hamt::MAX_KEYS` binary keys: written from the trie of an earlier object with the same keys
    /// in the same order, or built by the VM (and, on a shape's second sighting, its trie read for the next).
    fn large_map(&mut self, keys: &[Key], values: &[T]) -> T {
        let Some(tags) = self.hash_maps else {
            return self.large_map_by_vm(keys, values);
        };
        if self.large_shapes.is_empty() {
            self.large_shapes = LARGE_SHAPES
                .with(|c| c.try_borrow_mut().map(|mut c| std::mem::take(&mut **c)))
                .unwrap_or_default();
            self.large_shapes
                .resize_with(1 << LARGE_SHAPE_BITS, LargeShape::default);
        }
        let hash = keys_hash(keys);
        let slot = (hash >> (64 - LARGE_SHAPE_BITS)) as usize;
        let shape = &mut self.large_shapes[slot];
        if !shape.holds(hash, keys) {
            shape.remember(hash, keys);
            return self.large_map_by_vm(keys, values);
        }
        if shape.refused {
            return self.large_map_by_vm(keys, values);
        }
        self.key_terms.clear();
        self.key_terms.extend(keys.iter().map(|k| k.term));
        if let Some(template) = &self.large_shapes[slot].template {
            // SAFETY: the template was read from a map of these same keys in this order (`holds`).
            return unsafe {
                template.write(
                    self.env,
                    &tags,
                    self.nil,
                    &mut self.large_fills,
                    &self.key_terms,
                    values,
                )
            };
        }
        let map = self.large_map_by_vm(keys, values);
        let mut size = 0;
        let distinct =
            unsafe { enif_get_map_size(self.env, map, &mut size) } != 0 && size == keys.len();
        // SAFETY: `map` was just made from `key_terms`, which are distinct when the map has all of them.
        let template = distinct
            .then(|| unsafe { hamt::Template::read(map, &self.key_terms, &tags) })
            .flatten();
        let shape = &mut self.large_shapes[slot];
        shape.refused = template.is_none();
        shape.template = template;
        map
    }

    /// A map of more than 32 keys, built by the VM. Duplicate keys are rare, and found by the VM's build: its
    /// size falls short (OTP 25 and 27 accept them, into a hash map that may hold 32 keys or fewer, which the VM
    /// never makes and `===` and lookups misread) or it refuses them (OTP 29). Then the map is built again from
    /// the first pair of each key, as Jason keeps.
    fn large_map_by_vm(&mut self, keys: &[Key], values: &[T]) -> T {
        self.key_terms.clear();
        self.key_terms.extend(keys.iter().map(|k| k.term));
        if let Some(map) = self.distinct_map(&self.key_terms, values) {
            return map;
        }
        let mut seen = HashSet::with_capacity(keys.len());
        self.key_terms.clear();
        let mut firsts = Vec::new();
        for (k, &v) in keys.iter().zip(values) {
            // Atom keys (no bytes) are equal when their terms are.
            let id = if k.ptr.is_null() {
                Err(term_bits(k.term))
            } else {
                Ok(k.bytes())
            };
            if seen.insert(id) {
                self.key_terms.push(k.term);
                firsts.push(v);
            }
        }
        self.distinct_map(&self.key_terms, &firsts)
            .expect("distinct keys make a map")
    }

    /// The map of `keys` (distinct, as the VM checks: `None` otherwise) to `values`.
    fn distinct_map(&self, keys: &[T], values: &[T]) -> Option<T> {
        let mut map = MaybeUninit::<T>::uninit();
        let mut size = 0;
        unsafe {
            let made = enif_make_map_from_arrays(
                self.env,
                keys.as_ptr(),
                values.as_ptr(),
                keys.len(),
                map.as_mut_ptr(),
            ) != 0;
            (made
                && enif_get_map_size(self.env, map.assume_init(), &mut size) != 0
                && size == keys.len())
            .then(|| map.assume_init())
        }
    }

    /// Builds the flatmap with its pairs in `shape_idx` order (sorted, no duplicate keys).
    #[inline]
    fn flatmap_in_shape_order(&self, keys: &[Key], values: &[T]) -> T {
        let n = keys.len();
        let mut ks = [MaybeUninit::<T>::uninit(); FLATMAP_MAX];
        let mut vs = [MaybeUninit::<T>::uninit(); FLATMAP_MAX];
        for (j, &i) in self.shape_idx[..n].iter().enumerate() {
            ks[j].write(keys[i as usize].term);
            vs[j].write(values[i as usize]);
        }
        let ks = unsafe { std::slice::from_raw_parts(ks.as_ptr() as *const T, n) };
        let vs = unsafe { std::slice::from_raw_parts(vs.as_ptr() as *const T, n) };
        self.map_of(ks, vs)
    }

    fn map_from_keys(&self, keys: &[Key], values: &[T]) -> T {
        let mut ks = [MaybeUninit::<T>::uninit(); FLATMAP_MAX];
        for (slot, k) in ks.iter_mut().zip(keys) {
            slot.write(k.term);
        }
        let ks = unsafe { std::slice::from_raw_parts(ks.as_ptr() as *const T, keys.len()) };
        self.map_of(ks, values)
    }

    /// The map of at most 32 `keys` to `values`: a flatmap, which the VM refuses to make with duplicate keys;
    /// then the first of each wins, as in Jason, by puts from the last pair back.
    #[inline(always)]
    fn map_of(&self, keys: &[T], values: &[T]) -> T {
        debug_assert!(keys.len() <= FLATMAP_MAX);
        let mut map = MaybeUninit::<T>::uninit();
        unsafe {
            if enif_make_map_from_arrays(
                self.env,
                keys.as_ptr(),
                values.as_ptr(),
                keys.len(),
                map.as_mut_ptr(),
            ) != 0
            {
                return map.assume_init();
            }
            let mut map = enif_make_new_map(self.env);
            for (&k, &v) in keys.iter().zip(values).rev() {
                let mut out = MaybeUninit::<T>::uninit();
                enif_make_map_put(self.env, map, k, v, out.as_mut_ptr());
                map = out.assume_init();
            }
            map
        }
    }
}

impl Drop for TermBuilder<'_> {
    fn drop(&mut self) {
        if !self.large_shapes.is_empty() {
            LARGE_SHAPES.with(|c| {
                if let Ok(mut c) = c.try_borrow_mut() {
                    **c = std::mem::take(&mut self.large_shapes);
                }
            });
        }
        if self.keys == KEYS_INTERN && !self.intern_suspended {
            // Give the tables back to this thread for the next call.
            INTERN.with(|c| {
                if let Ok(mut c) = c.try_borrow_mut() {
                    c.0 = std::mem::take(&mut self.cache);
                    c.1 = std::mem::take(&mut self.shapes);
                }
            });
        }
    }
}

impl<'a> Builder for TermBuilder<'a> {
    type V = T;
    type K = Key;

    #[inline(always)]
    fn null(&mut self) -> T {
        self.nil
    }
    #[inline(always)]
    fn boolean(&mut self, value: bool) -> T {
        if value {
            self.true_
        } else {
            self.false_
        }
    }
    #[inline(always)]
    fn int(&mut self, value: i64) -> T {
        if let Some(t) = self.writes.small(value) {
            return t;
        }
        unsafe { enif_make_int64(self.env, value) }
    }
    fn big_int(&mut self, text: &[u8]) -> T {
        self.integer_from_text(text)
    }
    #[inline(always)]
    fn float(&mut self, text: &[u8], value: f64) -> T {
        if self.decimals {
            return self.decimal(text);
        }
        unsafe { enif_make_double(self.env, value) }
    }
    fn float_out_of_range(&mut self, text: &[u8]) -> Option<T> {
        // `Decimal.new("1e400")` is fine: only native floats have a range.
        self.decimals.then(|| self.decimal(text))
    }
    #[inline(always)]
    fn string(&mut self, s: Str) -> T {
        self.binary(s, self.copy_strings)
    }
    #[inline(always)]
    fn expected_key(&mut self) -> Option<ExpectedKey> {
        if self.keys != KEYS_INTERN {
            return None;
        }
        self.cache.expected()
    }

    #[inline(always)]
    fn expected_key_found(&mut self, start: usize, end: usize) -> Key {
        Key {
            term: self.cache.take_expected(),
            ptr: self.input_bytes[start..].as_ptr(),
            len: end - start,
        }
    }

    #[inline(always)]
    fn key(&mut self, s: Str) -> Result<Key, ()> {
        match (self.keys, s) {
            (KEYS_STRINGS, Str::Input { start, end, .. }) => Ok(self.input_key(start, end)),
            (KEYS_STRINGS | KEYS_COPY, s) => Ok(self.copy_key(s.bytes())),
            (KEYS_INTERN, Str::Input { start, end, .. }) => {
                if !self.cache.look_up_next() {
                    // The cache gave up (keys rarely repeat): exactly the default's work until it tries again.
                    return Ok(self.input_key(start, end));
                }
                let mut cache = std::mem::take(&mut self.cache);
                let term = cache.get_or_insert(self.input_bytes, start, end, || {
                    Ok(self.input_key(start, end).term)
                });
                self.cache = cache;
                Ok(Key {
                    term: term?,
                    ptr: self.input_bytes[start..].as_ptr(),
                    len: end - start,
                })
            }
            (KEYS_ATOMS | KEYS_EXISTING_ATOMS, s) => {
                let existing = self.keys == KEYS_EXISTING_ATOMS;
                match self.atom(s.bytes(), existing) {
                    Some(term) => Ok(Key {
                        term,
                        ptr: std::ptr::null(),
                        len: 0,
                    }),
                    None => {
                        self.failed_key = Some(s.bytes().to_vec());
                        Err(())
                    }
                }
            }
            (_, s) => Ok(self.copy_key(s.bytes())),
        }
    }
    #[inline(always)]
    fn array(&mut self, items: &[T]) -> T {
        unsafe {
            match items.len() {
                1 => enif_make_list_cell(
                    self.env,
                    items[0],
                    enif_make_list_from_array(self.env, std::ptr::null(), 0),
                ),
                n => enif_make_list_from_array(self.env, items.as_ptr(), n as u32),
            }
        }
    }
    #[inline(always)]
    fn defer_build(&mut self, len: usize, object: bool) -> bool {
        // Objects from 2048 pairs (about 0.3 ms of the VM's map build; a million keys take 200-400 ms), arrays
        // from 256K items (a list cell is two words written: ~0.5 ms).
        let large = if object { true } else { len >= 1 << 18 };
        self.deferred = self.defer_large && large;
        self.deferred
    }
    #[inline(always)]
    fn object(&mut self, keys: &[Key], values: &[T]) -> T {
        // Whether this object's keys came from the cache (it may turn on again as the object ends).
        let interned = self.keys == KEYS_INTERN && self.cache.enabled();
        if self.keys == KEYS_INTERN {
            self.cache.object_done();
        }
        if self.ordered {
            self.pairs.clear();
            for (k, &v) in keys.iter().zip(values) {
                let t = unsafe { enif_make_tuple_from_array(self.env, [k.term, v].as_ptr(), 2) };
                self.pairs.push(t);
            }
            let list = unsafe {
                enif_make_list_from_array(self.env, self.pairs.as_ptr(), self.pairs.len() as u32)
            };
            let k = [atoms::__struct__().as_c_arg(), atoms::values().as_c_arg()];
            let v = [atoms::ordered_object().as_c_arg(), list];
            return self.map_of(&k, &v);
        }
        let n = keys.len();
        if n == 0 {
            return unsafe { enif_make_new_map(self.env) };
        }
        if n <= SMALL_MAP_PUTS {
            // The single-entry fast path: no arrays, no sort. (Putting from the last pair back would keep the
            // first of duplicate keys if the limit grew.)
            unsafe {
                let mut map = enif_make_new_map(self.env);
                for (k, &v) in keys.iter().zip(values).rev() {
                    let mut out = MaybeUninit::<T>::uninit();
                    enif_make_map_put(self.env, map, k.term, v, out.as_mut_ptr());
                    map = out.assume_init();
                }
                return map;
            }
        }
        if (2..=FLATMAP_MAX).contains(&n) && !keys[0].ptr.is_null() {
            if interned {
                return self.flatmap_interned(keys, values);
            }
            return self.flatmap(keys, values);
        }
        if self.hash_maps.is_some()
            && (FLATMAP_MAX + 1..=hamt::MAX_KEYS).contains(&n)
            && !keys[0].ptr.is_null()
        {
            return self.large_map(keys, values);
        }
        self.large_map_by_vm(keys, values)
    }
}

/// Bytes parsed between clock checks on a normal scheduler (at most about 0.1 ms of the densest documents).
const SLICE_BYTES: usize = 32 * 1024;
/// A call on a normal scheduler yields (`enif_schedule_nif`) once it has run this long.
const YIELD_AFTER: Duration = Duration::from_micros(500);
/// The most pending values and keys a yield carries (a tuple's arity limit is 2^24 - 1).
const MAX_PENDING: usize = (1 << 24) - 1;

/// A decode that yielded: the parser's stacks (their terms are stale: the tuple passed along holds the live ones)
/// and the position to continue from.
struct Paused {
    stacks: Stacks<T, Key>,
    pos: usize,
}

// SAFETY: the raw pointers in `Key`s point into the input binary (kept alive as an argument of the continuation)
// or are replaced on resume; the state is only touched by the one continuation call that owns the resource.
unsafe impl Send for Paused {}

struct PausedDecode(Mutex<Option<Paused>>);

#[rustler::resource_impl]
impl rustler::Resource for PausedDecode {}

/// Where a slice of a decode runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slice {
    /// On a normal scheduler: yields every ~0.5 ms, and leaves each large container's build to a `Build` slice.
    Normal,
    /// On a dirty scheduler, to the end (`decode_dirty`).
    Dirty,
    /// On a dirty scheduler, the one container a normal slice deferred; then back to a normal scheduler.
    Build,
}

impl Slice {
    /// The continuation of a decode yielding from this slice: another normal slice, or (`deferred`) a build.
    fn next(self, deferred: bool) -> (Continuation, ErlNifDirtyTaskFlags) {
        if deferred {
            (decode_build, ERL_NIF_DIRTY_JOB_CPU_BOUND)
        } else {
            (decode_continue, ERL_NIF_NORMAL_JOB)
        }
    }

    /// How far this slice parses from `pos`: a build slice stops right after its container closes.
    fn limit(self, pos: usize) -> usize {
        match self {
            Slice::Normal => pos.saturating_add(SLICE_BYTES),
            Slice::Dirty => usize::MAX,
            Slice::Build => pos,
        }
    }
}

type Continuation = unsafe extern "C" fn(*mut ErlNifEnv, c_int, *const ErlNifTerm) -> ErlNifTerm;

/// `decode` on the calling (normal) scheduler: yields every ~0.5 ms and continues in `decode_continue`.
pub fn decode<'a>(env: Env<'a>, input: Term<'a>, opts: Term<'a>) -> Term<'a> {
    run(env, input, opts, Slice::Normal, None)
}

/// `decode` on a dirty scheduler: runs to the end.
pub fn decode_dirty<'a>(env: Env<'a>, input: Term<'a>, opts: Term<'a>) -> Term<'a> {
    run(env, input, opts, Slice::Dirty, None)
}

/// The continuation of a yielded decode: `argv` is `[input, opts, paused resource, pending tuple]`.
unsafe extern "C" fn decode_continue(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    continuation::run(env, argc, argv, |env, args| match *args {
        [input, opts, paused, pending] => {
            run(env, input, opts, Slice::Normal, Some((paused, pending)))
        }
        _ => rustler::types::atom::badarg().encode(env),
    })
}

/// The same on a dirty scheduler, for the build of one large container.
unsafe extern "C" fn decode_build(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    continuation::run(env, argc, argv, |env, args| match *args {
        [input, opts, paused, pending] => {
            run(env, input, opts, Slice::Build, Some((paused, pending)))
        }
        [input, opts, detached] => detached_continue(env, input, opts, detached, Slice::Build),
        _ => rustler::types::atom::badarg().encode(env),
    })
}

fn run<'a>(
    env: Env<'a>,
    input: Term<'a>,
    opts: Term<'a>,
    slice: Slice,
    resume: Option<(Term<'a>, Term<'a>)>,
) -> Term<'a> {
    let normal = slice == Slice::Normal;
    let raw_env = env.as_c_arg();
    let Some(bytes) = input_bytes(env, input) else {
        return (atoms::error(), atoms::badarg()).encode(env);
    };
    // The clock is read only where a slice check can come (a smaller input is one slice: no clock, no report).
    let started = (normal && (bytes.len() > SLICE_BYTES || resume.is_some())).then(Instant::now);
    let mut builder = TermBuilder::new(env, input.as_c_arg(), bytes, opts.decode().unwrap_or(0));
    builder.defer_large = normal;
    // The parser's stacks: a yielded decode's, or the ones kept per scheduler thread (small documents then parse
    // without allocating).
    let (mut stacks, mut pos) = match resume {
        Some((paused, pending)) => match restore(env, paused, pending, bytes) {
            Some(state) => state,
            None => return (atoms::error(), atoms::badarg()).encode(env),
        },
        None => (take_stacks(), 0),
    };
    let parsed = loop {
        let limit = slice.limit(pos);
        match parser::parse_some(bytes, &mut builder, &mut stacks, &mut pos, limit) {
            Ok(Progress::Done(v)) => break Ok(v),
            Err(e) => break Err(e),
            Ok(Progress::Paused) => {
                let deferred = std::mem::take(&mut builder.deferred);
                let (values, keys) = stacks.pending();
                if values.len() + keys.len() > MAX_PENDING {
                    // Too many pending terms to carry across a yield: build here after all.
                    builder.defer_large = false;
                    continue;
                }
                let due = started.is_some_and(|started| started.elapsed() >= YIELD_AFTER);
                if normal && !deferred && !due {
                    continue;
                }
                // Yield: the pending terms travel in a tuple (an argument, so the garbage collector keeps and
                // moves them), the rest in a resource.
                let mut terms = Vec::with_capacity(values.len() + keys.len());
                terms.extend_from_slice(values);
                terms.extend(keys.iter().map(|k| k.term));
                let tuple = unsafe {
                    enif_make_tuple_from_array(raw_env, terms.as_ptr(), terms.len() as u32)
                };
                let paused =
                    ResourceArc::new(PausedDecode(Mutex::new(Some(Paused { stacks, pos }))));
                let args = [
                    input.as_c_arg(),
                    opts.as_c_arg(),
                    paused.encode(env).as_c_arg(),
                    tuple,
                ];
                if let Some(started) = started {
                    consume_timeslice(env, started);
                }
                let (next, flags) = slice.next(deferred);
                return schedule(env, next, flags, &args);
            }
        }
    };
    give_back_stacks(stacks);
    if let Some(started) = started {
        consume_timeslice(env, started);
    }
    unsafe { Term::new(env, builder.outcome(parsed, bytes)) }
}

/// A large decode detached from the caller's heap: its terms are built in an environment of its own, which no
/// collection of the caller copies while the decode runs, in slices of ~0.5 ms on the caller's normal scheduler;
/// the result goes to the caller in a message, `{reference, result}`, which takes over the environment's memory
/// without a copy. (Built on the caller's heap instead, every yield let a collection copy the partial result
/// again; built on a dirty scheduler, the work competes with the normal schedulers for the cores.)
struct Detached {
    env: *mut ErlNifEnv,
    /// The input binary and the caller's reference, as terms of `env`.
    input: T,
    reference: T,
    stacks: Stacks<T, Key>,
    pos: usize,
    intern: Option<InternTables>,
}

// SAFETY: `env` and its terms belong to this state alone; only the one call that took it from its resource
// touches it.
unsafe impl Send for Detached {}

impl Drop for Detached {
    fn drop(&mut self) {
        unsafe { enif_free_env(self.env) };
    }
}

struct DetachedDecode(Mutex<Option<Detached>>);

#[rustler::resource_impl]
impl rustler::Resource for DetachedDecode {}

/// `decode` detached from the caller's heap (see [`Detached`]): returns `:ok`, and the result arrives as the
/// message `{reference, result}`.
pub fn decode_detached<'a>(
    env: Env<'a>,
    input: Term<'a>,
    opts: Term<'a>,
    reference: Term<'a>,
) -> Term<'a> {
    if input_bytes(env, input).is_none() {
        return (atoms::error(), atoms::badarg()).encode(env);
    }
    let own = unsafe { enif_alloc_env() };
    let state = Detached {
        env: own,
        input: unsafe { enif_make_copy(own, input.as_c_arg()) },
        reference: unsafe { enif_make_copy(own, reference.as_c_arg()) },
        stacks: take_stacks(),
        pos: 0,
        intern: None,
    };
    run_detached(env, input, opts, state, Slice::Normal)
}

/// The continuation of a detached decode: `argv` is `[input, opts, detached resource]`.
unsafe extern "C" fn decode_detached_continue(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    continuation::run(env, argc, argv, |env, args| match *args {
        [input, opts, detached] => detached_continue(env, input, opts, detached, Slice::Normal),
        _ => rustler::types::atom::badarg().encode(env),
    })
}

/// The next slice of the detached decode held by `detached`, a `DetachedDecode` resource.
fn detached_continue<'a>(
    env: Env<'a>,
    input: Term<'a>,
    opts: Term<'a>,
    detached: Term<'a>,
    slice: Slice,
) -> Term<'a> {
    let state = detached
        .decode::<ResourceArc<DetachedDecode>>()
        .ok()
        .and_then(|r| r.0.lock().ok()?.take());
    match state {
        Some(state) => run_detached(env, input, opts, state, slice),
        None => rustler::types::atom::badarg().encode(env),
    }
}

/// One slice of a detached decode: parses for ~0.5 ms (or, in a build slice, one large container), then
/// yields, or sends the result and returns `:ok`.
fn run_detached<'a>(
    env: Env<'a>,
    input: Term<'a>,
    opts: Term<'a>,
    mut state: Detached,
    slice: Slice,
) -> Term<'a> {
    let started = Instant::now();
    let Some(bytes) = input_bytes(env, input) else {
        return (atoms::error(), atoms::badarg()).encode(env);
    };
    let marker = ();
    // SAFETY: `state.env` lives as long as `state`, which outlives the builder.
    let own = unsafe { Env::new(&marker, state.env) };
    let mut builder = TermBuilder::new(own, state.input, bytes, opts.decode().unwrap_or(0));
    builder.defer_large = slice == Slice::Normal;
    if let Some(tables) = state.intern.take() {
        builder.resume_intern(tables);
    }
    let parsed = loop {
        let limit = slice.limit(state.pos);
        match parser::parse_some(
            bytes,
            &mut builder,
            &mut state.stacks,
            &mut state.pos,
            limit,
        ) {
            Ok(Progress::Done(v)) => break Ok(v),
            Err(e) => break Err(e),
            Ok(Progress::Paused) => {
                let deferred = std::mem::take(&mut builder.deferred);
                if slice == Slice::Normal && !deferred && started.elapsed() < YIELD_AFTER {
                    continue;
                }
                // Yield: the partial terms stay where they are (nothing collects `state.env`).
                state.intern = builder.suspend_intern();
                drop(builder);
                let paused = ResourceArc::new(DetachedDecode(Mutex::new(Some(state))));
                let args = [
                    input.as_c_arg(),
                    opts.as_c_arg(),
                    paused.encode(env).as_c_arg(),
                ];
                consume_timeslice(env, started);
                let next: Continuation = if deferred {
                    decode_build
                } else {
                    decode_detached_continue
                };
                return schedule(env, next, slice.next(deferred).1, &args);
            }
        }
    };
    let result = builder.outcome(parsed, bytes);
    drop(builder);
    let stacks = std::mem::take(&mut state.stacks);
    give_back_stacks(stacks);
    unsafe {
        let message = enif_make_tuple_from_array(state.env, [state.reference, result].as_ptr(), 2);
        let mut caller = MaybeUninit::<ErlNifPid>::uninit();
        enif_self(env.as_c_arg(), caller.as_mut_ptr());
        enif_send(env.as_c_arg(), caller.as_ptr(), state.env, message);
    }
    consume_timeslice(env, started);
    atoms::ok().encode(env)
}

/// The bytes of `input`, a binary.
fn input_bytes<'a>(env: Env<'a>, input: Term<'a>) -> Option<&'a [u8]> {
    let mut bin = MaybeUninit::<ErlNifBinary>::uninit();
    if unsafe { enif_inspect_binary(env.as_c_arg(), input.as_c_arg(), bin.as_mut_ptr()) } == 0 {
        return None;
    }
    let bin = unsafe { bin.assume_init() };
    Some(if bin.size == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(bin.data, bin.size) }
    })
}

/// The parser's stacks kept by this scheduler thread (so small documents parse without allocating).
fn take_stacks() -> Stacks<T, Key> {
    STACKS
        .with(|s| s.try_borrow_mut().map(|mut s| std::mem::take(&mut **s)))
        .unwrap_or_default()
}

/// Gives the stacks (emptied by the parser) back to this thread for the next call.
fn give_back_stacks(stacks: Stacks<T, Key>) {
    STACKS.with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            **s = stacks;
        }
    });
}

/// Reschedules the calling process to continue in `next` with `args`.
fn schedule<'a>(
    env: Env<'a>,
    next: Continuation,
    flags: ErlNifDirtyTaskFlags,
    args: &[T],
) -> Term<'a> {
    unsafe {
        Term::new(
            env,
            enif_schedule_nif(
                env.as_c_arg(),
                c"decode".as_ptr(),
                flags as c_int,
                next,
                args.len() as c_int,
                args.as_ptr(),
            ),
        )
    }
}

/// Tells the scheduler how much of its time slice the call used (1 ms is 100%).
fn consume_timeslice(env: Env, started: Instant) {
    let percent = (started.elapsed().as_micros() / 10).clamp(1, 100) as c_int;
    unsafe { enif_consume_timeslice(env.as_c_arg(), percent) };
}

/// The stacks and position of a yielded decode, with the live terms of `pending` put back in place of the
/// stale ones (keys' bytes too: a key copied into a binary may have moved; one in the input has not).
fn restore(env: Env, paused: Term, pending: Term, input: &[u8]) -> Option<(Stacks<T, Key>, usize)> {
    let paused: ResourceArc<PausedDecode> = paused.decode().ok()?;
    let Paused { mut stacks, pos } = paused.0.lock().ok()?.take()?;
    let raw_env = env.as_c_arg();
    let mut arity = 0;
    let mut elems: *const T = std::ptr::null();
    if unsafe { enif_get_tuple(raw_env, pending.as_c_arg(), &mut arity, &mut elems) } == 0 {
        return None;
    }
    let (values, keys) = stacks.pending();
    if arity as usize != values.len() + keys.len() {
        return None;
    }
    let elems = unsafe { std::slice::from_raw_parts(elems, arity as usize) };
    values.copy_from_slice(&elems[..values.len()]);
    let input_range = input.as_ptr_range();
    for (k, &term) in keys.iter_mut().zip(&elems[values.len()..]) {
        k.term = term;
        if !k.ptr.is_null() && !input_range.contains(&k.ptr) {
            let mut bin = MaybeUninit::<ErlNifBinary>::uninit();
            if unsafe { enif_inspect_binary(raw_env, term, bin.as_mut_ptr()) } == 0 {
                return None;
            }
            k.ptr = unsafe { bin.assume_init() }.data;
        }
    }
    Some((stacks, pos))
}
