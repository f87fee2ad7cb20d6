//! String escaping for JSON output, with UTF-8 validation in the same pass.
//!
//! Four modes, as Jason's `escape:` option: `:json`, `:javascript_safe` (adds U+2028/U+2029), `:html_safe` (adds
//! those, `/` as `\/` and `<` as `\u003C`) and `:unicode_safe` (every non-ASCII character as `\uXXXX`).

use crate::buffer::{copy_short, Buffer, Storage};
use crate::utf8::{self, decode_utf8};

/// Jason's `escape:` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Json,
    JavaScript,
    Html,
    Unicode,
}

/// Table entries: 0 = copy as is; `NON_ASCII` = a UTF-8 lead or continuation byte (validate, maybe escape);
/// `b'u'` = `\u00XX`; `b'<'` = `\u003C`; any other value = the letter after the backslash.
const NON_ASCII: u8 = 0xFF;

const fn build_table(html: bool) -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = b'u';
        i += 1;
    }
    while i < 256 {
        if i >= 0x80 {
            table[i] = NON_ASCII;
        }
        i += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    if html {
        table[b'/' as usize] = b'/';
        table[b'<' as usize] = b'<';
    }
    table
}

static JSON_TABLE: [u8; 256] = build_table(false);
static HTML_TABLE: [u8; 256] = build_table(true);

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// The escape of each byte the default mode escapes (control bytes, `"`, `\\`), as its bytes in the low bytes
/// of a little-endian word and its length in the top byte (0 for bytes that are not escaped).
#[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
mod avx2;

static ESCAPE_SEQUENCES: [u64; 256] = escape_sequences();

const fn escape_sequences() -> [u64; 256] {
    let mut seqs = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let kind = JSON_TABLE[b];
        let (bytes, len): ([u8; 6], u64) = if kind == b'u' {
            let hi = HEX_UPPER[b >> 4];
            let lo = HEX_UPPER[b & 0xF];
            ([b'\\', b'u', b'0', b'0', hi, lo], 6)
        } else if kind != 0 && kind != NON_ASCII {
            ([b'\\', kind, 0, 0, 0, 0], 2)
        } else {
            ([0; 6], 0)
        };
        let mut word = len << 56;
        let mut i = 0;
        while i < 6 {
            word |= (bytes[i] as u64) << (8 * i);
            i += 1;
        }
        seqs[b] = word;
        b += 1;
    }
    seqs
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// True when one of the 8 bytes may need attention: below 0x20, `"`, `\`, non-ASCII (and `/`, `<` for html).
/// False positives are allowed (the byte loop sorts them out); false negatives are not.
#[inline(always)]
fn word_needs_attention(w: u64, html: bool) -> bool {
    #[inline(always)]
    fn has_byte(w: u64, b: u8) -> u64 {
        let x = w ^ (ONES * b as u64);
        x.wrapping_sub(ONES) & !x
    }
    let below_20 = w.wrapping_sub(ONES * 0x20) & !w;
    let mut hits = (w | below_20 | has_byte(w, b'"') | has_byte(w, b'\\')) & HIGHS;
    if html {
        hits |= (has_byte(w, b'/') | has_byte(w, b'<')) & HIGHS;
    }
    hits != 0
}

#[inline]
fn write_u_escape<S: Storage>(out: &mut Buffer<S>, unit: u32) {
    out.reserve(6);
    unsafe {
        out.extend_unchecked(b"\\u");
        out.push_unchecked(HEX_UPPER[((unit >> 12) & 0xF) as usize]);
        out.push_unchecked(HEX_UPPER[((unit >> 8) & 0xF) as usize]);
        out.push_unchecked(HEX_UPPER[((unit >> 4) & 0xF) as usize]);
        out.push_unchecked(HEX_UPPER[(unit & 0xF) as usize]);
    }
}

/// Writes `s` as a quoted JSON string in `mode`, validating UTF-8 on the way.
///
/// On invalid UTF-8 returns `Err(index)` of the byte Jason reports (the start of the first invalid sequence); what
/// was written is then garbage and the caller abandons the output.
#[inline]
pub fn write_string<S: Storage>(out: &mut Buffer<S>, s: &[u8], mode: Mode) -> Result<(), usize> {
    if mode == Mode::Json {
        return write_json_string(out, s);
    }
    write_escaped(out, s, mode)
}

