//! Scanning helpers for the parser, 8 bytes at a time: to the end of a run of plain string bytes (noting whether
//! it held non-ASCII bytes, which the parser then validates at once with `std::str::from_utf8`: the same rules as
//! Erlang's `utf8` matching, no overlongs, no surrogates, nothing above U+10FFFF), and over whitespace.

#[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
pub mod avx2;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// True where a byte of `x` is zero (the lowest flagged byte is exact; flags above it may be spurious).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// High bit set exactly in the bytes of `x` that are zero.
#[inline(always)]
fn exact_zero_bytes(x: u64) -> u64 {
    const LOWS: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    !(((x & LOWS).wrapping_add(LOWS)) | x | LOWS)
}

/// 16 bytes at a time with SSE2 (part of x86-64, so always there): a bit per byte.
#[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
mod sse2 {
    use std::arch::x86_64::*;

    /// Bit i set when byte `pos + i` is JSON whitespace. Needs `pos + 16 <= input.len()`.
    #[inline(always)]
    pub fn ws_mask(input: &[u8], pos: usize) -> u32 {
        debug_assert!(pos + 16 <= input.len());
        // SAFETY: SSE2 is baseline on x86-64; the 16 bytes are in bounds (checked by the callers).
        unsafe {
            let x = _mm_loadu_si128(input.as_ptr().add(pos) as *const __m128i);
            let ws = _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi8(x, _mm_set1_epi8(b' ' as i8)),
                    _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\n' as i8)),
                ),
                _mm_or_si128(
                    _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\r' as i8)),
                    _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\t' as i8)),
                ),
            );
            _mm_movemask_epi8(ws) as u32
        }
    }

    /// (bit per `"`, `\\` or control byte, bit per byte >= 0x80) of the 16 bytes at `pos`.
    #[inline(always)]
    pub fn special_mask(input: &[u8], pos: usize) -> (u32, u32) {
        debug_assert!(pos + 16 <= input.len());
        // SAFETY: as above.
        unsafe {
            let x = _mm_loadu_si128(input.as_ptr().add(pos) as *const __m128i);
            let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
            // Control bytes: signed x < 0x20 and x >= 0 (bytes >= 0x80 are negative as signed).
            let control = _mm_andnot_si128(
                _mm_cmplt_epi8(x, _mm_setzero_si128()),
                _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)),
            );
            let special = _mm_or_si128(_mm_or_si128(quote, backslash), control);
            (
                _mm_movemask_epi8(special) as u32,
                _mm_movemask_epi8(x) as u32,
            )
        }
    }
}

/// Whether a string's byte `b` ends a run: `"`, `\\` or a control byte.
#[inline(always)]
fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// (a bit per `"`, `\\` or control byte, a bit per byte >= 0x80) of the 16 bytes at `pos`, which must be in
/// `input`.
#[inline(always)]
pub fn special_mask16(input: &[u8], pos: usize) -> (u32, u32) {
    assert!(pos + 16 <= input.len());
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    {
        sse2::special_mask(input, pos)
    }
    #[cfg(any(not(target_arch = "x86_64"), feature = "portable"))]
    {
        input[pos..pos + 16]
            .iter()
            .enumerate()
            .fold((0, 0), |(special, high), (i, &b)| {
                (
                    special | (is_special(b) as u32) << i,
                    high | ((b >= 0x80) as u32) << i,
                )
            })
    }
}

