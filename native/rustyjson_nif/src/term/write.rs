//! Writing terms straight into the memory the VM hands out, instead of through erl_nif: heap binaries of up to 64
//! bytes (object keys and short strings), flat maps whose keys are already sorted, small integers and floats.
//!
//! `enif_make_new_binary` syncs the environment's heap pointers on every call, and `enif_make_map_from_arrays`
//! sorts and compares the keys again with term comparisons; written here, a key costs a bump allocation and a
//! few stores, and same-shaped objects decoded with `keys: :intern` share one keys tuple (as maps built from
//! literals do). The memory comes in blocks ([`Arena`]): straight from the environment's heap by moving its top
//! where it has room (the `ErlNifEnv` words erl_nif bumps itself, learned: see [`EnvHeap`]; the unused rest of
//! the last block goes back), else from `enif_make_tuple_from_array`, whose result is a boxed pointer to
//! `arity + 1` words on the process heap or a heap fragment, filled with immediates that terms are then written
//! over. Terms are written one after another into a block, as the VM's own builders fill what they allocate, and
//! the rest of a block is left as a tuple of immediates. Each layout (tuple header; heap binary
//! `[header, size, bytes...]`, whose size word counts bytes before OTP 27 and bits from it; flat map
//! `[header, size, keys tuple, values...]`; small integer: value above a tag; float `[header, IEEE bits]`) is
//! learned from terms the running VM makes, and terms written here are checked to be identical to the VM's, each
//! kind on its own; where one differs, that kind is left to erl_nif.

use super::word::{bits, boxed, is_boxed, T, WORD};
use rustler::sys::{
    enif_get_double, enif_get_map_size, enif_get_map_value, enif_inspect_binary, enif_is_identical,
    enif_make_double, enif_make_int64, enif_make_map_from_arrays, enif_make_sub_binary,
    enif_make_tuple_from_array, ErlNifBinary, ErlNifEnv,
};
use std::cell::Cell;
use std::mem::MaybeUninit;

mod env_heap;
pub use env_heap::EnvHeap;

/// Heap binaries are written for byte sizes up to this (at most 64 / [`WORD`] data words: the VM's own limit for
/// a binary on the process heap, 32-bit or 64-bit, so larger ones are never asked of this layout).
pub const HEAP_BIN_MAX: usize = 64;
/// Strings of the input up to this many bytes are always written as heap binaries (see
/// [`Writes::input_copies_max`] for longer ones).
pub const SHORT_INPUT_MAX: usize = 24;
/// Flat maps are written for up to this many keys (the VM's flat map limit).
pub const FLATMAP_MAX: usize = 32;

/// The most words of one block of an [`Arena`] (every term written here is far smaller: a flat map of 32 keys
/// and its keys tuple take 68).
const BLOCK_MAX: usize = 4096;

/// The write layouts learned, one per kind of term (`None`: that kind is made by erl_nif).
pub struct Writes {
    pub heap_binaries: Option<HeapBinaries>,
    /// The flat map header.
    pub flat_maps: Option<usize>,
    pub small_integers: Option<SmallIntegers>,
    /// The float header.
    pub floats: Option<usize>,
    boxed_tag: usize,
    /// The header of a tuple of arity 0 and the step per element, that blocks are written in (heap binaries and
    /// flat maps are off without them), and the immediates a fresh block is first filled with.
    tuple_header: Option<(usize, usize)>,
    block_fills: Vec<T>,
    /// Where the calling environment keeps its heap top and limit, when blocks are taken from it directly.
    pub env_heap: Option<EnvHeap>,
}

/// Memory for the terms of one call, taken from the VM a block at a time and handed out word by word: a bump
/// allocation per term instead of an erl_nif call. [`Writes::seal`] must run before the call returns (the
/// builder's `Drop`): it leaves the unused rest of the block a valid term.
pub struct Arena {
    next: Cell<*mut usize>,
    end: Cell<*mut usize>,
    /// The words of the next block.
    block: Cell<usize>,
    /// Whether the current block's words were taken without being filled (see [`Writes::seal`]).
    bare: Cell<bool>,
}

