//! Terms read by their bits instead of through the VM (encode's hottest type checks): small integers, list
//! cells, floats, flat maps and heap binaries (keys and short strings). Their tags, shifts and headers are
//! learned from terms the VM makes, and the reads are checked on them; where anything differs, [`Reads::on`] is
//! false (or, for heap binaries, [`Reads::heap_binaries`]), every read says "no", and the erl_nif calls do the
//! work.

use super::word::{bits, boxed, is_boxed, T};
use rustler::sys::{
    enif_binary_to_term, enif_inspect_binary, enif_make_atom_len, enif_make_double,
    enif_make_int64, enif_make_list_cell, enif_make_list_from_array, enif_make_map_from_arrays,
    enif_make_sub_binary, ErlNifBinary, ErlNifEnv,
};
use std::mem::MaybeUninit;

/// The read layout: immediates (small integers: value above a tag), list cells (a tagged pointer to
/// `[head, tail]`), boxed floats (`[header, IEEE bits]`: the bits take two words on a 32-bit VM) and flat maps
/// (`[header, size, keys tuple, values...]`).
#[derive(Clone, Copy)]
pub struct Reads {
    on: bool,
    small_tag: usize,
    small_shift: u32,
    list_tag: usize,
    boxed_tag: usize,
    float_header: usize,
    /// 0 (no header is 0) when flat maps are read through the iterator.
    flatmap_header: usize,
    /// The low six bits of a heap binary's header (`usize::MAX`: heap binaries go through erl_nif) and the unit
    /// of its size word (bytes, or bits from OTP 27: a shift of 3).
    heap_bin_tag: usize,
    heap_bin_size_shift: u32,
    /// Binaries held off the heap (refc, sub-binaries): their layouts by header, where learned. Behind a
    /// reference: every call copies `Reads` into its walker, and the layouts would triple its size.
    held: &'static super::held::HeldLayouts,
}

impl Reads {
    pub const OFF: Reads = Reads {
        on: false,
        small_tag: 0,
        small_shift: 0,
        list_tag: 0,
        boxed_tag: 0,
        float_header: 0,
        flatmap_header: 0,
        heap_bin_tag: usize::MAX,
        heap_bin_size_shift: 0,
        held: &super::held::HeldLayouts::NONE,
    };

    /// Whether heap binaries are read ([`Reads::heap_binary`]).
    pub fn heap_binaries(&self) -> bool {
        self.on && self.heap_bin_tag != usize::MAX
    }

    /// Whether the reads hold (then a `None` from [`Reads::cons`] means "not a list cell" for sure).
    #[inline(always)]
    pub fn on(&self) -> bool {
        self.on
    }

    /// The value of a small integer.
    #[inline(always)]
    pub fn small(&self, t: T) -> Option<i64> {
        let mask = (1 << self.small_shift) - 1;
        (self.on && bits(t) & mask == self.small_tag)
            .then(|| (bits(t) as isize >> self.small_shift) as i64)
    }

    /// Head and tail of a list cell.
    #[inline(always)]
    pub fn cons(&self, t: T) -> Option<(T, T)> {
        if self.on && bits(t) & 0x3 == self.list_tag {
            let cell = (bits(t) - self.list_tag) as *const T;
            // SAFETY: a list cell points to two words on a heap that does not move during the NIF call.
            Some(unsafe { (*cell, *cell.add(1)) })
        } else {
            None
        }
    }

    #[inline(always)]
    pub fn float(&self, t: T) -> Option<f64> {
        if self.on && is_boxed(t, self.boxed_tag) {
            let p = boxed(t, self.boxed_tag);
            // SAFETY: a boxed term points to a header word followed by its data, on a heap that does not move.
            unsafe {
                if *p == self.float_header {
                    // Unaligned: a 32-bit VM's heap words (and so a float's bits) are 4-byte aligned.
                    let value = (p.add(1) as *const u64).read_unaligned();
                    return Some(f64::from_bits(value));
                }
            }
        }
        None
    }

    /// A flat map's keys and values (in key order, as `Map.to_list/1`) and its size.
    #[inline(always)]
    pub fn flatmap(&self, t: T) -> Option<(*const T, *const T, usize)> {
        if !self.on || self.flatmap_header == 0 || !is_boxed(t, self.boxed_tag) {
            return None;
        }
        let p = boxed(t, self.boxed_tag);
        // SAFETY: a boxed term points to its header; a flat map's next words are its size and keys tuple.
        unsafe {
            if *p != self.flatmap_header {
                return None;
            }
            let keys_tuple = boxed(super::word::term(*p.add(2)), self.boxed_tag);
            Some((
                keys_tuple.add(1) as *const T,
                p.add(3) as *const T,
                *p.add(1),
            ))
        }
    }

