//! Number tokens: integers (with Jason's digit limit) and floats, read with few branches per digit.

use super::*;

impl Parser<'_> {
    #[inline(always)]
    pub(super) fn number<B: Builder>(&mut self, b: &mut B) -> Result<B::V, ParseError> {
        let input = self.input;
        let start = self.pos;
        let neg = input[start] == b'-';
        let mut pos = start + neg as usize;
        let int_start = pos;
        // Significant digits accumulate in `w` (at most 19 of them; `many` once there are more).
        let mut w: u64 = 0;
        let mut sig = 0u32;
        match input.get(pos) {
            Some(b'0') => pos += 1,
            Some(b'1'..=b'9') => {
                sig = digit_run(input, &mut pos, &mut w);
                if sig <= self.fast_int_digits
                    && !matches!(input.get(pos), Some(b'.' | b'e' | b'E'))
                {
                    self.pos = pos;
                    let v = w as i64;
                    return Ok(b.int(if neg { -v } else { v }));
                }
            }
            _ => return Err(self.err_at(pos)),
        }
        let int_end = pos;
        let mut q: i64 = 0;
        let has_frac = input.get(pos) == Some(&b'.');
        if has_frac {
            pos += 1;
            let frac_start = pos;
            if w == 0 {
                // Zeros before the first significant digit (`0.00012`) count in the exponent only.
                while input.get(pos) == Some(&b'0') {
                    pos += 1;
                }
            }
            sig += digit_run(input, &mut pos, &mut w);
            if pos == frac_start {
                return Err(self.err_at(pos));
            }
            q = -((pos - frac_start) as i64);
        }
        let mut has_exp = false;
        if matches!(input.get(pos), Some(b'e' | b'E')) {
            has_exp = true;
            pos += 1;
            let eneg = match input.get(pos) {
                Some(b'-') => {
                    pos += 1;
                    true
                }
                Some(b'+') => {
                    pos += 1;
                    false
                }
                _ => false,
            };
            let exp_start = pos;
            let mut e: i64 = 0;
            while let Some(&d @ b'0'..=b'9') = input.get(pos) {
                if e < 1_000_000 {
                    e = e * 10 + (d - b'0') as i64;
                }
                pos += 1;
            }
            if pos == exp_start {
                return Err(self.err_at(pos));
            }
            q += if eneg { -e } else { e };
        }
        self.pos = pos;
        let text = &input[start..pos];
        if has_frac || has_exp {
            if self.defers && text.len() > LONG_NUMBER {
                // As a decimal (`floats: :decimals`) its digits convert in quadratic time.
                return Err(ParseError::LongToken(start));
            }
            let value = if sig <= 19 {
                crate::float::from_parts(neg, w, q)
            } else {
                None
            };
            let value = match value {
                Some(v) => Some(v),
                None => crate::float::parse_float(text),
            };
            match value {
                // Jason reads `-0e...` (zero, exponent, no fraction) as 0.0, not -0.0.
                Some(_)
                    if neg && !has_frac && int_end - int_start == 1 && input[int_start] == b'0' =>
                {
                    Ok(b.float(text, 0.0))
                }
                Some(v) => Ok(b.float(text, v)),
                None => b
                    .float_out_of_range(text)
                    .ok_or(ParseError::Token { start, end: pos }),
            }
        } else {
            if input[int_start] == b'0' {
                // `0` or `-0` (Jason reads them apart, with no length check).
                return Ok(b.int(0));
            }
            if text.len() > self.integer_bytes {
                return Err(ParseError::Token { start, end: pos });
            }
            // Up to 19 digits `w` is exact, and may fit an i64 (fewer digits come here under a small limit).
            if int_end - int_start <= 19 {
                if !neg && w <= i64::MAX as u64 {
                    return Ok(b.int(w as i64));
                }
                if neg && w <= i64::MAX as u64 + 1 {
                    return Ok(b.int((w as i64).wrapping_neg()));
                }
            }
            if self.defers && text.len() > LONG_NUMBER {
                return Err(ParseError::LongToken(start));
            }
            Ok(b.big_int(text))
        }
    }
}

/// Adds the run of digits at `pos` to `w` (`w * 10^n + digits`) and returns its length `n`, reading 16 bytes at a
/// time with no branch per digit: the length of a number's digit runs varies from one number to the next, and a
/// digit-by-digit loop mispredicts at its end. Past 19 digits `w` wraps; such numbers are re-read from their text.
/// (The two word steps are written out: helper functions for them cost 3% more instructions on mesh.)
#[inline(always)]
fn digit_run(input: &[u8], pos: &mut usize, w: &mut u64) -> u32 {
    const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
    let start = *pos;
    // Sixteen bytes per step while they are there: a 9-15 digit run (long fractions) takes one step.
    while let Some(chunk) = input.get(*pos..*pos + 16) {
        let x = u64::from_le_bytes(chunk[..8].try_into().unwrap());
        let n = crate::float::leading_digits(x);
        if n < 8 {
            *w = w
                .wrapping_mul(POW10[n])
                .wrapping_add(crate::float::parse_digits(x, n));
            *pos += n;
            return (*pos - start) as u32;
        }
        *w = w
            .wrapping_mul(100_000_000)
            .wrapping_add(crate::float::parse_eight_digits(x));
        let y = u64::from_le_bytes(chunk[8..].try_into().unwrap());
        let m = crate::float::leading_digits(y);
        if m < 8 {
            *w = w
                .wrapping_mul(POW10[m])
                .wrapping_add(crate::float::parse_digits(y, m));
            *pos += 8 + m;
            return (*pos - start) as u32;
        }
        *w = w
            .wrapping_mul(100_000_000)
            .wrapping_add(crate::float::parse_eight_digits(y));
        *pos += 16;
    }
    // The last 15 bytes of the input: one digit at a time.
    while let Some(&d @ b'0'..=b'9') = input.get(*pos) {
        *w = w.wrapping_mul(10).wrapping_add((d - b'0') as u64);
        *pos += 1;
    }
    (*pos - start) as u32
}
