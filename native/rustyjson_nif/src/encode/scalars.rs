//! Keys and scalars: map keys (and `maps: :strict` duplicates), strings, integers, atoms (with the atom cache).

use std::mem::MaybeUninit;

use crate::term;
use rustler::sys::{
    enif_get_atom, enif_get_double, enif_get_int64, enif_get_uint64, enif_inspect_binary,
    enif_release_binary, enif_term_to_binary, enif_term_type, ErlNifBinary, ErlNifCharEncoding,
    ErlNifTerm, ErlNifTermType,
};
use rustler::{Env, Term};
use rustyjson_core::{escape, number};

use super::output::Out;
use super::walker::{Fail, Frame, Walker};

/// The atom cache: slots, and bytes of written atoms kept per call.
const ATOM_CACHE_SLOTS: usize = 64;
const ATOM_CACHE_BYTES: usize = 16 * 1024;

impl<'o> Walker<'o> {
    pub(super) fn write_key(&mut self, key: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let start = out.len();
        if let Some(bytes) = self.reads.heap_binary(key) {
            self.write_string(bytes, key, out)?;
        } else {
            self.write_other_key(key, out)?;
        }
        if self.strict {
            let written = out.as_slice()[start..].to_vec();
            let seen = match self.stack.last_mut() {
                Some(Frame::Map { seen, .. })
                | Some(Frame::Flat { seen, .. })
                | Some(Frame::Sorted { seen, .. })
                | Some(Frame::Pairs { seen, .. }) => seen,
                _ => return Ok(()),
            };
            if let Some(seen) = seen {
                if !seen.insert(written) {
                    // Jason's message shows the key as written in the call's escape mode, without its quotes.
                    let escaped = &out.as_slice()[start + 1..out.len() - 1];
                    return Err(Fail::DuplicateKey(escaped.to_vec()));
                }
            }
        }
        Ok(())
    }

