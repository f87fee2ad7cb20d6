//! String tokens: the scan for the closing quote, UTF-8 validation, and escapes with Jason's error positions.

use super::*;

impl Parser<'_> {
    /// Parses a string starting at the opening quote; leaves `pos` after the closing quote. Always inlined: as a
    /// call it saved and restored eight registers per string, 4% of the parser's instructions on twitter.
    #[inline(always)]
    pub(super) fn string(&mut self) -> Result<Span, ParseError> {
        let input = self.input;
        let quote = self.pos;
        let start = quote + 1;
        // Scanned no further than `string_end` (the whole input but in a normal scheduler's slices).
        let (pos, high) = utf8::skip_to_special(&input[..self.string_end], start);
        if high {
            self.validate_run(quote, start, pos)?;
        }
        match input.get(pos) {
            Some(b'"') => {
                self.pos = pos + 1;
                Ok(Span::Input(start, pos))
            }
            Some(b'\\') => {
                self.pos = pos;
                self.string_escaped(quote, start)
            }
            _ => Err(self.unexpected_in_string(quote, pos)),
        }
    }

    /// Where a string's scan stopped at neither a quote nor a backslash: a control byte, the input's end, or
    /// the scan's own end (`string_end`: the string is long).
    #[cold]
    fn unexpected_in_string(&self, quote: usize, pos: usize) -> ParseError {
        if self.cut_at(pos) {
            ParseError::LongToken(quote)
        } else {
            self.err_at(pos)
        }
    }

    /// Whether a scan that stopped at `pos` stopped at (or, after an escape, past) `string_end` rather than at a
    /// byte it looked at.
    #[inline(always)]
    fn cut_at(&self, pos: usize) -> bool {
        pos >= self.string_end && pos < self.input.len()
    }

    /// Validates the UTF-8 of `input[start..end]` (a run of the string opened at `quote`); a sequence cut by the
    /// scan's end is no error: the string is long, and is scanned whole later.
    #[inline]
    fn validate_run(&self, quote: usize, start: usize, end: usize) -> Result<(), ParseError> {
        if !self.validate_utf8 {
            return Ok(());
        }
        validate_utf8(self.input, start, end).map_err(|e| {
            if self.cut_at(end) {
                ParseError::LongToken(quote)
            } else {
                e
            }
        })
    }

    /// The slow path: a string with escapes, unescaped into `scratch`. `pos` is at the first backslash.
    ///
    /// The special bytes of each 16-byte block are found once and taken from its mask one after another (text
    /// in many scripts has an escape every few bytes: looking for the next one from the byte after each escape
    /// made every escape wait for the scan of the one before). UTF-8 is validated once, over the whole string,
    /// when a block saw a byte >= 0x80: escapes are ASCII, so a sequence an escape cuts short is invalid there as
    /// it is in its run, at the same first byte. Before any other error, the text before it is validated too
    /// (the first fault in the text is the one reported).
    #[cold]
    fn string_escaped(&mut self, quote: usize, start: usize) -> Result<Span, ParseError> {
        let input = self.input;
        let scan = &input[..self.string_end];
        self.scratch.clear();
        self.scratch.extend_from_slice(&input[start..self.pos]);
        // Copied up to `run`; blocks looked at from `block`; any byte >= 0x80 seen before `run`.
        let mut run = self.pos;
        let mut block = self.pos;
        let mut high = (start < run && !input[start..run].is_ascii()) as u32;
        while block + 16 <= scan.len() {
            let (mut specials, h) = utf8::special_mask16(scan, block);
            // Bytes already taken by an escape that reached into this block.
            let skip = run.saturating_sub(block);
            if skip >= 16 {
                block += 16;
                continue;
            }
            specials &= u32::MAX << skip;
            high |= h >> skip;
            while specials != 0 {
                let at = block + specials.trailing_zeros() as usize;
                match input[at] {
                    b'\\' => {
                        run = self
                            .unescape_after_run(run, at)
                            .map_err(|e| self.first_fault(start, at, e))?;
                    }
                    b'"' => {
                        push_run(&mut self.scratch, input, run, at);
                        return self.string_closed(quote, start, at, high != 0);
                    }
                    _ => return Err(self.first_fault(start, at, self.err_at(at))),
                }
                // Bits left for bytes past the escape only (it may end up to 12 bytes past this block: the shift
                // stays under 32).
                debug_assert!(run - block < 32);
                specials &= u32::MAX << (run - block);
            }
            block += 16;
        }
        // The last 15 bytes or fewer of what may be scanned: a step at a time.
        let mut pos = run.max(block);
        push_run(&mut self.scratch, input, run, pos);
        run = pos;
        loop {
            let (end, h) = utf8::skip_to_special(scan, pos);
            high |= h as u32;
            pos = end;
            match input.get(pos) {
                Some(b'"') => {
                    push_run(&mut self.scratch, input, run, pos);
                    return self.string_closed(quote, start, pos, high != 0);
                }
                Some(b'\\') if pos < self.string_end => {
                    pos = self
                        .unescape_after_run(run, pos)
                        .map_err(|e| self.first_fault(start, pos, e))?;
                    run = pos;
                }
                _ => {
                    let e = self.unexpected_in_string(quote, pos);
                    return Err(match e {
                        ParseError::LongToken(_) => e,
                        _ => self.first_fault(start, pos, e),
                    });
                }
            }
        }
    }

    /// Appends `input[run..at]` and the escape at `at` (a backslash) to `scratch` with one check of its room;
    /// returns the position after the escape. The simple escapes come from a table; `\\u` escapes and errors
    /// from [`escape_at`].
    #[inline(always)]
    fn unescape_after_run(&mut self, run: usize, at: usize) -> Result<usize, ParseError> {
        let input = self.input;
        let n = at - run;
        // The run, 16 bytes of over-copy and an escape's 4 bytes at most.
        try_grow(&mut self.scratch, n + 32);
        let len = self.scratch.len();
        // SAFETY: `n + 32` bytes are reserved past `len`: the run (16 bytes stored when it is shorter) and the
        // escape's UTF-8 (at most 4 bytes) fit; `len` then covers only the bytes written.
        unsafe {
            let dst = self.scratch.as_mut_ptr().add(len);
            copy_run_to(dst, input, run, n);
            let simple = input.get(at + 1).map_or(0, |&c| UNESCAPE[c as usize]);
            if simple != 0 {
                *dst.add(n) = simple;
                self.scratch.set_len(len + n + 1);
                return Ok(at + 2);
            }
            let (end, cp) = escape_at(input, at)?;
            // `escape_at` refuses lone surrogates: `cp` is a scalar value.
            let written = char::from_u32_unchecked(cp)
                .encode_utf8(std::slice::from_raw_parts_mut(dst.add(n), 4))
                .len();
            self.scratch.set_len(len + n + written);
            Ok(end)
        }
    }

    /// The end of an escaped string at its closing quote `close`: its text validated when it held a byte >=
    /// 0x80.
    #[inline(always)]
    fn string_closed(
        &mut self,
        quote: usize,
        start: usize,
        close: usize,
        high: bool,
    ) -> Result<Span, ParseError> {
        if high {
            self.validate_run(quote, start, close)?;
        }
        self.pos = close + 1;
        Ok(Span::Scratch(0, self.scratch.len()))
    }

    /// `error`, found at `at` in the escaped string whose text starts at `start`, unless the text before it is
    /// not UTF-8: that came first.
    #[cold]
    fn first_fault(&self, start: usize, at: usize, error: ParseError) -> ParseError {
        if !self.validate_utf8 {
            return error;
        }
        validate_utf8(self.input, start, at).err().unwrap_or(error)
    }
}

