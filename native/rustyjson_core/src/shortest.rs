//! The shortest decimal that reads back as a given `f64` (the digits ryu gives, so OTP's `[:short]` digits), as an
//! integer and a power of ten. number.rs lays those out OTP's way directly: formatting text and reading it back
//! cost as much as finding the digits.
//!
//! This is the core of zmij 1.0.23 (crates.io; David Tolnay's Rust port of Victor Zverovich's Żmij, a
//! Schubfach/xjb algorithm), reduced to `f64` and to its `to_decimal` step; used under the MIT licence, whose
//! notice is in `LICENSE-zmij` beside this crate's Cargo.toml. `number::tests` checks the digits against ryu's.

#[derive(Clone, Copy)]
struct U128 {
    hi: u64,
    lo: u64,
}

const fn umul128_hi64(x: u64, y: u64) -> u64 {
    ((x as u128 * y as u128) >> 64) as u64
}

/// (x * y + c) >> 64.
#[inline(always)]
fn umul128_add_hi64(x: u64, y: u64, c: u64) -> u64 {
    ((u128::from(x) * u128::from(y) + u128::from(c)) >> 64) as u64
}

#[inline(always)]
fn umul192_hi128(x_hi: u64, x_lo: u64, y: u64) -> U128 {
    let p = x_hi as u128 * y as u128;
    let lo = (p as u64).wrapping_add(umul128_hi64(x_lo, y));
    U128 {
        hi: (p >> 64) as u64 + u64::from(lo < p as u64),
        lo,
    }
}

/// floor(log10(2^bin_exp)) when regular, floor(log10(3/4 * 2^bin_exp)) otherwise.
#[inline(always)]
const fn compute_dec_exp(bin_exp: i32, regular: bool) -> i32 {
    const LOG10_3_OVER_4_SIG: i32 = 131_072;
    const LOG10_2_SIG: i32 = 315_653;
    const LOG10_2_EXP: i32 = 20;
    (bin_exp * LOG10_2_SIG - !regular as i32 * LOG10_3_OVER_4_SIG) >> LOG10_2_EXP
}

/// The shift that gives the scaled significand a fixed 128-bit fractional part, before `EXTRA_SHIFT` is added (it
/// can be negative, down to -2 for powers of two; as a `u8`, as it was, only the release build's wrapping shifts
/// made it come out right, because 256 is a multiple of 64, and the overflow-checked build panicked on 1.0).
#[inline(always)]
const fn compute_exp_shift(bin_exp: i32, dec_exp: i32) -> i32 {
    const LOG2_POW10_SIG: i32 = 217_707;
    const LOG2_POW10_EXP: i32 = 16;
    let pow10_bin_exp = (-dec_exp * LOG2_POW10_SIG) >> LOG2_POW10_EXP;
    bin_exp + pow10_bin_exp + 1
}

const POW10_MINOR: [u64; 28] = [
    0x8000000000000000,
    0xa000000000000000,
    0xc800000000000000,
    0xfa00000000000000,
    0x9c40000000000000,
    0xc350000000000000,
    0xf424000000000000,
    0x9896800000000000,
    0xbebc200000000000,
    0xee6b280000000000,
    0x9502f90000000000,
    0xba43b74000000000,
    0xe8d4a51000000000,
    0x9184e72a00000000,
    0xb5e620f480000000,
    0xe35fa931a0000000,
    0x8e1bc9bf04000000,
    0xb1a2bc2ec5000000,
    0xde0b6b3a76400000,
    0x8ac7230489e80000,
    0xad78ebc5ac620000,
    0xd8d726b7177a8000,
    0x878678326eac9000,
    0xa968163f0a57b400,
    0xd3c21bcecceda100,
    0x84595161401484a0,
    0xa56fa5b99019a5c8,
    0xcecb8f27f4200f3a,
];