impl Arena {
    /// An arena for the terms of a document of `input_bytes` (its first block sized after it: a short document
    /// takes a short block).
    pub fn new(input_bytes: usize) -> Arena {
        Arena {
            next: Cell::new(std::ptr::null_mut()),
            end: Cell::new(std::ptr::null_mut()),
            // Half a word per byte, and for a tiny document a word per byte and a few more (a short object takes
            // about that). Words the call does not use are garbage on the caller's heap, and each brings the next
            // collection closer: a 32-word first block was a fifth of decoding `"username"`, and 68 words (a word
            // per byte) made a 67-byte object 30 ns dearer (OTP 29).
            block: Cell::new(
                (input_bytes / 2)
                    .max(input_bytes.min(16) + 4)
                    .min(BLOCK_MAX),
            ),
            bare: Cell::new(false),
        }
    }
}

/// Heap binary headers by data words (0..=8 on a 64-bit VM: 0, 1-8, ..., 57-64 bytes; 0..=16 on a 32-bit one),
/// and the size word's unit.
pub struct HeapBinaries {
    headers: [usize; HEAP_BIN_MAX / WORD + 1],
    /// The longest part of a binary that `enif_make_sub_binary` copies into a heap binary instead of referring to
    /// it (64 from OTP 27 on; 0 before, which makes sub-binaries of every size).
    sub_copies_max: usize,
    /// The size word is the byte size shifted left by this (3 where it counts bits).
    size_shift: u32,
}

/// A small integer is `value << shift | tag`, for values of `usize::BITS - shift` bits (60 on a 64-bit VM, 28 on a
/// 32-bit one).
#[derive(Clone, Copy)]
pub struct SmallIntegers {
    tag: usize,
    shift: u32,
}

impl Writes {
    pub const OFF: Writes = Writes {
        heap_binaries: None,
        flat_maps: None,
        small_integers: None,
        floats: None,
        boxed_tag: 0,
        tuple_header: None,
        block_fills: Vec::new(),
        env_heap: None,
    };

    /// `words` words of `arena` (from a new block when the current one is used up). Only with a tuple header.
    #[inline(always)]
    unsafe fn alloc(&self, env: *mut ErlNifEnv, arena: &Arena, words: usize) -> *mut usize {
        let next = arena.next.get();
        if (arena.end.get() as usize).wrapping_sub(next as usize) >= words * WORD {
            arena.next.set(next.add(words));
            return next;
        }
        self.new_block(env, arena, words)
    }

    #[cold]
    #[inline(never)]
    unsafe fn new_block(&self, env: *mut ErlNifEnv, arena: &Arena, words: usize) -> *mut usize {
        self.seal(env, arena);
        assert!(
            words <= BLOCK_MAX,
            "a term of {words} words in a block of {BLOCK_MAX}"
        );
        let size = words.max(arena.block.get());
        arena.block.set((size * 2).min(BLOCK_MAX));
        if let Some(heap) = self.env_heap {
            // Straight from the environment's heap when it has room (what erl_nif does first itself): no tuple
            // filled only to be written over.
            let (top, limit) = heap.words(env);
            let p = *top;
            if (*limit as usize).wrapping_sub(p as usize) >= size * WORD {
                *top = p.add(size);
                arena.bare.set(true);
                arena.next.set(p.add(words));
                arena.end.set(p.add(size));
                return p;
            }
        }
        // A tuple of `size - 1` immediates is `size` words; terms are then written over them from the start.
        arena.bare.set(false);
        let t = enif_make_tuple_from_array(env, self.block_fills.as_ptr(), (size - 1) as u32);
        let p = boxed(t, self.boxed_tag);
        arena.next.set(p.add(words));
        arena.end.set(p.add(size));
        p
    }

    /// Gives the unused rest of `arena`'s block back to the environment's heap when nothing was allocated after
    /// it, else leaves it a tuple of immediates, a valid term like the ones written before it. Runs before the
    /// call that owns the arena returns.
    pub unsafe fn seal(&self, env: *mut ErlNifEnv, arena: &Arena) {
        let (next, end) = (arena.next.get(), arena.end.get());
        if let Some(heap) = self.env_heap {
            // The block is the environment's last allocation: its rest goes back to the heap.
            let (top, _) = heap.words(env);
            if *top == end {
                *top = next;
                arena.next.set(end);
                return;
            }
        }
        if next < end {
            let fills = end.offset_from(next) as usize - 1;
            if arena.bare.get() {
                // Taken from the environment's heap without the tuple's elements: written now.
                std::ptr::copy_nonoverlapping(
                    self.block_fills.as_ptr() as *const usize,
                    next.add(1),
                    fills,
                );
            }
            let (base, step) = self.tuple_header.unwrap_unchecked();
            *next = base + step * fills;
        }
        arena.next.set(end);
    }

