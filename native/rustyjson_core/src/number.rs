//! Number formatting (itoa, ryu) and the OTP float layout.

use crate::buffer::Buffer;

/// Writes a 64-bit integer in decimal.
#[inline]
pub fn write_i64(out: &mut Buffer, n: i64) {
    let mut buf = itoa::Buffer::new();
    out.extend(buf.format(n).as_bytes());
}

/// Writes a finite float the way `:erlang.float_to_binary(f, [:short])` lays it out:
/// ryu's shortest digits, in plain decimal or scientific form, whichever is shorter (decimal on a tie).
pub fn write_f64(out: &mut Buffer, f: f64) {
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(f).as_bytes();
    let (negative, digits, point) = split_ryu(text);
    if negative {
        out.push(b'-');
    }
    let digits = digits.as_slice();
    let n = digits.len() as i32;
    let decimal_len = if point <= 0 {
        2 + (-point) + n
    } else if point < n {
        n + 1
    } else {
        point + 2
    };
    let exp = point - 1;
    let sci_len = 1 + 1 + (n - 1).max(1) + 1 + exp_len(exp);
    if decimal_len <= sci_len {
        if point <= 0 {
            out.extend(b"0.");
            for _ in 0..(-point) {
                out.push(b'0');
            }
            out.extend(digits);
        } else if point < n {
            out.extend(&digits[..point as usize]);
            out.push(b'.');
            out.extend(&digits[point as usize..]);
        } else {
            out.extend(digits);
            for _ in 0..(point - n) {
                out.push(b'0');
            }
            out.extend(b".0");
        }
    } else {
        out.push(digits[0]);
        out.push(b'.');
        if n > 1 {
            out.extend(&digits[1..]);
        } else {
            out.push(b'0');
        }
        out.push(b'e');
        write_i64(out, exp as i64);
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

/// Splits ryu's text into sign, significant digits (no leading/trailing zeros) and the position of the
/// decimal point relative to the first digit (value = 0.DIGITS * 10^point).
fn split_ryu(text: &[u8]) -> (bool, Vec<u8>, i32) {
    let (negative, text) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exp) = match text.iter().position(|&b| b == b'e') {
        Some(i) => {
            let e: i32 = std::str::from_utf8(&text[i + 1..])
                .unwrap()
                .parse()
                .unwrap();
            (&text[..i], e)
        }
        None => (text, 0),
    };
    let mut digits = Vec::with_capacity(mantissa.len());
    let mut point = None;
    for &b in mantissa {
        if b == b'.' {
            point = Some(digits.len() as i32);
        } else {
            digits.push(b);
        }
    }
    let mut point = point.unwrap_or(digits.len() as i32) + exp;
    let leading = digits.iter().take_while(|&&b| b == b'0').count();
    digits.drain(..leading);
    point -= leading as i32;
    while digits.len() > 1 && *digits.last().unwrap() == b'0' {
        digits.pop();
    }
    if digits.is_empty() {
        digits.push(b'0');
        point = 1;
    }
    (negative, digits, point)
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
        assert_eq!(float(1.0), "1.0");
        assert_eq!(float(100.0), "100.0");
        assert_eq!(float(1000.0), "1.0e3");
        assert_eq!(float(0.0001), "0.0001");
        assert_eq!(float(0.00012), "1.2e-4");
        assert_eq!(float(-2.5e-5), "-2.5e-5");
        assert_eq!(float(1.0e20), "1.0e20");
    }

    #[test]
    fn integers() {
        let mut out = Buffer::default();
        write_i64(&mut out, i64::MIN);
        assert_eq!(out.as_slice(), b"-9223372036854775808");
    }
}