#[rustfmt::skip]
const POW10_MAJOR: [U128; 23] = [
    U128 { hi: 0xaf8e5410288e1b6f, lo: 0x07ecf0ae5ee44dda }, // -303
    U128 { hi: 0xb1442798f49ffb4a, lo: 0x99cd11cfdf41779d }, // -275
    U128 { hi: 0xb2fe3f0b8599ef07, lo: 0x861fa7e6dcb4aa15 }, // -247
    U128 { hi: 0xb4bca50b065abe63, lo: 0x0fed077a756b53aa }, // -219
    U128 { hi: 0xb67f6455292cbf08, lo: 0x1a3bc84c17b1d543 }, // -191
    U128 { hi: 0xb84687c269ef3bfb, lo: 0x3d5d514f40eea742 }, // -163
    U128 { hi: 0xba121a4650e4ddeb, lo: 0x92f34d62616ce413 }, // -135
    U128 { hi: 0xbbe226efb628afea, lo: 0x890489f70a55368c }, // -107
    U128 { hi: 0xbdb6b8e905cb600f, lo: 0x5400e987bbc1c921 }, //  -79
    U128 { hi: 0xbf8fdb78849a5f96, lo: 0xde98520472bdd034 }, //  -51
    U128 { hi: 0xc16d9a0095928a27, lo: 0x75b7053c0f178294 }, //  -23
    U128 { hi: 0xc350000000000000, lo: 0x0000000000000000 }, //    5
    U128 { hi: 0xc5371912364ce305, lo: 0x6c28000000000000 }, //   33
    U128 { hi: 0xc722f0ef9d80aad6, lo: 0x424d3ad2b7b97ef6 }, //   61
    U128 { hi: 0xc913936dd571c84c, lo: 0x03bc3a19cd1e38ea }, //   89
    U128 { hi: 0xcb090c8001ab551c, lo: 0x5cadf5bfd3072cc6 }, //  117
    U128 { hi: 0xcd036837130890a1, lo: 0x36dba887c37a8c10 }, //  145
    U128 { hi: 0xcf02b2c21207ef2e, lo: 0x94f967e45e03f4bc }, //  173
    U128 { hi: 0xd106f86e69d785c7, lo: 0xe13336d701beba52 }, //  201
    U128 { hi: 0xd31045a8341ca07c, lo: 0x1ede48111209a051 }, //  229
    U128 { hi: 0xd51ea6fa85785631, lo: 0x552a74227f3ea566 }, //  257
    U128 { hi: 0xd732290fbacaf133, lo: 0xa97c177947ad4096 }, //  285
    U128 { hi: 0xd94ad8b1c7380874, lo: 0x18375281ae7822bc }, //  313
];

#[rustfmt::skip]
const POW10_FIXUPS: [u32; 20] = [
    0x0a4e363f, 0x00001840, 0x00006400, 0x24200040, 0x00000000,
    0x0c000000, 0x82c81380, 0x5e4ce01f, 0xd730f60f, 0x0000001b,
    0x00000000, 0xcdf7fffc, 0x6e8201d8, 0x40cd3fd1, 0xdb642501,
    0x00000d0d, 0x14042400, 0x53713840, 0x11781db4, 0x00000000,
];

// 128-bit significands of powers of 10 rounded down.

const NUM_POW10S: usize = 618;
const DEC_EXP_MIN: i32 = -293;

/// 128-bit significands of 10^k (k from DEC_EXP_MIN), rounded down, computed at compile time (Dougall Johnson's
/// method, as zmij).
static POW10: [U128; NUM_POW10S] = {
    let mut table = [U128 { hi: 0, lo: 0 }; NUM_POW10S];
    let mut i = 0;
    while i < NUM_POW10S {
        table[i] = pow10_significand(i as u32);
        i += 1;
    }
    table
};

const fn pow10_significand(i: u32) -> U128 {
    const STRIDE: u32 = POW10_MINOR.len() as u32;
    let m = POW10_MINOR[((i + 10) % STRIDE) as usize];
    let h = POW10_MAJOR[((i + 10) / STRIDE) as usize];
    let h1 = umul128_hi64(h.lo, m);
    let c0 = h.lo.wrapping_mul(m);
    let c1 = h1.wrapping_add(h.hi.wrapping_mul(m));
    let c2 = (c1 < h1) as u64 + umul128_hi64(h.hi, m);
    let mut result = if (c2 >> 63) != 0 {
        U128 { hi: c2, lo: c1 }
    } else {
        U128 {
            hi: (c2 << 1) | (c1 >> 63),
            lo: (c1 << 1) | (c0 >> 63),
        }
    };
    result.lo -= ((POW10_FIXUPS[(i >> 5) as usize] >> (i & 31)) & 1) as u64;
    result
}

