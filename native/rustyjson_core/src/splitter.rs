//! A resumable splitter for streams of JSON: fed chunks one after another, it finds where top-level values end.
//!
//! Each byte is looked at once; the state between chunks is a handful of counters and flags (depth, inside a
//! string, inside a scalar, the absolute offset and the newline count) and the first bytes of an escape cut by
//! the chunk's end, so a value may be cut anywhere: inside a string, an escape, a number or a multi-byte
//! character. Depth is a counter, never recursion,
//! and bracket kinds are not matched (`[1}` is one item; the parser rejects it).
//!
//! The splitter does not validate items: the parser does. It only finds their extent, and it must never cut a
//! valid item wrong, nor an invalid one short of what the parser reads to report its error: an escape spans what
//! the parser's own check reads of it (up to `\uXXXX\uXXXX`, quotes included), and an invalid one ends its item
//! right after those bytes, so the item's error is `decode/2`'s on the whole text, whatever the chunks. Two modes:
//!
//! * [`Mode::Documents`]: JSON Lines / NDJSON (`\n` or `\r\n`, blank lines allowed) and concatenated or
//!   whitespace-separated documents: every top-level value is an item. A scalar (number, literal) ends at the
//!   next delimiter (whitespace, bracket, comma, colon, quote) or at the end of the stream. A closing bracket,
//!   comma or colon where a document would start is an error at that byte.
//! * [`Mode::ArrayItems`]: the stream is one top-level array and the items are its elements. The `[`, the
//!   commas and the `]` are checked here; anything other than whitespace after `]`, or a stream that ends
//!   before `]`, is an error (at that byte, or at the end).
//!
//! Newlines inside strings are not counted: a raw newline there is invalid JSON, so the item fails at or before
//! it and the stream stops; line numbers are exact up to the first error.

use crate::parser::{scan_escape, EscapeScan, ESCAPE_MAX};

/// What the items of the stream are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every top-level value is an item (JSON Lines, NDJSON, concatenated documents).
    Documents,
    /// The stream is one array; its elements are the items.
    ArrayItems,
}

/// Where an item is in the stream: bytes `start..end` (absolute offsets), starting on line `line` (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub end: u64,
    pub line: u64,
}

/// A structural error: the byte at `position` (absolute; the end of the stream for a stream cut short), on
/// line `line` (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitError {
    pub position: u64,
    pub line: u64,
}

/// What is left at the end of the stream ([`Splitter::finish`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct End {
    /// The last item: a scalar that ends with the stream, or (`open`) an item cut short, for the parser to report.
    pub last: Option<Span>,
    /// `last` is cut short (an unclosed container or string): it is invalid, and the parser says where.
    pub open: bool,
    /// An error at the end of the stream (an array without its `]`), after `last`.
    pub error: Option<SplitError>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Documents: between items. ArrayItems: before the `[`.
    Between,
    /// ArrayItems: after `[`: an item or `]`.
    First,
    /// ArrayItems: after an item: `,` or `]`.
    AfterItem,
    /// ArrayItems: after `,`: an item.
    Next,
    /// ArrayItems: after `]`: whitespace only.
    Done,
    /// Inside an item.
    Item,
    /// An error was reported; nothing more is scanned.
    Failed,
}

/// The splitter's state, carried from chunk to chunk.
#[derive(Clone, Debug)]
pub struct Splitter {
    mode: Mode,
    phase: Phase,
    /// Open containers inside the current item.
    depth: u64,
    in_string: bool,
    /// The escape cut by the last chunk's end, if one is.
    escape: Option<CutEscape>,
    in_scalar: bool,
    /// Absolute offset of the next byte to scan.
    offset: u64,
    /// Newlines scanned so far (outside strings).
    newlines: u64,
    /// Where the current item started, and on which line.
    item_start: u64,
    item_line: u64,
    /// The array is inside a document ([`Splitter::nested_array`]): its `]` ends the splitting, not the stream.
    nested: bool,
    /// A nested array's end (after its `]`), once reached.
    array_end: Option<u64>,
}

/// The first bytes of an escape (from its backslash) that a chunk's end cut: as many as the parser reads of it
/// at most.
#[derive(Clone, Copy, Debug)]
struct CutEscape {
    bytes: [u8; ESCAPE_MAX],
    len: usize,
}

#[inline]
fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

#[inline]
fn ends_scalar(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\r' | b'\n' | b'[' | b']' | b'{' | b'}' | b',' | b':' | b'"'
    )
}