    /// The bytes of a heap binary (a binary of up to 64 bytes on the process heap): `[header, size, bytes...]`.
    /// `None` for any other term, binaries held elsewhere included, and for a bitstring whose size is not
    /// whole bytes.
    #[inline(always)]
    pub fn heap_binary(&self, t: T) -> Option<&'static [u8]> {
        if !self.on || !is_boxed(t, self.boxed_tag) {
            return None;
        }
        let p = boxed(t, self.boxed_tag);
        // SAFETY: a boxed term points to its header; a heap binary's next words are its size and bytes, on a
        // heap that does not move during the NIF call.
        unsafe {
            if *p & 0x3F != self.heap_bin_tag {
                return None;
            }
            let size = *p.add(1);
            if size & ((1 << self.heap_bin_size_shift) - 1) != 0 {
                return None;
            }
            let len = size >> self.heap_bin_size_shift;
            Some(std::slice::from_raw_parts(p.add(2) as *const u8, len))
        }
    }

    /// Whether binaries held off the heap are read ([`Reads::held_binary`]).
    pub fn held_binaries(&self) -> bool {
        self.on && self.held.any()
    }

    /// Whether sub-binaries are among them.
    pub fn held_sub_binaries(&self) -> bool {
        self.on && self.held.subs
    }

    /// The primary tag of boxed terms.
    pub fn boxed_tag(&self) -> usize {
        self.boxed_tag
    }

    /// The bytes of a binary held off the heap (a refc binary, or a sub-binary where the VM's layout of them was
    /// learned); `None` for any other term.
    #[inline(always)]
    pub fn held_binary(&self, t: T) -> Option<&'static [u8]> {
        if !self.on || !is_boxed(t, self.boxed_tag) {
            return None;
        }
        // SAFETY: a boxed term of the running call; each layout reads only after matching its whole header.
        unsafe { self.held.bytes(self, t) }
    }

    /// Learns the layout from terms the VM makes and checks every read on them.
    ///
    /// # Safety
    /// `env` must be a live NIF environment.
    pub unsafe fn learn(env: *mut ErlNifEnv, primary: super::word::Primary) -> Reads {
        let zero = bits(enif_make_int64(env, 0));
        let one = bits(enif_make_int64(env, 1));
        let step = one.wrapping_sub(zero);
        let nil = enif_make_list_from_array(env, std::ptr::null(), 0);
        let float_term = enif_make_double(env, -1.5e300);
        let mut r = Reads {
            on: true,
            small_tag: zero,
            small_shift: step.trailing_zeros(),
            list_tag: primary.list,
            boxed_tag: primary.boxed,
            float_header: 0,
            flatmap_header: 0,
            heap_bin_tag: usize::MAX,
            heap_bin_size_shift: 0,
            held: &super::held::HeldLayouts::NONE,
        };
        // The value sits above a tag that fits under it.
        if !step.is_power_of_two() || zero >= step || !is_boxed(float_term, r.boxed_tag) {
            return Reads::OFF;
        }
        r.float_header = *boxed(float_term, r.boxed_tag);
        r.flatmap_header = learn_flatmap(env, &r);
        (r.heap_bin_tag, r.heap_bin_size_shift) =
            learn_heap_binaries(env, &r).unwrap_or((usize::MAX, 0));
        // Learned once per VM (the layout is kept for the library's life): leaked to be 'static.
        r.held = Box::leak(Box::new(super::held::learn(env, &r)));
        let small_term = enif_make_int64(env, -12345);
        let big_term = enif_make_int64(env, i64::MAX);
        let cell = enif_make_list_cell(env, small_term, nil);
        let atom = enif_make_atom_len(env, c"rusty_json".as_ptr(), 10);
        let floats = [
            0.0,
            -0.0,
            1.5,
            -1.5e300,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
        ];
        let holds = r.small(small_term) == Some(-12345)
            && r.small(enif_make_int64(env, -1)) == Some(-1)
            && r.small(big_term).is_none()
            && r.small(nil).is_none()
            && r.small(atom).is_none()
            && r.small(float_term).is_none()
            && r.cons(nil).is_none()
            && r.cons(atom).is_none()
            && r.cons(float_term).is_none()
            && r.cons(cell).map(|(h, t)| (bits(h), bits(t))) == Some((bits(small_term), bits(nil)))
            && !is_boxed(atom, r.boxed_tag)
            && r.float(big_term).is_none()
            && floats
                .iter()
                .all(|&f| r.float(enif_make_double(env, f)).map(f64::to_bits) == Some(f.to_bits()));
        if holds {
            r
        } else {
            Reads::OFF
        }
    }
}

