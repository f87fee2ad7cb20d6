//! Decimal to `f64`, correctly rounded: Clinger's exact fast path, then one 128-bit scaling by a power of ten
//! (the table in `pow5.rs`; the idea of D. Lemire's "Number Parsing at a Gigabyte per Second", 2021, in a simpler
//! form: always the full product, and no exact halfway cases) that decides every value but those within a few
//! units of 2^-128 (relative) of the midpoint between two doubles, and the standard library's (correct) parser
//! for those and the rest (more than 19 digits, subnormal results).

use crate::pow5;

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
#[inline(always)]
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
        f64::from_bits(scaled(w, q)?)
    };
    Some(if neg { -v } else { v })
}

/// The bits of the double nearest `w * 10^q` (w > 0), or `None` when it overflows, is subnormal, or lies too
/// near the midpoint of two doubles for the estimate to tell. Out of line: the parser's loop keeps only the
/// fast path (a call costs less than the registers the whole of it would take there).
#[inline(never)]
fn scaled(w: u64, q: i64) -> Option<u64> {
    if w == 0 || q < i64::from(pow5::FIRST) {
        // Under 2^64 * 10^-343, below half the smallest subnormal.
        return Some(0);
    }
    if q > 308 {
        return None;
    }
    let q = q as i32;
    // w * 10^q = (w << z) * S * 2^(f - 127 - z) with 10^q = S * 2^(f - 127); the top 128 bits of (w << z) * g
    // are under those of the true product by less than 2 (g <= S < g + 1, and the truncation). The upper half of
    // g alone leaves them under by less than 2^64 + 2, which is enough but when the bits under the significand
    // are that close to one half (about 1 in 256): only then is the lower half's product needed.
    let z = w.leading_zeros();
    let wn = u128::from(w << z);
    let g = pow5::significand(q);
    let e = pow5::floor_log2_pow10(q) - 64 - z as i32;
    let upper = wn * (g >> 64);
    round_upper(upper, e).or_else(|| round(upper + ((wn * (g as u64 as u128)) >> 64), e))
}

/// [`round`] for the product with the upper half of g alone, from its upper 64 bits: the 11 bits under the
/// significand (units of 2^64 of the 75) decide, unless they are within 4 of one half (0x400), as the true value
/// can be up to 2^65 + 4 over after normalizing.
#[inline(always)]
fn round_upper(x: u128, e: i32) -> Option<u64> {
    let high = (x >> 127) as i32;
    let top = ((x << (1 - high)) >> 64) as u64;
    let under = top & 0x7FF;
    let biased = e + high + 75 + 52 + 1023;
    if biased <= 0 || under.wrapping_sub(0x400 - 4) <= 8 {
        return None;
    }
    let bits = ((biased as u64) << 52 | ((top >> 11) & ((1 << 52) - 1))) + u64::from(under > 0x400);
    (bits < 0x7FF << 52).then_some(bits)
}

/// The bits of the double nearest `x * 2^e`, x at least 2^126 and under the true value by less than 2; `None`
/// when it is out of the normal range or the true value may be on the other side of a midpoint.
#[inline(always)]
fn round(x: u128, e: i32) -> Option<u64> {
    // Normalized to the top bit (then under by less than 4).
    let high = (x >> 127) as i32;
    let x = x << (1 - high);
    // 53 bits of significand and 75 below them; the double's biased exponent.
    let m = (x >> 75) as u64;
    let below = x & ((1 << 75) - 1);
    let biased = e + high + 75 + 52 + 1023;
    // The rounding goes by whether `below` is over one half (2^74): an estimate within 4 of it (exact ties among
    // them) cannot tell. Near 2^75 the true value may carry into `m`: it rounds up either way.
    if biased <= 0 || below.abs_diff(1 << 74) <= 4 {
        return None;
    }
    // Rounding up adds one to the bits: a significand of all ones carries into the exponent, as it should. No
    // branch: which way it goes is a coin toss from one number to the next.
    let bits = ((biased as u64) << 52 | (m & ((1 << 52) - 1))) + u64::from(below > 1 << 74);
    (bits < 0x7FF << 52).then_some(bits)
}

