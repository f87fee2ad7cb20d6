//! The default mode's string writer 32 bytes a step with AVX2, UTF-8 validated in the same pass.
//!
//! Each block of the string is stored to the output as it is, before it is looked at: most blocks have nothing
//! to escape, and then that store was the copy. At a special byte the escape is stored over the block's copy and
//! the 32 bytes after the special byte are stored again, one escape further on (a later block's store lands at
//! the same place, so the copies agree); `delta`, where the output is ahead of the input, grows by the escape's
//! extra bytes. No step waits for the one before but through `delta`, and nothing is copied twice but the
//! bytes after an escape.

use std::arch::x86_64::*;

use super::ESCAPE_SEQUENCES;
use crate::buffer::{copy_short, Buffer, Storage};
use crate::utf8::avx2::{Checker, MIN_LEN};

/// Strings this long or longer are written here; shorter ones take one or two 16-byte blocks the SSE2 way, no
/// slower (citm_catalog's strings of 35-63 bytes were 6% slower here).
pub const WRITE_MIN: usize = 64;

/// Writes `s` (at least [`MIN_LEN`] bytes) as a quoted JSON string: `None`, having written nothing, when the
/// escapes need more room than a quarter of the string (the caller writes it the long way); `Some(Err(i))` when
/// it is not UTF-8 (the caller finds the first invalid sequence's position `i` and abandons the output).
///
/// # Safety
/// The CPU must have AVX2 ([`crate::utf8::avx2::available`]).
#[target_feature(enable = "avx2")]
pub unsafe fn write_json_string<S: Storage>(out: &mut Buffer<S>, s: &[u8]) -> Option<bool> {
    let n = s.len();
    debug_assert!(n >= MIN_LEN);
    let room = n + n / 4 + 96;
    out.reserve(room);
    let src = s.as_ptr();
    let base = out.tail_ptr();
    *base = b'"';
    let load = |at: usize| _mm256_loadu_si256(src.add(at) as *const __m256i);
    let store = |at: usize, v: __m256i| _mm256_storeu_si256(base.add(at) as *mut __m256i, v);
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let specials = |v: __m256i| {
        // Control bytes: unsigned v < 0x20, that is min(v, 0x1F) == v.
        let control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1F)), v);
        let marks = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)),
            control,
        );
        _mm256_movemask_epi8(marks) as u32
    };
    let mut checker = Checker::new();
    // The output position of input byte i is i + delta.
    let mut delta = 1;
    // Writes the escape of the special byte at `p` and the input after it (32 bytes of it, or its rest); false
    // when the rest might not fit in `room`.
    let escape = |p: usize, delta: &mut usize| -> bool {
        if p + *delta + (n - p) + 8 + 64 > room {
            return false;
        }
        let seq = ESCAPE_SEQUENCES[*src.add(p) as usize];
        std::ptr::write_unaligned(base.add(p + *delta) as *mut u64, seq.to_le());
        *delta += (seq >> 56) as usize - 1;
        let next = p + 1;
        if next + 32 <= n {
            store(next + *delta, load(next));
        } else {
            copy_short(src.add(next), base.add(next + *delta), n - next);
        }
        true
    };
    let mut i = 0;
    while i + 32 <= n {
        let block = load(i);
        store(i + delta, block);
        if i == 0 {
            checker.first(block);
        } else {
            checker.block(src, i, block);
        }
        let mut marks = specials(block);
        while marks != 0 {
            if !escape(i + marks.trailing_zeros() as usize, &mut delta) {
                return None;
            }
            marks &= marks - 1;
        }
        i += 32;
    }
    if i < n {
        // The last 31 bytes or fewer: the string's last 32 bytes (it has at least 35), less those looked at.
        let last = n - 32;
        let block = load(last);
        checker.block(src, last, block);
        copy_short(src.add(i), base.add(i + delta), n - i);
        let mut marks = specials(block) & (u32::MAX << (i - last));
        while marks != 0 {
            if !escape(last + marks.trailing_zeros() as usize, &mut delta) {
                return None;
            }
            marks &= marks - 1;
        }
    }
    *base.add(n + delta) = b'"';
    out.advance(n + delta + 1);
    Some(checker.valid(s))
}
