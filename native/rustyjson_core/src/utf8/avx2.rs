//! UTF-8 validation 32 bytes a step with AVX2, for strings of a few dozen to a few thousand bytes: text between
//! JSON's quotes. The classification is the one of J. Keiser and D. Lemire, "Validating UTF-8 in less than one
//! instruction per byte" (2021): each byte and the one before it are looked up in three 16-entry tables by their
//! nibbles, and a byte pair is invalid where the three results share a bit; the bytes two and three back say
//! where a continuation byte must be. Here the bytes before a block are loaded from where they lie (no carry
//! from block to block), and the last block is the string's last 32 bytes: nothing is copied, and no byte
//! outside the string is read. For those lengths this costs about half of `simdutf8` (whose setup and copied
//! tail dominate under a few hundred bytes); for longer ones it runs at the same speed.

use std::arch::x86_64::*;

/// Strings this long or longer are checked here (the last block's three bytes before it must lie in the string).
pub const MIN_LEN: usize = 35;

// A byte pair's faults; a pair is invalid where all three lookups have the bit.
const TOO_SHORT: u8 = 1 << 0; // a lead byte not followed by a continuation
const TOO_LONG: u8 = 1 << 1; // ASCII followed by a continuation
const OVERLONG_3: u8 = 1 << 2; // E0 80..9F
const TOO_LARGE: u8 = 1 << 3; // F4 90.., F5..
const SURROGATE: u8 = 1 << 4; // ED A0..BF
const OVERLONG_2: u8 = 1 << 5; // C0, C1
const TOO_LARGE_1000: u8 = 1 << 6; // F5.. 80..8F
const OVERLONG_4: u8 = 1 << 6; // F0 80..8F
const TWO_CONTS: u8 = 1 << 7; // two continuations: fine where a 3- or 4-byte character needs them
const CARRY: u8 = TOO_SHORT | TOO_LONG | TWO_CONTS;

/// By the high nibble of the first byte of the pair.
const FIRST_HIGH: [u8; 16] = [
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TWO_CONTS,
    TWO_CONTS,
    TWO_CONTS,
    TWO_CONTS,
    TOO_SHORT | OVERLONG_2,
    TOO_SHORT,
    TOO_SHORT | OVERLONG_3 | SURROGATE,
    TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
];

/// By the low nibble of the first byte of the pair.
const FIRST_LOW: [u8; 16] = [
    CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,
    CARRY | OVERLONG_2,
    CARRY,
    CARRY,
    CARRY | TOO_LARGE,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
];

/// By the high nibble of the second byte of the pair.
const SECOND_HIGH: [u8; 16] = [
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
];

/// Whether the machine has AVX2 (asked once; std caches the answer).
#[inline(always)]
pub fn available() -> bool {
    std::is_x86_feature_detected!("avx2")
}

/// Validation over a string's 32-byte blocks, visited in any order (each block's three bytes before are loaded
/// from the string itself, so none depends on the one before): the faults of every block seen, gathered.
pub struct Checker {
    first_high: __m256i,
    first_low: __m256i,
    second_high: __m256i,
    error: __m256i,
}

impl Checker {
    /// # Safety
    /// The CPU must have AVX2 ([`available`]).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn new() -> Checker {
        let table = |t: &[u8; 16]| {
            _mm256_broadcastsi128_si256(_mm_loadu_si128(t.as_ptr() as *const __m128i))
        };
        Checker {
            first_high: table(&FIRST_HIGH),
            first_low: table(&FIRST_LOW),
            second_high: table(&SECOND_HIGH),
            error: _mm256_setzero_si256(),
        }
    }

    /// Checks the string's first block, `first` (its first 32 bytes; the bytes before it count as ASCII).
    ///
    /// # Safety
    /// As [`Checker::new`].
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn first(&mut self, first: __m256i) {
        let before = _mm256_permute2x128_si256(_mm256_setzero_si256(), first, 0x21);
        self.pairs(
            first,
            _mm256_alignr_epi8(first, before, 15),
            _mm256_alignr_epi8(first, before, 14),
            _mm256_alignr_epi8(first, before, 13),
        );
    }

    /// Checks the block `input`, which holds the 32 bytes at `at` (at least 3) of the string at `p`, unless it
    /// and the three bytes before it are ASCII (nothing to check then).
    ///
    /// # Safety
    /// As [`Checker::new`]; `p + at - 3 .. p + at + 32` must be readable.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn block(&mut self, p: *const u8, at: usize, input: __m256i) {
        let load = |at: usize| _mm256_loadu_si256(p.add(at) as *const __m256i);
        let prev3 = load(at - 3);
        if _mm256_movemask_epi8(_mm256_or_si256(input, prev3)) != 0 {
            self.pairs(input, load(at - 1), load(at - 2), prev3);
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn pairs(&mut self, input: __m256i, prev1: __m256i, prev2: __m256i, prev3: __m256i) {
        let nibble = _mm256_set1_epi8(0x0F);
        let high = |v: __m256i| _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
        let pairs = _mm256_and_si256(
            _mm256_and_si256(
                _mm256_shuffle_epi8(self.first_high, high(prev1)),
                _mm256_shuffle_epi8(self.first_low, _mm256_and_si256(prev1, nibble)),
            ),
            _mm256_shuffle_epi8(self.second_high, high(input)),
        );
        // Where a third or fourth byte of a character must be: two continuations are right there and only there.
        let third = _mm256_subs_epu8(prev2, _mm256_set1_epi8((0xE0u8 - 0x80) as i8));
        let fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8((0xF0u8 - 0x80) as i8));
        let must = _mm256_and_si256(
            _mm256_or_si256(third, fourth),
            _mm256_set1_epi8(0x80u8 as i8),
        );
        self.error = _mm256_or_si256(self.error, _mm256_xor_si256(must, pairs));
    }

    /// Whether `s`, every block of which was checked, is UTF-8: no fault, and no character cut by its end (a lead
    /// byte among the last three that needs more bytes than follow it).
    ///
    /// # Safety
    /// As [`Checker::new`]; `s` has at least 3 bytes.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn valid(&self, s: &[u8]) -> bool {
        let n = s.len();
        let cut = s[n - 1] >= 0xC0 || s[n - 2] >= 0xE0 || s[n - 3] >= 0xF0;
        _mm256_testz_si256(self.error, self.error) != 0 && !cut
    }
}

/// Whether `s` (at least [`MIN_LEN`] bytes) is UTF-8 by `std::str::from_utf8`'s rules.
///
/// # Safety
/// The CPU must have AVX2 ([`available`]).
#[target_feature(enable = "avx2")]
pub unsafe fn is_valid(s: &[u8]) -> bool {
    let n = s.len();
    debug_assert!(n >= MIN_LEN);
    let p = s.as_ptr();
    let load = |at: usize| _mm256_loadu_si256(p.add(at) as *const __m256i);
    let mut checker = Checker::new();
    checker.first(load(0));
    let mut at = 32;
    loop {
        // The last block ends at the string's end (it may overlap the one before: checked twice, the same way).
        if at + 32 > n {
            at = n - 32;
        }
        checker.block(p, at, load(at));
        if at + 32 >= n {
            break;
        }
        at += 32;
    }
    checker.valid(s)
}
