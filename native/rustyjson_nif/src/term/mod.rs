//! Everything the NIF knows about how the running VM lays out terms, for reading them (encode) and for writing
//! them (decode), and the fast paths built on that knowledge.
//!
//! Each fact is learned from terms the running VM makes (`enif_make_*`) and checked once, when the library loads:
//! `RustyJson.Native` calls `learn_layout/0` on a dirty CPU scheduler before any other call can need it, since
//! learning takes about a millisecond, too long for a normal scheduler. Should that call not have run, the first
//! call that needs the layout learns it, on its own scheduler. Each fast path is switched on or off on its own: a
//! layout no release has shown yet turns off only the paths that depend on it, and the plain erl_nif calls do
//! that work. Nothing here is assumed of a release, nor of the word size: sizes are counted in [`WORD`]-byte
//! words (4 on a 32-bit VM, where small integers have 28 bits and a float takes three words) and every layout is
//! checked on a 32-bit VM as on a 64-bit one (armv7 under qemu: `make test-armhf`).
//! `RUSTYJSON_FAST_PATHS=off` in the VM's environment switches every one off (the test suite runs once that way
//! too).
//!
//! - [`read`]: immediates, list cells, floats, flat maps and heap binaries read by their bits (encode).
//! - [`held`]: binaries held off the heap (refc, sub-binaries) read by their bits (encode).
//! - [`write`]: heap binaries, flat maps, small integers and floats written into memory the VM hands out (decode).
//! - [`hamt`]: hash maps of 33-256 keys written from the trie the VM built for the same keys (decode), and hash
//!   maps' pairs read from their tries (encode).
//! - [`map_order`]: the direction in which `maps:to_list/1` lists a hash map (encode).

pub mod hamt;
pub mod held;
pub mod map_order;
pub mod read;
pub mod write;

use rustler::sys::{
    enif_make_double, enif_make_int64, enif_make_list_cell, enif_make_list_from_array,
    enif_make_new_binary, enif_thread_type, ErlNifEnv, ErlNifTerm, ERL_NIF_THR_DIRTY_CPU_SCHEDULER,
    ERL_NIF_THR_DIRTY_IO_SCHEDULER, ERL_NIF_THR_NORMAL_SCHEDULER, ERL_NIF_THR_UNDEFINED,
};
use std::ffi::c_int;
use std::sync::OnceLock;

type T = ErlNifTerm;

/// The bytes of a machine word: a term's size, and the unit the VM's heaps and term sizes are counted in.
pub const WORD: usize = std::mem::size_of::<usize>();

/// What was learned of the running VM: one set of facts per fast path, `None` (or off) where they do not hold.
pub struct Layout {
    /// The kind of scheduler thread that learned it (`enif_thread_type`), for the test that it is learned at
    /// load on a dirty CPU scheduler, not by the first call on a normal one.
    pub learned_on: c_int,
    pub reads: read::Reads,
    pub writes: write::Writes,
    /// The low six bits of every map header (flat and hash), for [`hamt`]; `None`: hash maps are the VM's.
    pub hash_maps: Option<hamt::Tags>,
    /// The same tags when hash maps are read from their tries ([`hamt::read_pairs`], encode); `None`: through
    /// the NIF iterator.
    pub hash_map_reads: Option<hamt::Tags>,
}

static LAYOUT: OnceLock<Layout> = OnceLock::new();

/// The running VM's layout: learned at load (`learn_layout/0`, dirty), else by this call (with its environment
/// to make terms in).
#[inline]
pub fn layout(env: *mut ErlNifEnv) -> &'static Layout {
    LAYOUT.get_or_init(|| learn(env))
}

/// The kind of scheduler thread that learned the layout, or `None` if it is not learned yet.
pub fn learned_on() -> Option<&'static str> {
    let name = match LAYOUT.get()?.learned_on {
        ERL_NIF_THR_NORMAL_SCHEDULER => "normal",
        ERL_NIF_THR_DIRTY_CPU_SCHEDULER => "dirty_cpu",
        ERL_NIF_THR_DIRTY_IO_SCHEDULER => "dirty_io",
        _ => "undefined",
    };
    Some(name)
}

/// Whether `RUSTYJSON_FAST_PATHS=off` switched every fast path off.
pub fn forced_off() -> bool {
    std::env::var("RUSTYJSON_FAST_PATHS").is_ok_and(|v| v.eq_ignore_ascii_case("off"))
}

