//! Powers of ten as both float conversions scale by them: 10^j = S * 2^(floor(j * log2(10)) - 127) with S in
//! [2^127, 2^128), and S truncated to 128 bits from a generated table (`pow5_table.rs`; 5^j has the same
//! significand). Also the floors of logarithms that pick the power and the shifts, as fixed-point products.

include!("pow5_table.rs");

/// The smallest and largest `j` in the table.
pub const FIRST: i32 = -342;
pub const LAST: i32 = 324;

/// floor(S) for 10^j (see the module doc): exact for 0 <= j <= 55, otherwise below S by less than 1.
#[inline(always)]
pub fn significand(j: i32) -> u128 {
    debug_assert!((FIRST..=LAST).contains(&j));
    POW5[(j - FIRST) as usize]
}

// The fixed-point constants below are log10(2), -log10(3/4) and log2(10) rounded to 22 or 20 fractional bits;
// the tests check every floor over the range each is used on.

/// floor(log10(2^q)) for q in -1074..=971 (every binary exponent of a finite double).
#[inline(always)]
pub fn floor_log10_pow2(q: i32) -> i32 {
    (q * 1_262_611) >> 22
}

/// floor(log10(3/4 * 2^q)) for q in -1074..=971.
#[inline(always)]
pub fn floor_log10_three_quarters_pow2(q: i32) -> i32 {
    (q * 1_262_611 - 524_031) >> 22
}

/// floor(log2(10^j)) for j in FIRST..=LAST.
#[inline(always)]
pub fn floor_log2_pow10(j: i32) -> i32 {
    (j * 3_483_294) >> 20
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::compare;
    use std::cmp::Ordering::{Greater, Less};

    /// 10^j lies in [G * 2^(f - 127), (G + 1) * 2^(f - 127)) with f = floor_log2_pow10(j): each entry is the
    /// truncated significand, and `f` its exponent.
    #[test]
    fn every_entry_is_the_truncated_significand() {
        assert_eq!(POW5.len() as i32, LAST - FIRST + 1);
        for j in FIRST..=LAST {
            let g = significand(j);
            let f = floor_log2_pow10(j);
            assert!(g >> 127 == 1, "10^{j} not normalized");
            assert_ne!(compare(1, j, g, f - 127), Less, "10^{j} below G");
            // G + 1 fits: no entry is all ones (the check would fail on one that is).
            assert_eq!(
                compare(1, j, g + 1, f - 127),
                Less,
                "10^{j} not below G + 1"
            );
        }
    }

    #[test]
    fn powers_of_five_that_fit_are_exact() {
        for j in 0..=55 {
            let p = 5u128.pow(j as u32);
            assert_eq!(significand(j), p << p.leading_zeros(), "5^{j}");
        }
    }

    #[test]
    fn logarithm_floors() {
        for q in -1074..=971 {
            // 10^k <= 2^q < 10^(k+1)
            let k = floor_log10_pow2(q);
            assert_ne!(compare(1, k, 1, q), Greater, "q = {q}");
            assert_eq!(compare(1, k + 1, 1, q), Greater, "q = {q}");
            // 10^k <= 3 * 2^(q-2) < 10^(k+1)
            let k = floor_log10_three_quarters_pow2(q);
            assert_ne!(compare(1, k, 3, q - 2), Greater, "q = {q}");
            assert_eq!(compare(1, k + 1, 3, q - 2), Greater, "q = {q}");
        }
        for j in FIRST..=LAST {
            // 2^f <= 10^j < 2^(f+1)
            let f = floor_log2_pow10(j);
            assert_ne!(compare(1, j, 1, f), Less, "j = {j}");
            assert_eq!(compare(1, j, 1, f + 1), Less, "j = {j}");
        }
    }
}
