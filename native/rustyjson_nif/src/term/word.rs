//! The words terms are made of, and the few facts every learner and fast path shares: a term's machine word,
//! the primary tags of boxed terms and list cells, the switch that turns every fast path off, and the probes the
//! learners make. It sits below the learners ([`super::read`], [`super::write`], [`super::hamt`], ...) and below
//! [`super`], which assembles what they learn: calls flow one way, from `term` to the learners to here.

use std::sync::atomic::{AtomicU8, Ordering};

use rustler::sys::{
    enif_make_double, enif_make_int64, enif_make_list_cell, enif_make_list_from_array,
    enif_make_new_binary, ErlNifEnv, ErlNifTerm,
};

pub type T = ErlNifTerm;

/// The bytes of a machine word: a term's size, and the unit the VM's heaps and term sizes are counted in.
pub const WORD: usize = std::mem::size_of::<usize>();

/// The release gate (`RustyJson.Native.Gate`, decided in Elixir at load from the OTP release,
/// `RUSTYJSON_FAST_PATHS` and the config): [`GATE_UNSET`] until `learn_layout/1` sets it, then open or shut for
/// good (a library loaded again keeps its first layout, so it keeps its first gate too).
static GATE: AtomicU8 = AtomicU8::new(GATE_UNSET);
const GATE_UNSET: u8 = 0;
const GATE_OPEN: u8 = 1;
const GATE_SHUT: u8 = 2;

/// Sets the release gate once (later calls change nothing).
pub fn set_gate(open: bool) {
    let state = if open { GATE_OPEN } else { GATE_SHUT };
    let _ = GATE.compare_exchange(GATE_UNSET, state, Ordering::AcqRel, Ordering::Acquire);
}

/// Whether every fast path is off: the gate is shut, or was never set (no layout is used without its word:
/// `RUSTYJSON_FAST_PATHS=off`, a release not tested, or a call before the load's).
pub fn forced_off() -> bool {
    GATE.load(Ordering::Acquire) != GATE_OPEN
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
    pub(super) unsafe fn learn(env: *mut ErlNifEnv) -> Option<Primary> {
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

/// A binary the VM makes holding `bytes` (the learners' probes).
///
/// # Safety
/// `env` must be a live NIF environment.
pub(super) unsafe fn new_binary(env: *mut ErlNifEnv, bytes: &[u8]) -> T {
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
pub(super) fn is_boxed(t: T, tag: usize) -> bool {
    bits(t) & 0x3 == tag
}

/// The words of a boxed term whose primary tag is `tag`.
#[inline(always)]
pub(super) fn boxed(t: T, tag: usize) -> *mut usize {
    (bits(t) - tag) as *mut usize
}
