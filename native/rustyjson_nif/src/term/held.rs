//! Binaries held off the process heap (refc binaries and sub-binaries of them) read by their bits, for encode:
//! asking `enif_inspect_binary` for each was an eighth of an order-records encode, and from OTP 27 every string
//! built at run time (`"#{a}-#{b}"`) is such a binary, however short.
//!
//! The VM's own records differ by release (a ProcBin holding a byte pointer and a byte size before OTP 27; from
//! OTP 27 a sub-bitstring holding a base pointer with two flag bits, and start and end offsets in bits), so no
//! layout is assumed: for each header the VM gives such binaries, the word positions are searched among a few
//! candidates, and a layout is kept only if it reads every probe (binaries of several sizes, sub-binaries at
//! several offsets) exactly as `enif_inspect_binary` does and no other kind of term carries that header. A
//! sub-binary that names its original's term rather than its bytes (before OTP 27) is read through that
//! original, when a layout of its size, offset, flags and original words reads every probe (sub-binaries of refc
//! and heap binaries) as erl_nif does; one with any flag set (being appended to, or not whole bytes) is left to
//! erl_nif, as is every header with no layout.

use super::read::Reads;
use super::word::{bits, boxed, is_boxed, T};
use rustler::sys::{
    enif_binary_to_term, enif_inspect_binary, enif_make_double, enif_make_int64,
    enif_make_map_from_arrays, enif_make_sub_binary, enif_make_uint64, ErlNifBinary, ErlNifEnv,
};
use std::mem::MaybeUninit;

/// Where a held binary's bytes and length are, in the words after its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldLayout {
    /// The whole header word (size and subtag) of the binaries read this way.
    header: usize,
    /// The word holding the data pointer (when `start` is some, a base whose two low bits are flags: read only
    /// when they are clear).
    ptr: usize,
    /// `Some(start)`: the bytes begin `word[start] / 8` past the pointer and end at `word[len] / 8` (offsets in
    /// bits); `None`: `word[len] >> shift` bytes begin at the pointer.
    start: Option<usize>,
    len: usize,
    shift: u32,
}

/// A binary the VM made, with its bytes' address and length as `enif_inspect_binary` gives them.
type Probe = (T, usize, usize);

/// The most words after the header a candidate layout looks at.
const SPAN: usize = 6;

impl HeldLayout {
    /// The bytes of the boxed term whose header `p` points to, if it has this header (`None` otherwise, and for
    /// bitstrings that are not whole bytes).
    ///
    /// # Safety
    /// `p` must point to a live boxed term's header, live for the returned lifetime (the NIF call).
    #[inline(always)]
    pub unsafe fn bytes(&self, p: *const usize) -> Option<&'static [u8]> {
        if *p != self.header {
            return None;
        }
        let word = |i: usize| *p.add(i);
        let (data, len) = match self.start {
            Some(start) => {
                let (base, from, to) = (word(self.ptr), word(start), word(self.len));
                // Flag bits set (a binary being appended to, or one that was: its data may have moved since
                // this record was written; a match context): erl_nif finds the bytes.
                if base & 3 != 0 || (from | to) & 7 != 0 || to < from {
                    return None;
                }
                (base + (from >> 3), (to - from) >> 3)
            }
            None => (word(self.ptr), word(self.len) >> self.shift),
        };
        Some(if len == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(data as *const u8, len)
        })
    }

    /// Every layout of [`SPAN`] words that reads all `probes` (term, bytes' address, length) right.
    fn candidates(
        header: usize,
        words: usize,
        probes: &[(T, usize, usize)],
        boxed_tag: usize,
    ) -> Vec<Self> {
        let mut found = Vec::new();
        for ptr in 1..=words {
            for len in 1..=words {
                let starts = std::iter::once(None).chain((1..=words).map(Some));
                for start in starts {
                    for shift in [0, 3] {
                        let layout = HeldLayout {
                            header,
                            ptr,
                            start,
                            len,
                            shift,
                        };
                        let distinct = ptr != len && start.is_none_or(|s| s != ptr && s != len);
                        let reads_all = probes.iter().all(|&(t, data, size)| {
                            // SAFETY: every probe is a boxed binary whose header says it has `words` words after
                            // it; no candidate reads past them.
                            let got = unsafe { layout.bytes(boxed(t, boxed_tag)) };
                            got.is_some_and(|b| {
                                b.len() == size && (size == 0 || b.as_ptr() as usize == data)
                            })
                        });
                        if distinct && (start.is_none() || shift == 3) && reads_all {
                            found.push(layout);
                        }
                    }
                }
            }
        }
        found
    }
}

/// A sub-binary that names its original's term: the words holding its size and offset in bytes, its flags (bit
/// size, bit offset, writable) and the original. The flags share their word with padding the VM leaves as it
/// was, so only `flags_mask` is looked at: every byte that was 0 in all probes (which covers every flag: none is
/// set in a whole-byte sub-binary erl_nif makes); a sub-binary is read only when those bytes are 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubOfLayout {
    header: usize,
    size: usize,
    offset: usize,
    flags: usize,
    flags_mask: usize,
    original: usize,
}