    /// The boxed term of words at `p`.
    #[inline(always)]
    fn boxed_term(&self, p: *mut usize) -> T {
        super::word::term(p as usize + self.boxed_tag)
    }

    /// A tuple of `n` elements in `arena`, and where its elements go (the caller writes all `n`).
    #[inline(always)]
    pub unsafe fn tuple_slots(&self, env: *mut ErlNifEnv, arena: &Arena, n: usize) -> (T, *mut T) {
        let p = self.alloc(env, arena, 1 + n);
        let (base, step) = self.tuple_header.unwrap_unchecked();
        *p = base + step * n;
        (self.boxed_term(p), p.add(1) as *mut T)
    }

    /// `words` words of `arena` that the caller makes a term of, every word written before the call returns;
    /// `None` without a tuple header or past a block's size.
    #[inline]
    pub unsafe fn words(
        &self,
        env: *mut ErlNifEnv,
        arena: &Arena,
        words: usize,
    ) -> Option<*mut usize> {
        (self.tuple_header.is_some() && words <= BLOCK_MAX).then(|| self.alloc(env, arena, words))
    }

    /// A heap binary of `bytes` (at most [`HEAP_BIN_MAX`]) in `arena`. Only with `heap_binaries`.
    #[inline(always)]
    pub unsafe fn heap_binary(&self, env: *mut ErlNifEnv, arena: &Arena, bytes: &[u8]) -> T {
        let layout = self.heap_binaries.as_ref().unwrap_unchecked();
        let len = bytes.len();
        debug_assert!(len <= HEAP_BIN_MAX);
        let data_words = len.div_ceil(WORD);
        let p = self.alloc(env, arena, 2 + data_words);
        let t = self.boxed_term(p);
        *p = layout.headers[data_words];
        *p.add(1) = len << layout.size_shift;
        if data_words > 0 {
            // Zero the last word first so the padding is deterministic.
            *p.add(1 + data_words) = 0;
            let dst = p.add(2) as *mut u8;
            // Not a `memcpy` call: two overlapping loads and stores for these few bytes (twice over 32).
            if len <= 32 {
                rustyjson_core::buffer::copy_short(bytes.as_ptr(), dst, len);
            } else {
                rustyjson_core::buffer::copy_short(bytes.as_ptr(), dst, 32);
                rustyjson_core::buffer::copy_short(bytes.as_ptr().add(32), dst.add(32), len - 32);
            }
        }
        t
    }

    /// The bytes of a heap binary made by [`Writes::heap_binary`].
    #[inline(always)]
    pub fn heap_binary_bytes(&self, t: T) -> *const u8 {
        // Arithmetic only: the words after the header and size are the bytes.
        (bits(t) - self.boxed_tag).wrapping_add(2 * WORD) as *const u8
    }

    /// A flat map in `arena` of `keys`, a tuple of 1..=32 keys in term order without duplicates, and where its
    /// `n` values go, in that order (the caller writes all `n`). Only with `flat_maps`.
    #[inline(always)]
    pub unsafe fn flatmap_slots(
        &self,
        env: *mut ErlNifEnv,
        arena: &Arena,
        keys: T,
        n: usize,
    ) -> (T, *mut T) {
        debug_assert!((1..=FLATMAP_MAX).contains(&n));
        let p = self.alloc(env, arena, 3 + n);
        *p = self.flat_maps.unwrap_unchecked();
        *p.add(1) = n;
        *p.add(2) = bits(keys);
        (self.boxed_term(p), p.add(3) as *mut T)
    }

    /// A float in `arena`: its header and 8 bytes of IEEE bits (one word, or two on a 32-bit VM). Only with
    /// `floats`.
    #[inline(always)]
    pub unsafe fn float(&self, env: *mut ErlNifEnv, arena: &Arena, value: f64) -> T {
        let p = self.alloc(env, arena, 1 + 8 / WORD);
        *p = self.floats.unwrap_unchecked();
        // Unaligned: a 32-bit VM's heap words are 4-byte aligned.
        (p.add(1) as *mut u64).write_unaligned(value.to_bits());
        self.boxed_term(p)
    }

