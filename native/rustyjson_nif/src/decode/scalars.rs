//! Keys as atoms (`keys: :atoms`, `:atoms!`), integers too large for a word, and `floats: :decimals`.

use super::*;

impl TermBuilder<'_> {
    /// `keys: :atoms` (`existing` false) or `:atoms!`; `None` when the key cannot be (or is not) an atom.
    pub(super) fn atom(&self, bytes: &[u8], existing: bool) -> Option<T> {
        if bytes.len() <= 255 && bytes.is_ascii() {
            if existing {
                let mut atom = MaybeUninit::<T>::uninit();
                let ok = unsafe {
                    enif_make_existing_atom_len(
                        self.env,
                        bytes.as_ptr() as *const _,
                        bytes.len(),
                        atom.as_mut_ptr(),
                        ErlNifCharEncoding::ERL_NIF_LATIN1,
                    )
                };
                return (ok != 0).then(|| unsafe { atom.assume_init() });
            }
            return Some(unsafe {
                enif_make_atom_len(self.env, bytes.as_ptr() as *const _, bytes.len())
            });
        }
        // (Not UTF-8 only with `validate_strings: false`: no atom is made of such bytes.)
        if bytes.len() > u16::MAX as usize || std::str::from_utf8(bytes).is_err() {
            return None;
        }
        // A UTF-8 atom: build it through the external term format (ATOM_UTF8_EXT); the safe flag refuses to
        // create atoms, which is `:atoms!`. The runtime enforces the 255-character limit.
        let mut etf = Vec::with_capacity(bytes.len() + 4);
        etf.push(131);
        etf.push(118);
        etf.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
        etf.extend_from_slice(bytes);
        let mut term = MaybeUninit::<T>::uninit();
        let flags = if existing { ERL_NIF_BIN2TERM_SAFE } else { 0 };
        let read = unsafe {
            enif_binary_to_term(self.env, etf.as_ptr(), etf.len(), term.as_mut_ptr(), flags)
        };
        (read == etf.len()).then(|| unsafe { term.assume_init() })
    }

    pub(super) fn integer_from_text(&self, text: &[u8]) -> T {
        let big = rustler::BigInt::parse_bytes(text, 10).expect("validated digits");
        big.encode(self.rust_env).as_c_arg()
    }

    /// `Decimal.new(token)` built natively: `%Decimal{sign, coef, exp}`. As Jason, a token with an exponent and no
    /// fraction gets `.0` before the exponent first (`1e400` is `Decimal.new("1.0e400")`: coef 10, exp 399).
    pub(super) fn decimal(&self, text: &[u8]) -> T {
        let (sign, rest) = match text.first() {
            Some(b'-') => (-1i64, &text[1..]),
            _ => (1, text),
        };
        let (mantissa, exp_part) = match rest.iter().position(|&c| c == b'e' || c == b'E') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let mut digits = Vec::with_capacity(mantissa.len() + 1);
        let mut frac = 0i64;
        let mut seen_dot = false;
        for &c in mantissa {
            if c == b'.' {
                seen_dot = true;
            } else {
                digits.push(c);
                if seen_dot {
                    frac += 1;
                }
            }
        }
        if exp_part.is_some() && !seen_dot {
            digits.push(b'0');
            frac = 1;
        }
        let exp = self.decimal_exp(exp_part.unwrap_or(b""), frac);
        let coef = self.integer_from_text(&digits);
        let keys = [
            atoms::__struct__().as_c_arg(),
            atoms::coef().as_c_arg(),
            atoms::exp().as_c_arg(),
            atoms::sign().as_c_arg(),
        ];
        let values = unsafe {
            [
                atoms::decimal().as_c_arg(),
                coef,
                exp,
                enif_make_int64(self.env, sign),
            ]
        };
        self.map_of(&keys, &values)
    }

    /// The exponent of a decimal: the token's (digits after an optional sign, or none) minus `frac`, the digits
    /// after the point. Exponents beyond 64 bits are integers too, as `Decimal.new/1` makes them.
    fn decimal_exp(&self, text: &[u8], frac: i64) -> T {
        let written = std::str::from_utf8(text).unwrap_or("0");
        let written = written.strip_prefix('+').unwrap_or(written);
        if written.is_empty() {
            return unsafe { enif_make_int64(self.env, -frac) };
        }
        if let Some(exp) = written
            .parse::<i64>()
            .ok()
            .and_then(|e| e.checked_sub(frac))
        {
            return unsafe { enif_make_int64(self.env, exp) };
        }
        let big = rustler::BigInt::parse_bytes(written.as_bytes(), 10).expect("validated digits");
        (big - frac).encode(self.rust_env).as_c_arg()
    }
}
