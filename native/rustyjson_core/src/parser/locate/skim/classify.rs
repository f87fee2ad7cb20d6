//! A block's 64 bytes as bit masks, one bit per byte: with AVX2 (32 bytes an instruction, chosen at run time),
//! SSE2 (part of x86-64), NEON (part of aarch64), or byte by byte (the reference the others are tested against;
//! too slow to skim with, so the locator does not skim where it is all there is).

pub(super) const BLOCK: usize = 64;

/// A block's bytes as bit masks (bit `i` is byte `i`).
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Masks {
    pub quote: u64,
    pub backslash: u64,
    /// `{`, `}`, `[`, `]`, `:` and `,`.
    pub structural: u64,
    /// Bytes that cannot be part of a number or literal: whitespace, structural bytes and quotes.
    pub breaks: u64,
    /// Bytes below 0x20 (whitespace ones included).
    pub control: u64,
    /// Bytes of 0x80 and above.
    pub high: u64,
    pub digit: u64,
}

/// One way of classifying a block.
pub(super) trait Classify {
    fn masks(block: &[u8; BLOCK]) -> Masks;
}

/// A byte at a time.
#[cfg_attr(
    all(
        any(target_arch = "x86_64", target_arch = "aarch64"),
        not(feature = "portable")
    ),
    allow(dead_code)
)]
pub(super) struct Bytes;

impl Classify for Bytes {
    #[inline]
    fn masks(block: &[u8; BLOCK]) -> Masks {
        let mut m = Masks::default();
        for (i, &c) in block.iter().enumerate() {
            let bit = 1u64 << i;
            match c {
                b'"' => m.quote |= bit,
                b'\\' => m.backslash |= bit,
                b'{' | b'}' | b'[' | b']' | b':' | b',' => m.structural |= bit,
                b'0'..=b'9' => m.digit |= bit,
                _ => {}
            }
            if matches!(
                c,
                b'"' | b'{' | b'}' | b'[' | b']' | b':' | b',' | b' ' | b'\t' | b'\n' | b'\r'
            ) {
                m.breaks |= bit;
            }
            if c < 0x20 {
                m.control |= bit;
            }
            if c >= 0x80 {
                m.high |= bit;
            }
        }
        m
    }
}

#[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
pub(super) use x86::{Avx2, Sse2};

#[cfg(all(target_arch = "aarch64", not(feature = "portable")))]
pub(super) use arm::Neon;

#[cfg(all(target_arch = "aarch64", not(feature = "portable")))]
mod arm {
    use super::{Classify, Masks, BLOCK};
    use std::arch::aarch64::*;

    /// 16 bytes an instruction (NEON is part of aarch64).
    pub struct Neon;

    impl Classify for Neon {
        #[inline(always)]
        #[allow(unused_unsafe)]
        fn masks(block: &[u8; BLOCK]) -> Masks {
            // SAFETY: NEON is part of aarch64; each load reads 16 of the block's 64 bytes.
            unsafe {
                let v = [0, 16, 32, 48].map(|at| vld1q_u8(block.as_ptr().add(at)));
                let splat = |c: u8| vdupq_n_u8(c);
                let structural = |x| {
                    let folded = vorrq_u8(x, splat(0x20));
                    let brackets =
                        vorrq_u8(vceqq_u8(folded, splat(b'{')), vceqq_u8(folded, splat(b'}')));
                    vorrq_u8(
                        brackets,
                        vorrq_u8(vceqq_u8(x, splat(b':')), vceqq_u8(x, splat(b','))),
                    )
                };
                let spaces = |x| {
                    vorrq_u8(
                        vorrq_u8(vceqq_u8(x, splat(b' ')), vceqq_u8(x, splat(b'\t'))),
                        vorrq_u8(vceqq_u8(x, splat(b'\n')), vceqq_u8(x, splat(b'\r'))),
                    )
                };
                let quote = each(&v, |x| vceqq_u8(x, splat(b'"')));
                let structurals = each(&v, structural);
                Masks {
                    quote,
                    backslash: each(&v, |x| vceqq_u8(x, splat(b'\\'))),
                    structural: structurals,
                    breaks: structurals | quote | each(&v, spaces),
                    control: each(&v, |x| vcltq_u8(x, splat(0x20))),
                    high: each(&v, |x| vcgeq_u8(x, splat(0x80))),
                    digit: each(&v, |x| vcltq_u8(vsubq_u8(x, splat(b'0')), splat(10))),
                }
            }
        }
    }