/// [`write_string`] a byte at a time where it matters, for every mode.
#[inline]
fn write_escaped<S: Storage>(out: &mut Buffer<S>, s: &[u8], mode: Mode) -> Result<(), usize> {
    let html = mode == Mode::Html;
    let table = if html { &HTML_TABLE } else { &JSON_TABLE };
    let n = s.len();
    out.reserve(n + 2);
    unsafe { out.push_unchecked(b'"') };
    let mut start = 0;
    let mut i = 0;
    loop {
        while i + 8 <= n {
            let w = u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
            if word_needs_attention(w, html) {
                break;
            }
            i += 8;
        }
        if i >= n {
            break;
        }
        let b = s[i];
        let kind = table[b as usize];
        if kind == 0 {
            i += 1;
            continue;
        }
        if kind != NON_ASCII {
            out.extend(&s[start..i]);
            match kind {
                b'u' => write_u_escape(out, b as u32),
                b'<' => out.extend(b"\\u003C"),
                _ => out.extend(&[b'\\', kind]),
            }
            i += 1;
            start = i;
            continue;
        }
        let (cp, len) = decode_utf8(s, i).ok_or(i)?;
        match mode {
            Mode::Json => {}
            Mode::JavaScript | Mode::Html => {
                if cp == 0x2028 || cp == 0x2029 {
                    out.extend(&s[start..i]);
                    write_u_escape(out, cp);
                    start = i + len;
                }
            }
            Mode::Unicode => {
                out.extend(&s[start..i]);
                if cp >= 0x10000 {
                    let c = cp - 0x10000;
                    write_u_escape(out, 0xD800 | (c >> 10));
                    write_u_escape(out, 0xDC00 | (c & 0x3FF));
                } else {
                    write_u_escape(out, cp);
                }
                start = i + len;
            }
        }
        i += len;
    }
    out.extend(&s[start..]);
    out.push(b'"');
    Ok(())
}

/// [`write_string`] in the default mode, whose special bytes are the parser's (`"`, `\\`, control bytes).
#[inline]
fn write_json_string<S: Storage>(out: &mut Buffer<S>, s: &[u8]) -> Result<(), usize> {
    if s.len() < BOUNDED_MIN {
        // Keys and short values: most have nothing to escape, found in one step and copied in one.
        let (special, high) = utf8::short_flags(s);
        if !special {
            if high {
                utf8::validate(s)?;
            }
            out.reserve(s.len() + 2);
            // SAFETY: the string and its two quotes are reserved.
            unsafe {
                let base = out.tail_ptr();
                *base = b'"';
                copy_short(s.as_ptr(), base.add(1), s.len());
                *base.add(1 + s.len()) = b'"';
                out.advance(s.len() + 2);
            }
            return Ok(());
        }
    }
    write_json_string_wide(out, s)
}

/// [`write_json_string`] past its one-step path. Out of line: in line, its AVX2 branch made the walk's short
/// strings 5% slower (citm_catalog's).
#[inline(never)]
fn write_json_string_wide<S: Storage>(out: &mut Buffer<S>, s: &[u8]) -> Result<(), usize> {
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    if s.len() >= avx2::WRITE_MIN && utf8::avx2::available() {
        // SAFETY: the CPU has AVX2.
        return match unsafe { avx2::write_json_string(out, s) } {
            Some(true) => Ok(()),
            Some(false) => Err(utf8::validate(s).expect_err("the block check found a fault")),
            None => write_json_string_long(out, s),
        };
    }
    if (BOUNDED_MIN..=BOUNDED_MAX).contains(&s.len()) {
        if let Some(written) = write_json_string_bounded(out, s) {
            return written;
        }
    }
    write_json_string_long(out, s)
}

/// Strings of these many bytes are written by [`write_json_string_bounded`]: shorter ones have at most a block,
/// and the long way was faster for them (github_events and citm_catalog encode 3% slower otherwise).
const BOUNDED_MIN: usize = 32;
const BOUNDED_MAX: usize = 4096;

