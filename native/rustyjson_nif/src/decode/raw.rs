//! Writing terms straight into the memory the VM hands out, instead of through erl_nif: heap binaries of up to 24
//! bytes (object keys and short strings), flat maps whose keys are already sorted, and small integers.
//!
//! `enif_make_new_binary` syncs the environment's heap pointers on every call, and `enif_make_map_from_arrays`
//! sorts and compares the keys again with term comparisons; written here, a key costs a bump allocation and a
//! few stores, and same-shaped objects decoded with `keys: :intern` share one keys tuple (as maps built from
//! literals do). The memory comes from `enif_make_tuple_from_array`, whose result is a boxed pointer to
//! `arity + 1` words on the process heap or a heap fragment; those words are then overwritten with the other
//! term's header and body, of exactly that size. The layouts (64-bit emulator, unchanged from OTP 21 to 27 at
//! least: heap binary `[header, byte size, bytes...]`, flat map `[header, size, keys tuple, values...]`) are
//! learned and checked once against terms the running VM makes; where anything differs, `on()` is false and
//! the erl_nif calls do the work.

use rustler::sys::{
    enif_get_map_size, enif_get_map_value, enif_inspect_binary, enif_is_identical, enif_make_int64,
    enif_make_map_from_arrays, enif_make_new_binary, enif_make_tuple_from_array, ErlNifBinary,
    ErlNifEnv, ErlNifTerm,
};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

type T = ErlNifTerm;

/// Heap binaries are written for byte sizes up to this (at most three data words).
pub const HEAP_BIN_MAX: usize = 24;
/// Flat maps are written for up to this many keys (the VM's flat map limit).
pub const FLATMAP_MAX: usize = 32;

/// A yes/no learned once per VM: whether terms written by hand match the running VM's layouts.
pub struct CheckedOnce(AtomicU8);

impl CheckedOnce {
    const UNCHECKED: u8 = 0;
    const ON: u8 = 1;
    const OFF: u8 = 2;

    pub const fn new() -> Self {
        CheckedOnce(AtomicU8::new(Self::UNCHECKED))
    }

    /// The stored answer, or `check`'s (false on a 32-bit VM), stored on the first call. Two first calls on
    /// different schedulers may both run `check`; they get the same answer.
    #[inline(always)]
    pub fn get(&self, check: impl FnOnce() -> bool) -> bool {
        match self.0.load(Ordering::Relaxed) {
            Self::ON => true,
            Self::OFF => false,
            _ => self.learn(check),
        }
    }

    #[cold]
    fn learn(&self, check: impl FnOnce() -> bool) -> bool {
        let ok = cfg!(target_pointer_width = "64") && check();
        self.0
            .store(if ok { Self::ON } else { Self::OFF }, Ordering::Relaxed);
        ok
    }
}

static CHECKED: CheckedOnce = CheckedOnce::new();
/// Heap binary headers by data words (0..=3 data words: 0, 1-8, 9-16, 17-24 bytes).
static BIN_HEADERS: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];
static FLATMAP_HEADER: AtomicUsize = AtomicUsize::new(0);

#[inline(always)]
fn bits(t: T) -> usize {
    // SAFETY: ErlNifTerm is a machine word.
    unsafe { std::mem::transmute::<T, usize>(t) }
}

/// The words of a boxed term (low tag bits 0b10).
#[inline(always)]
fn boxed(t: T) -> *mut usize {
    (bits(t) - 2) as *mut usize
}

/// True when the layouts hold (checked on the first call). `fill` is any immediate term (an atom).
#[inline(always)]
pub fn on(env: *mut ErlNifEnv, fill: T) -> bool {
    CHECKED.get(|| unsafe { check(env, fill) })
}

