//! Decoding: builds BEAM terms directly from the core parser, with raw erl_nif calls on the hot path.
//!
//! Options arrive as one small integer (see `RustyJson.DecodeOptions`): bits 0-2 the key mode, bit 3
//! `strings: :copy`, bit 4 `objects: :ordered_objects`, bit 5 `floats: :decimals`, bit 6
//! `duplicate_keys: :last`, bit 7 `duplicate_keys: :error`, bit 8 ordered pairs with their key's position
//! (`{key, value, position}`, for `keys: fun` with `duplicate_keys: :error`, checked in Elixir), bit 9
//! `validate_strings: false` (no UTF-8 check of strings' bytes). With a limit set
//! they come as `{flags, integer_digit_limit, max_depth}` (`max_depth` an integer or `:infinity`).
//!
//! - `builder`: the parser's `Builder` for terms (strings, keys, numbers, arrays), and its per-call set-up.
//! - `scalars`: atom keys, big integers and decimals.
//! - `maps`: objects into maps (flat maps, large maps, duplicate keys).
//! - `slices`: the decode on a normal scheduler in slices, the dirty decode, and dirty builds of large containers.
//! - `detached`: large decodes built apart from the caller's heap and sent as a message.
//! - `items`: many small documents of one binary in one call (`RustyJson.Stream`).
//!
//! This file holds what they share: the options, the key and builder state, and the per-thread tables.