/// For a string of at most 32 bytes: (it holds a `"`, `\\` or control byte, it holds a byte >= 0x80). Two
/// overlapping loads cover it (one word from each end), so every byte is looked at in one step, none twice in a
/// way that matters, and none outside `s`.
#[inline(always)]
pub fn short_flags(s: &[u8]) -> (bool, bool) {
    let n = s.len();
    debug_assert!(n <= 32);
    if n >= 16 {
        let (a, ha) = special_mask16(s, 0);
        let (b, hb) = special_mask16(s, n - 16);
        return (a | b != 0, ha | hb != 0);
    }
    let word = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap());
    let half = |at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap()) as u64;
    let (x, y) = if n >= 8 {
        (word(0), word(n - 8))
    } else if n >= 4 {
        (half(0) | half(n - 4) << 32, ONES * b' ' as u64)
    } else if n > 0 {
        // The three bytes, the other five spaces (neither special nor high).
        let bytes = s[0] as u64 | (s[n / 2] as u64) << 8 | (s[n - 1] as u64) << 16;
        (bytes | (ONES * b' ' as u64) << 24, ONES * b' ' as u64)
    } else {
        return (false, false);
    };
    let special = |x: u64| {
        zero_bytes(x ^ (ONES * b'"' as u64))
            | zero_bytes(x ^ (ONES * b'\\' as u64))
            | zero_bytes(x & (ONES * 0xE0))
    };
    (special(x) | special(y) != 0, (x | y) & HIGHS != 0)
}

/// The first position at or after `pos` that is not JSON whitespace (space, tab, LF, CR).
#[inline]
pub fn skip_ws(input: &[u8], mut pos: usize) -> usize {
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    while pos + 16 <= input.len() {
        let other = !sse2::ws_mask(input, pos) & 0xFFFF;
        if other != 0 {
            return pos + other.trailing_zeros() as usize;
        }
        pos += 16;
    }
    while pos + 8 <= input.len() {
        let x = u64::from_le_bytes(input[pos..pos + 8].try_into().unwrap());
        let ws = exact_zero_bytes(x ^ (ONES * b' ' as u64))
            | exact_zero_bytes(x ^ (ONES * b'\n' as u64))
            | exact_zero_bytes(x ^ (ONES * b'\r' as u64))
            | exact_zero_bytes(x ^ (ONES * b'\t' as u64));
        let other = !ws & HIGHS;
        if other != 0 {
            return pos + (other.trailing_zeros() / 8) as usize;
        }
        pos += 8;
    }
    while pos < input.len() && matches!(input[pos], b' ' | b'\n' | b'\r' | b'\t') {
        pos += 1;
    }
    pos
}

/// Steps over ASCII and non-ASCII text alike: the first position at or after `pos` holding `"`,
/// `\` or a control byte (or `input.len()`), and whether any byte before it was non-ASCII.
#[inline(always)]
#[cfg_attr(
    any(not(target_arch = "x86_64"), feature = "portable"),
    allow(unused_mut)
)]
pub fn skip_to_special(input: &[u8], mut pos: usize) -> (usize, bool) {
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    {
        let mut high = 0u32;
        while pos + 16 <= input.len() {
            let (special, h) = sse2::special_mask(input, pos);
            if special != 0 {
                let n = special.trailing_zeros();
                // Only the bytes before the special one count for `high`.
                return (pos + n as usize, (high | (h & ((1u32 << n) - 1))) != 0);
            }
            high |= h;
            pos += 16;
        }
        if high != 0 {
            let (end, _) = skip_to_special_swar(input, pos);
            return (end, true);
        }
    }
    skip_to_special_swar(input, pos)
}

/// [`skip_to_special`] 8 bytes at a time.
#[inline(always)]
fn skip_to_special_swar(input: &[u8], mut pos: usize) -> (usize, bool) {
    let mut high = 0u64;
    while pos + 8 <= input.len() {
        let x = u64::from_le_bytes(input[pos..pos + 8].try_into().unwrap());
        // Only the lowest flagged byte matters, and `zero_bytes` is exact there.
        let quote = zero_bytes(x ^ (ONES * b'"' as u64));
        let backslash = zero_bytes(x ^ (ONES * b'\\' as u64));
        let control = zero_bytes(x & (ONES * 0xE0));
        let mask = quote | backslash | control;
        if mask != 0 {
            let n = mask.trailing_zeros() / 8;
            // Only the bytes before the special one count for `high`.
            let before = if n == 0 { 0 } else { u64::MAX >> (64 - 8 * n) };
            return (pos + n as usize, (high | (x & before & HIGHS)) != 0);
        }
        high |= x & HIGHS;
        pos += 8;
    }
    let mut h = high != 0;
    while pos < input.len() {
        let b = input[pos];
        if is_special(b) {
            break;
        }
        h |= b >= 0x80;
        pos += 1;
    }
    (pos, h)
}