/// A heap binary of `bytes` (at most [`HEAP_BIN_MAX`]). `fills` are immediates. Only after `on()`.
#[inline(always)]
pub unsafe fn heap_binary(env: *mut ErlNifEnv, fills: &[T; 4], bytes: &[u8]) -> T {
    let len = bytes.len();
    debug_assert!(len <= HEAP_BIN_MAX);
    let data_words = len.div_ceil(8);
    // A tuple of 1 + data_words immediates has the heap binary's size; its words are then overwritten.
    let t = enif_make_tuple_from_array(env, fills.as_ptr(), (1 + data_words) as u32);
    let p = boxed(t);
    *p = BIN_HEADERS[data_words].load(Ordering::Relaxed);
    *p.add(1) = len;
    if data_words > 0 {
        // Zero the last word first so the padding is deterministic.
        *p.add(1 + data_words) = 0;
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(2) as *mut u8, len);
    }
    t
}

/// The bytes of a heap binary made by [`heap_binary`].
#[inline(always)]
pub fn heap_binary_bytes(t: T) -> *const u8 {
    // SAFETY: arithmetic only; the words after the header and size are the bytes.
    boxed(t).wrapping_add(2) as *const u8
}

/// A flat map from `keys`, a tuple of 1..=32 keys in term order without duplicates, and its `n` values in that
/// order in `buf[2..n + 2]` (`buf[0..2]` are overwritten). Only after `on()`.
#[inline(always)]
pub unsafe fn flatmap(env: *mut ErlNifEnv, keys: T, buf: &mut [MaybeUninit<T>], n: usize) -> T {
    debug_assert!((1..=FLATMAP_MAX).contains(&n) && buf.len() >= n + 2);
    // The tuple [keys, keys, v1..vn] has the flat map's size: its header and first element become the map's
    // header and size.
    buf[0].write(keys);
    buf[1].write(keys);
    let t = enif_make_tuple_from_array(env, buf.as_ptr() as *const T, (n + 2) as u32);
    let p = boxed(t);
    *p = FLATMAP_HEADER.load(Ordering::Relaxed);
    *p.add(1) = n;
    t
}

/// Integers of this many bits or fewer (sign included) are immediates ("small integers": the value shifted left
/// by four over the tag 0b1111).
const SMALL_BITS: u32 = 60;

/// `value` as an immediate small integer, when it is one. Only after `on()`.
#[inline(always)]
pub fn small(value: i64) -> Option<T> {
    let fits = (value << (64 - SMALL_BITS)) >> (64 - SMALL_BITS) == value;
    // SAFETY: a machine word; only returned when the check at load found this encoding.
    fits.then(|| unsafe { std::mem::transmute::<usize, T>(((value << 4) | 0xF) as usize) })
}

/// A tuple of `keys` (for [`flatmap`]).
#[inline(always)]
pub unsafe fn tuple(env: *mut ErlNifEnv, keys: &[T]) -> T {
    enif_make_tuple_from_array(env, keys.as_ptr(), keys.len() as u32)
}