    /// Strings of the input up to this many bytes are written as heap binaries: [`SHORT_INPUT_MAX`], or the
    /// VM's own limit where `enif_make_sub_binary` would copy them into heap binaries itself (OTP 27 on). Where
    /// it makes sub-binaries (OTP 25), copying 25-64 bytes instead made github_events 6% dearer.
    pub fn input_copies_max(&self) -> usize {
        let copies = self.heap_binaries.as_ref().map_or(0, |h| h.sub_copies_max);
        SHORT_INPUT_MAX.max(copies)
    }

    /// `value` as an immediate small integer, when it is one (and small integers are written).
    #[inline(always)]
    pub fn small(&self, value: i64) -> Option<T> {
        let SmallIntegers { tag, shift } = self.small_integers?;
        // The value's bits, sign included, are the word's above the tag.
        let unused = 64 - usize::BITS + shift;
        let fits = (value << unused) >> unused == value;
        fits.then(|| super::word::term(((value << shift) as usize) | tag))
    }

    /// Learns each layout from terms the VM makes and checks terms written with it against the VM's.
    ///
    /// # Safety
    /// `env` must be a live NIF environment.
    pub unsafe fn learn(env: *mut ErlNifEnv, primary: super::word::Primary) -> Writes {
        let mut w = Writes {
            boxed_tag: primary.boxed,
            ..Writes::OFF
        };
        w.small_integers = learn_small(env);
        w.tuple_header = learn_tuple_header(env, &w);
        if w.tuple_header.is_none() {
            return w;
        }
        // An immediate ([`super::word::Primary`] checked it is not boxed) to fill fresh blocks with.
        w.block_fills = vec![enif_make_int64(env, 0); BLOCK_MAX];
        w.env_heap = env_heap::learn(env, &w);
        w.heap_binaries = learn_heap_binaries(env, &w);
        w.flat_maps = learn_flat_maps(env, &w);
        w.floats = learn_floats(env, &w);
        w
    }
}

unsafe fn learn_small(env: *mut ErlNifEnv) -> Option<SmallIntegers> {
    let zero = bits(enif_make_int64(env, 0));
    let step = bits(enif_make_int64(env, 1)).wrapping_sub(zero);
    if !step.is_power_of_two() || zero >= step {
        return None;
    }
    let small = SmallIntegers {
        tag: zero,
        shift: step.trailing_zeros(),
    };
    let w = Writes {
        small_integers: Some(small),
        ..Writes::OFF
    };
    // Every value at and around the limits is the VM's term; just outside them is not a small integer.
    let limit = 1i64 << (usize::BITS - 1 - small.shift);
    for v in [0, 1, -1, 7, -8, 123_456_789, limit - 1, -limit, -limit + 1] {
        match w.small(v) {
            Some(t) if bits(t) == bits(enif_make_int64(env, v)) => {}
            _ => return None,
        }
    }
    for v in [limit, -limit - 1, i64::MAX, i64::MIN] {
        if w.small(v).is_some() || bits(enif_make_int64(env, v)) & (step - 1) == small.tag {
            return None;
        }
    }
    Some(small)
}

/// The tuple header of arity 0 and the step per element, when tuples of every arity up to a block's (and one
/// larger) have the header that makes, and a tuple written with it is identical to the VM's.
unsafe fn learn_tuple_header(env: *mut ErlNifEnv, w: &Writes) -> Option<(usize, usize)> {
    let elems: Vec<T> = (0..BLOCK_MAX as i64 + 8)
        .map(|i| enif_make_int64(env, i))
        .collect();
    let header = |n: usize| {
        let t = enif_make_tuple_from_array(env, elems.as_ptr(), n as u32);
        is_boxed(t, w.boxed_tag).then(|| *boxed(t, w.boxed_tag))
    };
    let (one, two) = (header(1)?, header(2)?);
    let step = two.checked_sub(one)?;
    let base = one.checked_sub(step)?;
    if !step.is_power_of_two() || step < 4 {
        return None;
    }
    for n in (0..=64).chain([BLOCK_MAX - 1, BLOCK_MAX, BLOCK_MAX + 7]) {
        if header(n)? != base + step * n {
            return None;
        }
    }
    // A tuple written in an arena (sealed: the rest of its block is a tuple too) equals the VM's.
    let w = Writes {
        tuple_header: Some((base, step)),
        block_fills: vec![enif_make_int64(env, 0); 64],
        boxed_tag: w.boxed_tag,
        ..Writes::OFF
    };
    let arena = Arena::new(0);
    for n in 0..=8 {
        let (ours, slots) = w.tuple_slots(env, &arena, n);
        std::ptr::copy_nonoverlapping(elems.as_ptr(), slots, n);
        let vm = enif_make_tuple_from_array(env, elems.as_ptr(), n as u32);
        if enif_is_identical(vm, ours) == 0 {
            w.seal(env, &arena);
            return None;
        }
    }
    w.seal(env, &arena);
    w.tuple_header
}

