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
        if bytes.len() > u16::MAX as usize {
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

    /// `Decimal.new(token)` built natively: `%Decimal{sign, coef, exp}`.
    pub(super) fn decimal(&self, text: &[u8]) -> T {
        let (sign, rest) = match text.first() {
            Some(b'-') => (-1i64, &text[1..]),
            _ => (1, text),
        };
        let (mantissa, exp_part) = match rest.iter().position(|&c| c == b'e' || c == b'E') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        let mut digits = Vec::with_capacity(mantissa.len());
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
        let exp: i64 = if exp_part.is_empty() {
            0
        } else {
            std::str::from_utf8(exp_part)
                .ok()
                .and_then(|s| s.trim_start_matches('+').parse().ok())
                .unwrap_or(0)
        };
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
                enif_make_int64(self.env, exp - frac),
                enif_make_int64(self.env, sign),
            ]
        };
        self.map_of(&keys, &values)
    }
}