    /// A key that is not a heap binary: a longer binary, an atom or a number (written quoted).
    fn write_other_key(&mut self, key: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        match unsafe { enif_term_type(self.env, key) } {
            ErlNifTermType::ERL_NIF_TERM_TYPE_BITSTRING => {
                let bytes = self.binary(key).ok_or(Fail::Elixir)?;
                self.write_string(bytes, key, out)?;
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM => self.write_atom(key, out)?,
            ErlNifTermType::ERL_NIF_TERM_TYPE_INTEGER => {
                out.push(b'"');
                self.write_integer(key, out)?;
                out.push(b'"');
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_FLOAT => {
                let mut f = 0.0;
                unsafe { enif_get_double(self.env, key, &mut f) };
                out.push(b'"');
                number::write_f64(out, f);
                out.push(b'"');
            }
            _ => return Err(Fail::Elixir),
        }
        Ok(())
    }

    #[inline]
    pub(super) fn binary(&self, term: ErlNifTerm) -> Option<&'static [u8]> {
        if let Some(bytes) = self.reads.heap_binary(term) {
            return Some(bytes);
        }
        if let Some(bytes) = self.reads.held_binary(term) {
            return Some(bytes);
        }
        let mut bin: ErlNifBinary = unsafe { MaybeUninit::zeroed().assume_init() };
        if unsafe { enif_inspect_binary(self.env, term, &mut bin) } == 0 {
            return None;
        }
        if bin.size == 0 {
            return Some(&[]);
        }
        // SAFETY: the binary lives as long as the term, i.e. for the whole NIF call.
        Some(unsafe { std::slice::from_raw_parts(bin.data, bin.size) })
    }

    #[inline]
    pub(super) fn write_string(
        &self,
        bytes: &[u8],
        term: ErlNifTerm,
        out: &mut Out,
    ) -> Result<(), Fail> {
        escape::write_string(out, bytes, self.mode).map_err(|i| Fail::InvalidByte(bytes[i], term))
    }

    pub(super) fn write_integer(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let mut i = 0i64;
        if unsafe { enif_get_int64(self.env, term, &mut i) } != 0 {
            number::write_i64(out, i);
            return Ok(());
        }
        let mut u = 0u64;
        if unsafe { enif_get_uint64(self.env, term, &mut u) } != 0 {
            number::write_u64(out, u);
            return Ok(());
        }
        out.extend(self.big_integer_digits(term)?.as_bytes());
        Ok(())
    }

    /// The decimal digits of a bignum (values and sorted keys alike). Conversion is about quadratic in the size:
    /// a big one waits for the dirty scheduler (`afford`).
    pub(super) fn big_integer_digits(&mut self, term: ErlNifTerm) -> Result<String, Fail> {
        let env = unsafe { Env::new(&(), self.env) };
        let big: rustler::BigInt = unsafe { Term::new(env, term) }
            .decode()
            .map_err(|_| Fail::Unsupported(term))?;
        let words = big.bits() as usize / 64 + 1;
        self.afford(words.saturating_mul(words) / 16)?;
        Ok(big.to_string())
    }

    /// Writes an atom's text as a string. Atoms repeat (map keys above all), so their written form is kept in a
    /// small direct-mapped cache for the call.
    #[inline]
    pub(super) fn write_atom(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let slot = (term::bits(term) >> 6) % ATOM_CACHE_SLOTS;
        if let Some(&(cached, start, len)) = self.atom_cache.get(slot) {
            if cached == term {
                out.extend(&self.atom_bytes[start as usize..(start + len) as usize]);
                return Ok(());
            }
        }
        let from = out.len();
        self.write_atom_text(term, out)?;
        // The cache costs two allocations: not for a call that writes a single atom.
        if self.atom_cache.is_empty() && !std::mem::replace(&mut self.atom_seen, true) {
            return Ok(());
        }
        let written = &out.as_slice()[from..];
        if self.atom_bytes.len() + written.len() <= ATOM_CACHE_BYTES {
            if self.atom_cache.is_empty() {
                self.atom_cache = vec![(ErlNifTerm::default(), 0, 0); ATOM_CACHE_SLOTS];
                self.atom_bytes.reserve(256);
            }
            let start = self.atom_bytes.len() as u32;
            self.atom_bytes.extend_from_slice(written);
            self.atom_cache[slot] = (term, start, written.len() as u32);
        }
        Ok(())
    }

    fn write_atom_text(&self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        self.with_atom_text(term, |text| self.write_string(text, term, out))
            .unwrap_or(Err(Fail::Unsupported(term)))
    }

    /// Calls `f` with an atom's text in UTF-8 (None when it cannot be read).
    #[inline]
    pub(super) fn with_atom_text<R>(
        &self,
        term: ErlNifTerm,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Option<R> {
        let mut buf = [MaybeUninit::<u8>::uninit(); 256];
        let n = unsafe {
            enif_get_atom(
                self.env,
                term,
                buf.as_mut_ptr() as *mut _,
                buf.len() as _,
                ErlNifCharEncoding::ERL_NIF_LATIN1,
            )
        };
        if n > 0 {
            // SAFETY: enif_get_atom wrote n bytes (the text and a NUL).
            let latin1 =
                unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, (n - 1) as usize) };
            if latin1.is_ascii() {
                return Some(f(latin1));
            }
            let utf8: Vec<u8> = latin1
                .iter()
                .flat_map(|&b| {
                    let mut tmp = [0u8; 4];
                    (b as char).encode_utf8(&mut tmp).as_bytes().to_vec()
                })
                .collect();
            return Some(f(&utf8));
        }
        // An atom with characters above U+00FF: read its UTF-8 text from the external format.
        let mut bin: ErlNifBinary = unsafe { MaybeUninit::zeroed().assume_init() };
        if unsafe { enif_term_to_binary(self.env, term, &mut bin) } == 0 {
            return None;
        }
        let etf = unsafe { std::slice::from_raw_parts(bin.data, bin.size) };
        let text = match etf {
            [131, 118, hi, lo, rest @ ..] => Some(&rest[..((*hi as usize) << 8 | *lo as usize)]),
            [131, 119, len, rest @ ..] => Some(&rest[..*len as usize]),
            _ => None,
        };
        let result = text.map(f);
        unsafe { enif_release_binary(&mut bin) };
        result
    }
}