unsafe fn learn_heap_binaries(env: *mut ErlNifEnv, w: &Writes) -> Option<HeapBinaries> {
    let text = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.,";
    let make = |len: usize| super::word::new_binary(env, &text[..len]);
    // One header per data-word count; the size word of 8 bytes gives the unit (8: bytes, 64: bits).
    let mut headers = [0; HEAP_BIN_MAX / WORD + 1];
    for (words, header) in headers.iter_mut().enumerate() {
        let t = make(words * WORD);
        if !is_boxed(t, w.boxed_tag) {
            return None;
        }
        *header = *boxed(t, w.boxed_tag);
    }
    let eight = *boxed(make(8), w.boxed_tag).add(1);
    if !eight.is_power_of_two() || eight < 8 {
        return None;
    }
    let size_shift = (eight / 8).trailing_zeros();
    // The headers differ only in their arity (a count of words, above the six tag bits).
    if headers.windows(2).any(|h| h[1] != h[0] + (1 << 6)) {
        return None;
    }
    let w = Writes {
        heap_binaries: Some(HeapBinaries {
            headers,
            size_shift,
            sub_copies_max: 0,
        }),
        boxed_tag: w.boxed_tag,
        tuple_header: w.tuple_header,
        block_fills: w.block_fills.clone(),
        ..Writes::OFF
    };
    let arena = Arena::new(0);
    let checked = (0..=HEAP_BIN_MAX).all(|len| {
        let vm = make(len);
        let ours = w.heap_binary(env, &arena, &text[..len]);
        let mut bin = MaybeUninit::<ErlNifBinary>::uninit();
        if *boxed(vm, w.boxed_tag) != *boxed(ours, w.boxed_tag)
            || *boxed(vm, w.boxed_tag).add(1) != len << size_shift
            || enif_is_identical(vm, ours) == 0
            || enif_inspect_binary(env, ours, bin.as_mut_ptr()) == 0
        {
            return false;
        }
        let bin = bin.assume_init();
        bin.size == len
            && (len == 0 || std::slice::from_raw_parts(bin.data, len) == &text[..len])
            && (len == 0 || std::ptr::eq(bin.data, w.heap_binary_bytes(ours)))
    });
    w.seal(env, &arena);
    let sub_copies_max = learn_sub_copies(env, &w, w.heap_binaries.as_ref()?);
    let layout = HeapBinaries {
        sub_copies_max,
        ..w.heap_binaries?
    };
    checked.then_some(layout)
}

/// [`HeapBinaries::sub_copies_max`]: `HEAP_BIN_MAX` when every part of 1 to 64 bytes of a long binary that
/// `enif_make_sub_binary` makes is a heap binary with its bytes (the layout just learned), else 0.
unsafe fn learn_sub_copies(env: *mut ErlNifEnv, w: &Writes, layout: &HeapBinaries) -> usize {
    let long: Vec<u8> = (0..=255).collect();
    let whole = super::word::new_binary(env, &long);
    let copies = (1..=HEAP_BIN_MAX).all(|len| {
        let start = len * 3 % 100;
        let t = enif_make_sub_binary(env, whole, start, len);
        let p = boxed(t, w.boxed_tag);
        is_boxed(t, w.boxed_tag)
            && *p == layout.headers[len.div_ceil(WORD)]
            && *p.add(1) == len << layout.size_shift
            && std::slice::from_raw_parts(p.add(2) as *const u8, len) == &long[start..start + len]
    });
    if copies {
        HEAP_BIN_MAX
    } else {
        0
    }
}