/// The newlines in `bytes`: with SSE2 (every x86-64 has it) 64 bytes a step, where a step with none (all of a
/// compact JSON Lines record) costs one test, 8 a step elsewhere. (A plain `filter().count()` compiles to 2 bytes
/// a step, byte-wide counters to a bit-by-bit extraction: both were a sixth of a stream's decode time.)
pub(crate) fn count_newlines(bytes: &[u8]) -> u64 {
    let mut total = 0u64;
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    let rest = {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
            _mm_set1_epi8,
        };
        let (blocks, rest) = bytes.as_chunks::<64>();
        // SAFETY: SSE2 is part of x86-64; each load reads 16 bytes of a 64-byte block or a 16-byte step.
        unsafe {
            let newline = _mm_set1_epi8(b'\n' as i8);
            let eq = |block: &[u8], at: usize| {
                let v = _mm_loadu_si128(block.as_ptr().add(at).cast::<__m128i>());
                _mm_cmpeq_epi8(v, newline)
            };
            for block in blocks {
                let (a, b, c, d) = (eq(block, 0), eq(block, 16), eq(block, 32), eq(block, 48));
                let any = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
                if _mm_movemask_epi8(any) != 0 {
                    total += [a, b, c, d]
                        .iter()
                        .map(|&m| u64::from(_mm_movemask_epi8(m).count_ones()))
                        .sum::<u64>();
                }
            }
            let (steps, rest) = rest.as_chunks::<16>();
            for step in steps {
                total += u64::from(_mm_movemask_epi8(eq(step, 0)).count_ones());
            }
            rest
        }
    };
    #[cfg(any(not(target_arch = "x86_64"), feature = "portable"))]
    let rest = {
        let (words, rest) = bytes.as_chunks::<8>();
        for word in words {
            total += u64::from(newlines_in_word(u64::from_le_bytes(*word)));
        }
        rest
    };
    total + rest.iter().filter(|&&b| b == b'\n').count() as u64
}

/// The newline bytes of `word` (the high bit of each byte that is zero after the xor, exactly those: the sum
/// of low seven bits plus 0x7f carries into the high bit only, never into the next byte).
#[cfg_attr(
    all(target_arch = "x86_64", not(feature = "portable")),
    allow(dead_code)
)]
fn newlines_in_word(word: u64) -> u32 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let t = word ^ 0x0a0a_0a0a_0a0a_0a0a;
    (!(((t & LOW7) + LOW7) | t | LOW7)).count_ones()
}

impl Splitter {
    /// A splitter at the start of a stream.
    pub fn new(mode: Mode) -> Self {
        Splitter {
            mode,
            phase: Phase::Between,
            depth: 0,
            in_string: false,
            escape: None,
            in_scalar: false,
            offset: 0,
            newlines: 0,
            item_start: 0,
            item_line: 1,
            nested: false,
            array_end: None,
        }
    }

    /// A splitter for the items of an array inside a document, whose `[` is at `offset` of the stream, after
    /// `newlines` newlines: its `]` ends the splitting ([`Splitter::array_end`]); what follows is the caller's.
    pub fn nested_array(offset: u64, newlines: u64) -> Self {
        Splitter {
            offset,
            newlines,
            nested: true,
            ..Splitter::new(Mode::ArrayItems)
        }
    }

    /// A nested array's end (the offset after its `]`), once the splitting reached it.
    pub fn array_end(&self) -> Option<u64> {
        self.array_end
    }

    /// The newlines scanned so far (outside strings).
    pub fn newlines(&self) -> u64 {
        self.newlines
    }

    /// The absolute offset of the next byte to be fed.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Where the item in progress started (it continues in the next chunk), if one is.
    pub fn open_item(&self) -> Option<u64> {
        (self.phase == Phase::Item).then_some(self.item_start)
    }

