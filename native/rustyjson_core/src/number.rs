//! Number formatting: integers, and floats (`shortest` digits in the OTP layout).

use std::ptr;

use crate::buffer::{Buffer, Storage};
use crate::shortest;

/// Writes a 64-bit integer in decimal.
#[inline]
pub fn write_i64<S: Storage>(out: &mut Buffer<S>, n: i64) {
    out.reserve(20);
    // SAFETY: 20 bytes reserved: a sign and at most 19 digits.
    unsafe {
        let minus = (n < 0) as usize;
        *out.tail_ptr() = b'-';
        out.advance(minus);
        write_u64_reserved(out, n.unsigned_abs());
    }
}

/// Writes a 64-bit unsigned integer in decimal.
#[inline]
pub fn write_u64<S: Storage>(out: &mut Buffer<S>, n: u64) {
    out.reserve(20);
    // SAFETY: 20 bytes reserved, the most digits a u64 has.
    unsafe { write_u64_reserved(out, n) }
}

/// How many decimal digits `n` has (1 for 0): from its bit length (log10(2) ~ 1233 / 4096), then one compare.
#[inline(always)]
pub fn decimal_len(n: u64) -> usize {
    let bits = 64 - (n | 1).leading_zeros() as usize;
    let guess = (bits * 1233) >> 12;
    guess + ((n | 1) >= POW10[guess]) as usize
}

/// The digits of `n`, written from the last pair back with the "00".."99" table: small numbers (most integers in
/// JSON) take one or two steps.
///
/// # Safety
/// `decimal_len(n)` bytes are reserved in `out`.
#[inline(always)]
unsafe fn write_u64_reserved<S: Storage>(out: &mut Buffer<S>, mut n: u64) {
    let len = decimal_len(n);
    let mut end = out.tail_ptr().add(len);
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        end = end.sub(2);
        ptr::copy_nonoverlapping(DIGITS2.as_ptr().add(pair), end, 2);
    }
    if n >= 10 {
        ptr::copy_nonoverlapping(DIGITS2.as_ptr().add(n as usize * 2), end.sub(2), 2);
    } else {
        *end.sub(1) = b'0' + n as u8;
    }
    out.advance(len);
}

/// The shortest digits of a finite, non-zero `f` and their exponent (`f = d * 10^e`): the routine alone, for
/// `examples/float_time.rs` to set the layout's cost against.
pub fn shortest_decimal(f: f64) -> (u64, i32) {
    shortest::decimal(f.to_bits())
}

/// 2^53: from here on OTP writes floats in scientific form whatever the lengths.
const TWO_POW_53: f64 = 9007199254740992.0;

/// "00" to "99".
static DIGITS2: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