impl SubOfLayout {
    /// The original's term, the offset and the size, if `p` has this header and no flags.
    ///
    /// # Safety
    /// `p` must point to a live boxed term's header.
    #[inline(always)]
    pub unsafe fn parts(&self, p: *const usize) -> Option<(T, usize, usize)> {
        if *p != self.header || *p.add(self.flags) & self.flags_mask != 0 {
            return None;
        }
        Some((
            super::word::term(*p.add(self.original)),
            *p.add(self.offset),
            *p.add(self.size),
        ))
    }

    /// Every layout within `words` words that reads all `probes` (sub-binary, original, offset, size) right.
    unsafe fn candidates(
        header: usize,
        words: usize,
        probes: &[SubProbe],
        boxed_tag: usize,
    ) -> Vec<Self> {
        let mut found = Vec::new();
        for size in 1..=words {
            for offset in (1..=words).filter(|&o| o != size) {
                for flags in (1..=words).filter(|&f| f != size && f != offset) {
                    for original in (1..=words).filter(|&w| w != size && w != offset && w != flags)
                    {
                        // The bytes of the flags word that are 0 in every probe.
                        let seen = probes
                            .iter()
                            .fold(0, |acc, &(t, ..)| acc | *boxed(t, boxed_tag).add(flags));
                        let flags_mask = (0..usize::BITS / 8)
                            .map(|b| 0xFFusize << (b * 8))
                            .filter(|byte| seen & byte == 0)
                            .fold(0, |acc, byte| acc | byte);
                        if flags_mask == 0 {
                            continue;
                        }
                        let layout = SubOfLayout {
                            header,
                            size,
                            offset,
                            flags,
                            flags_mask,
                            original,
                        };
                        let reads_all = probes.iter().all(|&(t, orig, at, len)| {
                            layout.parts(boxed(t, boxed_tag)) == Some((orig, at, len))
                        });
                        if reads_all {
                            found.push(layout);
                        }
                    }
                }
            }
        }
        found
    }
}

/// A sub-binary made by erl_nif: the term, its original, its offset and size.
type SubProbe = (T, T, usize, usize);

/// What was learned of binaries held off the heap.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeldLayouts {
    /// Up to two headers whose records hold their bytes' address (refc binaries; sub-bitstrings from OTP 27).
    pub direct: [Option<HeldLayout>; 2],
    /// Sub-binaries that name their original (before OTP 27).
    pub sub_of: Option<SubOfLayout>,
    /// Sub-binaries (the probes' header) are read, by a direct layout or through their originals.
    pub subs: bool,
}

impl HeldLayouts {
    pub const NONE: HeldLayouts = HeldLayouts {
        direct: [None, None],
        sub_of: None,
        subs: false,
    };

    pub fn any(&self) -> bool {
        self.direct.iter().any(Option::is_some) || self.sub_of.is_some()
    }
}

