//! Decimal to `f64`, correctly rounded: Clinger's exact fast path, then Eisel-Lemire, and the standard
//! library's (correct) parser for the rare cases those cannot decide (more than 19 digits, near-halfway).

use crate::pow5::{POWER_OF_FIVE_128, SMALLEST_POWER_OF_FIVE};

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Parses a JSON number token (already validated) to a finite `f64`; `None` when it is out of range.
/// The slow, general path: the parser uses [`from_parts`] first.
#[inline]
pub fn parse_float(text: &[u8]) -> Option<f64> {
    // The token is ASCII by construction.
    let s = std::str::from_utf8(text).ok()?;
    let v: f64 = s.parse().ok()?;
    v.is_finite().then_some(v)
}

/// The value of `(-1)^neg * w * 10^q`, correctly rounded and finite, or `None` when the fast algorithms cannot
/// decide or the value overflows (then use [`parse_float`]). `w` must hold every significant digit.
#[inline]
pub fn from_parts(neg: bool, w: u64, q: i64) -> Option<f64> {
    let v = if w <= 1 << 53 && (-22..=22).contains(&q) {
        // Clinger's fast path: both operands are exact, so one rounding, and the result is finite. Nothing
        // branches on the quotient, so the division's latency overlaps the parsing of what follows.
        let m = w as f64;
        if q >= 0 {
            m * POW10[q as usize]
        } else {
            m / POW10[(-q) as usize]
        }
    } else {
        let v = f64::from_bits(eisel_lemire(q, w)?);
        if !v.is_finite() {
            return None;
        }
        v
    };
    Some(if neg { -v } else { v })
}

/// The high bit of every byte of `x` that is not an ASCII digit, exact up to the first such byte (a borrow or
/// carry only moves upward, so the lowest flagged byte is the first non-digit).
#[inline(always)]
fn non_digits(x: u64) -> u64 {
    let a = x.wrapping_add(0x4646_4646_4646_4646);
    let b = x.wrapping_sub(0x3030_3030_3030_3030);
    (a | b) & 0x8080_8080_8080_8080
}

/// How many of the 8 bytes of `x` (little-endian, the first in the lowest byte) are digits before the first
/// non-digit: 0 to 8.
#[inline(always)]
pub fn leading_digits(x: u64) -> usize {
    (non_digits(x).trailing_zeros() / 8) as usize
}

/// The value of 8 ASCII digits loaded little-endian (the first digit in the lowest byte).
#[inline(always)]
pub fn parse_eight_digits(v: u64) -> u64 {
    combine_eight(v.wrapping_sub(0x3030_3030_3030_3030))
}

/// The value of the first `n` (0 to 7) bytes of `x`, which are ASCII digits: they move to the top of the word
/// and zeros fill in below, so they read as leading zeros. No branch on `n`: its value varies from number to
/// number, and a loop over the digits would mispredict at its end.
#[inline(always)]
pub fn parse_digits(x: u64, n: usize) -> u64 {
    debug_assert!(n < 8);
    let kept = x.wrapping_sub(0x3030_3030_3030_3030) & ((1u64 << (8 * n)) - 1);
    // Two shifts, as `n == 0` would need a shift by 64.
    combine_eight((kept << 8) << (56 - 8 * n))
}

/// Eight digit values (0-9, one per byte, the most significant in the lowest byte) as a number.
#[inline(always)]
fn combine_eight(mut v: u64) -> u64 {
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 0x000F_4240_0000_0064;
    const MUL2: u64 = 0x0000_2710_0000_0001;
    v = (v * 10) + (v >> 8);
    let v1 = (v & MASK).wrapping_mul(MUL1);
    let v2 = ((v >> 16) & MASK).wrapping_mul(MUL2);
    ((v1.wrapping_add(v2) >> 32) as u32) as u64
}

