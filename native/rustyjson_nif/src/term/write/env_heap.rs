//! Where an `ErlNifEnv` keeps its heap's top and limit, so that blocks of the arena can be taken from the caller's
//! heap by moving its top, as erl_nif's own allocation does (see [`super::Writes`]).

use super::{bits, boxed, Writes, BLOCK_MAX, WORD};
use rustler::sys::{enif_alloc_env, enif_free_env, enif_make_tuple_from_array, ErlNifEnv};

/// The words of an `ErlNifEnv` that hold its heap top and limit (erl_nif's own bump allocation: a term of `n`
/// words goes at the top when `top + n <= limit`), learned from where the VM's own allocations go.
#[derive(Clone, Copy)]
pub struct EnvHeap {
    top: usize,
    limit: usize,
}

impl EnvHeap {
    #[inline(always)]
    pub(super) unsafe fn words(self, env: *mut ErlNifEnv) -> (*mut *mut usize, *mut *mut usize) {
        let w = env as *mut *mut usize;
        (w.add(self.top), w.add(self.limit))
    }
}

/// Which words of an environment are its heap top and limit. Found in an environment of its own
/// (`enif_alloc_env`: its heap is fragments of what is asked and a little more), where a tuple that fills the room
/// between the pair exactly lands at the top and moves it to the limit, and the next tuple goes elsewhere (a new
/// fragment, which the pair then holds). Checked in the caller's: a tuple lands at the top and moves it past
/// itself; a block taken by moving the top is where the VM's next allocation goes after, and a block given back
/// is where it goes again.
pub(super) unsafe fn learn(env: *mut ErlNifEnv, w: &Writes) -> Option<EnvHeap> {
    let own = enif_alloc_env();
    if own.is_null() {
        return None;
    }
    let found = find_env_heap(own, w);
    enif_free_env(own);
    let heap = found?;
    check_env_heap(env, w, heap).then_some(heap)
}

/// A tuple of `n` immediates the VM makes in `env`, as the address of its words.
unsafe fn vm_tuple(env: *mut ErlNifEnv, w: &Writes, n: usize) -> *mut usize {
    boxed(
        enif_make_tuple_from_array(env, w.block_fills.as_ptr(), n as u32),
        w.boxed_tag,
    )
}

unsafe fn find_env_heap(env: *mut ErlNifEnv, w: &Writes) -> Option<EnvHeap> {
    // The candidates: pairs of adjacent words among the first eight (erl_nif's own struct starts with a handful
    // of pointers; the heap's top and limit have been its third and fourth).
    const WORDS: usize = 8;
    // The environment's first fragment.
    let _ = vm_tuple(env, w, 1);
    (0..WORDS - 1)
        .map(|i| EnvHeap {
            top: i,
            limit: i + 1,
        })
        .find(|&heap| {
            let (top, limit) = heap.words(env);
            let (t0, l0) = (*top, *limit);
            let room = (l0 as usize).wrapping_sub(t0 as usize) / WORD;
            if t0.is_null()
                || !(t0 as usize).is_multiple_of(WORD)
                || !(4..=BLOCK_MAX).contains(&room)
            {
                return false;
            }
            if vm_tuple(env, w, room - 1) != t0 || *top != l0 {
                return false;
            }
            let next = vm_tuple(env, w, 1);
            next != l0 && *top == next.add(2) && *limit >= *top
        })
}

unsafe fn check_env_heap(env: *mut ErlNifEnv, w: &Writes, heap: EnvHeap) -> bool {
    let Some((base, step)) = w.tuple_header else {
        return false;
    };
    let (top, limit) = heap.words(env);
    // Whether the room between the words now is at least `words`.
    let fits = |top: *mut *mut usize, words: usize| {
        (*limit as usize).wrapping_sub(*top as usize) >= words * WORD
    };
    for _ in 0..4 {
        let (before, room) = (*top, fits(top, 2));
        let p = vm_tuple(env, w, 1);
        if *top != p.add(2) || *limit < *top || (room && p != before) {
            return false;
        }
        // Room for four words (else the next round's tuple makes a fragment that has it).
        if !fits(top, 4) {
            continue;
        }
        let taken = *top;
        *top = taken.add(2);
        // The words taken are a term (a 1-tuple) whatever the checks find.
        *taken = base + step;
        *taken.add(1) = bits(w.block_fills[0]);
        if vm_tuple(env, w, 1) != taken.add(2) {
            return false;
        }
        let back = *top;
        *top = back.sub(2);
        if vm_tuple(env, w, 1) != back.sub(2) || *top != back {
            return false;
        }
    }
    true
}