/// [`write_json_string`] for a string of at most [`BOUNDED_MAX`] bytes, for text dense with escapes. The special
/// bytes of each 16-byte block are found once and taken from the mask one after another: looking for the next one
/// from the byte after each escape made every escape wait for a load, a compare and a bit scan of the one before.
/// Room for the string, a quarter more and some slack is reserved at once and the output's length kept in a
/// register; `None` (nothing written) when the escapes would need more (text that is mostly control bytes), and
/// the caller writes the string the long way. (Reserving the longest form, six bytes a byte, grew the output so
/// much that twitter's encode took page faults on every call: +40%.) UTF-8 is validated once, at the end, when
/// the blocks saw a byte >= 0x80 (escapes are ASCII: the first invalid sequence is the same).
#[inline]
fn write_json_string_bounded<S: Storage>(
    out: &mut Buffer<S>,
    s: &[u8],
) -> Option<Result<(), usize>> {
    let n = s.len();
    // Its last block is its last 16 bytes (callers give it at least BOUNDED_MIN).
    if n < 16 {
        return None;
    }
    let room = n + n / 4 + 64;
    out.reserve(room);
    let mut high = 0;
    // SAFETY: every store stays within `room`: before each escape, the output so far, the rest of the string
    // unescaped, the escape and 32 bytes (the closing quote, the 8-byte store of an escape and the 16 bytes a
    // run's copy may store past its end) are checked to fit.
    unsafe {
        let base = out.tail_ptr();
        *base = b'"';
        let mut at = 1;
        // Copied up to `i`; blocks scanned up to `block`.
        let mut i = 0;
        let mut block = 0;
        let escape = |at: &mut usize, i: &mut usize, special: usize| {
            if *at + (n - *i) + 6 + 32 > room {
                return false;
            }
            *at = copy_run_at(base, *at, s, *i, special);
            let seq = ESCAPE_SEQUENCES[s[special] as usize];
            std::ptr::write_unaligned(base.add(*at) as *mut u64, seq.to_le());
            *at += (seq >> 56) as usize;
            *i = special + 1;
            true
        };
        while block + 16 <= n {
            let (mut specials, h) = utf8::special_mask16(s, block);
            high |= h;
            while specials != 0 {
                if !escape(&mut at, &mut i, block + specials.trailing_zeros() as usize) {
                    return None;
                }
                specials &= specials - 1;
            }
            block += 16;
        }
        // The last 15 bytes or fewer: the string's last 16 bytes (it has at least 32), without those looked at.
        if block < n {
            let last = n - 16;
            let (specials, h) = utf8::special_mask16(s, last);
            let mut specials = specials & (u32::MAX << (block - last));
            high |= h >> (block - last);
            while specials != 0 {
                if !escape(&mut at, &mut i, last + specials.trailing_zeros() as usize) {
                    return None;
                }
                specials &= specials - 1;
            }
        }
        at = copy_run_at(base, at, s, i, n);
        *base.add(at) = b'"';
        out.advance(at + 1);
    }
    if high != 0 {
        if let Err(bad) = utf8::validate(s) {
            return Some(Err(bad));
        }
    }
    Some(Ok(()))
}

/// Copies `s[from..to]` to `base + at` and returns the position after it. A run of up to 32 bytes is copied in
/// one or two blocks, not through a `memcpy` call: 16 bytes at once when they are readable (the bytes past the
/// run are written over next), else two overlapping loads of its first and last bytes.
///
/// # Safety
/// 16 bytes, or the run's length when it is longer, must be writable at `base + at`.
#[inline(always)]
unsafe fn copy_run_at(base: *mut u8, at: usize, s: &[u8], from: usize, to: usize) -> usize {
    let len = to - from;
    let src = s.as_ptr().add(from);
    if len <= 16 && from + 16 <= s.len() {
        std::ptr::copy_nonoverlapping(src, base.add(at), 16);
    } else if len <= 32 {
        copy_short(src, base.add(at), len);
    } else {
        std::ptr::copy_nonoverlapping(src, base.add(at), len);
    }
    at + len
}