#[inline(always)]
fn full_multiplication(a: u64, b: u64) -> (u64, u64) {
    let r = (a as u128) * (b as u128);
    (r as u64, (r >> 64) as u64)
}

/// `w * 5^q` truncated to 128 bits, precise enough in the top `precision` bits.
#[inline(always)]
fn product_approx(q: i64, w: u64, precision: usize) -> (u64, u64) {
    let mask = u64::MAX >> precision;
    let (hi5, lo5) = POWER_OF_FIVE_128[(q - SMALLEST_POWER_OF_FIVE) as usize];
    let (mut first_lo, mut first_hi) = full_multiplication(w, hi5);
    if first_hi & mask == mask {
        let (_, second_hi) = full_multiplication(w, lo5);
        first_lo = first_lo.wrapping_add(second_hi);
        if second_hi > first_lo {
            first_hi += 1;
        }
    }
    (first_lo, first_hi)
}

#[inline(always)]
fn power(q: i32) -> i32 {
    (q.wrapping_mul(152_170 + 65536) >> 16) + 63
}

const MANTISSA_BITS: i32 = 52;
const MIN_EXPONENT: i32 = -1023;
const INFINITE_POWER: i32 = 0x7FF;

/// The Eisel-Lemire algorithm (as in Rust's core::num::dec2flt and fast_float): the bits of the positive
/// double nearest to `w * 10^q`, or `None` when the approximation is too close to a halfway point.
fn eisel_lemire(q: i64, mut w: u64) -> Option<u64> {
    if w == 0 || q < -342 {
        return Some(0);
    }
    if q > 308 {
        return Some((INFINITE_POWER as u64) << MANTISSA_BITS);
    }
    let lz = w.leading_zeros();
    w <<= lz;
    let (lo, hi) = product_approx(q, w, MANTISSA_BITS as usize + 3);
    if lo == u64::MAX && !(-27..=55).contains(&q) {
        return None;
    }
    let upperbit = (hi >> 63) as i32;
    let shift = upperbit + 64 - MANTISSA_BITS - 3;
    let mut mantissa = hi >> shift;
    let mut power2 = power(q as i32) + upperbit - lz as i32 - MIN_EXPONENT;
    if power2 <= 0 {
        // Subnormal.
        if -power2 + 1 >= 64 {
            return Some(0);
        }
        mantissa >>= -power2 + 1;
        mantissa += mantissa & 1;
        mantissa >>= 1;
        power2 = (mantissa >= (1u64 << MANTISSA_BITS)) as i32;
        return Some(mantissa | ((power2 as u64) << MANTISSA_BITS));
    }
    if lo <= 1 && (-4..=23).contains(&q) && mantissa & 3 == 1 && (mantissa << shift) == hi {
        // Exactly halfway: round to even.
        mantissa &= !1;
    }
    mantissa += mantissa & 1;
    mantissa >>= 1;
    if mantissa >= (2u64 << MANTISSA_BITS) {
        mantissa = 1u64 << MANTISSA_BITS;
        power2 += 1;
    }
    mantissa &= !(1u64 << MANTISSA_BITS);
    if power2 >= INFINITE_POWER {
        return Some((INFINITE_POWER as u64) << MANTISSA_BITS);
    }
    Some(mantissa | ((power2 as u64) << MANTISSA_BITS))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits a plain decimal token into (neg, w, q) the way the parser does; None past 19 digits.
    fn parts(text: &str) -> Option<(bool, u64, i64)> {
        let (neg, t) = match text.strip_prefix('-') {
            Some(t) => (true, t),
            None => (false, text),
        };
        let (m, e) = match t.find(['e', 'E']) {
            Some(i) => (&t[..i], t[i + 1..].parse::<i64>().unwrap()),
            None => (t, 0),
        };
        let (int, frac) = m.split_once('.').unwrap_or((m, ""));
        let digits = format!("{int}{frac}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 19 {
            return None;
        }
        let w = if digits.is_empty() {
            0
        } else {
            digits.parse().unwrap()
        };
        Some((neg, w, e - frac.len() as i64))
    }

    fn check(text: &str) {
        let expected: f64 = text.parse().unwrap();
        if let Some((neg, w, q)) = parts(text) {
            if let Some(got) = from_parts(neg, w, q) {
                assert_eq!(got.to_bits(), expected.to_bits(), "{text}");
            }
        }
    }

    #[test]
    fn agrees_with_std() {
        let cases = [
            "0.0",
            "-0.0",
            "1.5",
            "0.1",
            "123.456",
            "-65.613616999999977",
            "1e22",
            "1e23",
            "1E-7",
            "2.5e-3",
            "9007199254740993.0",
            "0.30000000000000004",
            "1.7976931348623157e308",
            "4.9e-324",
            "1e-400",
            "123456789012345.6",
            "1234567890123456.7",
            "0.000000000000000000001",
            "100000000000000000000000.0",
            "2.2250738585072011e-308",
            "2.2250738585072014e-308",
            "9007199254740992.0",
            "9007199254740991.5",
            "1.00000000000000011102230246251565404",
            "7.2057594037927933e16",
            "2e-324",
            "3e-324",
            "1.7976931348623158e308",
            "8.98846567431158e307",
        ];
        for c in cases {
            check(c);
        }
        assert_eq!(parse_float(b"1e400"), None);
        assert_eq!(parse_float(b"-1.7976931348623159e308"), None);
    }

    #[test]
    fn eight_digit_chunks() {
        let load = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap());
        assert_eq!(leading_digits(load(b"01234567")), 8);
        assert_eq!(parse_eight_digits(load(b"01234567")), 1_234_567);
        assert_eq!(parse_eight_digits(load(b"99999999")), 99_999_999);
        for bad in [
            b"0123456a",
            b"/1234567",
            b"0123:567",
            b"0123 567",
            b"\xb01234567",
        ] {
            assert!(leading_digits(load(bad)) < 8, "{bad:?}");
        }
        for i in 0..8 {
            for b in 0..=255u8 {
                let mut s = *b"12345678";
                s[i] = b;
                assert_eq!(
                    leading_digits(load(&s)) == 8,
                    b.is_ascii_digit(),
                    "{b} at {i}"
                );
            }
        }
    }

    #[test]
    fn partial_digit_chunks() {
        let load = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap());
        for (text, n, value) in [
            (b"12345678", 8, 0),
            (b"1234567,", 7, 1_234_567),
            (b"0012]   ", 4, 12),
            (b"9e10    ", 1, 9),
            (b".5      ", 0, 0),
            (b"07\x8034567", 2, 7),
        ] {
            assert_eq!(leading_digits(load(text)), n, "{text:?}");
            if n < 8 {
                assert_eq!(parse_digits(load(text), n), value, "{text:?}");
            }
        }
        // Every digit count, with every byte after the digits.
        for n in 0..8 {
            for b in (0..=255u8).filter(|b| !b.is_ascii_digit()) {
                let mut s = *b"98765432";
                s[n] = b;
                let expected: u64 = std::str::from_utf8(&s[..n]).unwrap().parse().unwrap_or(0);
                assert_eq!(leading_digits(load(&s)), n);
                assert_eq!(parse_digits(load(&s), n), expected, "{n} digits then {b}");
            }
        }
    }

    #[test]
    fn random_decimals_agree_with_std() {
        // A small xorshift generator: mantissas of 1-19 digits, exponents across the whole range.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..300_000 {
            let digits = 1 + next() % 19;
            let w = next() % 10u64.pow(digits as u32);
            let e = (next() % 700) as i64 - 360;
            check(&format!("{w}e{e}"));
            // Round-trip shortest forms, the common case in real documents.
            let f = f64::from_bits(next() >> 1);
            if f.is_finite() {
                check(&format!("{f:e}"));
            }
        }
    }
}