static POW10: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// Writes a finite float the way `:erlang.float_to_binary(f, [:short])` lays it out (OTP 25): the shortest
/// digits that round-trip (`shortest`, the same digits as ryu's, which OTP uses), in scientific form when
/// |f| >= 2^53, otherwise in plain decimal or scientific form, whichever is shorter (decimal on a tie).
#[inline]
pub fn write_f64<S: Storage>(out: &mut Buffer<S>, f: f64) {
    let bits = f.to_bits();
    let sign = (bits >> 63) as usize;
    if bits << 1 == 0 {
        out.extend(if sign == 1 { b"-0.0" } else { b"0.0" });
        return;
    }
    // An integral value from 1 to 2^53 (exponent 0 to 52) whose last digit is not 0 (a count, an id, a price in
    // cents): its shortest digits are its own (any shorter decimal is at least 1 away, and doubles there are at
    // most 1 apart), and OTP writes `ddd.0`, shorter than any scientific form of them. Told by its bits alone:
    // the fraction's bits under the binary point are zero.
    let exp = ((bits >> 52) & 0x7FF) as u32;
    if exp.wrapping_sub(1023) < 53 {
        let point = 52 - (exp - 1023);
        let significand = bits & ((1 << 52) - 1) | 1 << 52;
        if significand & ((1 << point) - 1) == 0 {
            let n = significand >> point;
            if !n.is_multiple_of(10) {
                write_integral(out, sign, n);
                return;
            }
        }
    }
    let (d, e) = shortest::decimal(bits);
    // d < 10^17: its digits as three groups (1 + 8 + 8, zero-padded), right-aligned at s[24], then '0' padding,
    // so every copy below is of a fixed size (plain moves, no memcpy calls).
    let hi = d / 100_000_000;
    let low = bcd8(d % 100_000_000);
    let mid = bcd8(hi % 100_000_000);
    let mut s = [b'0'; 48];
    s[7] = b'0' + (hi / 100_000_000) as u8;
    s[8..16].copy_from_slice(&(mid | ZEROS).to_be_bytes());
    s[16..24].copy_from_slice(&(low | ZEROS).to_be_bytes());
    // 16 or 17 digits but for subnormals (see `shortest::decimal`).
    let all = if d >= POW10[15] {
        16 + usize::from(d >= POW10[16])
    } else {
        digit_count(d)
    };
    // Trailing zeros are not significant (d > 0, so fewer than `all`).
    let zeros = if low != 0 {
        low.trailing_zeros() / 8
    } else if mid != 0 {
        8 + mid.trailing_zeros() / 8
    } else {
        16
    } as i32;
    let x = e + all as i32 - 1; // the scientific exponent: f = d.ddd * 10^x
    let nd = all as i32 - zeros; // significant digits
    let digits = s[24 - all..].as_ptr();
    // The length of the scientific form, d.ddde±x (the most common layout, ddd.ddd, does not need it).
    let sci_len = || 3 + (nd - 1).max(1) + exp_len(x);
    out.reserve(48);
    // SAFETY: 48 bytes are reserved; each branch writes at most 1 + 35 of them (sign, then copies of at most
    // 17 + 16 bytes, 5 + 24, or the scientific form's 2 + 16 + 1 + 4); reads from `digits` stay within `s`
    // (at most 24 - all + 16 + 16 with all >= 2, or 24 - all + 24 with all >= 1).
    unsafe {
        let p = out.tail_ptr();
        *p = b'-';
        let p = p.add(sign);
        let len = if 0 <= x && x < nd - 1 {
            // ddd.ddd: the scientific form is always longer. The integer part has at most 16 digits.
            let int = (x + 1) as usize;
            copy::<16>(digits, p);
            *p.add(int) = b'.';
            copy::<16>(digits.add(int), p.add(int + 1));
            nd as usize + 1
        } else if x >= nd - 1 && x + 3 <= sci_len() && f.abs() < TWO_POW_53 {
            // ddd000.0 (below 2^53 at most 16 digits, zeros included).
            let int = (x + 1) as usize;
            copy::<16>(digits, p);
            copy::<2>(b".0".as_ptr(), p.add(int));
            int + 2
        } else if x < 0 && 1 - x + nd <= sci_len() {
            // 0.000ddd: chosen only with at most 3 zeros after the point.
            let lead = (-x - 1) as usize;
            copy::<5>(b"0.000".as_ptr(), p);
            copy::<24>(digits, p.add(2 + lead));
            2 + lead + nd as usize
        } else {
            // d.ddde±x (one digit gets ".0": the padding).
            *p = *digits;
            *p.add(1) = b'.';
            copy::<16>(digits.add(1), p.add(2));
            let mut at = 2 + (nd as usize - 1).max(1);
            *p.add(at) = b'e';
            at += 1;
            if x < 0 {
                *p.add(at) = b'-';
                at += 1;
            }
            let a = x.unsigned_abs() as usize;
            if a >= 100 {
                *p.add(at) = b'0' + (a / 100) as u8;
                copy::<2>(DIGITS2.as_ptr().add(2 * (a % 100)), p.add(at + 1));
                at += 3;
            } else if a >= 10 {
                copy::<2>(DIGITS2.as_ptr().add(2 * a), p.add(at));
                at += 2;
            } else {
                *p.add(at) = b'0' + a as u8;
                at += 1;
            }
            at
        };
        out.advance(sign + len);
    }
}

const ZEROS: u64 = 0x0101_0101_0101_0101 * b'0' as u64;