#[inline(always)]
fn pow10(dec_exp: i32) -> U128 {
    // dec_exp stays within the table for every finite double (zmij's bounds).
    POW10[(dec_exp - DEC_EXP_MIN) as usize]
}

const EXTRA_SHIFT: u32 = 6;
const EXP_OFFSET: i32 = 1023 + 52;
const IMPLICIT_BIT: u64 = 1 << 52;

/// `|f|` (finite) as `digits * 10^exp`: the shortest digits that read back as `f` (the closest of them), possibly
/// with trailing zeros (the caller strips them). Zero gives (0, 0).
#[inline(always)]
pub fn decimal(bits: u64) -> (u64, i32) {
    let raw_exp = ((bits >> 52) & 0x7FF) as i32;
    let bin_sig = bits & (IMPLICIT_BIT - 1);
    let (sig, exp, digit, has_digit) = if raw_exp == 0 {
        if bin_sig == 0 {
            return (0, 0);
        }
        // Subnormal: the regular computation with the smallest exponent.
        to_decimal(bin_sig, 1 - EXP_OFFSET, true)
    } else {
        to_decimal(bin_sig | IMPLICIT_BIT, raw_exp - EXP_OFFSET, bin_sig != 0)
    };
    // sig * 10^(exp + 1) when a shorter candidate rounds to f; else one more digit is needed.
    (sig * 10 + if has_digit { digit } else { 0 }, exp)
}

/// zmij's `to_decimal` for f64: scales `bin_sig * 2^bin_exp` by 10^(-dec_exp - 1) to get the 16-17 digit
/// candidate, and the next digit from the fractional part; `regular` is false for powers of two (whose lower
/// neighbour is closer).
#[inline(always)]
fn to_decimal(bin_sig: u64, bin_exp: i32, regular: bool) -> (u64, i32, u64, bool) {
    if !regular {
        let dec_exp = compute_dec_exp(bin_exp, false);
        let shift = (compute_exp_shift(bin_exp, dec_exp + 1) + EXTRA_SHIFT as i32) as u32;
        let pow10 = pow10(-dec_exp - 1);
        let p = umul192_hi128(pow10.hi, pow10.lo, bin_sig << shift);
        let mut integral = p.hi >> EXTRA_SHIFT;
        let fractional = (p.hi << (64 - EXTRA_SHIFT)) | (p.lo >> EXTRA_SHIFT);
        let half_ulp = pow10.hi >> (EXTRA_SHIFT + 1 - shift);
        let round_up = half_ulp > u64::MAX - fractional;
        let round_down = (half_ulp >> 1) > fractional;
        integral += u64::from(round_up);
        let mut digit = umul128_add_hi64(fractional, 10, (1 << 63) - 1);
        let lo = umul128_add_hi64(fractional.wrapping_sub(half_ulp >> 1), 10, !0);
        if digit < lo {
            digit = lo;
        }
        return (integral, dec_exp, digit, !(round_up || round_down));
    }
    let dec_exp = compute_dec_exp(bin_exp, true);
    let shift = (compute_exp_shift(bin_exp, dec_exp + 1) + EXTRA_SHIFT as i32) as u32;
    let even = 1 - (bin_sig & 1);
    // Xiang JunBo's optimisation (as zmij): scale by 10^(-dec_exp - 1) to get the shorter candidate directly
    // and derive the extra digit from the fractional part.
    let pow10 = pow10(-dec_exp - 1);
    let p = umul192_hi128(pow10.hi, pow10.lo, bin_sig << shift);
    let mut integral = p.hi >> EXTRA_SHIFT;
    let fractional = (p.hi << (64 - EXTRA_SHIFT)) | (p.lo >> EXTRA_SHIFT);
    let half_ulp = (pow10.hi >> (EXTRA_SHIFT + 1 - shift)) + even;
    let round_up = fractional.wrapping_add(half_ulp) < fractional;
    let round_down = half_ulp > fractional;
    integral += u64::from(round_up);
    // (1 << 63) + 6: zmij's biased half (+6 for boundary cases its verifier found).
    let mut digit = umul128_add_hi64(fractional, 10, (1 << 63) + 6);
    if fractional == (1 << 62) {
        digit = 2; // 2.5 rounds to 2.
    }
    (integral, dec_exp, digit, !(round_up || round_down))
}
