//! Exact comparison of a decimal `d * 10^e` with a binary `b * 2^e`, in 128 bits when both sides fit and on
//! fixed-size big integers otherwise: for the rare cases the 128-bit estimates of `shortest.rs` leave undecided (an
//! exact tie, or a bound within a few units of 2^-64 of a candidate), and for the tests of the table and of the
//! logarithm floors.

use std::cmp::Ordering;

/// 40 x 32 bits: the largest number compared is under 2^924 (the check of the table's first entry, G * 5^342);
/// the float comparisons stay under 2^830.
const LIMBS: usize = 40;

/// A non-negative integer, least significant limb first.
#[derive(Clone)]
struct Big {
    limbs: [u32; LIMBS],
}

impl Big {
    fn new(x: u128) -> Big {
        let mut limbs = [0; LIMBS];
        for (i, limb) in limbs.iter_mut().take(4).enumerate() {
            *limb = (x >> (32 * i)) as u32;
        }
        Big { limbs }
    }

    fn mul_small(&mut self, m: u32) {
        let mut carry = 0u64;
        for limb in self.limbs.iter_mut() {
            let p = u64::from(*limb) * u64::from(m) + carry;
            *limb = p as u32;
            carry = p >> 32;
        }
        assert_eq!(carry, 0, "exact: overflow");
    }

    fn mul_pow5(&mut self, mut n: u32) {
        // 5^13 is the largest power of five below 2^32.
        while n > 0 {
            let step = n.min(13);
            self.mul_small(5u32.pow(step));
            n -= step;
        }
    }

    fn shl(&mut self, bits: u32) {
        let (words, bits) = ((bits / 32) as usize, bits % 32);
        assert!(
            self.limbs[LIMBS - words..].iter().all(|&l| l == 0),
            "exact: overflow"
        );
        self.limbs.copy_within(0..LIMBS - words, words);
        self.limbs[..words].fill(0);
        if bits > 0 {
            assert_eq!(self.limbs[LIMBS - 1] >> (32 - bits), 0, "exact: overflow");
            for i in (0..LIMBS).rev() {
                let below = if i > 0 { self.limbs[i - 1] } else { 0 };
                self.limbs[i] = (self.limbs[i] << bits) | (below >> (32 - bits));
            }
        }
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.limbs.iter().rev().cmp(other.limbs.iter().rev())
    }
}

/// The order of `d * 10^e10` and `b * 2^e2`.
pub fn compare(d: u128, e10: i32, b: u128, e2: i32) -> Ordering {
    // d * 5^e10 * 2^e10 against b * 2^e2: the powers of five go to one side, the net power of two to one side.
    // In 128 bits when both sides fit (the exact ties and bounds of doubles below about 2^70 and above 2^-64).
    let x = fit(d, e10.max(0), (e10 - e2).max(0));
    let y = fit(b, (-e10).max(0), (e2 - e10).max(0));
    match (x, y) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => compare_big(d, e10, b, e2),
    }
}

fn compare_big(d: u128, e10: i32, b: u128, e2: i32) -> Ordering {
    let (mut x, mut y) = (Big::new(d), Big::new(b));
    if e10 >= 0 {
        x.mul_pow5(e10 as u32);
    } else {
        y.mul_pow5(e10.unsigned_abs());
    }
    let twos = e2 - e10;
    if twos >= 0 {
        y.shl(twos as u32);
    } else {
        x.shl(twos.unsigned_abs());
    }
    x.cmp(&y)
}

/// 5^0 to 5^55, the powers of five below 2^128.
static POW5: [u128; 56] = {
    let mut t = [1u128; 56];
    let mut i = 1;
    while i < 56 {
        t[i] = t[i - 1] * 5;
        i += 1;
    }
    t
};

/// `v * 5^fives * 2^twos` if it fits in 128 bits.
fn fit(v: u128, fives: i32, twos: i32) -> Option<u128> {
    let v = v.checked_mul(*POW5.get(fives as usize)?)?;
    (v == 0 || v.leading_zeros() as i32 >= twos).then(|| v << twos.min(127))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    #[test]
    fn small_cases() {
        assert_eq!(compare(1, 0, 1, 0), Equal);
        assert_eq!(compare(5, -1, 1, -1), Equal); // 0.5 = 2^-1
        assert_eq!(compare(25, -2, 1, -2), Equal);
        assert_eq!(compare(3, 0, 1, 1), Greater);
        assert_eq!(compare(1, 3, 125, 3), Equal); // 1000 = 125 * 8
        assert_eq!(compare(1, 3, 1, 10), Less); // 1000 < 1024
        assert_eq!(compare(1, -3, 1, -10), Greater); // 0.001 > 2^-10
        assert_eq!(compare(9_999, -4, 1, 0), Less);
        assert_eq!(compare(u128::MAX, 0, 1, 128), Less);
        assert_eq!(compare(1, 38, u128::MAX, 0), Less);
        assert_eq!(compare(1, 39, u128::MAX, 0), Greater);
    }

    /// The 128-bit path and the big one agree where both apply.
    #[test]
    fn small_path_agrees() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200_000 {
            let d = u128::from(next() >> (next() % 64));
            let b = u128::from(next() >> (next() % 64));
            let e10 = (next() % 60) as i32 - 30;
            let e2 = (next() % 200) as i32 - 100;
            assert_eq!(
                compare(d, e10, b, e2),
                compare_big(d, e10, b, e2),
                "{d} {e10} {b} {e2}"
            );
            // Equal sides, which random ones never are.
            let e10 = e10.rem_euclid(20);
            let d = b * 5u128.pow(e10 as u32);
            assert_eq!(compare(d, -e10, b, -e10), Equal);
            assert_eq!(compare_big(d, -e10, b, -e10), Equal);
        }
    }

    #[test]
    fn extremes_fit() {
        // The smallest subnormal's scale and the largest double's, and the table's ends.
        assert_eq!(compare(u64::MAX as u128, -343, 1, -1074), Less);
        assert_eq!(compare(1, -324, 1, -1076), Less);
        assert_eq!(compare(1, 309, (1 << 53) - 1, 971), Greater);
        assert_eq!(compare(1, -342, u128::MAX, -1264), Less);
        assert_eq!(compare(1, 324, u128::MAX, 950), Less);
    }
}