/// The 8 digits of `n` < 10^8 as the bytes of a u64 (values 0-9, the first digit in the most significant byte),
/// in three rounds over all lanes at once: n becomes two 4-digit numbers in 32-bit lanes, each of those two
/// 2-digit numbers in 16-bit lanes, and each of those two digits in bytes. A lane x whose quotient by 10^j is q
/// (a multiplication by a rounded-up reciprocal and a shift, exact over the lane's range) becomes
/// q * 2^b + (x - q * 10^j), with b half the lane's width: that is x + q * (2^b - 10^j).
#[inline(always)]
fn bcd8(n: u64) -> u64 {
    // n / 10^4 for n < 10^8: 2^41 / 10^4 rounded up is over by 4448 / 10^4, and 10^8 times that stays under
    // 2^41 / 10^4 (a multiplier under 2^31 is an immediate operand).
    let v = n + ((n * 219_902_326) >> 41) * ((1 << 32) - 10_000);
    // x / 100 for x < 10^4 in both 32-bit lanes (2^20 / 100 rounded up; the products stay under 2^27).
    let v = v + (((v * 10_486) >> 20) & 0x0000_007F_0000_007F) * ((1 << 16) - 100);
    // x / 10 for x < 100 in the four 16-bit lanes (2^11 / 10 rounded up; the products stay under 2^15).
    v + (((v * 205) >> 11) & 0x000F_000F_000F_000F) * ((1 << 8) - 10)
}

/// Copies N bytes (a fixed size: the compiler emits plain moves).
///
/// # Safety
/// Both ranges are valid for N bytes and do not overlap.
#[inline(always)]
unsafe fn copy<const N: usize>(from: *const u8, to: *mut u8) {
    ptr::copy_nonoverlapping(from, to, N);
}

/// `n.0`, negative when `sign` is 1 ([`write_f64`]'s integral values, `n` < 2^53). Out of line: in line, its
/// digit loop cost the other floats 6-9%.
#[inline(never)]
fn write_integral<S: Storage>(out: &mut Buffer<S>, sign: usize, n: u64) {
    let n = n as i64;
    write_i64(out, if sign == 1 { -n } else { n });
    out.extend(b".0");
}

/// Decimal digits of `d` (1 for 0).
#[inline(always)]
fn digit_count(d: u64) -> usize {
    let bits = 64 - (d | 1).leading_zeros() as usize;
    let t = (bits * 1233) >> 12;
    // (d | 1: 0 has one digit; for the others it does not change the comparison, as 10^t > 1 is even.)
    t + 1 - usize::from((d | 1) < POW10[t])
}