    /// The mask of `f` (a compare) over the block's four vectors: a generic function, so that each compare is
    /// inlined rather than called through a pointer.
    #[inline(always)]
    unsafe fn each(v: &[uint8x16_t; 4], f: impl Fn(uint8x16_t) -> uint8x16_t) -> u64 {
        bits(v.map(f))
    }

    /// One bit per byte of four compare results (each byte all ones or zero): each byte keeps its weight within
    /// its group of eight, and three rounds of pairwise adds sum the groups into bytes.
    #[inline(always)]
    #[allow(unused_unsafe)]
    unsafe fn bits(c: [uint8x16_t; 4]) -> u64 {
        unsafe {
            const WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];
            let w = vld1q_u8(WEIGHTS.as_ptr());
            let a = vpaddq_u8(vandq_u8(c[0], w), vandq_u8(c[1], w));
            let b = vpaddq_u8(vandq_u8(c[2], w), vandq_u8(c[3], w));
            let s = vpaddq_u8(a, b);
            let s = vpaddq_u8(s, s);
            vgetq_lane_u64::<0>(vreinterpretq_u64_u8(s))
        }
    }
}

#[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
mod x86 {
    use super::{Classify, Masks, BLOCK};
    use std::arch::x86_64::*;

    /// 16 bytes an instruction.
    pub struct Sse2;

    /// 32 bytes an instruction: only where the CPU has AVX2 (`is_x86_feature_detected!`).
    pub struct Avx2;

    impl Classify for Sse2 {
        #[inline(always)]
        fn masks(block: &[u8; BLOCK]) -> Masks {
            let mut m = Masks::default();
            for k in 0..BLOCK / 16 {
                // SAFETY: SSE2 is part of x86-64; the load reads 16 of the block's 64 bytes.
                let lanes = unsafe { sse2(_mm_loadu_si128(block.as_ptr().add(16 * k).cast())) };
                m.add(lanes.map(|l| l as u16 as u64), 16 * k);
            }
            m
        }
    }

    impl Classify for Avx2 {
        #[inline(always)]
        fn masks(block: &[u8; BLOCK]) -> Masks {
            let mut m = Masks::default();
            for k in 0..BLOCK / 32 {
                // SAFETY: only called from code compiled for, and run on, AVX2 (see `Skim::run`); the load reads
                // 32 of the block's 64 bytes.
                let lanes = unsafe { avx2(_mm256_loadu_si256(block.as_ptr().add(32 * k).cast())) };
                m.add(lanes.map(|l| l as u32 as u64), 32 * k);
            }
            m
        }
    }

    impl Masks {
        /// ORs in the masks of the bytes from `shift` on (the order of `sse2`'s and `avx2`'s results).
        #[inline(always)]
        fn add(&mut self, l: [u64; 7], shift: usize) {
            self.quote |= l[0] << shift;
            self.backslash |= l[1] << shift;
            self.structural |= l[2] << shift;
            self.breaks |= l[3] << shift;
            self.control |= l[4] << shift;
            self.high |= l[5] << shift;
            self.digit |= l[6] << shift;
        }
    }

    /// The masks of 16 bytes, in `Masks::add`'s order.
    #[inline(always)]
    unsafe fn sse2(x: __m128i) -> [i32; 7] {
        let splat = |c: u8| _mm_set1_epi8(c as i8);
        let eq = |c: u8| _mm_cmpeq_epi8(x, splat(c));
        // `[` and `]` are `{` and `}` with bit 5 clear: one OR finds both pairs with two compares.
        let folded = _mm_or_si128(x, splat(0x20));
        let brackets = _mm_or_si128(
            _mm_cmpeq_epi8(folded, splat(b'{')),
            _mm_cmpeq_epi8(folded, splat(b'}')),
        );
        let structural = _mm_or_si128(brackets, _mm_or_si128(eq(b':'), eq(b',')));
        let quote = eq(b'"');
        let spaces = _mm_or_si128(
            _mm_or_si128(eq(b' '), eq(b'\t')),
            _mm_or_si128(eq(b'\n'), eq(b'\r')),
        );
        let breaks = _mm_or_si128(_mm_or_si128(structural, quote), spaces);
        let control = _mm_cmpeq_epi8(_mm_min_epu8(x, splat(0x1F)), x);
        let offset = _mm_sub_epi8(x, splat(b'0'));
        let digit = _mm_cmpeq_epi8(_mm_min_epu8(offset, splat(9)), offset);
        [quote, eq(b'\\'), structural, breaks, control, x, digit].map(|v| _mm_movemask_epi8(v))
    }

