//! Binaries held off the process heap (refc binaries and sub-binaries of them) read by their bits, for encode:
//! asking `enif_inspect_binary` for each was an eighth of an order-records encode, and from OTP 27 every string
//! built at run time (`"#{a}-#{b}"`) is such a binary, however short.
//!
//! The VM's own records differ by release (a ProcBin holding a byte pointer and a byte size before OTP 27; from
//! OTP 27 a sub-bitstring holding a base pointer with two flag bits, and start and end offsets in bits), so no
//! layout is assumed: for each header the VM gives such binaries, the word positions are searched among a few
//! candidates, and a layout is kept only if it reads every probe (binaries of several sizes, sub-binaries at
//! several offsets) exactly as `enif_inspect_binary` does and no other kind of term carries that header. A
//! header with no such layout (OTP 25's sub-binaries, which point to their original's term, not its bytes) is
//! left to erl_nif.

use super::{boxed, is_boxed, T};
use rustler::sys::{
    enif_inspect_binary, enif_make_double, enif_make_int64, enif_make_map_from_arrays,
    enif_make_sub_binary, enif_make_uint64, ErlNifBinary, ErlNifEnv,
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

/// The layouts of binaries held off the heap: up to two headers (refc binaries and sub-binaries), each read
/// only if exactly one candidate layout reads all its probes.
///
/// # Safety
/// `env` must be a live NIF environment; `boxed_tag` the learned primary tag of boxed terms.
pub unsafe fn learn(env: *mut ErlNifEnv, boxed_tag: usize) -> [Option<HeldLayout>; 2] {
    let inspect = |t: T| {
        let mut bin = MaybeUninit::<ErlNifBinary>::uninit();
        (enif_inspect_binary(env, t, bin.as_mut_ptr()) != 0).then(|| {
            let bin = bin.assume_init();
            (bin.data as usize, bin.size)
        })
    };
    let text: Vec<u8> = (0..3000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let big = [200, 1000, 2999].map(|n| super::new_binary(env, &text[..n]));
    let mut terms = big.to_vec();
    for (of, at, len) in [
        (0, 3, 100),
        (0, 0, 150),
        (1, 17, 500),
        (2, 64, 65),
        (1, 1, 999),
    ] {
        terms.push(enif_make_sub_binary(env, big[of], at, len));
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
        super::new_binary(env, &text[..5]),
        super::new_binary(env, &text[..64]),
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
    let mut learned = [None; 2];
    // At most two headers, each with at least two probes of different sizes or offsets.
    if groups.len() <= 2 {
        for (slot, (header, probes)) in learned.iter_mut().zip(&groups) {
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
    }
    learned
}