/// Length of the written exponent `x` (sign included).
#[inline(always)]
fn exp_len(x: i32) -> i32 {
    let a = x.unsigned_abs();
    i32::from(x < 0) + 1 + i32::from(a >= 10) + i32::from(a >= 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: OTP's rule applied to ryu's text `text` for `f` (written from the rule, independently of
    /// `write_f64`).
    fn write_f64_layout<S: Storage>(out: &mut Buffer<S>, f: f64, text: &[u8]) {
        // Split the text into sign, significant digits and exponent (value = d.ddd * 10^exp).
        let (negative, text) = match text.first() {
            Some(b'-') => (true, &text[1..]),
            _ => (false, text),
        };
        let mut digits = [0u8; 32];
        let mut n = 0usize;
        let mut point: i32 = -1; // digits before the '.', counting leading zeros
        let mut e10: i32 = 0;
        let mut i = 0;
        while i < text.len() {
            match text[i] {
                b'.' => point = n as i32,
                b'e' | b'E' => {
                    e10 = parse_exp(&text[i + 1..]);
                    break;
                }
                d => {
                    digits[n] = d;
                    n += 1;
                }
            }
            i += 1;
        }
        if point < 0 {
            point = n as i32;
        }
        // Strip leading zeros (0.00123) and trailing zeros (1200.0).
        let lead = digits[..n].iter().take_while(|&&d| d == b'0').count();
        let mut digits = &digits[lead..n];
        let mut exp = point - lead as i32 - 1 + e10;
        while digits.len() > 1 && digits[digits.len() - 1] == b'0' {
            digits = &digits[..digits.len() - 1];
        }
        if digits.is_empty() {
            digits = b"0";
            exp = 0;
        }
        let nd = digits.len() as i32;

        let decimal_len = if exp < 0 {
            // 0.000ddd
            2 + (-exp - 1) + nd
        } else if exp + 1 >= nd {
            // ddd000.0
            exp + 1 + 2
        } else {
            nd + 1
        };
        let sci_len = 2 + (nd - 1).max(1) + 1 + exp_len(exp);
        let scientific = f.abs() >= TWO_POW_53 || sci_len < decimal_len;

        out.reserve(32);
        unsafe {
            if negative {
                out.push_unchecked(b'-');
            }
            if scientific {
                out.push_unchecked(digits[0]);
                out.push_unchecked(b'.');
                if nd > 1 {
                    out.extend_unchecked(&digits[1..]);
                } else {
                    out.push_unchecked(b'0');
                }
                out.push_unchecked(b'e');
                write_i64(out, exp as i64);
            } else if exp < 0 {
                out.extend_unchecked(b"0.");
                for _ in 0..(-exp - 1) {
                    out.push_unchecked(b'0');
                }
                out.extend_unchecked(digits);
            } else if exp + 1 >= nd {
                out.extend_unchecked(digits);
                for _ in 0..(exp + 1 - nd) {
                    out.push_unchecked(b'0');
                }
                out.extend_unchecked(b".0");
            } else {
                let int_len = (exp + 1) as usize;
                out.extend_unchecked(&digits[..int_len]);
                out.push_unchecked(b'.');
                out.extend_unchecked(&digits[int_len..]);
            }
        }
    }

    fn parse_exp(s: &[u8]) -> i32 {
        let (neg, s) = match s.first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let v = s.iter().fold(0i32, |acc, &d| acc * 10 + (d - b'0') as i32);
        if neg {
            -v
        } else {
            v
        }
    }

    fn exp_len(exp: i32) -> i32 {
        let sign = if exp < 0 { 1 } else { 0 };
        let a = exp.unsigned_abs();
        sign + if a >= 100 {
            3
        } else if a >= 10 {
            2
        } else {
            1
        }
    }

    fn float(f: f64) -> String {
        let mut out = Buffer::default();
        write_f64(&mut out, f);
        String::from_utf8(out.into_vec()).unwrap()
    }

    #[test]
    fn otp_short_layout() {
        assert_eq!(float(0.0), "0.0");
        assert_eq!(float(-0.0), "-0.0");
        assert_eq!(float(1.0), "1.0");
        assert_eq!(float(100.0), "100.0");
        assert_eq!(float(1000.0), "1.0e3");
        assert_eq!(float(-138300.0), "-1.383e5");
        assert_eq!(float(123456789.0), "123456789.0");
        assert_eq!(float(0.0001), "0.0001");
        assert_eq!(float(0.00012), "1.2e-4");
        assert_eq!(float(-2.5e-5), "-2.5e-5");
        assert_eq!(float(1.0e20), "1.0e20");
        assert_eq!(float(123.456), "123.456");
        assert_eq!(float(0.30000000000000004), "0.30000000000000004");
        assert_eq!(float(5.0e-324), "5.0e-324");
        assert_eq!(float(1.7976931348623157e308), "1.7976931348623157e308");
    }

    #[test]
    fn fast_paths_agree_with_the_layout() {
        let mut x = 1.0e-7f64;
        let mut cases = vec![
            0.0, -0.0, 1.0, 10.0, 100.0, 120.0, 1200.0, 0.1, 0.01, 0.001, 0.0001, 0.00012,
        ];
        while x < 1.0e18 {
            cases.extend([x, -x, x * 1.5, x * 7.25, x + 0.5, x * 0.123]);
            x *= 10.0;
        }
        for f in cases {
            assert_eq!(float(f), ryu_layout(f), "{f:e}");
        }
    }

    /// Integral values (the `ddd.0` path when the last digit is not 0, the general one when it is): every one up
    /// to 100,000 and around each power of two and ten up to 2^53 and past it, both signs.
    #[test]
    fn integral_values_agree_with_the_layout() {
        let mut cases: Vec<f64> = (1..=100_000).map(|n| n as f64).collect();
        for k in 0..=60 {
            let p = 2f64.powi(k);
            cases.extend([p - 1.0, p, p + 1.0, p + 2.0, p * 3.0]);
        }
        for k in 0..=17 {
            let p = 10f64.powi(k);
            cases.extend([p - 1.0, p, p + 1.0, p * 7.0 + 3.0]);
        }
        cases.extend([0.5, 1.5, 2.5e-7, 4503599627370495.5, 9007199254740991.0]);
        for f in cases {
            assert_eq!(float(f), ryu_layout(f), "{f:e}");
            assert_eq!(float(-f), ryu_layout(-f), "{f:e}");
        }
    }

    /// OTP's layout of ryu's digits (OTP's `[:short]` is ryu).
    fn ryu_layout(f: f64) -> String {
        let mut out = Buffer::default();
        write_f64_layout(&mut out, f, ryu::Buffer::new().format_finite(f).as_bytes());
        String::from_utf8(out.into_vec()).unwrap()
    }

    /// Our digits (shortest.rs) are ryu's, and the fast paths agree with the layout, on random bit patterns (every
    /// exponent, subnormals included) and on random short decimals (the common JSON case).
    #[test]
    fn same_digits_as_ryu() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            // xorshift64*
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_F491_4F6C_DD1D)
        };
        for _ in 0..300_000 {
            let f = f64::from_bits(next());
            if f.is_finite() {
                assert_eq!(float(f), ryu_layout(f), "{f:e}");
            }
            let digits = (next() % 10_000_000_000) as f64;
            let scale = 10f64.powi((next() % 40) as i32 - 20);
            let f = digits * scale;
            assert_eq!(float(f), ryu_layout(f), "{f:e}");
            assert_eq!(float(-f / 7.0), ryu_layout(-f / 7.0), "{f:e}");
        }
    }

    /// The cases random bit patterns miss: powers of two (the irregular spacing below them) and their
    /// neighbours, subnormals, every exponent's extremes, integers around 2^53 and the decimal boundaries.
    #[test]
    fn same_digits_as_ryu_on_edges() {
        let mut cases = vec![f64::MIN_POSITIVE, f64::MAX, f64::EPSILON, 5e-324, 1e-323];
        for e in 0..2047u64 {
            let base = e << 52;
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
                cases.push(f64::from_bits(base | m));
            }
        }
        for i in 1..20_000u64 {
            cases.push(f64::from_bits(i));
            cases.push((1u64 << 53) as f64 + (i as f64 - 10_000.0) * 2.0);
        }
        for k in -325..=308 {
            let p = 10f64.powi(k);
            cases.extend([p, p.next_up(), p.next_down()]);
        }
        for f in cases {
            if f.is_finite() {
                assert_eq!(float(f), ryu_layout(f), "{:x}", f.to_bits());
                assert_eq!(float(-f), ryu_layout(-f), "{:x}", f.to_bits());
            }
        }
    }

    /// Every 8-digit group (every 7th without optimizations, which take longer).
    #[test]
    fn bcd8_every_value() {
        let step = if cfg!(debug_assertions) { 7 } else { 1 };
        for n in (0..100_000_000u64).step_by(step).chain([99_999_999]) {
            let expected = (0..8).fold(0, |acc, i| acc | (n / 10u64.pow(i) % 10) << (8 * i));
            assert_eq!(bcd8(n), expected, "{n}");
        }
    }

    #[test]
    fn scientific_from_two_pow_53() {
        assert_eq!(float(9007199254740992.0), "9.007199254740992e15");
        assert_eq!(float(-9007199254740992.0), "-9.007199254740992e15");
        assert_eq!(float(9007199254740990.0), "9007199254740990.0");
        assert_eq!(float(1.8014398509481984e16), "1.8014398509481984e16");
    }

    #[test]
    fn integers() {
        let mut out = Buffer::default();
        write_i64(&mut out, i64::MIN);
        out.push(b' ');
        write_u64(&mut out, u64::MAX);
        assert_eq!(out.as_slice(), b"-9223372036854775808 18446744073709551615");
    }

    #[test]
    fn integers_as_rust_writes_them() {
        // Every length and both sides of each power of ten, then a spread of values of every bit length.
        let mut values: Vec<i64> = vec![0, 1, -1, i64::MAX, i64::MIN, i64::MIN + 1];
        for k in 0..19 {
            let p = 10i64.pow(k);
            values.extend([p - 1, p, p + 1, -p, 1 - p, -p - 1]);
        }
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for shift in 0..64 {
            for _ in 0..200 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                values.push((x >> shift) as i64);
            }
        }
        for v in values {
            let mut out = Buffer::default();
            write_i64(&mut out, v);
            assert_eq!(out.as_slice(), v.to_string().as_bytes());
            let mut out = Buffer::default();
            write_u64(&mut out, v as u64);
            assert_eq!(out.as_slice(), (v as u64).to_string().as_bytes());
            assert_eq!(decimal_len(v as u64), (v as u64).to_string().len());
        }
    }
}