/// The header of a 1-key flat map, when the layout of a 3-key one is `[header, 3, keys tuple, values...]` and
/// maps written with it of every size from 1 to 32 keys are identical to the VM's (keys "k00".."k31", in order).
unsafe fn learn_flat_maps(env: *mut ErlNifEnv, w: &Writes) -> Option<usize> {
    let keys: Vec<T> = (0..FLATMAP_MAX)
        .map(|i| super::word::new_binary(env, format!("k{i:02}").as_bytes()))
        .collect();
    let values: Vec<T> = (0..FLATMAP_MAX as i64)
        .map(|i| enif_make_int64(env, -i))
        .collect();
    let vm_map = |n: usize| {
        let mut m = MaybeUninit::<T>::uninit();
        (enif_make_map_from_arrays(env, keys.as_ptr(), values.as_ptr(), n, m.as_mut_ptr()) != 0)
            .then(|| m.assume_init())
    };
    let (one, three) = (vm_map(1)?, vm_map(3)?);
    if !is_boxed(one, w.boxed_tag) || !is_boxed(three, w.boxed_tag) {
        return None;
    }
    let header = *boxed(one, w.boxed_tag);
    let p = boxed(three, w.boxed_tag);
    let kt = super::word::term(*p.add(2));
    if *p != header
        || *p.add(1) != 3
        || (0..3).any(|i| bits(*(p.add(3 + i) as *const T)) != bits(values[i]))
        || !is_boxed(kt, w.boxed_tag)
        || (0..3).any(|i| bits(*(boxed(kt, w.boxed_tag).add(1 + i) as *const T)) != bits(keys[i]))
    {
        return None;
    }
    let w = Writes {
        flat_maps: Some(header),
        boxed_tag: w.boxed_tag,
        tuple_header: w.tuple_header,
        block_fills: w.block_fills.clone(),
        ..Writes::OFF
    };
    // Maps of every size, their keys tuples written too, in one arena.
    let arena = Arena::new(0);
    let checked = (1..=FLATMAP_MAX).all(|n| {
        let Some(vm) = vm_map(n) else {
            return false;
        };
        let (tuple, key_slots) = w.tuple_slots(env, &arena, n);
        std::ptr::copy_nonoverlapping(keys.as_ptr(), key_slots, n);
        let (ours, value_slots) = w.flatmap_slots(env, &arena, tuple, n);
        std::ptr::copy_nonoverlapping(values.as_ptr(), value_slots, n);
        let mut size = 0;
        enif_is_identical(vm, ours) != 0
            && enif_get_map_size(env, ours, &mut size) != 0
            && size == n
            && (0..n).all(|i| {
                let mut v = MaybeUninit::<T>::uninit();
                enif_get_map_value(env, ours, keys[i], v.as_mut_ptr()) != 0
                    && bits(v.assume_init()) == bits(values[i])
            })
    });
    w.seal(env, &arena);
    checked.then_some(header)
}

/// The float header, when floats written with it are identical to the VM's and read back as the same value.
unsafe fn learn_floats(env: *mut ErlNifEnv, w: &Writes) -> Option<usize> {
    let probe = enif_make_double(env, 1.5);
    if !is_boxed(probe, w.boxed_tag) {
        return None;
    }
    let w = Writes {
        floats: Some(*boxed(probe, w.boxed_tag)),
        boxed_tag: w.boxed_tag,
        tuple_header: w.tuple_header,
        block_fills: w.block_fills.clone(),
        ..Writes::OFF
    };
    let arena = Arena::new(0);
    let values = [
        0.0,
        -0.0,
        1.5,
        -2.25e-300,
        1e308,
        f64::MIN_POSITIVE,
        5e-324,
        123456.789,
    ];
    let checked = values.iter().all(|&v| {
        let ours = w.float(env, &arena, v);
        let mut back = 0.0f64;
        enif_is_identical(ours, enif_make_double(env, v)) != 0
            && enif_get_double(env, ours, &mut back) != 0
            && back.to_bits() == v.to_bits()
    });
    w.seal(env, &arena);
    checked.then_some(w.floats?)
}