    /// Scans `chunk` (the bytes after everything fed so far) and appends the items that end in it to `out`.
    /// Returns the first structural error; after one, the splitter stays failed and scans nothing more.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Span>) -> Result<(), SplitError> {
        self.feed_direct(chunk, out, &mut Vec::<()>::new(), |_, _| None)
    }

    /// [`Splitter::feed`], offering each item that starts in `chunk` to `parse` first: `parse(chunk, i)` parses
    /// the value at `chunk[i]` and returns where it ends and the value. A value taken that way goes to `values`
    /// instead of a span to `out`; a number or literal is taken only if a delimiter follows it in the chunk (it
    /// may go on in the next one). Once `parse` declines (`None`: an invalid item, or the caller's time is up),
    /// the rest of the chunk is split only, so the values of `values` all come before the spans of `out` that
    /// start in this chunk.
    pub fn feed_direct<V>(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<Span>,
        values: &mut Vec<V>,
        parse: impl FnMut(&[u8], usize) -> Option<(usize, V)>,
    ) -> Result<(), SplitError> {
        self.feed_direct_from(chunk, 0, out, values, parse)
    }

    /// [`Splitter::feed_direct`] from `chunk[from]` on (the offset of the next byte to scan): `chunk`'s earlier
    /// bytes are the caller's. A nested array's splitting stops after its `]` ([`Splitter::offset`] is then there).
    pub fn feed_direct_from<V>(
        &mut self,
        chunk: &[u8],
        from: usize,
        out: &mut Vec<Span>,
        values: &mut Vec<V>,
        mut parse: impl FnMut(&[u8], usize) -> Option<(usize, V)>,
    ) -> Result<(), SplitError> {
        let mut direct = true;
        if self.phase == Phase::Failed {
            return Err(self.error_at(self.offset));
        }
        let base = self.offset - from as u64;
        let mut i = from;
        let n = chunk.len();
        while i < n {
            if self.phase == Phase::Item {
                i = self.scan_item(chunk, i, base, out);
                continue;
            }
            let b = chunk[i];
            if is_whitespace(b) {
                if b == b'\n' {
                    self.newlines += 1;
                }
                i += 1;
                continue;
            }
            let at = base + i as u64;
            match (self.mode, self.phase) {
                (Mode::Documents, Phase::Between)
                | (Mode::ArrayItems, Phase::First)
                | (Mode::ArrayItems, Phase::Next) => {
                    if self.phase == Phase::First && b == b']' {
                        self.phase = Phase::Done;
                        i += 1;
                        if self.nested {
                            self.end_array(base + i as u64);
                            return Ok(());
                        }
                        continue;
                    }
                    if matches!(b, b']' | b'}' | b',' | b':') {
                        return Err(self.fail(at));
                    }
                    if direct {
                        if let Some(end) = self.take_parsed(chunk, i, &mut parse, values) {
                            i = end;
                            continue;
                        }
                        direct = false;
                    }
                    self.start_item(b, at);
                    // A scalar's first byte is scanned again by `scan_item` (it is no delimiter).
                    if !self.in_scalar {
                        i += 1;
                    }
                }
                (Mode::ArrayItems, Phase::Between) => {
                    if b != b'[' {
                        return Err(self.fail(at));
                    }
                    self.phase = Phase::First;
                    i += 1;
                }
                (Mode::ArrayItems, Phase::AfterItem) => {
                    match b {
                        b',' => self.phase = Phase::Next,
                        b']' => self.phase = Phase::Done,
                        _ => return Err(self.fail(at)),
                    }
                    i += 1;
                    if self.nested && self.phase == Phase::Done {
                        self.end_array(base + i as u64);
                        return Ok(());
                    }
                }
                _ => return Err(self.fail(at)),
            }
        }
        self.offset = base + n as u64;
        Ok(())
    }

    fn end_array(&mut self, end: u64) {
        self.array_end = Some(end);
        self.offset = end;
    }

    /// The end of the stream: the last item (a scalar that ends here, or an item cut short) and any error.
    pub fn finish(&mut self) -> End {
        let at = self.offset;
        let mut end = End::default();
        match self.phase {
            Phase::Failed => {
                end.error = Some(self.error_at(at));
                return end;
            }
            Phase::Item => {
                end.last = Some(Span {
                    start: self.item_start,
                    end: at,
                    line: self.item_line,
                });
                end.open = !self.in_scalar;
                self.after_item();
            }
            _ => {}
        }
        if self.mode == Mode::ArrayItems && self.phase != Phase::Done {
            end.error = Some(self.fail(at));
        }
        end
    }

    /// The item at `chunk[i]` parsed by `parse` and its value pushed to `values`: returns where it ends, or
    /// `None` (nothing taken) when `parse` declines or a scalar may go on past the chunk.
    #[inline]
    fn take_parsed<V>(
        &mut self,
        chunk: &[u8],
        i: usize,
        parse: &mut impl FnMut(&[u8], usize) -> Option<(usize, V)>,
        values: &mut Vec<V>,
    ) -> Option<usize> {
        let (end, value) = parse(chunk, i)?;
        if end <= i || end > chunk.len() {
            return None;
        }
        match chunk[i] {
            // Raw newlines are invalid inside strings: the only ones in a container are whitespace.
            b'[' | b'{' => self.newlines += count_newlines(&chunk[i..end]),
            b'"' => {}
            _ if end == chunk.len() || !ends_scalar(chunk[end]) => return None,
            _ => {}
        }
        values.push(value);
        self.after_item();
        Some(end)
    }

    fn start_item(&mut self, b: u8, at: u64) {
        self.phase = Phase::Item;
        self.item_start = at;
        self.item_line = self.newlines + 1;
        self.depth = 0;
        match b {
            b'[' | b'{' => self.depth = 1,
            b'"' => self.in_string = true,
            _ => self.in_scalar = true,
        }
    }

    fn after_item(&mut self) {
        self.in_scalar = false;
        self.in_string = false;
        self.escape = None;
        self.depth = 0;
        self.phase = match self.mode {
            Mode::Documents => Phase::Between,
            Mode::ArrayItems => Phase::AfterItem,
        };
    }

    fn end_item(&mut self, end: u64, out: &mut Vec<Span>) {
        out.push(Span {
            start: self.item_start,
            end,
            line: self.item_line,
        });
        self.after_item();
    }

    /// Scans the item in progress from `chunk[i]`; returns where scanning stops (the item's end, or `n`).
    #[inline]
    fn scan_item(&mut self, chunk: &[u8], mut i: usize, base: u64, out: &mut Vec<Span>) -> usize {
        let n = chunk.len();
        if self.in_scalar {
            return match chunk[i..].iter().position(|&b| ends_scalar(b)) {
                Some(k) => {
                    // The delimiter is scanned again, between items.
                    self.end_item(base + (i + k) as u64, out);
                    i + k
                }
                None => n,
            };
        }
        while i < n {
            if self.in_string {
                if let Some(cut) = &mut self.escape {
                    // The escape cut by the last chunk's end goes on at `chunk[i]` (i is 0).
                    let before = cut.len;
                    let take = (ESCAPE_MAX - before).min(n - i);
                    cut.bytes[before..before + take].copy_from_slice(&chunk[i..i + take]);
                    cut.len += take;
                    match scan_escape(&cut.bytes[..cut.len]) {
                        // Valid only now: it ends in this chunk.
                        EscapeScan::Valid(len) => i += len - before,
                        EscapeScan::Invalid => return self.end_invalid(base, i + take, out),
                        EscapeScan::NeedMore => return n,
                    }
                    self.escape = None;
                    continue;
                }
                match chunk[i..].iter().position(|&b| b == b'"' || b == b'\\') {
                    None => return n,
                    Some(k) => {
                        let j = i + k;
                        if chunk[j] == b'\\' {
                            let window = &chunk[j..n.min(j + ESCAPE_MAX)];
                            match scan_escape(window) {
                                EscapeScan::Valid(len) => i = j + len,
                                EscapeScan::Invalid => {
                                    return self.end_invalid(base, j + window.len(), out)
                                }
                                EscapeScan::NeedMore => {
                                    let mut bytes = [0; ESCAPE_MAX];
                                    bytes[..window.len()].copy_from_slice(window);
                                    self.escape = Some(CutEscape {
                                        bytes,
                                        len: window.len(),
                                    });
                                    return n;
                                }
                            }
                        } else {
                            i = j + 1;
                            self.in_string = false;
                            if self.depth == 0 {
                                self.end_item(base + i as u64, out);
                                return i;
                            }
                        }
                    }
                }
                continue;
            }
            let b = chunk[i];
            i += 1;
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => self.depth += 1,
                b']' | b'}' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.end_item(base + i as u64, out);
                        return i;
                    }
                }
                b'\n' => self.newlines += 1,
                _ => {}
            }
        }
        n
    }

    /// An invalid escape ends its item at `chunk[end]`, right after the bytes the parser reads of it: the item's
    /// error is then the one the parser reports on the whole text. The splitting goes on after it (anything it
    /// reports comes later in the stream than the item's error).
    #[cold]
    fn end_invalid(&mut self, base: u64, end: usize, out: &mut Vec<Span>) -> usize {
        self.end_item(base + end as u64, out);
        end
    }

    fn error_at(&self, at: u64) -> SplitError {
        SplitError {
            position: at,
            line: self.newlines + 1,
        }
    }

    fn fail(&mut self, at: u64) -> SplitError {
        self.phase = Phase::Failed;
        self.offset = at;
        self.error_at(at)
    }
}

pub mod at_path;
#[cfg(test)]
mod tests;
