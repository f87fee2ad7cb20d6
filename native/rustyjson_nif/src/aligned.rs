//! Input binaries that start at a bit offset (bit-level matching makes them: `<<_::3, x::binary-size(n), _::5>>`).
//!
//! erl_nif cannot point at such a binary's bytes: `enif_inspect_binary` gives a byte-aligned copy that is freed
//! when the NIF call returns. A call that yields and goes on in a continuation would inspect its input again and
//! get a new copy (the whole input again at every slice), while anything kept from the last slice (a key's
//! bytes, the key tables) would point into freed memory. So every entry that can span calls works on an aligned
//! binary: its input when that is one, else a copy made once ([`copy`]), and a continuation checks that the bytes
//! it reads are where the last slice read them ([`Anchor`]).

use rustler::sys::{
    enif_inspect_binary, enif_make_new_binary, enif_make_sub_binary, ErlNifBinary, ErlNifEnv,
    ErlNifTerm,
};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of the prefix [`at_bit_offset`] inspects: past the 64 bytes up to which the VM may make a part of a
/// binary a copy of its own (OTP 27's on-heap limit), so the prefix keeps the input's offset.
pub const PROBE_BYTES: usize = 128;

/// Aligned copies made since loading (for the tests that count them).
static COPIES: AtomicU64 = AtomicU64::new(0);

/// The data address erl_nif gives for `term`, or null when it is not a binary.
fn data_address(env: *mut ErlNifEnv, term: ErlNifTerm) -> *const u8 {
    let mut bin = MaybeUninit::<ErlNifBinary>::uninit();
    // SAFETY: `term` is a term of `env`; the struct is read only when the call filled it.
    if unsafe { enif_inspect_binary(env, term, bin.as_mut_ptr()) } == 0 {
        return std::ptr::null();
    }
    unsafe { bin.assume_init() }.data
}

/// Whether `term`, a binary of `size` bytes, starts at a bit offset. Two inspections of an aligned binary give
/// the same address (its own bytes); of one at a bit offset, two different copies, both alive until the call
/// returns. Only a prefix of at most [`PROBE_BYTES`] is inspected, so this costs the same at any size.
pub fn at_bit_offset(env: *mut ErlNifEnv, term: ErlNifTerm, size: usize) -> bool {
    if size == 0 {
        return false;
    }
    let probe = if size > PROBE_BYTES {
        // SAFETY: the prefix lies within the binary's `size` bytes.
        unsafe { enif_make_sub_binary(env, term, 0, PROBE_BYTES) }
    } else {
        term
    };
    let first = data_address(env, probe);
    first != data_address(env, probe)
}

/// A new binary term of `env` holding `bytes` (aligned: the VM allocates it), and its bytes.
pub fn copy<'a>(env: *mut ErlNifEnv, bytes: &[u8]) -> (ErlNifTerm, &'a [u8]) {
    let mut term = MaybeUninit::<ErlNifTerm>::uninit();
    // SAFETY: the VM returns a writable buffer of `bytes.len()` bytes, which lives as long as the term: the call,
    // and the calls that get the term as an argument.
    let out = unsafe {
        let data = enif_make_new_binary(env, bytes.len(), term.as_mut_ptr());
        if !bytes.is_empty() {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len());
        }
        std::slice::from_raw_parts(data as *const u8, bytes.len())
    };
    COPIES.fetch_add(1, Ordering::Relaxed);
    (unsafe { term.assume_init() }, out)
}

/// `term` (a binary of `env` whose bytes erl_nif gave as `bytes`) if it is aligned, else an aligned copy: the
/// term and the bytes to read.
pub fn ensure(env: *mut ErlNifEnv, term: ErlNifTerm, bytes: &[u8]) -> (ErlNifTerm, &[u8]) {
    if at_bit_offset(env, term, bytes.len()) {
        copy(env, bytes)
    } else {
        (term, bytes)
    }
}

/// How many aligned copies were made since the library loaded.
pub fn copies() -> u64 {
    COPIES.load(Ordering::Relaxed)
}

/// Where a multi-call job's input bytes were when it started: a continuation that finds them elsewhere was given
/// a copy (an input at a bit offset that was not made aligned first) and must not use what it kept.
#[derive(Clone, Copy)]
pub struct Anchor(usize);

impl Anchor {
    pub fn of(bytes: &[u8]) -> Anchor {
        Anchor(bytes.as_ptr() as usize)
    }

    /// Whether `bytes` are the bytes this anchor was taken from.
    pub fn holds(self, bytes: &[u8]) -> bool {
        self.0 == bytes.as_ptr() as usize
    }
}