/// The byte each simple escape stands for, by the byte after the backslash; 0 for `u` and for bytes that cannot
/// follow a backslash.
static UNESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0C;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// The most bytes an escape spans, and the most [`escape_at`] reads: a surrogate pair, `\uXXXX\uXXXX`.
pub(crate) const ESCAPE_MAX: usize = 12;

/// The escape at `input[at]` (a backslash): the position after it and the code point it stands for. Errors are
/// Jason's (`escape`, `escapeu`, `escape_surrogate` in its decoder.ex): a byte below `u` that cannot follow a
/// backslash at that byte; a byte above `u`, input ending right after the backslash, or fewer than 4 bytes
/// after `\u`, at the backslash;
/// a `\uXXXX` that is not hex or a lone low surrogate, as its 6-byte token; a high surrogate not followed by
/// `\u` and 4 bytes, at the byte after it; then the second escape's last two digits not hex, as that 6-byte
/// token, and its first two not `DC`-`DF`, as the 12-byte token of the pair.
///
/// Reads no byte past `at + ESCAPE_MAX`, whatever they are (a quote too): the stream's splitters ask it where an
/// escape ends ([`scan_escape`]), so that they cut a string where the parser ends it.
#[inline(always)]
pub(crate) fn escape_at(input: &[u8], at: usize) -> Result<(usize, u32), ParseError> {
    let simple = match input.get(at + 1) {
        Some(&c) if UNESCAPE[c as usize] != 0 => UNESCAPE[c as usize],
        Some(b'u') => {
            let Some(hex) = input.get(at + 2..at + 6) else {
                return Err(ParseError::UnexpectedByte(at));
            };
            let Some(mut cp) = hex4(hex) else {
                return Err(ParseError::Token {
                    start: at,
                    end: at + 6,
                });
            };
            let mut end = at + 6;
            if (0xD800..0xDC00).contains(&cp) {
                // A high surrogate must be followed by `\u` and a low surrogate.
                let low = match input.get(end..end + 6) {
                    Some([b'\\', b'u', hex @ ..]) => hex,
                    _ if end >= input.len() => return Err(ParseError::UnexpectedEnd(input.len())),
                    _ => return Err(ParseError::UnexpectedByte(end)),
                };
                // Jason reads the last two digits first.
                if hex4(&low[2..]).is_none() {
                    return Err(ParseError::Token {
                        start: end,
                        end: end + 6,
                    });
                }
                match hex4(low) {
                    Some(low) if (0xDC00..0xE000).contains(&low) => {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        end += 6;
                    }
                    _ => {
                        return Err(ParseError::Token {
                            start: at,
                            end: end + 6,
                        })
                    }
                }
            } else if (0xDC00..0xE000).contains(&cp) {
                return Err(ParseError::Token { start: at, end });
            }
            return Ok((end, cp));
        }
        // Jason's jump table for the byte after a backslash ends at `u`: a byte past it, like the end of
        // the input, falls to its catch-all clause, which reports the backslash.
        Some(&c) if c < b'u' => return Err(ParseError::UnexpectedByte(at + 1)),
        _ => return Err(ParseError::UnexpectedByte(at)),
    };
    Ok((at + 2, u32::from(simple)))
}