/// Learns the headers from terms the VM makes, then checks that terms written here are identical to the VM's.
unsafe fn check(env: *mut ErlNifEnv, fill: T) -> bool {
    let fills = [fill; 4];
    if bits(fill) & 0x3 != 0x3 {
        return false; // not an immediate
    }
    // Small integers: every value at and around the limits is the VM's term; just outside them is not a small.
    let limit = 1i64 << (SMALL_BITS - 1);
    for v in [
        0,
        1,
        -1,
        7,
        -8,
        123_456_789,
        limit - 1,
        -limit,
        i64::MAX >> 5,
    ] {
        match small(v) {
            Some(t) if bits(t) == bits(enif_make_int64(env, v)) => {}
            _ => return false,
        }
    }
    for v in [limit, -limit - 1, i64::MAX, i64::MIN] {
        if small(v).is_some() || bits(enif_make_int64(env, v)) & 0xF == 0xF {
            return false;
        }
    }
    // Heap binaries: learn one header per data-word count, then compare every size.
    let text = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let make = |len: usize| {
        let mut t = MaybeUninit::<T>::uninit();
        let p = enif_make_new_binary(env, len, t.as_mut_ptr());
        std::ptr::copy_nonoverlapping(text.as_ptr(), p, len);
        t.assume_init()
    };
    for (words, len) in [(0, 0), (1, 8), (2, 16), (3, 24)] {
        let t = make(len);
        if bits(t) & 0x3 != 0x2 || *boxed(t).add(1) != len {
            return false;
        }
        BIN_HEADERS[words].store(*boxed(t), Ordering::Relaxed);
    }
    let headers: Vec<usize> = BIN_HEADERS
        .iter()
        .map(|h| h.load(Ordering::Relaxed))
        .collect();
    // One header per size, differing only in the arity field (bits 6 and up).
    if headers.windows(2).any(|w| w[1] != w[0] + (1 << 6)) {
        return false;
    }
    for len in 0..=HEAP_BIN_MAX {
        let vm = make(len);
        let ours = heap_binary(env, &fills, &text[..len]);
        let mut bin = MaybeUninit::<ErlNifBinary>::uninit();
        if *boxed(vm) != *boxed(ours)
            || enif_is_identical(vm, ours) == 0
            || enif_inspect_binary(env, ours, bin.as_mut_ptr()) == 0
        {
            return false;
        }
        let bin = bin.assume_init();
        if bin.size != len || (len > 0 && std::slice::from_raw_parts(bin.data, len) != &text[..len])
        {
            return false;
        }
    }
    // Flat maps: the header of 1- and 3-key maps, the layout of a 3-key map, and maps written here of every size
    // identical to the VM's (keys are binaries "k00".."k31", in order).
    let keys: Vec<T> = (0..FLATMAP_MAX)
        .map(|i| heap_binary(env, &fills, format!("k{i:02}").as_bytes()))
        .collect();
    let values: Vec<T> = (0..FLATMAP_MAX as i64)
        .map(|i| enif_make_int64(env, -i))
        .collect();
    let vm_map = |n: usize| {
        let mut m = MaybeUninit::<T>::uninit();
        (enif_make_map_from_arrays(env, keys.as_ptr(), values.as_ptr(), n, m.as_mut_ptr()) != 0)
            .then(|| m.assume_init())
    };
    let (Some(one), Some(three)) = (vm_map(1), vm_map(3)) else {
        return false;
    };
    let header = *boxed(one);
    let p = boxed(three);
    if bits(one) & 0x3 != 0x2
        || bits(three) & 0x3 != 0x2
        || *p != header
        || *p.add(1) != 3
        || (0..3).any(|i| bits(*(p.add(3 + i) as *const T)) != bits(values[i]))
    {
        return false;
    }
    let kt = *(p.add(2) as *const T);
    if bits(kt) & 0x3 != 0x2
        || *boxed(kt) != 3 << 6
        || (0..3).any(|i| bits(*(boxed(kt).add(1 + i) as *const T)) != bits(keys[i]))
    {
        return false;
    }
    FLATMAP_HEADER.store(header, Ordering::Relaxed);
    for n in 1..=FLATMAP_MAX {
        let Some(vm) = vm_map(n) else {
            return false;
        };
        let mut buf = [MaybeUninit::<T>::uninit(); FLATMAP_MAX + 2];
        for (slot, &v) in buf[2..].iter_mut().zip(&values[..n]) {
            slot.write(v);
        }
        let ours = flatmap(env, tuple(env, &keys[..n]), &mut buf, n);
        let mut size = 0;
        if enif_is_identical(vm, ours) == 0
            || enif_get_map_size(env, ours, &mut size) == 0
            || size != n
        {
            return false;
        }
        for i in 0..n {
            let mut v = MaybeUninit::<T>::uninit();
            if enif_get_map_value(env, ours, keys[i], v.as_mut_ptr()) == 0
                || bits(v.assume_init()) != bits(values[i])
            {
                return false;
            }
        }
    }
    true
}
