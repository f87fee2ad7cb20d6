//! The output buffer's storage (a stack array, then an Erlang binary that becomes the result) and how a walk's
//! output is finished: the result binary, the `{:holes, iolist}` pieces, or the bytes detached to be carried.

use std::mem::MaybeUninit;
use std::ptr;

use rustler::sys::{
    enif_alloc_binary, enif_make_binary, enif_make_list_from_array, enif_make_new_binary,
    enif_make_sub_binary, enif_realloc_binary, enif_release_binary, ErlNifBinary, ErlNifTerm,
};
use rustler::{Encoder, Env, Term};
use rustyjson_core::buffer::{Buffer, Storage};
use rustyjson_core::overflow::{overflow, Overflow};

use super::atoms;

/// Output that fits here is written on the stack and copied once into a heap binary.
pub(super) const STACK_BYTES: usize = 2048;

/// The buffer a walk writes its output into.
pub(super) type Out = Buffer<BinStorage>;

/// Output storage: an Erlang binary, allocated at the first growth past the stack array and handed to the VM as
/// the result.
pub(super) struct BinStorage {
    pub(super) bin: ErlNifBinary,
    pub(super) allocated: bool,
}

impl BinStorage {
    pub(super) fn new() -> Self {
        BinStorage {
            // SAFETY: ErlNifBinary is plain data (sizes and pointers); it is filled by enif_alloc_binary.
            bin: unsafe { MaybeUninit::zeroed().assume_init() },
            allocated: false,
        }
    }
}

thread_local! {
    /// The size of the last output on this thread that outgrew the stack array: the next one starts there. Grown
    /// by doubling, an 800 KB output went through seven reallocations, and each new size was fresh memory from
    /// the OS: a page fault every 4 KB, a fifth of a text-heavy encode (`term_to_binary` allocates once).
    static LAST_SIZE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Outputs that pass this size grow at once to the last large one's size (at most [`JUMP_MAX`]); smaller ones
/// never pay for a large allocation after a large encode (28 µs for the first small encode after an 800 KB one).
const JUMP_FROM: usize = 32 * 1024;
const JUMP_MAX: usize = 64 << 20;

unsafe impl Storage for BinStorage {
    fn grow(&mut self, ptr: *mut u8, len: usize, needed: usize, limit: usize) -> (*mut u8, usize) {
        let mut target = needed.max(len.saturating_mul(2)).max(4 * STACK_BYTES);
        if target > JUMP_FROM {
            // With a quarter more: the writers reserve room past what they write (a string its length and a
            // quarter, a float 48 bytes), and the last output's exact size made the end of a call like it grow
            // once more, copying it all into fresh pages (a 20,000-key object's encode 25% slower).
            let last = LAST_SIZE.with(|s| s.get()).min(JUMP_MAX);
            target = target.max(last + last / 4);
        }
        // Never past the ceiling: a last output near it must not make the next one reserve beyond it.
        let target = target.min(limit);
        // The allocator says no (an address space limit) by returning 0: the write ends with an error.
        unsafe {
            if self.allocated {
                if enif_realloc_binary(&mut self.bin, target) == 0 {
                    overflow(Overflow::Memory { needed: target });
                }
            } else {
                if enif_alloc_binary(target, &mut self.bin) == 0 {
                    overflow(Overflow::Memory { needed: target });
                }
                self.allocated = true;
                ptr::copy_nonoverlapping(ptr, self.bin.data, len);
            }
        }
        (self.bin.data, self.bin.size)
    }
}

// SAFETY: the binary is owned by this value alone; erl_nif binaries may be reallocated and released on any thread.
unsafe impl Send for BinStorage {}
unsafe impl Sync for BinStorage {}

impl Drop for BinStorage {
    fn drop(&mut self) {
        if self.allocated {
            unsafe { enif_release_binary(&mut self.bin) };
        }
    }
}

pub(super) fn finish<'a>(env: Env<'a>, out: Buffer<BinStorage>) -> Term<'a> {
    let (mut storage, ptr, len) = out.into_parts();
    unsafe {
        if storage.allocated {
            if len > JUMP_FROM {
                LAST_SIZE.with(|s| s.set(len));
            }
            if storage.bin.size != len {
                enif_realloc_binary(&mut storage.bin, len);
            }
            storage.allocated = false;
            Term::new(env, enif_make_binary(env.as_c_arg(), &mut storage.bin))
        } else {
            let mut result = ErlNifTerm::default();
            let data = enif_make_new_binary(env.as_c_arg(), len, &mut result);
            ptr::copy_nonoverlapping(ptr, data, len);
            Term::new(env, result)
        }
    }
}

/// `{:holes, iolist}`: the output's pieces (sub-binaries of one binary) between the terms Elixir must write.
pub(super) fn finish_holes<'a>(
    env: Env<'a>,
    out: Buffer<BinStorage>,
    holes: &[(usize, ErlNifTerm)],
) -> Term<'a> {
    let len = out.len();
    let bin = finish(env, out).as_c_arg();
    let raw = env.as_c_arg();
    let mut parts = Vec::with_capacity(holes.len() * 2 + 1);
    let mut at = 0;
    for &(pos, term) in holes {
        parts.push(unsafe { enif_make_sub_binary(raw, bin, at, pos - at) });
        parts.push(term);
        at = pos;
    }
    parts.push(unsafe { enif_make_sub_binary(raw, bin, at, len - at) });
    let list = unsafe { enif_make_list_from_array(raw, parts.as_ptr(), parts.len() as u32) };
    (atoms::holes(), unsafe { Term::new(env, list) }).encode(env)
}

/// The written bytes of `out` in an allocated binary (copied off the stack array if they are still there).
pub(super) fn detach(out: Out) -> (BinStorage, usize) {
    let (mut storage, ptr, len) = out.into_parts();
    if !storage.allocated {
        storage.grow(ptr, len, len.max(1), usize::MAX);
    }
    (storage, len)
}