/// Where an escape ends, as the parser sees it, from its first bytes ([`scan_escape`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EscapeScan {
    /// A valid escape of this many bytes.
    Valid(usize),
    /// Invalid: the parser's error on it is the same whatever follows these bytes.
    Invalid,
    /// The bytes so far do not decide it: more are needed (the input goes on).
    NeedMore,
}

/// How the escape whose backslash is `window[0]` scans, `window` being the bytes fed so far from it (any
/// number; only the first [`ESCAPE_MAX`] are read). The parser's own check ([`escape_at`]) on them: valid
/// then is valid on any longer input (it read only those bytes); invalid is final once it had all the bytes it
/// reads; short of them, the next bytes may make it valid or another error.
#[inline]
pub(crate) fn scan_escape(window: &[u8]) -> EscapeScan {
    let window = &window[..window.len().min(ESCAPE_MAX)];
    match escape_at(window, 0) {
        Ok((len, _)) => EscapeScan::Valid(len),
        Err(_) if window.len() == ESCAPE_MAX => EscapeScan::Invalid,
        Err(_) => EscapeScan::NeedMore,
    }
}

/// The bytes of the string token whose opening quote is `input[quote]`, unescaped, or `None` if no valid string
/// starts there (a key the parser reported by its position, say). `validate_utf8` as the parse that met it had
/// it ([`Limits::validate_utf8`]): a key taken as raw bytes is read back the same way.
pub fn string_at(input: &[u8], quote: usize, validate_utf8: bool) -> Option<Vec<u8>> {
    if input.get(quote) != Some(&b'"') {
        return None;
    }
    let limits = Limits {
        validate_utf8,
        ..Limits::default()
    };
    let mut p = Parser::new(input, quote, limits, true);
    let span = p.string().ok()?;
    Some(p.str_of(span).bytes().to_vec())
}

/// Checks that `input[start..end]` (string content without quotes, backslashes or control bytes) is UTF-8.
/// Jason reports invalid UTF-8 at the first byte of the offending sequence.
#[inline]
pub(super) fn validate_utf8(input: &[u8], start: usize, end: usize) -> Result<(), ParseError> {
    utf8::validate(&input[start..end]).map_err(|at| ParseError::UnexpectedByte(start + at))
}

/// Appends `input[from..to]` to `scratch` ([`copy_run_to`]).
#[inline(always)]
fn push_run(scratch: &mut Vec<u8>, input: &[u8], from: usize, to: usize) {
    let n = to - from;
    try_grow(scratch, n.max(16));
    // SAFETY: `max(n, 16)` bytes are reserved past the length; only the first `n` become part of the vector.
    unsafe {
        let len = scratch.len();
        copy_run_to(scratch.as_mut_ptr().add(len), input, from, n);
        scratch.set_len(len + n);
    }
}

/// Copies the `n` bytes at `input[from]` to `dst`: a run of up to 16 (the text between escapes) as one 16-byte
/// block when 16 bytes are readable there, rather than through a `memcpy` call.
///
/// # Safety
/// `max(n, 16)` bytes must be writable at `dst`, and `from + n <= input.len()`.
#[inline(always)]
unsafe fn copy_run_to(dst: *mut u8, input: &[u8], from: usize, n: usize) {
    debug_assert!(from + n <= input.len());
    let len = if n <= 16 && from + 16 <= input.len() {
        16
    } else {
        n
    };
    std::ptr::copy_nonoverlapping(input.as_ptr().add(from), dst, len);
}

/// The value of the hex digits in `hex` (four in a `\u` escape, or two of them): each digit from a table, one
/// check for them all at the end (no branch per digit).
#[inline(always)]
pub(super) fn hex4(hex: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    let mut bad = 0u8;
    for &b in hex {
        let d = HEX_DIGITS[b as usize];
        bad |= d;
        v = v << 4 | u32::from(d & 0xF);
    }
    (bad & 0x80 == 0).then_some(v)
}

/// A hex digit's value by its byte; 0xFF for the other bytes.
static HEX_DIGITS: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};
