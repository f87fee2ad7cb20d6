//! Decimal text to `f64`, correctly rounded: an exact fast path for short mantissas and small exponents,
//! otherwise the standard library's (correct) parser.

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Parses a JSON number token (already validated) to a finite `f64`; `None` when it is out of range.
#[inline]
pub fn parse_float(text: &[u8]) -> Option<f64> {
    if let Some(v) = fast(text) {
        return Some(v);
    }
    // The token is ASCII by construction.
    let s = std::str::from_utf8(text).ok()?;
    let v: f64 = s.parse().ok()?;
    v.is_finite().then_some(v)
}

/// Clinger's fast path: a mantissa below 2^53 times an exact power of ten is correctly rounded.
#[inline]
fn fast(text: &[u8]) -> Option<f64> {
    let mut i = 0;
    let neg = text.first() == Some(&b'-');
    if neg {
        i += 1;
    }
    let mut mantissa: u64 = 0;
    let mut digits = 0;
    let mut exp: i32 = 0;
    while let Some(&d @ b'0'..=b'9') = text.get(i) {
        mantissa = mantissa * 10 + (d - b'0') as u64;
        if mantissa != 0 {
            digits += 1;
        }
        i += 1;
        if digits > 15 {
            return None;
        }
    }
    if text.get(i) == Some(&b'.') {
        i += 1;
        while let Some(&d @ b'0'..=b'9') = text.get(i) {
            mantissa = mantissa * 10 + (d - b'0') as u64;
            if mantissa != 0 {
                digits += 1;
            }
            exp -= 1;
            i += 1;
            if digits > 15 {
                return None;
            }
        }
    }
    if digits > 15 {
        return None;
    }
    if matches!(text.get(i), Some(b'e' | b'E')) {
        i += 1;
        let eneg = match text.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let mut e: i32 = 0;
        while let Some(&d @ b'0'..=b'9') = text.get(i) {
            if e > 10_000 {
                return None;
            }
            e = e * 10 + (d - b'0') as i32;
            i += 1;
        }
        exp += if eneg { -e } else { e };
    }
    if i != text.len() || !(-22..=22).contains(&exp) {
        return None;
    }
    let m = mantissa as f64;
    let v = if exp >= 0 {
        m * POW10[exp as usize]
    } else {
        m / POW10[(-exp) as usize]
    };
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        ];
        for c in cases {
            let expected: f64 = c.parse().unwrap();
            let got = parse_float(c.as_bytes()).unwrap();
            assert_eq!(got.to_bits(), expected.to_bits(), "{c}");
        }
        assert_eq!(parse_float(b"1e400"), None);
        assert_eq!(parse_float(b"-1.7976931348623159e308"), None);
    }
}