#[cold]
fn learn(env: *mut ErlNifEnv) -> Layout {
    Layout {
        // Where it ran, for `layout_learned_on/0`.
        // SAFETY: called on a VM thread (a NIF's).
        learned_on: unsafe { enif_thread_type() },
        ..learn_facts(env)
    }
}

fn learn_facts(env: *mut ErlNifEnv) -> Layout {
    const OFF: Layout = Layout {
        learned_on: ERL_NIF_THR_UNDEFINED,
        reads: read::Reads::OFF,
        writes: write::Writes::OFF,
        hash_maps: None,
        hash_map_reads: None,
    };
    if forced_off() {
        return OFF;
    }
    // SAFETY: `env` is the calling NIF's environment; the terms made here are garbage once learned.
    unsafe {
        let Some(primary) = Primary::learn(env) else {
            return OFF;
        };
        let reads = read::Reads::learn(env, primary);
        let writes = write::Writes::learn(env, primary);
        let hash_maps = hamt::Tags::learn(env, primary);
        let hash_map_reads = hash_maps.filter(|tags| hamt::check_reads(env, tags));
        Layout {
            // [`learn`] sets it.
            learned_on: ERL_NIF_THR_UNDEFINED,
            reads,
            writes,
            hash_maps,
            hash_map_reads,
        }
    }
}

/// The primary tags (a term's low two bits) of boxed terms (a pointer to a header word) and of list cells, which
/// every fast path relies on: learned from a float and a list cell the VM makes, and distinct from each other and
/// from an immediate's (a small integer's). Every release so far uses 0b10 and 0b01, 32-bit and 64-bit alike.
#[derive(Clone, Copy)]
pub struct Primary {
    pub boxed: usize,
    pub list: usize,
}

impl Primary {
    unsafe fn learn(env: *mut ErlNifEnv) -> Option<Primary> {
        let nil = enif_make_list_from_array(env, std::ptr::null(), 0);
        let primary = Primary {
            boxed: bits(enif_make_double(env, 1.0)) & 0x3,
            list: bits(enif_make_list_cell(env, nil, nil)) & 0x3,
        };
        let immediate = bits(enif_make_int64(env, 0)) & 0x3;
        (primary.boxed != primary.list && immediate != primary.boxed && immediate != primary.list)
            .then_some(primary)
    }
}

/// Each fast path's state, for `RustyJson.Native.info/0`.
pub fn fast_paths(env: *mut ErlNifEnv) -> [(&'static str, bool); 12] {
    let layout = layout(env);
    [
        ("heap_binaries", layout.writes.heap_binaries.is_some()),
        ("flat_maps", layout.writes.flat_maps.is_some()),
        ("hash_maps", layout.hash_maps.is_some()),
        ("small_integers", layout.writes.small_integers.is_some()),
        ("floats", layout.writes.floats.is_some()),
        ("env_heap", layout.writes.env_heap.is_some()),
        ("encode_reads", layout.reads.on()),
        ("binary_reads", layout.reads.heap_binaries()),
        ("held_binary_reads", layout.reads.held_binaries()),
        ("sub_binary_reads", layout.reads.held_sub_binaries()),
        ("hash_map_reads", layout.hash_map_reads.is_some()),
        ("map_order", map_order::get() != map_order::Order::Unknown),
    ]
}

/// A binary the VM makes holding `bytes` (the learners' probes).
///
/// # Safety
/// `env` must be a live NIF environment.
unsafe fn new_binary(env: *mut ErlNifEnv, bytes: &[u8]) -> T {
    let mut t = T::default();
    let p = enif_make_new_binary(env, bytes.len(), &mut t);
    std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
    t
}

/// A term's machine word.
#[inline(always)]
pub fn bits(t: T) -> usize {
    // SAFETY: ErlNifTerm is a transparent wrapper of a machine word.
    unsafe { std::mem::transmute::<T, usize>(t) }
}

/// The term of a machine word.
#[inline(always)]
pub fn term(w: usize) -> T {
    // SAFETY: a machine word.
    unsafe { std::mem::transmute::<usize, T>(w) }
}

/// Whether `t` is boxed, `tag` being the boxed primary tag ([`Primary`]).
#[inline(always)]
fn is_boxed(t: T, tag: usize) -> bool {
    bits(t) & 0x3 == tag
}

/// The words of a boxed term whose primary tag is `tag`.
#[inline(always)]
fn boxed(t: T, tag: usize) -> *mut usize {
    (bits(t) - tag) as *mut usize
}