/// Decodes the UTF-8 sequence at `s[i]` (a byte >= 0x80) as the BEAM's `<<c::utf8>>` match does: no overlong
/// forms, no surrogates, nothing above U+10FFFF. Returns the code point and length, or `None`.
#[inline]
pub fn decode_utf8(s: &[u8], i: usize) -> Option<(u32, usize)> {
    let b0 = s[i] as u32;
    let cont = |k: usize| -> Option<u32> {
        match s.get(i + k) {
            Some(&b) if b & 0xC0 == 0x80 => Some((b & 0x3F) as u32),
            _ => None,
        }
    };
    match b0 {
        0xC2..=0xDF => Some((((b0 & 0x1F) << 6) | cont(1)?, 2)),
        0xE0..=0xEF => {
            let c = ((b0 & 0x0F) << 12) | (cont(1)? << 6) | cont(2)?;
            if c < 0x800 || (0xD800..=0xDFFF).contains(&c) {
                None
            } else {
                Some((c, 3))
            }
        }
        0xF0..=0xF4 => {
            let c = ((b0 & 0x07) << 18) | (cont(1)? << 12) | (cont(2)? << 6) | cont(3)?;
            if !(0x10000..=0x10FFFF).contains(&c) {
                None
            } else {
                Some((c, 4))
            }
        }
        _ => None,
    }
}

/// Runs of up to this many bytes are validated in line by [`validate`].
const VALIDATE_INLINE_MAX: usize = 64;

/// Checks that `bytes` is UTF-8 (the rules of [`decode_utf8`], which are `std::str::from_utf8`'s); returns the
/// index of the first invalid sequence. Short runs (text between escapes) are checked here in line: the call
/// into `from_utf8` cost more than the check for them.
#[inline]
pub fn validate(bytes: &[u8]) -> Result<(), usize> {
    if bytes.len() >= WIDE_MIN {
        return validate_wide(bytes);
    }
    validate_short(bytes)
}

/// Strings this long are validated out of line by blocks (AVX2 where the CPU has it, else `simdutf8` past
/// [`VALIDATE_INLINE_MAX`]); shorter ones in line, where the parser's and the writer's string paths keep them
/// small (the wide dispatch in line made a document of short multi-script strings decode 8% slower).
#[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
const WIDE_MIN: usize = avx2::MIN_LEN;
#[cfg(any(not(target_arch = "x86_64"), feature = "portable"))]
const WIDE_MIN: usize = VALIDATE_INLINE_MAX + 1;

/// Longer strings are validated by `simdutf8`, as fast there and quicker over long runs of ASCII.
#[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
const AVX2_MAX: usize = 4096;

/// [`validate`] of a string of at least [`WIDE_MIN`] bytes.
#[inline(never)]
fn validate_wide(bytes: &[u8]) -> Result<(), usize> {
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    if bytes.len() <= AVX2_MAX && avx2::available() {
        // SAFETY: the CPU has AVX2.
        if unsafe { avx2::is_valid(bytes) } {
            return Ok(());
        }
        return validate_short(bytes);
    }
    if bytes.len() > VALIDATE_INLINE_MAX {
        // SIMD blocks (std's `from_utf8` goes a byte at a time through CJK, Hangul and emoji: a quarter of the
        // multilingual text's encode), the same rules; the faster check without a position first, as text is
        // nearly always valid, then the one that finds the first invalid index.
        if simdutf8::basic::from_utf8(bytes).is_ok() {
            return Ok(());
        }
        return simdutf8::compat::from_utf8(bytes)
            .map(|_| ())
            .map_err(|e| e.valid_up_to());
    }
    validate_short(bytes)
}