    /// The masks of 32 bytes, in `Masks::add`'s order.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn avx2(x: __m256i) -> [i32; 7] {
        let splat = |c: u8| _mm256_set1_epi8(c as i8);
        let folded = _mm256_or_si256(x, splat(0x20));
        let brackets = _mm256_or_si256(
            _mm256_cmpeq_epi8(folded, splat(b'{')),
            _mm256_cmpeq_epi8(folded, splat(b'}')),
        );
        let punctuation = _mm256_or_si256(
            _mm256_cmpeq_epi8(x, splat(b':')),
            _mm256_cmpeq_epi8(x, splat(b',')),
        );
        let structural = _mm256_or_si256(brackets, punctuation);
        let quote = _mm256_cmpeq_epi8(x, splat(b'"'));
        let spaces = _mm256_or_si256(
            _mm256_or_si256(
                _mm256_cmpeq_epi8(x, splat(b' ')),
                _mm256_cmpeq_epi8(x, splat(b'\t')),
            ),
            _mm256_or_si256(
                _mm256_cmpeq_epi8(x, splat(b'\n')),
                _mm256_cmpeq_epi8(x, splat(b'\r')),
            ),
        );
        let breaks = _mm256_or_si256(_mm256_or_si256(structural, quote), spaces);
        let control = _mm256_cmpeq_epi8(_mm256_min_epu8(x, splat(0x1F)), x);
        let offset = _mm256_sub_epi8(x, splat(b'0'));
        let digit = _mm256_cmpeq_epi8(_mm256_min_epu8(offset, splat(9)), offset);
        let backslash = _mm256_cmpeq_epi8(x, splat(b'\\'));
        [
            _mm256_movemask_epi8(quote),
            _mm256_movemask_epi8(backslash),
            _mm256_movemask_epi8(structural),
            _mm256_movemask_epi8(breaks),
            _mm256_movemask_epi8(control),
            _mm256_movemask_epi8(x),
            _mm256_movemask_epi8(digit),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random blocks, weighted to the bytes JSON gives meaning to.
    #[cfg_attr(
        any(not(target_arch = "x86_64"), feature = "portable"),
        allow(dead_code)
    )]
    fn blocks() -> impl Iterator<Item = [u8; BLOCK]> {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let special =
            b"\"\\{}[]:, \t\n\r0123456789/-.eE\x00\x1f\x20\x7f\x80\xff\x5b\x5d\x7b\x7d\x2f\x3a";
        (0..20_000).map(move |_| {
            let mut block = [0u8; BLOCK];
            for b in &mut block {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = if x & 1 == 0 {
                    special[(x >> 8) as usize % special.len()]
                } else {
                    (x >> 16) as u8
                };
            }
            block
        })
    }

    #[cfg(all(target_arch = "aarch64", not(feature = "portable")))]
    #[test]
    fn neon_agrees_with_the_byte_at_a_time_classifier() {
        for block in blocks() {
            assert_eq!(Neon::masks(&block), Bytes::masks(&block), "{block:?}");
        }
    }

    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    #[test]
    fn every_classifier_agrees_with_the_byte_at_a_time_one() {
        let avx2 = std::is_x86_feature_detected!("avx2");
        for block in blocks() {
            let reference = Bytes::masks(&block);
            assert_eq!(Sse2::masks(&block), reference, "{block:?}");
            if avx2 {
                assert_eq!(Avx2::masks(&block), reference, "{block:?}");
            }
        }
    }
}