/// The top bit set in every byte of `x` that is not an ASCII digit (0x30-0x39), exact up to the first such byte:
/// 0xAF minus a byte has it for bytes below 0x30 and above 0xAF, and 0x46 plus a byte for 0x3A to 0xB9. Borrows
/// and carries only leave bytes that are not digits, and only upward.
#[inline(always)]
fn non_digits(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    ((0xAF * ONES).wrapping_sub(x) | x.wrapping_add(0x46 * ONES)) & (0x80 * ONES)
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

/// Eight digit values (0-9, one per byte, the most significant in the lowest byte) as a number: first the four
/// pairs (each even byte gets its digit times 10 plus the next byte's; times 10 is two additions, so the
/// multiplier, which the rest of the number's parse keeps busy, is left alone), then, as in Lemire's "Number
/// Parsing at a Gigabyte per Second", two independent products that weigh the pairs by 10^6 and 10^2, and by
/// 10^4 and 1, each leaving its sum in the upper half, where the two add up.
#[inline(always)]
fn combine_eight(v: u64) -> u64 {
    const LANES: u64 = 0x0000_00FF_0000_00FF;
    let pairs = (v.wrapping_mul(10) + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    let first_third = (pairs & LANES).wrapping_mul(1_000_000 << 32 | 100);
    let second_fourth = ((pairs >> 16) & LANES).wrapping_mul(10_000 << 32 | 1);
    first_third.wrapping_add(second_fourth) >> 32
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

    /// Checks `from_parts` against the standard parser where it answers; where it does not, the value must be
    /// out of its range (infinite, or subnormal before rounding) or exactly halfway between two doubles.
    fn check(text: &str) {
        let expected: f64 = text.parse().unwrap();
        if let Some((neg, w, q)) = parts(text) {
            match from_parts(neg, w, q) {
                Some(got) => assert_eq!(got.to_bits(), expected.to_bits(), "{text}"),
                None if expected.is_finite() && expected.abs() > f64::MIN_POSITIVE => {
                    assert!(halfway(w, q, expected), "{text}")
                }
                None => {}
            }
        }
    }

    /// Whether w * 10^q is the midpoint of `f` (normal) and one of its neighbours (the one below a power of two
    /// is half as far).
    fn halfway(w: u64, q: i64, f: f64) -> bool {
        let bits = f.abs().to_bits();
        let c = u128::from(bits & ((1 << 52) - 1) | 1 << 52);
        let e = ((bits >> 52) as i32) - 1075;
        let below = if c == 1 << 52 { 4 * c - 1 } else { 4 * c - 2 };
        [below, 4 * c + 2]
            .iter()
            .any(|&m| crate::exact::compare(w.into(), q as i32, m, e - 2).is_eq())
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
            // Round-trip shortest forms, the common case in real documents; 17 significant digits, the most a
            // shortest form has, and 19.
            let f = f64::from_bits(next() >> 1);
            if f.is_finite() {
                check(&format!("{f:e}"));
                check(&format!("{f:.16e}"));
                check(&format!("{f:.18e}"));
            }
        }
    }

    /// Exact midpoints between two doubles (left to the exact parser), and decimals just off them.
    #[test]
    fn midpoints() {
        for text in [
            "9007199254740993",
            "9007199254740995",
            "9007199254740993.0000000001",
            "9007199254740992.9999999999",
            "1.00000000000000011102230246251565404236316680908203125",
            "2.2250738585072013e-308",
            "7.2057594037927933e16",
            "1e23",
            "8.9884656743115795e307",
        ] {
            check(text);
            let expected: f64 = text.parse().unwrap();
            let (neg, w, q) = parts(text).unwrap_or((false, 0, 0));
            let got = from_parts(neg, w, q).or_else(|| parse_float(text.as_bytes()));
            if parts(text).is_some() {
                assert_eq!(got.map(f64::to_bits), Some(expected.to_bits()), "{text}");
            }
        }
        // 2^53 + 1 is halfway: undecided, and the exact parser rounds it to even.
        assert_eq!(from_parts(false, 9_007_199_254_740_993, 0), None);
    }

    /// A longer run, by hand: `cargo test --release -p rustyjson_core -- --ignored many_decimals`.
    #[test]
    #[ignore]
    fn many_decimals() {
        let count: u64 = std::env::var("COUNT").map_or(20_000_000, |c| c.parse().unwrap());
        let mut x: u64 = std::env::var("SEED").map_or(1, |c| c.parse().unwrap());
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..count {
            let f = f64::from_bits(next() >> 1);
            if f.is_finite() {
                check(&format!("{f:e}"));
                check(&format!("{f:.18e}"));
            }
            let w = next() % 10_000_000_000_000_000_000;
            check(&format!("{w}e{}", (next() % 640) as i64 - 330));
        }
    }
}