use crate::continuation;
use crate::term::write::{self, Writes};
use crate::term::{self, hamt, hash_trie};
use rustler::sys::{
    enif_alloc_env, enif_consume_timeslice, enif_free_env, enif_get_tuple, enif_make_copy,
    enif_self, enif_send, ErlNifDirtyTaskFlags, ErlNifPid, ERL_NIF_DIRTY_JOB_CPU_BOUND,
    ERL_NIF_NORMAL_JOB,
};
use rustler::sys::{
    enif_binary_to_term, enif_get_map_size, enif_get_uint, enif_inspect_binary, enif_make_atom_len,
    enif_make_double, enif_make_existing_atom_len, enif_make_int64, enif_make_list_cell,
    enif_make_list_from_array, enif_make_map_from_arrays, enif_make_map_put, enif_make_new_binary,
    enif_make_new_map, enif_make_sub_binary, enif_make_tuple_from_array, ErlNifBinary,
    ErlNifCharEncoding, ErlNifEnv, ErlNifTerm, ERL_NIF_BIN2TERM_SAFE,
};
use rustler::ResourceArc;
use rustler::{Encoder, Env, Term};
use rustyjson_core::intern::{ExpectedKey, KeyCache, Lookup};
use rustyjson_core::parser::{self, Builder, Limits, ParseError, Progress, Stacks, Str};
use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::c_int;
use std::mem::ManuallyDrop;
use std::mem::MaybeUninit;
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod atoms {
    rustler::atoms! {
        ok, error, nil, true_ = "true", false_ = "false", badarg, atom, existing_atom, out_of_memory,
        term_limit,
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
pub(crate) const FLOAT_DECIMALS: u32 = 1 << 5;
const DUPLICATES_LAST: u32 = 1 << 6;
const DUPLICATES_ERROR: u32 = 1 << 7;
const KEY_POSITIONS: u32 = 1 << 8;
/// `validate_strings: false`: strings' bytes are not checked for UTF-8 (trusted input).
pub(crate) const RAW_STRINGS: u32 = 1 << 9;

/// Documents from this many bytes decode `keys: :strings` with the key cache of `keys: :intern`: the same keys
/// (equal binaries, a repeated key made once per call and same-shaped objects sharing a keys tuple). Measured on
/// the host: citm_catalog -30%, update-center -26%, github_events -8%, twitter 0 to +4%, a 782-byte array of 10
/// same-shaped objects -12%; below it the cache's setup costs more than it saves (+50 ns on a 65-byte object).
const INTERN_FROM: usize = 512;

/// On a normal scheduler a string may run this far past a slice's end and still be scanned in it; a longer one
/// is scanned on a dirty scheduler (`Builder::string_scan_limit`): 160 KiB of escape-dense text, the slowest to
/// unescape, take about 0.3 ms.
const STRING_SCAN: usize = 128 * 1024;

/// The flags and limits in a decode's options term (the defaults for a term that is neither form).
#[inline(always)]
fn options(reads: &term::read::Reads, opts: Term) -> (u32, Limits) {
    // The usual form, a small integer, read from the term's bits where the VM's layout is known (an erl_nif call
    // less per decode), else with the raw call: rustler's `decode::<u32>` built and dropped a `Result` around it.
    if let Some(flags) = reads
        .small(opts.as_c_arg())
        .and_then(|v| u32::try_from(v).ok())
    {
        return (flags, limits());
    }
    let mut flags = 0;
    if unsafe { enif_get_uint(opts.get_env().as_c_arg(), opts.as_c_arg(), &mut flags) } != 0 {
        return (flags, limits());
    }
    options_with_limits(opts)
}

#[cold]
fn options_with_limits(opts: Term) -> (u32, Limits) {
    flags_and_limits(opts).unwrap_or((0, limits()))
}

/// The default limits, with the ceiling on the term's memory (`term_ceiling.rs`).
#[inline(always)]
fn limits() -> Limits {
    Limits {
        max_term_bytes: crate::term_ceiling::max_term_bytes(),
        ..Limits::default()
    }
}

/// The flags and limits of a decode's options term: flags, or `{flags, integer_digit_limit, max_depth}`; `None`
/// for any other term (`RustyJson.get/3` and the streams answer `badarg` to it).
pub(crate) fn flags_and_limits(opts: Term) -> Option<(u32, Limits)> {
    if let Ok(flags) = opts.decode::<u32>() {
        return Some((flags, limits()));
    }
    let (flags, digits, depth) = opts.decode::<(u32, u64, Term)>().ok()?;
    let limits = Limits {
        integer_bytes: usize::try_from(digits).unwrap_or(usize::MAX),
        max_depth: depth
            .decode::<u64>()
            .map_or(usize::MAX, |d| usize::try_from(d).unwrap_or(usize::MAX)),
        ..limits()
    };
    Some((flags, limits))
}

mod builder;
mod detached;
mod items;
mod maps;
mod scalars;
mod slices;

use maps::{LargeShape, Shape};

pub use detached::decode_detached;
pub use items::{decode_items, ItemDecoder, SPAN_BYTES};
pub use slices::{decode, decode_dirty};

type T = ErlNifTerm;

/// What a scheduler thread keeps from one decode to the next: the parser's stacks, and a term builder (made on
/// the thread's first decode) that each decode on the calling process's heap sets up again rather than makes.
struct PerThread {
    stacks: Stacks<T, Key>,
    builder: Option<builder::Kept>,
}

thread_local! {
    // ManuallyDrop: no thread-exit destructor is registered, so nothing in this library runs after a scheduler
    // thread ends (or after the library is unloaded); the few kilobytes are left to the process. Boxed: the
    // library's thread-locals take static TLS (mimalloc's are initial-exec), of which a library loaded at run time
    // gets what glibc set aside for all of them (about 1.6 KB); inline, this state alone took 1.4 KB of it.
    static PER_THREAD: RefCell<ManuallyDrop<Box<PerThread>>> = RefCell::new(ManuallyDrop::new(Box::new(PerThread {
        stacks: Stacks::default(),
        builder: None,
    })));
    // `keys: :intern`'s key cache and shape table, kept per thread too and restarted per call (by generation, so
    // a small document does not pay for clearing ~60 KB of tables).
    static INTERN: RefCell<ManuallyDrop<(KeyCache<T>, Vec<Shape>)>> =
        RefCell::new(ManuallyDrop::new((KeyCache::new(), Vec::new())));
    // Large-object shapes and their tries (`hamt`): no terms in them, so they carry over from call to call.
    static LARGE_SHAPES: RefCell<ManuallyDrop<Vec<LargeShape>>> =
        const { RefCell::new(ManuallyDrop::new(Vec::new())) };
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

/// Objects of at most this many keys are built by puts into the empty map where flat maps are not written
/// directly: measured cheaper than `enif_make_map_from_arrays` for one key (31 vs 57 ns), dearer from two keys on.
/// (Written directly, a one-key object costs a fifth of the puts: nested_100 decode -20%.)
const SMALL_MAP_PUTS: usize = 1;

/// Strings of at most this many bytes are copied into heap binaries written in the arena (larger copies are made
/// by erl_nif). Strings of the input are copied up to `TermBuilder::short_input` even with `strings: :reference`:
/// the garbage collector turns sub-binaries of up to 24 bytes into heap binaries anyway (`move_boxed` in
/// erl_gc.h, OTP 22+), and such a heap binary takes at most the five words of a sub-binary; from OTP 27 on
/// `enif_make_sub_binary` itself copies up to 64 ([`write::Writes::input_copies_max`]).
const HEAP_BIN_MAX: usize = write::HEAP_BIN_MAX;

#[inline(always)]
fn term_bits(t: T) -> usize {
    // SAFETY: ErlNifTerm is a machine word.
    unsafe { std::mem::transmute::<T, usize>(t) }
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
    /// The limits for the parser; repeated keys are errors with `duplicate_keys: :error` (and key positions are
    /// recorded for `KEY_POSITIONS`).
    limits: Limits,
    duplicates_error: bool,
    duplicates_last: bool,
    key_positions: bool,
    nil: T,
    true_: T,
    false_: T,
    cache: KeyCache<T>,
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
    /// Strings of the input up to this many bytes are copied, not referred to (see [`HEAP_BIN_MAX`]).
    short_input: usize,
    flat_maps: bool,
    floats: bool,
    /// Where terms written directly go (sealed when the builder is dropped, before the call returns).
    arena: write::Arena,
    /// The VM's map tags when large objects of a known shape are written from their trie (`term::hamt`), the
    /// shapes, and the immediates their memory is first filled with (grown on first use).
    hash_maps: Option<hamt::Tags>,
    /// Large objects of shapes not remembered, laid out from the VM's hashes of their keys (`term::hash_trie`),
    /// and the buffers that takes.
    hashed_maps: Option<hash_trie::Hashed>,
    trie: hash_trie::Scratch,
    large_shapes: Vec<LargeShape>,
    large_fills: Vec<T>,
    /// On a normal scheduler: large containers are left for a dirty one (`defer_build`), and whether one was.
    defer_large: bool,
    deferred: bool,
    /// Where this call's unescaped strings go (see [`SharedText`]).
    shared: SharedText,
}

/// A binary that a call's escaped strings longer than a heap binary are unescaped into, each returned as a
/// sub-binary of it, as unescaped strings are sub-binaries of the input. One allocation, and one off-heap
/// reference for the collector, per chunk rather than per string: a string of its own cost a malloc, a
/// `ProcBin` and its free. A kept string holds its whole chunk, so chunks are at most [`SHARED_CHUNK`] bytes (a
/// 64 KiB chunk made a kept 68-byte string hold 964x its size, issue #57); `strings: :copy` gives each its own
/// binary. `enif_make_new_binary`'s bytes may be written until the call returns: a call's chunk is never
/// written after.
struct SharedText {
    term: T,
    data: *mut u8,
    len: usize,
    used: usize,
}

impl SharedText {
    fn empty() -> SharedText {
        SharedText {
            term: T::default(),
            data: std::ptr::null_mut(),
            len: 0,
            used: 0,
        }
    }
}

/// The size of a shared binary for unescaped strings ([`SharedText`]), unless the input is smaller: what a kept
/// string may hold. 16x as many chunks as at 64 KiB cost text of 141-byte escaped strings ~5% (bench note 21).
const SHARED_CHUNK: usize = 4 * 1024;
/// A string longer than this that does not fit the chunk's rest gets a binary of its own and the rest is kept for
/// shorter ones: a chunk is never left more than a quarter unused.
const SHARED_TAIL_MAX: usize = 1024;
/// Unescaped strings longer than this get a binary of their own: sharing saves nothing on them, and a chunk
/// would hold their size again.
const SHARED_STRING_MAX: usize = 4 * 1024;
