//! The shortest decimal that reads back as a given `f64`, and the closest to it of those (the digits OTP's
//! `[:short]` writes, ryu's), as an integer and a power of ten: number.rs lays them out OTP's way directly, as
//! formatting text and reading it back would cost as much as finding the digits.
//!
//! The approach is the one of Schubfach (R. Giulietti, "The Schubfach way to render doubles", 2020): the decimals
//! that read back as `v` are those in its rounding interval, and at a precision 10^k no coarser than the interval
//! is wide, the interval holds at most one multiple of 10^(k+1); when it holds none, the answer is the multiple of
//! 10^k nearest `v`. Here one 128-bit product scales `v` to units of 10^k with 64 fractional bits, the interval's
//! half-width comes from the power of ten alone, and every decision the estimates leave within a few 2^-64 of its
//! boundary (exact ties and bounds, which short decimals near 2^53 or 2^-1 produce, or closer calls that the
//! precision cannot settle) is made with exact integers (`exact.rs`).

use crate::exact::compare;
use crate::pow5;
use std::cmp::Ordering::{Equal, Greater, Less};

/// A finite double as `c * 2^q`, and whether it is a power of two above the smallest normal exponent: there the
/// next double down is half as far as the next one up (below that exponent the spacing goes on into the
/// subnormals), so the interval is 3/4 as wide and lopsided.
#[inline(always)]
fn split(bits: u64) -> (u64, i32, bool) {
    let raw_exp = ((bits >> 52) & 0x7FF) as i32;
    let frac = bits & ((1 << 52) - 1);
    if raw_exp == 0 {
        (frac, -1074, false)
    } else {
        (frac | 1 << 52, raw_exp - 1075, frac == 0 && raw_exp > 1)
    }
}

/// The k with 10^k <= the interval's width (2^q, or 3/4 of it) < 10^(k+1).
#[inline(always)]
fn precision(q: i32, irregular: bool) -> i32 {
    if irregular {
        pow5::floor_log10_three_quarters_pow2(q)
    } else {
        pow5::floor_log10_pow2(q)
    }
}

/// `c * 2^q` in units of 10^k with 64 fractional bits, and the interval's half-width above it, 2^(q-1) * 10^-k
/// (0.5 to 5), in the same units: each under the true value by less than 2 (units of 2^-64).
#[inline(always)]
fn scale(c: u64, q: i32, k: i32) -> (u128, u128) {
    // 10^-k = S * 2^(f - 127), S from the table; so c * 2^q * 10^-k = c * S * 2^(q + f - 127), and with
    // s = q + f + 1 (1 to 7 over the whole range) the top 128 bits of (c << s) * S are that times 2^64. As
    // g <= S < g + 1 and the product is truncated, the result is under by less than 2.
    let s = q + pow5::floor_log2_pow10(-k) + 1;
    debug_assert!((1..=7).contains(&s));
    // SAFETY: s is 1 to 7 for every exponent, regular or not (the tests run each one with overflow checks); told
    // so, the compiler shifts without handling shifts past 63 bits.
    unsafe { std::hint::assert_unchecked((1..=7).contains(&s)) };
    let g = pow5::significand(-k);
    let x = u128::from(c << s);
    let t = x * (g >> 64) + ((x * (g as u64 as u128)) >> 64);
    // 2^(q-1) * 10^-k = S * 2^(q + f - 128) (the shift in two steps, each under 64).
    (t, (g >> 58) >> (7 - s))
}

/// `|f|` (finite and not zero, given as its bits) as `digits * 10^exp`: the shortest digits that read back as `f`
/// (the closest of them), possibly with trailing zeros, which the caller strips. `digits` has 16 or 17 digits
/// (fewer only for subnormals).
#[inline(always)]
pub fn decimal(bits: u64) -> (u64, i32) {
    let raw_exp = ((bits >> 52) & 0x7FF) as i32;
    let frac = bits & ((1 << 52) - 1);
    if frac == 0 {
        return power_of_two(bits);
    }
    let (c, q) = if raw_exp == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, raw_exp - 1075)
    };
    let k = pow5::floor_log10_pow2(q);
    let (t, up) = scale(c, q, k);
    // Is a multiple of 10 (units of 10^k) in the interval [t - up, t + up]? The largest one not above the upper
    // bound is inside when the bound is less than 2 * up above it. The estimates are under by less than 4 (the
    // bound) and 2 (the distance): both are taken 4 higher (the bound w, the half-width `reach`), and calls
    // within a few units go to `exactly`, as do bounds within 4 of a multiple of 10 (the multiple might be one
    // step lower, or equal to the bound, which is then inside only for even c).
    let reach = up + 4;
    let w = t + reach;
    let top = (w >> 64) as u64;
    let rem = (u128::from(top % 10) << 64) | u128::from(w as u64);
    // 2 * up + 8 - rem: the multiple is inside when this is over 8 (rem < 2 * up), outside when negative.
    let margin = (reach << 1).wrapping_sub(rem);
    if (margin as i128) < 0 {
        // None: the multiple of 10^k nearest f, which is inside (half a step from f at most, and the interval
        // reaches at least that far on each side). Fractions within 4 of one half (a tie, or too close to call)
        // are decided exactly: the sum below carries exactly when the fraction is over one half, and is then
        // the fraction less one half and 1.
        let (sum, over_half) = (t as u64).overflowing_add((1 << 63) - 1);
        if sum.wrapping_add(5) <= 8 {
            return exactly(bits);
        }
        return ((t >> 64) as u64 + u64::from(over_half), k);
    }
    if margin > 8 && rem > 8 {
        return (top - top % 10, k);
    }
    exactly(bits)
}

