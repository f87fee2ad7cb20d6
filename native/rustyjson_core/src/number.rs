//! Number formatting (itoa, zmij) and the OTP float layout.

use std::ptr;

use crate::buffer::{Buffer, Storage};

/// Writes a 64-bit integer in decimal.
#[inline]
pub fn write_i64<S: Storage>(out: &mut Buffer<S>, n: i64) {
    let mut buf = itoa::Buffer::new();
    out.extend(buf.format(n).as_bytes());
}

/// Writes a 64-bit unsigned integer in decimal.
#[inline]
pub fn write_u64<S: Storage>(out: &mut Buffer<S>, n: u64) {
    let mut buf = itoa::Buffer::new();
    out.extend(buf.format(n).as_bytes());
}

/// 2^53: from here on OTP writes floats in scientific form whatever the lengths.
const TWO_POW_53: f64 = 9007199254740992.0;

/// Writes a finite float the way `:erlang.float_to_binary(f, [:short])` lays it out (OTP 25): the shortest
/// digits that round-trip (zmij's, the same as ryu's, which OTP uses), in scientific form when |f| >= 2^53,
/// otherwise in plain decimal or scientific form, whichever is shorter (decimal on a tie).
///
/// zmij's text already is OTP's in the common cases (`-65.613617`, `0.04166`, `3.0`: the scientific form is never
/// shorter) and needs only small fix-ups when it is scientific (`1e-7` -> `1.0e-7`, `1.5e+20` -> `1.5e20`; zmij
/// turns to it only where OTP does too). The other cases (`1000.0`, `0.00012`, 2^53 up to 10^16) are laid out
/// again by `write_f64_layout`.
#[inline]
pub fn write_f64<S: Storage>(out: &mut Buffer<S>, f: f64) {
    let mut zb = zmij::Buffer::new();
    let text = zb.format_finite(f).as_bytes();
    let n = text.len();
    out.reserve(32);
    // SAFETY: zmij writes at most 24 bytes; 32 are reserved. Fix-ups below add at most 2 bytes.
    unsafe {
        let start = out.tail_ptr();
        ptr::copy_nonoverlapping(text.as_ptr(), start, n);
        let digits_from = (text[0] == b'-') as usize;
        // An exponent has at most 3 digits and a sign, so 'e' is among the last 5 bytes.
        if let Some(e) = text[n.saturating_sub(5)..].iter().position(|&b| b == b'e') {
            let e = n.saturating_sub(5) + e;
            let mut len = n;
            if text[e + 1] == b'+' {
                // 1.5e+20 -> 1.5e20
                ptr::copy(start.add(e + 2), start.add(e + 1), n - e - 2);
                len -= 1;
            }
            if e == digits_from + 1 {
                // 1e-7 -> 1.0e-7
                ptr::copy(start.add(e), start.add(e + 2), len - e);
                ptr::copy_nonoverlapping(b".0".as_ptr(), start.add(e), 2);
                len += 2;
            }
            out.advance(len);
            return;
        }
        let body = &text[digits_from..];
        let as_is = if body.starts_with(b"0.") {
            // 0.0, 0.d, 0.0d, 0.00d: the scientific form is never shorter (from 0.000d on it can be).
            let zeros = body[2..].iter().take_while(|&&b| b == b'0').count();
            zeros <= 2 || zeros == body.len() - 2
        } else if body.ends_with(b".0") {
            // ddd.0 with a last integer digit other than 0 (100.0 vs 1.0e2 needs counting), below 2^53.
            body[body.len() - 3] != b'0' && f.abs() < TWO_POW_53
        } else {
            // ddd.ddd: the scientific form is always longer.
            true
        };
        if as_is {
            out.advance(n);
            return;
        }
    }
    write_f64_layout(out, f, text);
}

/// Lays out zmij's (or ryu's) text `text` for `f` by OTP's rule (the general case of `write_f64`).
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
            let mut ib = itoa::Buffer::new();
            out.extend_unchecked(ib.format(exp).as_bytes());
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// OTP's layout of ryu's digits (OTP's `[:short]` is ryu).
    fn ryu_layout(f: f64) -> String {
        let mut out = Buffer::default();
        write_f64_layout(&mut out, f, ryu::Buffer::new().format_finite(f).as_bytes());
        String::from_utf8(out.into_vec()).unwrap()
    }

    /// zmij's digits are ryu's, and the fast paths agree with the layout, on random bit patterns (every
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
}
