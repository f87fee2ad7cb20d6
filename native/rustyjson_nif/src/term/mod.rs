//! Everything the NIF knows about how the running VM lays out terms, for reading them (encode) and for writing
//! them (decode), and the fast paths built on that knowledge.
//!
//! Each fact is learned from terms the running VM makes (`enif_make_*`) and checked once, when the library loads:
//! `RustyJson.Native` calls `learn_layout/0` on a dirty CPU scheduler before any other call can need it, since
//! learning takes about a millisecond, too long for a normal scheduler. Should that call not have run, the first
//! call that needs the layout learns it, on its own scheduler. Each fast path is switched on or off on its own: a
//! layout no release has shown yet turns off only the paths that depend on it, and the plain erl_nif calls do
//! that work. Nothing here is assumed of a release, nor of the word size: sizes are counted in [`word::WORD`]-byte
//! words (4 on a 32-bit VM, where small integers have 28 bits and a float takes three words) and every layout is
//! checked on a 32-bit VM as on a 64-bit one (armv7 under qemu: `make test-armhf`).
//! Above all of them sits the release gate, decided in Elixir at load (`RustyJson.Native.Gate`: OTP 25 through 29,
//! the releases the paths were tested on, unless `RUSTYJSON_FAST_PATHS` or the config says otherwise) and handed
//! to `learn_layout/1` before anything is learned: shut, every path is off and nothing is learned.
//! `RUSTYJSON_FAST_PATHS=off` in the VM's environment shuts it everywhere (the test suite runs once that way too).
//!
//! - [`read`]: immediates, list cells, floats, flat maps and heap binaries read by their bits (encode).
//! - [`held`]: binaries held off the heap (refc, sub-binaries) read by their bits (encode).
//! - [`write`]: heap binaries, flat maps, small integers and floats written into memory the VM hands out (decode).
//! - [`hamt`]: hash maps of 33-256 keys written from the trie the VM built for the same keys (decode), and hash
//!   maps' pairs read from their tries (encode).
//! - [`hash_trie`]: hash maps of more than 32 keys laid out from the VM's own hashes of their keys (decode).
//! - [`map_order`]: the direction in which `maps:to_list/1` lists a hash map (encode).
//! - [`word`]: a term's machine word, the primary tags and the learners' probes, which every module above uses
//!   (it calls none of them back).

pub mod hamt;
pub mod hash_trie;
pub mod held;
pub mod map_order;
pub mod read;
pub mod word;
pub mod write;

use rustler::sys::{
    enif_thread_type, ErlNifEnv, ERL_NIF_THR_DIRTY_CPU_SCHEDULER, ERL_NIF_THR_DIRTY_IO_SCHEDULER,
    ERL_NIF_THR_NORMAL_SCHEDULER, ERL_NIF_THR_UNDEFINED,
};
use std::ffi::c_int;
use std::sync::OnceLock;
use word::Primary;

// The words and tags the rest of the crate reads terms by (`crate::term::bits`, ...), defined below the learners.
pub use word::{bits, forced_off, set_gate};

/// What was learned of the running VM: one set of facts per fast path, `None` (or off) where they do not hold.
pub struct Layout {
    /// The kind of scheduler thread that learned it (`enif_thread_type`), for the test that it is learned at
    /// load on a dirty CPU scheduler, not by the first call on a normal one.
    pub learned_on: c_int,
    pub reads: read::Reads,
    pub writes: write::Writes,
    /// The low six bits of every map header (flat and hash), for [`hamt`]; `None`: hash maps are the VM's.
    pub hash_maps: Option<hamt::Tags>,
    /// Hash maps of more than 32 keys laid out by the NIF from the VM's hashes ([`hash_trie`], decode); `None`:
    /// built by the VM.
    pub hashed_maps: Option<hash_trie::Hashed>,
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
        hashed_maps: None,
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
        let hashed_maps = hash_maps.and_then(|tags| hash_trie::Hashed::learn(env, tags));
        let hash_map_reads = hash_maps.filter(|tags| hamt::check_reads(env, tags));
        Layout {
            // [`learn`] sets it.
            learned_on: ERL_NIF_THR_UNDEFINED,
            reads,
            writes,
            hash_maps,
            hashed_maps,
            hash_map_reads,
        }
    }
}

/// Each fast path's state, for `RustyJson.Native.info/0`.
pub fn fast_paths(env: *mut ErlNifEnv) -> [(&'static str, bool); 13] {
    let layout = layout(env);
    [
        ("heap_binaries", layout.writes.heap_binaries.is_some()),
        ("flat_maps", layout.writes.flat_maps.is_some()),
        ("hash_maps", layout.hash_maps.is_some()),
        ("hashed_maps", layout.hashed_maps.is_some()),
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