/// [`decimal`] for the powers of two, whose interval is lopsided (reaching down half as far as up) except at the
/// smallest normal exponent.
#[inline(never)]
fn power_of_two(bits: u64) -> (u64, i32) {
    let (c, q, irregular) = split(bits);
    let k = precision(q, irregular);
    let (t, up) = scale(c, q, k);
    let down = up >> irregular as u32;
    let width = up + down;
    let w = t + up + 4;
    let top = (w >> 64) as u64;
    let rem = (u128::from(top % 10) << 64) | u128::from(w as u64);
    if rem > 8 && rem < width {
        return (top - top % 10, k);
    }
    if rem <= width + 8 {
        return exactly(bits);
    }
    let n = (t >> 64) as u64;
    let fraction = t as u64;
    if (fraction ^ 1 << 63).wrapping_add(4) <= 8 {
        return exactly(bits);
    }
    if fraction > 1 << 63 || !irregular {
        return (n + u64::from(fraction > 1 << 63), k);
    }
    // n is inside when the lower bound t - down is at or under it: down >= fraction. Otherwise n + 1 is: the
    // interval is at least one unit wide, and n + 1 - t < 1 - down <= up.
    let margin = down.wrapping_sub(u128::from(fraction));
    if margin.wrapping_add(4) <= 8 {
        return exactly(bits);
    }
    (n + u64::from((margin as i128) < 0), k)
}

/// The decisions of [`decimal`] made exactly, for the cases the estimates leave open (from the bits alone, so that
/// the fast path keeps nothing alive for it).
#[cold]
#[inline(never)]
fn exactly(bits: u64) -> (u64, i32) {
    let (c, q, irregular) = split(bits);
    let k = precision(q, irregular);
    let (t, up) = scale(c, q, k);
    let top = ((t + up + 4) >> 64) as u64;
    decide(c, q, irregular, k, (t >> 64) as u64, top - top % 10)
}