/// The low six bits of heap binaries' headers and their size unit (as a shift), when binaries of 0 to 64 bytes
/// made by the VM all read as themselves and binaries held elsewhere (refc, sub-binaries) and a bitstring of
/// three bits do not read as heap binaries, or read as the same bytes as erl_nif gives.
unsafe fn learn_heap_binaries(env: *mut ErlNifEnv, r: &Reads) -> Option<(usize, u32)> {
    let text: Vec<u8> = (0..200u8).map(|i| b'x'.wrapping_add(i)).collect();
    let make = |len: usize| super::word::new_binary(env, &text[..len]);
    let inspect = |t: T| {
        let mut bin = MaybeUninit::<ErlNifBinary>::uninit();
        (enif_inspect_binary(env, t, bin.as_mut_ptr()) != 0).then(|| {
            let bin = bin.assume_init();
            (bin.data as *const u8, bin.size)
        })
    };
    let eight = make(8);
    if !is_boxed(eight, r.boxed_tag) {
        return None;
    }
    let size_word = *boxed(eight, r.boxed_tag).add(1);
    if !size_word.is_power_of_two() || size_word < 8 {
        return None;
    }
    let candidate = Reads {
        heap_bin_tag: *boxed(eight, r.boxed_tag) & 0x3F,
        heap_bin_size_shift: (size_word / 8).trailing_zeros(),
        ..*r
    };
    let same = |t: T| match (candidate.heap_binary(t), inspect(t)) {
        (Some(ours), Some((data, size))) => {
            ours.len() == size && (size == 0 || ours.as_ptr() == data)
        }
        _ => false,
    };
    // Every heap binary reads as itself.
    if !(0..=64).all(|len| same(make(len))) {
        return None;
    }
    // Other binaries: not read, or read right. A 3-bit bitstring (from its external format) is not a binary.
    let big = make(200);
    let others = [
        big,
        enif_make_sub_binary(env, big, 3, 20),
        enif_make_sub_binary(env, make(40), 1, 30),
        enif_make_int64(env, 7),
        enif_make_atom_len(env, c"rusty_json".as_ptr(), 10),
    ];
    let bits3 = [131u8, 77, 0, 0, 0, 1, 3, 0b1010_0000];
    let mut bitstring = T::default();
    let made = enif_binary_to_term(env, bits3.as_ptr(), bits3.len(), &mut bitstring, 0);
    let bitstring_ok = made == bits3.len() && candidate.heap_binary(bitstring).is_none();
    let others_ok = others
        .iter()
        .all(|&t| candidate.heap_binary(t).is_none() || same(t));
    (bitstring_ok && others_ok).then_some((candidate.heap_bin_tag, candidate.heap_bin_size_shift))
}

/// The flat map header, when flat maps of 1 and 3 keys share one, a 40-key (hash) map has another, and reading
/// the 3-key map gives back its keys and values; 0 otherwise (flat maps then go through the iterator).
unsafe fn learn_flatmap(env: *mut ErlNifEnv, r: &Reads) -> usize {
    let make_map = |n: i64| {
        let keys: Vec<T> = (1..=n).map(|k| enif_make_int64(env, k)).collect();
        let vals: Vec<T> = (1..=n).map(|k| enif_make_int64(env, -k)).collect();
        let mut map = T::default();
        let made =
            enif_make_map_from_arrays(env, keys.as_ptr(), vals.as_ptr(), n as usize, &mut map);
        (made != 0 && is_boxed(map, r.boxed_tag)).then_some((map, keys, vals))
    };
    let (Some((one, ..)), Some((three, keys, vals)), Some((big, ..))) =
        (make_map(1), make_map(3), make_map(40))
    else {
        return 0;
    };
    let word = |t: T, i: usize| *boxed(t, r.boxed_tag).add(i);
    let header = word(one, 0);
    let keys_term = super::word::term(word(three, 2));
    if header == 0
        || word(three, 0) != header
        || word(big, 0) == header
        || word(three, 1) != 3
        || !is_boxed(keys_term, r.boxed_tag)
    {
        return 0;
    }
    let candidate = Reads {
        flatmap_header: header,
        ..*r
    };
    match candidate.flatmap(three) {
        Some((k, v, 3))
            if (0..3)
                .all(|i| bits(*k.add(i)) == bits(keys[i]) && bits(*v.add(i)) == bits(vals[i])) =>
        {
            header
        }
        _ => 0,
    }
}