/// [`validate`] a byte or a word at a time, for short strings and to find a fault's position.
#[inline(always)]
fn validate_short(bytes: &[u8]) -> Result<(), usize> {
    let mut i = 0;
    while i < bytes.len() {
        // ASCII eight bytes a step (text in Latin scripts is mostly ASCII between its accented letters), up to
        // the first byte >= 0x80.
        if let Some(word) = bytes.get(i..i + 8) {
            let high = u64::from_le_bytes(word.try_into().unwrap()) & 0x8080_8080_8080_8080;
            if high == 0 {
                i += 8;
                continue;
            }
            i += high.trailing_zeros() as usize / 8;
        }
        let b = bytes[i];
        if b < 0x80 {
            i += 1;
            continue;
        }
        // Two-byte characters (Latin, Greek, Cyrillic...) and three-byte ones (CJK, Hangul, most symbols) in
        // line; the rest through the full rules.
        if (0xC2..=0xDF).contains(&b) && bytes.get(i + 1).is_some_and(|&c| c & 0xC0 == 0x80) {
            i += 2;
            continue;
        }
        if let (0xE0..=0xEF, Some(&[c1, c2])) = (b, bytes.get(i + 1..i + 3)) {
            // No overlong forms (E0 needs A0..BF next), no surrogates (ED needs 80..9F next).
            let low = if b == 0xE0 { 0xA0 } else { 0x80 };
            let high = if b == 0xED { 0x9F } else { 0xBF };
            if (low..=high).contains(&c1) && c2 & 0xC0 == 0x80 {
                i += 3;
                continue;
            }
        }
        match decode_utf8(bytes, i) {
            Some((_, len)) => i += len,
            None => return Err(i),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_agrees_with_from_utf8() {
        // Every 1- and 2-byte input, and 3- and 4-byte ones around each boundary of the rules, at every length
        // on both sides of the in-line limit.
        let mut inputs: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for a in 0x80..=0xFFu8 {
            for b in [
                0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF,
            ] {
                inputs.push(vec![a, b]);
                for c in [0x80, 0xBF, 0x41] {
                    inputs.push(vec![a, b, c]);
                    inputs.push(vec![a, b, c, 0x80]);
                    inputs.push(vec![a, b, c, 0xBF]);
                }
            }
        }
        for text in ["«ça» — ü", "日本語", "😀x", ""] {
            inputs.push(text.as_bytes().to_vec());
        }
        for input in inputs {
            for pad in [0, 5, 29, 40] {
                let mut v = vec![b'a'; pad];
                v.extend_from_slice(&input);
                let expected = std::str::from_utf8(&v)
                    .map(|_| ())
                    .map_err(|e| e.valid_up_to());
                assert_eq!(validate(&v), expected, "{v:x?}");
            }
        }
    }

    /// Every 1- to 4-byte sequence class, valid or not, at every position of strings the block validators take
    /// (both sides of their block sizes and limits), in ASCII and in multi-byte text, and random mixes of
    /// sequence pieces: the answer and the position are `std::str::from_utf8`'s.
    #[test]
    fn validate_agrees_with_from_utf8_at_every_position() {
        let pieces: [&[u8]; 24] = [
            b"a",
            b"\xc3\xa9",
            b"\xe6\xbc\xa2",
            b"\xf0\x9f\x98\x80",
            b"\x80",
            b"\xbf",
            b"\xc0\x80",
            b"\xc1\xbf",
            b"\xc2",
            b"\xe0\x80\x80",
            b"\xe0\xa0\x80",
            b"\xed\xa0\x80",
            b"\xed\x9f\xbf",
            b"\xef\xbf\xbf",
            b"\xf0\x8f\xbf\xbf",
            b"\xf0\x90\x80\x80",
            b"\xf4\x8f\xbf\xbf",
            b"\xf4\x90\x80\x80",
            b"\xf5\x80\x80\x80",
            b"\xff",
            b"\xe6\xbc",
            b"\xf0\x9f\x98",
            b"\xc3\xa9\x80",
            b"\x7f",
        ];
        let check = |v: &[u8]| {
            let expected = std::str::from_utf8(v)
                .map(|_| ())
                .map_err(|e| e.valid_up_to());
            assert_eq!(validate(v), expected, "{v:x?}");
        };
        for len in [
            35, 36, 40, 63, 64, 65, 66, 67, 96, 100, 129, 200, 4096, 4097,
        ] {
            for background in ["a", "é", "漢", "😀"] {
                let mut base = background.repeat(len);
                base.truncate(base.floor_char_boundary(len));
                let base = base.into_bytes();
                check(&base);
                for piece in pieces {
                    for at in (0..base.len())
                        .filter(|&i| i < 70 || i + 70 > base.len() || i.is_multiple_of(29))
                    {
                        let mut v = base[..at].to_vec();
                        v.extend_from_slice(piece);
                        v.extend_from_slice(&base[at..]);
                        check(&v);
                    }
                }
            }
        }
        // Random strings of pieces, mostly valid ones.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            let mut v = Vec::new();
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let target = 35 + (seed >> 40) as usize % 180;
            while v.len() < target {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let pick = (seed >> 33) as usize;
                let piece = if pick.is_multiple_of(64) {
                    pieces[pick / 64 % 24]
                } else {
                    pieces[pick % 4]
                };
                v.extend_from_slice(piece);
            }
            check(&v);
        }
    }

    #[test]
    fn skip_ws_stops_at_the_first_other_byte() {
        for other in [
            b'!', b'"', 0x00, 0x01, 0x1f, 0x21, 0x0b, 0x0c, 0x80, 0xff, b'a',
        ] {
            for at in 0..20 {
                let mut v: Vec<u8> = (0..20).map(|i| b" \n\r\t"[i % 4]).collect();
                v[at] = other;
                assert_eq!(skip_ws(&v, 0), at, "{other:x} at {at}");
            }
        }
        assert_eq!(skip_ws(b"   ", 0), 3);
        assert_eq!(skip_ws(b"          ", 2), 10);
    }

    #[test]
    fn wide_scans_agree_with_bytewise_ones() {
        // Inputs longer than the 16-byte steps, with the stop byte and a non-ASCII byte at every position.
        for len in [15, 16, 17, 31, 32, 33, 47, 70] {
            for at in 0..len {
                for high_at in [None, Some(0), Some(at / 2), Some(len - 1)] {
                    let mut v = vec![b'a'; len];
                    if let Some(h) = high_at {
                        v[h] = 0xC3;
                    }
                    v[at] = b'"';
                    let expected_high = high_at.is_some_and(|h| h < at);
                    assert_eq!(
                        skip_to_special(&v, 0),
                        (at, expected_high),
                        "{len} {at} {high_at:?}"
                    );
                    let mut w = vec![b' '; len];
                    w[at] = b'x';
                    assert_eq!(skip_ws(&w, 0), at, "{len} {at}");
                }
            }
            assert_eq!(skip_ws(&vec![b'\t'; len], 0), len);
            assert_eq!(skip_to_special(&vec![0xE9; len], 0), (len, true));
        }
    }

    #[test]
    fn skip_to_special_steps_over_non_ascii() {
        assert_eq!(skip_to_special(b"abc\xc3\xa9defghijklm\"", 0), (15, true));
        assert_eq!(skip_to_special(b"abcdefghijklm\"\xc3\xa9", 0), (13, false));
        assert_eq!(skip_to_special(b"abcdefgh\xc3\"", 0), (9, true));
        for special in [b'"', b'\\', 0x00, 0x1f] {
            for at in 0..24 {
                let mut v = vec![0xe9; 24];
                v[at] = special;
                assert_eq!(skip_to_special(&v, 0), (at, at > 0));
                let mut v = vec![b'a'; 24];
                v[at] = special;
                assert_eq!(skip_to_special(&v, 0), (at, false));
            }
        }
        // 0x20..0x7f and 0x80.. are not special; 0x7f is not a control byte for JSON.
        let v: Vec<u8> = (0x20..=0xffu8)
            .filter(|&b| b != b'"' && b != b'\\')
            .collect();
        assert_eq!(skip_to_special(&v, 0), (v.len(), true));
    }
}