/// [`write_json_string`] for a long or short string: special bytes found 16 bytes a step, the text between them
/// validated as one run (not character by character) and copied as one block when short, room reserved as the
/// output grows.
#[inline]
fn write_json_string_long<S: Storage>(out: &mut Buffer<S>, s: &[u8]) -> Result<(), usize> {
    let n = s.len();
    out.reserve(n + 2);
    unsafe { out.push_unchecked(b'"') };
    let mut i = 0;
    loop {
        let (special, high) = utf8::skip_to_special(s, i);
        if high {
            utf8::validate(&s[i..special]).map_err(|at| i + at)?;
        }
        copy_run(out, s, i, special);
        if special == n {
            break;
        }
        // One 8-byte store and no branch on the kind of escape (which varies, and was mispredicted).
        let seq = ESCAPE_SEQUENCES[s[special] as usize];
        out.reserve(8);
        // SAFETY: 8 bytes are reserved at the tail; the sequence's length (its top byte) of them are kept.
        unsafe {
            std::ptr::write_unaligned(out.tail_ptr() as *mut u64, seq.to_le());
            out.advance((seq >> 56) as usize);
        }
        i = special + 1;
    }
    out.push(b'"');
    Ok(())
}

/// Appends `s[from..to]` (see [`copy_run_at`]).
#[inline(always)]
fn copy_run<S: Storage>(out: &mut Buffer<S>, s: &[u8], from: usize, to: usize) {
    out.reserve((to - from).max(16));
    // SAFETY: 16 bytes, or the run's length when it is longer, are reserved at the tail.
    unsafe {
        let end = copy_run_at(out.tail_ptr(), 0, s, from, to);
        out.advance(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &[u8], mode: Mode) -> Result<String, usize> {
        let mut out = Buffer::default();
        write_string(&mut out, s, mode)?;
        Ok(String::from_utf8(out.into_vec()).unwrap())
    }

    fn escaped(s: &str) -> String {
        esc(s.as_bytes(), Mode::Json).unwrap()
    }

    #[test]
    fn json_mode_agrees_with_the_bytewise_writer() {
        // Runs of every length around the 16-byte steps, each special byte, valid and invalid UTF-8 at every
        // position, in strings short and long.
        let pieces: [&[u8]; 12] = [
            b"\"",
            b"\\",
            b"\n",
            b"\x01",
            b"\x1f",
            b"/",
            b"<",
            "é".as_bytes(),
            "—".as_bytes(),
            "😀".as_bytes(),
            b"\xC3",
            b"\x80",
        ];
        let mut state = 1u32;
        for _ in 0..20_000 {
            let mut s = Vec::new();
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            // Half of them short (a piece or two): the one-step path for strings under 32 bytes.
            let parts = (state >> 16) % 12 / if state & 1 == 0 { 1 } else { 5 };
            for _ in 0..parts {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                s.extend(std::iter::repeat_n(b'a', ((state >> 16) % 40) as usize));
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                s.extend_from_slice(pieces[((state >> 16) % 12) as usize]);
            }
            let (mut bounded, mut long, mut bytewise, mut top) = Default::default();
            let b = write_escaped(&mut bytewise, &s, Mode::Json);
            // The writer as called, short strings' one-step path included.
            assert_eq!(write_json_string(&mut top, &s), b, "{s:x?}");
            assert_eq!(write_json_string_long(&mut long, &s), b, "{s:x?}");
            let bytewise: Buffer = bytewise;
            if b.is_ok() {
                assert_eq!(long.as_slice(), bytewise.as_slice(), "{s:x?}");
                assert_eq!(top.as_slice(), bytewise.as_slice(), "{s:x?}");
            }
            // The bounded writer, where the string's escapes fit its room (else it writes nothing).
            if let Some(a) = write_json_string_bounded(&mut bounded, &s) {
                assert_eq!(a, b, "{s:x?}");
                if a.is_ok() {
                    assert_eq!(bounded.as_slice(), bytewise.as_slice(), "{s:x?}");
                }
            } else {
                assert!(bounded.is_empty(), "{s:x?}");
            }
        }
    }

    /// The AVX2 writer against the bytewise one: a special byte, a multi-byte character or an invalid byte at
    /// every position of strings around its 32-byte blocks, over ASCII and multi-byte text, escapes dense and
    /// sparse, after other output; where the escapes outgrow its room it writes nothing.
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    #[test]
    fn avx2_writer_agrees_with_the_bytewise_writer() {
        if !utf8::avx2::available() {
            return;
        }
        let pieces: [&[u8]; 10] = [
            b"\"",
            b"\\",
            b"\n",
            b"\x01",
            b"\x1f",
            "é".as_bytes(),
            "😀".as_bytes(),
            b"\xC3",
            b"\x80",
            b"\xED\xA0\x80",
        ];
        let check = |s: &[u8]| {
            let mut bytewise = Buffer::default();
            let expected = write_escaped(&mut bytewise, s, Mode::Json);
            let mut out = Buffer::default();
            out.extend(b"[1,");
            match unsafe { avx2::write_json_string(&mut out, s) } {
                None => assert_eq!(out.as_slice(), b"[1,", "{s:x?}"),
                Some(valid) => {
                    assert_eq!(valid, expected.is_ok(), "{s:x?}");
                    if valid {
                        assert_eq!(&out.as_slice()[3..], bytewise.as_slice(), "{s:x?}");
                    }
                }
            }
        };
        for len in [35, 36, 40, 63, 64, 65, 66, 95, 96, 97, 130, 300] {
            for background in ["a", "é", "漢", "\t", "\""] {
                let base = background.repeat(len).into_bytes();
                let base = &base[..len];
                check(base);
                for piece in pieces {
                    for at in 0..len {
                        let mut v = base[..at].to_vec();
                        v.extend_from_slice(piece);
                        v.extend_from_slice(&base[at..]);
                        v.truncate(len.max(35));
                        check(&v);
                    }
                }
            }
        }
    }

    #[test]
    fn strings_of_control_bytes_take_the_long_way() {
        // Six bytes out for each byte in: more than the bounded writer's room.
        let s = vec![1u8; 300];
        let mut bounded = Buffer::default();
        assert!(write_json_string_bounded(&mut bounded, &s).is_none());
        assert!(bounded.is_empty());
        let expected = format!("\"{}\"", "\\u0001".repeat(300));
        assert_eq!(esc(&s, Mode::Json).unwrap(), expected);
    }

    #[test]
    fn short_and_unicode_escapes() {
        assert_eq!(escaped("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(escaped("\n\t\r\u{8}\u{c}"), r#""\n\t\r\b\f""#);
        assert_eq!(escaped("\u{1}\u{1f}\u{7f}"), "\"\\u0001\\u001F\u{7f}\"");
        assert_eq!(escaped("héllo/<"), "\"héllo/<\"");
        assert_eq!(
            escaped("a long run of plain ascii text, then \"quotes\""),
            r#""a long run of plain ascii text, then \"quotes\"""#
        );
    }

    #[test]
    fn modes() {
        let s = "a/<>&\u{2028}\u{2029}é😀".as_bytes();
        assert_eq!(esc(s, Mode::Json).unwrap(), "\"a/<>&\u{2028}\u{2029}é😀\"");
        assert_eq!(
            esc(s, Mode::JavaScript).unwrap(),
            "\"a/<>&\\u2028\\u2029é😀\""
        );
        assert_eq!(
            esc(s, Mode::Html).unwrap(),
            "\"a\\/\\u003C>&\\u2028\\u2029é😀\""
        );
        assert_eq!(
            esc(s, Mode::Unicode).unwrap(),
            "\"a/<>&\\u2028\\u2029\\u00E9\\uD83D\\uDE00\""
        );
    }

    #[test]
    fn invalid_utf8_reports_the_byte_jason_reports() {
        assert_eq!(esc(&[255], Mode::Json), Err(0));
        assert_eq!(esc(b"hello\xFF", Mode::Json), Err(5));
        assert_eq!(esc(&[0xC0, 0x80], Mode::Json), Err(0));
        assert_eq!(esc(&[0xE2, 0x82], Mode::Html), Err(0));
        assert_eq!(esc(&[0xED, 0xA0, 0x80], Mode::Json), Err(0));
        assert_eq!(esc(&[0xF4, 0x90, 0x80, 0x80], Mode::Unicode), Err(0));
        assert_eq!(esc(b"ok\x80x", Mode::JavaScript), Err(2));
        assert_eq!(esc(b"0123456789abc\xFE", Mode::Json), Err(13));
    }
}