/// The layouts of binaries held off the heap: up to two headers read directly (refc binaries and sub-binaries),
/// each only if exactly one candidate layout reads all its probes; and a header of sub-binaries read through
/// their originals, if exactly one layout reads them and every probe then reads as erl_nif gives it.
///
/// # Safety
/// `env` must be a live NIF environment; `reads` the learned layout so far (heap binaries included).
pub unsafe fn learn(env: *mut ErlNifEnv, reads: &Reads) -> HeldLayouts {
    let boxed_tag = reads.boxed_tag();
    let inspect = |t: T| {
        let mut bin = MaybeUninit::<ErlNifBinary>::uninit();
        (enif_inspect_binary(env, t, bin.as_mut_ptr()) != 0).then(|| {
            let bin = bin.assume_init();
            (bin.data as usize, bin.size)
        })
    };
    let text: Vec<u8> = (0..3000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let big = [200, 1000, 2999].map(|n| super::word::new_binary(env, &text[..n]));
    let mut terms = big.to_vec();
    let mut subs: Vec<SubProbe> = Vec::new();
    // Sub-binaries of refc binaries and of heap binaries, at several offsets and sizes.
    let small = [
        super::word::new_binary(env, &text[..40]),
        super::word::new_binary(env, &text[5..64]),
    ];
    let origins = [
        (big[0], 3, 100),
        (big[0], 0, 150),
        (big[1], 17, 500),
        (big[2], 64, 65),
    ];
    let more = [
        (big[1], 1, 999),
        (small[0], 1, 30),
        (small[1], 7, 2),
        (small[0], 0, 39),
    ];
    for (orig, at, len) in origins.into_iter().chain(more) {
        let t = enif_make_sub_binary(env, orig, at, len);
        // The direct layouts are learned from refc binaries and their sub-binaries (a sub-binary of a short
        // binary may be a short binary itself, from OTP 27).
        if bits(orig) != bits(small[0]) && bits(orig) != bits(small[1]) {
            terms.push(t);
        }
        subs.push((t, orig, at, len));
    }
    // Probes by header: (term, data address, length) from erl_nif.
    let mut groups: Vec<(usize, Vec<Probe>)> = Vec::new();
    for t in terms {
        let (true, Some((data, size))) = (is_boxed(t, boxed_tag), inspect(t)) else {
            continue;
        };
        let header = *boxed(t, boxed_tag);
        match groups.iter_mut().find(|(h, _)| *h == header) {
            Some((_, probes)) => probes.push((t, data, size)),
            None => groups.push((header, vec![(t, data, size)])),
        }
    }
    // Headers of other terms the walk meets: a layout's header must be none of them.
    let map = |n: i64| {
        let keys: Vec<T> = (1..=n).map(|k| enif_make_int64(env, k)).collect();
        let mut map = T::default();
        enif_make_map_from_arrays(env, keys.as_ptr(), keys.as_ptr(), keys.len(), &mut map);
        map
    };
    let others = [
        super::word::new_binary(env, &text[..5]),
        super::word::new_binary(env, &text[..64]),
        enif_make_double(env, 1.5),
        map(3),
        map(40),
        enif_make_uint64(env, u64::MAX),
        enif_make_int64(env, i64::MIN),
    ];
    let other_headers: Vec<usize> = others
        .iter()
        .filter(|&&t| is_boxed(t, boxed_tag))
        .map(|&t| *boxed(t, boxed_tag))
        .collect();
    let mut learned = HeldLayouts::default();
    // At most two headers, each with at least two probes of different sizes or offsets.
    if groups.len() > 2 {
        return learned;
    }
    for (slot, (header, probes)) in learned.direct.iter_mut().zip(&groups) {
        // The words after the header, from its arity field (above the six tag bits): no candidate reads
        // past the record.
        let words = (header >> 6).min(SPAN);
        if probes.len() < 2 || other_headers.contains(header) || words < 3 {
            continue;
        }
        if let [only] = HeldLayout::candidates(*header, words, probes, boxed_tag)[..] {
            *slot = Some(only);
        }
    }
    // Sub-binaries that no direct layout reads: through their originals. The record's arity field leaves out
    // the original's word, so one word past it is looked at; the probes decide.
    // The sub-binaries of refc binaries name the header; those of short binaries that carry it are probes too.
    let header = *boxed(subs[0].0, boxed_tag);
    subs.retain(|&(t, ..)| is_boxed(t, boxed_tag) && *boxed(t, boxed_tag) == header);
    let direct = |h: usize| learned.direct.iter().flatten().any(|l| l.header == h);
    if subs.len() >= origins.len() && !direct(header) && !other_headers.contains(&header) {
        let words = ((header >> 6) + 1).min(SPAN);
        if let [only] = SubOfLayout::candidates(header, words, &subs, boxed_tag)[..] {
            let candidate = HeldLayouts {
                sub_of: Some(only),
                ..learned
            };
            // A bitstring of 99 bytes and 3 bits (from its external format): its flags must stop the read.
            let mut ext = vec![131u8, 77, 0, 0, 0, 100, 3];
            ext.extend_from_slice(&text[..100]);
            let mut bitstring = T::default();
            let made = enif_binary_to_term(env, ext.as_ptr(), ext.len(), &mut bitstring, 0);
            let bitstring_refused = made == ext.len()
                && is_boxed(bitstring, boxed_tag)
                && candidate.bytes(reads, bitstring).is_none();
            let reads_all = bitstring_refused
                && subs.iter().all(|&(t, ..)| {
                    candidate
                        .bytes(reads, t)
                        .map(|b| (b.as_ptr() as usize, b.len()))
                        == inspect(t)
                });
            if reads_all {
                learned.sub_of = Some(only);
            }
        }
    }
    learned.subs = learned.sub_of.is_some() || direct(header);
    learned
}

impl HeldLayouts {
    /// The bytes of `t` if it is a binary held off the heap that a learned layout reads.
    ///
    /// # Safety
    /// `t` must be a live term of the running call; `reads` the layout these were learned with.
    #[inline(always)]
    pub unsafe fn bytes(&self, reads: &Reads, t: T) -> Option<&'static [u8]> {
        let p = boxed(t, reads.boxed_tag());
        if let Some(bytes) = self.direct[0].and_then(|a| a.bytes(p)) {
            return Some(bytes);
        }
        if let Some(bytes) = self.direct[1].and_then(|b| b.bytes(p)) {
            return Some(bytes);
        }
        let (original, offset, size) = self.sub_of?.parts(p)?;
        if !is_boxed(original, reads.boxed_tag()) {
            return None;
        }
        let whole = match reads.heap_binary(original) {
            Some(whole) => whole,
            None => {
                let q = boxed(original, reads.boxed_tag());
                self.direct.iter().flatten().find_map(|l| l.bytes(q))?
            }
        };
        whole.get(offset..offset.checked_add(size)?)
    }
}