/// The exact decisions: `n` is an estimate of the floor of f in units of 10^k and `m` of the largest multiple of
/// 10 not above the upper bound, `n` within one of the true one and `m` the true one or one step (10) above.
fn decide(c: u64, q: i32, irregular: bool, k: i32, n: u64, m: u64) -> (u64, i32) {
    // f and the bounds of its interval as b * 2^(q-2); the bounds belong to it when c is even (reading a tie
    // rounds to the even significand).
    let lower = 4 * u128::from(c) - if irregular { 1 } else { 2 };
    let upper = 4 * u128::from(c) + 2;
    let closed = c & 1 == 0;
    // Past a bound: beyond it, or on it when the bounds do not belong.
    let past = |order: std::cmp::Ordering, beyond| order == beyond || (!closed && order == Equal);
    let inside = |d: u64| {
        !past(compare(d.into(), k, upper, q - 2), Greater)
            && !past(compare(d.into(), k, lower, q - 2), Less)
    };
    // At most one multiple of 10 is inside.
    for d in [m, m.saturating_sub(10)] {
        if d > 0 && inside(d) {
            return (d, k);
        }
    }
    // The floor of f, then the nearer of it and the next, the even one on a tie.
    let mut floor = n;
    while compare(u128::from(floor) + 1, k, c.into(), q) != Greater {
        floor += 1;
    }
    while compare(floor.into(), k, c.into(), q) == Greater {
        floor -= 1;
    }
    let nearest = match compare(2 * u128::from(floor) + 1, k, c.into(), q + 1) {
        Greater => floor,
        Less => floor + 1,
        Equal => floor + (floor & 1),
    };
    // It is inside, except that below a power of two it can be under the interval; then the next one up is in.
    if irregular && !inside(nearest) {
        (nearest + 1, k)
    } else {
        (nearest, k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ryu's digits (the reference OTP's `[:short]` follows) as an integer and an exponent, trailing zeros
    /// stripped.
    fn ryu_decimal(f: f64) -> (u64, i32) {
        let text = ryu::Buffer::new().format_finite(f.abs()).to_string();
        let (mantissa, exp) = match text.split_once('e') {
            Some((m, e)) => (m.to_string(), e.parse::<i32>().unwrap()),
            None => (text.clone(), 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((&mantissa, ""));
        let digits = format!("{int}{frac}");
        strip(digits.parse().unwrap(), exp - frac.len() as i32)
    }

    fn strip(mut d: u64, mut e: i32) -> (u64, i32) {
        while d.is_multiple_of(10) {
            d /= 10;
            e += 1;
        }
        (d, e)
    }

    fn ours(f: f64) -> (u64, i32) {
        let (d, e) = decimal(f.to_bits());
        assert!(d < 100_000_000_000_000_000, "{f:e}: {d}");
        // 16 or 17 digits but for subnormals (number.rs counts those two with two compares).
        assert!(
            d >= 1_000_000_000_000_000 || f.abs() < f64::MIN_POSITIVE,
            "{f:e}: {d}"
        );
        strip(d, e)
    }

    /// The exact path alone, from the fast path's estimates with the floor one step off either way.
    fn exact_path(f: f64, nudge: u64) -> (u64, i32) {
        let (c, q, irregular) = split(f.to_bits());
        let k = precision(q, irregular);
        let (t, up) = scale(c, q, k);
        let top = ((t + up + 4) >> 64) as u64;
        let n = ((t >> 64) as u64 + nudge).saturating_sub(1);
        let (d, e) = decide(c, q, irregular, k, n, top - top % 10);
        strip(d, e)
    }

    #[test]
    fn known_values() {
        assert_eq!(ours(1.0), (1, 0));
        assert_eq!(ours(0.1), (1, -1));
        assert_eq!(ours(0.3), (3, -1));
        assert_eq!(ours(0.30000000000000004), (30000000000000004, -17));
        assert_eq!(ours(123.456), (123456, -3));
        assert_eq!(ours(5e-324), (5, -324));
        assert_eq!(ours(f64::MAX), (17976931348623157, 292));
        assert_eq!(ours(f64::MIN_POSITIVE), (22250738585072014, -324));
        assert_eq!(ours(9007199254740992.0), (9007199254740992, 0));
        assert_eq!(ours(1e23), (1, 23));
    }

    /// xorshift64*: the same sequence on every run.
    fn rng(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
    }

    /// Doubles where the estimates come closest to a boundary: powers of two and their neighbours (the lopsided
    /// interval), the ends of every exponent, subnormals, powers of ten and their neighbours, integers around
    /// 2^53, short decimals (their bounds can be exact), and halves of odd integers (exact ties).
    fn edges() -> Vec<f64> {
        let mut cases = vec![f64::MIN_POSITIVE, f64::MAX, f64::EPSILON, 5e-324, 1e-323];
        for e in 0..2047u64 {
            for m in [
                0,
                1,
                2,
                3,
                (1 << 52) - 1,
                (1 << 52) - 2,
                1 << 51,
                0x5_5555_5555_5555,
            ] {
                cases.push(f64::from_bits(e << 52 | m));
            }
        }
        for i in 1..5_000u64 {
            cases.push(f64::from_bits(i));
            cases.push((1u64 << 53) as f64 + (i as f64 - 2_500.0) * 2.0);
            cases.push(i as f64 * 0.5);
            cases.push(i as f64 * 1e15 + 0.5);
            cases.push(i as f64 * 1e16);
        }
        for k in -325..=308 {
            let p = 10f64.powi(k);
            cases.extend([p, p.next_up(), p.next_down(), p * 3.0, p * 7.0]);
        }
        cases.retain(|f| f.is_finite() && *f != 0.0);
        cases
    }

    #[test]
    fn same_digits_as_ryu() {
        let mut next = rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..500_000 {
            let f = f64::from_bits(next() >> 1);
            if f.is_finite() && f != 0.0 {
                assert_eq!(ours(f), ryu_decimal(f), "{f:e}");
            }
            // Short decimals, the usual JSON number.
            let f = (next() % 10_000_000_000) as f64 * 10f64.powi((next() % 40) as i32 - 20);
            if f != 0.0 {
                assert_eq!(ours(f), ryu_decimal(f), "{f:e}");
            }
        }
        for f in edges() {
            assert_eq!(ours(f), ryu_decimal(f), "{f:e} ({:x})", f.to_bits());
        }
    }

    #[test]
    fn exact_path_agrees() {
        let mut next = rng(0x2545_F491_4F6C_DD1D);
        let mut cases = edges();
        cases.extend((0..20_000).map(|_| f64::from_bits(next() >> 1)));
        for (i, f) in cases.into_iter().enumerate() {
            if f.is_finite() && f != 0.0 {
                let nudge = i as u64 % 3;
                assert_eq!(
                    exact_path(f, nudge),
                    ryu_decimal(f),
                    "{f:e} ({:x})",
                    f.to_bits()
                );
            }
        }
    }

    /// A longer run, by hand: `cargo test --release -p rustyjson_core -- --ignored many_random`.
    #[test]
    #[ignore]
    fn many_random() {
        let count: u64 = std::env::var("COUNT").map_or(200_000_000, |c| c.parse().unwrap());
        let mut next = rng(std::env::var("SEED").map_or(1, |c| c.parse().unwrap()));
        for _ in 0..count {
            let f = f64::from_bits(next() >> 1);
            if f.is_finite() && f != 0.0 {
                assert_eq!(ours(f), ryu_decimal(f), "{f:e} ({:x})", f.to_bits());
            }
        }
    }
}
