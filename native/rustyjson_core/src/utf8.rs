//! Scanning helpers for the parser, 8 bytes at a time: to the end of a run of plain string bytes (noting whether
//! it held non-ASCII bytes, which the parser then validates at once with `std::str::from_utf8`: the same rules as
//! Erlang's `utf8` matching, no overlongs, no surrogates, nothing above U+10FFFF), and over whitespace.

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

/// The first position at or after `pos` that is not JSON whitespace (space, tab, LF, CR).
#[inline]
pub fn skip_ws(input: &[u8], mut pos: usize) -> usize {
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

/// Like [`skip_plain`] but steps over non-ASCII bytes too: the first position at or after `pos` holding `"`,
/// `\` or a control byte (or `input.len()`), and whether any byte before it was non-ASCII.
#[inline(always)]
pub fn skip_to_special(input: &[u8], mut pos: usize) -> (usize, bool) {
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
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        h |= b >= 0x80;
        pos += 1;
    }
    (pos, h)
}

#[cfg(test)]
mod tests {
    use super::*;

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
