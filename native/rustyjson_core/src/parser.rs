//! An iterative JSON parser (RFC 8259) that drives a [`Builder`] and reports Jason's error positions.
//!
//! The parser owns the container stack and one shared value stack (plus one key stack for objects), so a
//! container's elements are a slice of that stack when it closes: no per-container collection, and nesting
//! depth is bounded by memory, never by the machine stack.

use crate::overflow::{catch_overflow, push, try_grow, Overflow};
use crate::utf8;

/// Jason's default limit: an integer token (minus sign included) longer than this many bytes is an error.
pub const MAX_INTEGER_TOKEN: usize = 1024;

/// Limits for untrusted input, asked of the builder once per [`parse_some`] call ([`Builder::limits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The deepest nesting of arrays and objects allowed (`[]` is depth 1, a scalar 0); `usize::MAX` for none.
    /// The bracket that goes deeper is an [`ParseError::UnexpectedByte`].
    pub max_depth: usize,
    /// The longest integer token (in bytes, minus sign included; `0` and `-0` are never too long, as in Jason):
    /// a longer one is a [`ParseError::Token`].
    pub integer_bytes: usize,
    /// Whether an object with a repeated key is an error ([`ParseError::DuplicateKey`]); the builder says which
    /// keys are equal ([`Builder::first_duplicate`]).
    pub duplicate_keys_error: bool,
    /// Whether strings' raw bytes must be UTF-8 (the default). Off (`validate_strings: false`, trusted input),
    /// their bytes are taken as they are; escapes are still checked (a lone surrogate is still an error).
    pub validate_utf8: bool,
    /// The most memory the built value may take, counted as about [`TERM_BYTES_PER_ENTRY`] an array item or
    /// object pair as containers close (a run of slices counts on from where the last stopped), with the stack of
    /// open containers; past it the parse stops with [`ParseError::TooLarge`]. `usize::MAX` for none.
    pub max_term_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: usize::MAX,
            integer_bytes: MAX_INTEGER_TOKEN,
            duplicate_keys_error: false,
            validate_utf8: true,
            max_term_bytes: usize::MAX,
        }
    }
}

/// What [`Limits::max_term_bytes`] counts an array item or an object pair as: a list cell (two words) or a map's
/// key and value slots, and a word for what the value itself may hold (a float, a sub-binary).
pub const TERM_BYTES_PER_ENTRY: usize = 24;

/// Containers of at least this many entries (an object's pairs, an array's items) are offered to
/// [`Builder::defer_build`] before they are built.
pub const LARGE_CONTAINER: usize = 2048;

/// Number tokens of more bytes than this are converted in a call of their own when the builder limits string
/// scans ([`Builder::string_scan_limit`]): an integer's (or a decimal's) digits convert in time quadratic in their
/// count (10,000 digits about 0.1 ms in the NIF, 30,000 about 1 ms).
pub const LONG_NUMBER: usize = 10_000;

/// Why a parse failed, with Jason's positions.
#[derive(Debug, PartialEq, Eq, Clone)]
pub enum ParseError {
    /// An unexpected byte at this position.
    UnexpectedByte(usize),
    /// Input ended at this position (the input's length).
    UnexpectedEnd(usize),
    /// An invalid token: bytes `start..end` of the input.
    Token { start: usize, end: usize },
    /// The builder refused the object key at bytes `start..end` of the input (the quotes excluded). Reported
    /// where Jason converts the key: at the `,` or `}` after its value, so an error inside the value, or a value
    /// not followed by either, is reported instead.
    Key { start: usize, end: usize },
    /// A repeated object key (with [`Limits::duplicate_keys_error`]): bytes `start..end` of the input are the
    /// key as written, quotes included.
    DuplicateKey { start: usize, end: usize },
    /// Internal: the string whose opening quote is here runs past [`Builder::string_scan_limit`], or the
    /// number that starts here is longer than [`LONG_NUMBER`] while that limit is set. Never returned by the
    /// public functions, which pause before the token instead.
    #[doc(hidden)]
    LongToken(usize),
    /// The parse's working memory (its stacks of open containers and pending values, as deep and wide as the
    /// input makes them) needed `needed` bytes at this position, and the allocator refused them.
    Memory { at: usize, needed: usize },
    /// The value built so far, with the stack of containers still open, would take more than
    /// [`Limits::max_term_bytes`] (`limit`): the container closing (or opening) at `at` passed it.
    TooLarge { at: usize, limit: usize },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Array,
    Object,
}

#[derive(Clone, Copy)]
struct Frame {
    kind: Kind,
    values_start: usize,
    keys_start: usize,
}

/// Parses `input` as one JSON document and returns the built value.
pub fn parse<B: Builder>(input: &[u8], builder: &mut B) -> Result<B::V, ParseError> {
    parse_with(input, builder, &mut Stacks::default())
}

/// [`parse`] with caller-provided working storage.
pub fn parse_with<B: Builder>(
    input: &[u8],
    builder: &mut B,
    stacks: &mut Stacks<B::V, B::K>,
) -> Result<B::V, ParseError> {
    let mut pos = 0;
    match parse_some(input, builder, stacks, &mut pos, usize::MAX)? {
        Progress::Done(v) => Ok(v),
        Progress::Paused => unreachable!("no limit"),
    }
}

/// What [`parse_some`] got to.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress<V> {
    /// The document's value.
    Done(V),
    /// Stopped past the limit at a boundary: after `[`, `,` in an array, `"key":`, or a closing bracket; or
    /// before a closing bracket whose build the builder deferred ([`Builder::defer_build`]).
    Paused,
}

/// Inputs of at most this many bytes (from where the parse starts) are parsed by the loop built for short ones
/// (see `Parser::run`).
const SHORT_INPUT: usize = 4096;

/// `p`, which the optimizer cannot see through (the instruction sequence is empty: nothing is read or written).
#[inline(always)]
#[allow(clippy::pointers_in_nomem_asm_block)]
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
fn opaque<T>(mut p: *mut T) -> *mut T {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: an empty instruction sequence.
    unsafe {
        std::arch::asm!("/* {0} */", inout(reg) p, options(nomem, nostack, preserves_flags))
    };
    p
}

/// Parses `input` from `*pos` (0 to start) until done or, at a boundary, past byte `limit`. After
/// [`Progress::Paused`], `*pos` and `stacks` hold the state: call again with both to continue. The values and
/// keys on the stacks are the builder's; a builder whose values can move between calls (BEAM terms across a
/// yield) replaces them in place through [`Stacks::pending`] before continuing.
pub fn parse_some<B: Builder>(
    input: &[u8],
    builder: &mut B,
    stacks: &mut Stacks<B::V, B::K>,
    pos: &mut usize,
    limit: usize,
) -> Result<Progress<B::V>, ParseError> {
    if *pos == 0 {
        stacks.clear();
    }
    parse_from(input, builder, stacks, pos, limit, false)
}

/// Parses the one value that starts at `input[*pos]` (no whitespace before it) and leaves `*pos` right after
/// it, whatever follows: a stream's items, one after another in one buffer. A value that runs to the end of
/// `input` is an [`ParseError::UnexpectedEnd`] (or, for a number or literal, complete: the caller knows
/// whether more may follow).
pub fn parse_value<B: Builder>(
    input: &[u8],
    builder: &mut B,
    stacks: &mut Stacks<B::V, B::K>,
    pos: &mut usize,
) -> Result<B::V, ParseError> {
    stacks.clear();
    match parse_from(input, builder, stacks, pos, usize::MAX, true)? {
        Progress::Done(v) => Ok(v),
        Progress::Paused => unreachable!("no limit"),
    }
}

#[inline(always)]
fn parse_from<B: Builder>(
    input: &[u8],
    builder: &mut B,
    stacks: &mut Stacks<B::V, B::K>,
    pos: &mut usize,
    limit: usize,
    one_value: bool,
) -> Result<Progress<B::V>, ParseError> {
    let limits = builder.limits();
    let mut p = Parser::new(input, *pos, limits, one_value);
    p.scratch = std::mem::take(&mut stacks.scratch);
    p.refused = stacks.refused.take();
    p.at_key = std::mem::take(&mut stacks.at_key);
    p.term_bytes = stacks.term_bytes;
    let scan = builder.string_scan_limit();
    if limit != usize::MAX && scan != usize::MAX {
        p.string_end = limit.saturating_add(scan).min(input.len());
        p.defers = true;
    }
    let s = &mut *stacks;
    // Keys' positions are recorded only when duplicate keys are errors: another instance of the parse loop, so
    // the usual one does no work for them.
    macro_rules! run {
        ($key_starts:literal, $short:literal) => {
            p.run::<B, $key_starts, $short>(
                builder,
                &mut s.frames,
                &mut s.values,
                &mut s.keys,
                &mut s.key_starts,
                &mut s.held,
                limit,
            )
        };
    }
    // A stack the allocator cannot grow ends the parse with an error where it stood (`overflow.rs`).
    let result = catch_overflow(|| {
        if limits.duplicate_keys_error {
            run!(true, false)
        } else if input.len() - p.pos <= SHORT_INPUT {
            run!(false, true)
        } else {
            run!(false, false)
        }
    })
    .unwrap_or_else(|why| {
        let refused = match why {
            Overflow::Memory { needed } | Overflow::Limit { needed, .. } => needed,
        };
        // What it held and what it asked for more: the working memory the input needed.
        let needed = s.held_bytes().saturating_add(refused);
        Err(ParseError::Memory { at: p.pos, needed })
    });
    stacks.scratch = p.scratch;
    stacks.refused = p.refused;
    stacks.term_bytes = p.term_bytes;
    *pos = p.pos;
    match result {
        Ok(None) => Ok(Progress::Paused),
        Err(ParseError::LongToken(quote)) => {
            // Paused before the token (a value, or a key when `at_key`): the next call takes it whole.
            *pos = quote;
            stacks.at_key = p.at_key;
            builder.string_deferred();
            Ok(Progress::Paused)
        }
        result => {
            // Release what a big document grew at once, rather than hold it until the next parse (the next one
            // empties the stacks before it starts).
            if input.len() > Stacks::<(), ()>::KEEP {
                stacks.release_large();
            }
            result.map(|v| Progress::Done(v.expect("a value")))
        }
    }
}

struct Parser<'a> {
    input: &'a [u8],
    pos: usize,
    scratch: Vec<u8>,
    /// [`Limits`]: the deepest nesting, the longest integer token, and the most digits of the integer fast path.
    max_depth: usize,
    integer_bytes: usize,
    fast_int_digits: u32,
    /// Stop right after the top-level value ([`parse_value`]) rather than require the end of the input.
    one_value: bool,
    /// Strings are scanned up to here in this call ([`Builder::string_scan_limit`]); one running further is a
    /// [`ParseError::LongToken`].
    string_end: usize,
    /// Long tokens pause the parse before them ([`Builder::string_scan_limit`] is set).
    defers: bool,
    /// A key the builder refused, reported at the `,` or `}` after its value (`keys.rs`).
    refused: Option<RefusedKey>,
    /// The parse continues with an object key (it paused before a long one), not a value.
    at_key: bool,
    /// [`Limits::validate_utf8`].
    validate_utf8: bool,
    /// [`Limits::max_term_bytes`], and what the containers closed so far count (carried in [`Stacks`]).
    max_term_bytes: usize,
    term_bytes: usize,
}

/// A key the builder refused: its bytes in the input (quotes excluded) and its index on the key stack.
#[derive(Clone, Copy)]
pub(crate) struct RefusedKey {
    start: usize,
    end: usize,
    index: usize,
}

impl<'a> Parser<'a> {
    fn new(input: &'a [u8], pos: usize, limits: Limits, one_value: bool) -> Self {
        Parser {
            input,
            pos,
            scratch: Vec::new(),
            max_depth: limits.max_depth,
            integer_bytes: limits.integer_bytes,
            // Integers of up to this many digits take the fast path, which has no length check: fewer when the
            // limit is below 19 bytes, so that every integer the limit may refuse goes through the check.
            fast_int_digits: limits.integer_bytes.saturating_sub(1).min(18) as u32,
            one_value,
            string_end: input.len(),
            defers: false,
            refused: None,
            at_key: false,
            validate_utf8: limits.validate_utf8,
            max_term_bytes: limits.max_term_bytes,
            term_bytes: 0,
        }
    }
}

#[inline(always)]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Result of scanning a string: where it lies and whether it went through the scratch buffer.
enum Span {
    Input(usize, usize),
    Scratch(usize, usize),
}

impl<'a> Parser<'a> {
    #[inline(always)]
    fn skip_ws(&mut self) {
        // Usually zero or one byte of whitespace (compact text, or `": "`); long runs are indentation.
        match self.input.get(self.pos) {
            Some(&b) if is_ws(b) => {}
            _ => return,
        }
        self.pos += 1;
        match self.input.get(self.pos) {
            Some(&b) if is_ws(b) => self.pos = utf8::skip_ws(self.input, self.pos + 1),
            _ => {}
        }
    }

    /// The next non-whitespace byte, or the end-of-input error.
    #[inline(always)]
    fn next_byte(&mut self) -> Result<u8, ParseError> {
        match self.input.get(self.pos) {
            Some(&b) if !is_ws(b) => Ok(b),
            _ => {
                self.skip_ws();
                self.input
                    .get(self.pos)
                    .copied()
                    .ok_or(ParseError::UnexpectedEnd(self.input.len()))
            }
        }
    }

    /// Counts a closing container's `entries` against [`Limits::max_term_bytes`] (once a container: nothing on
    /// the path of each value).
    #[inline(always)]
    fn charge(&mut self, entries: usize) -> Result<(), ParseError> {
        self.term_bytes = self
            .term_bytes
            .saturating_add(entries.saturating_mul(TERM_BYTES_PER_ENTRY));
        if self.term_bytes > self.max_term_bytes {
            return Err(self.too_large());
        }
        Ok(())
    }

    /// The open containers' stack, as deep as the input nests, counts against the same ceiling as the term it
    /// will build: a deep document's frames (24 bytes a level) come before any of its term. Checked when the
    /// stack takes a new chunk.
    #[cold]
    #[inline(never)]
    fn charge_depth(&self, depth: usize) -> Result<(), ParseError> {
        let frames = depth.saturating_mul(std::mem::size_of::<Frame>());
        if frames.saturating_add(self.term_bytes) > self.max_term_bytes {
            return Err(self.too_large());
        }
        Ok(())
    }

    #[cold]
    fn too_large(&self) -> ParseError {
        ParseError::TooLarge {
            at: self.pos,
            limit: self.max_term_bytes,
        }
    }

    #[inline]
    fn err_at(&self, pos: usize) -> ParseError {
        if pos >= self.input.len() {
            ParseError::UnexpectedEnd(self.input.len())
        } else {
            ParseError::UnexpectedByte(pos)
        }
    }

    /// The parse loop; `TRACK_KEYS`: record where keys start and refuse repeated keys.
    #[allow(clippy::too_many_arguments)]
    fn run<B: Builder, const TRACK_KEYS: bool, const SHORT: bool>(
        &mut self,
        b: &mut B,
        frames: &mut ChunkedStack<Frame>,
        values: &mut Vec<B::V>,
        keys: &mut Vec<B::K>,
        key_starts: &mut Vec<usize>,
        held: &mut bool,
        mut limit: usize,
    ) -> Result<Option<B::V>, ParseError> {
        // Paused right after a value: it waits on top of the value stack.
        let mut resumed = if std::mem::take(held) {
            values.pop()
        } else {
            None
        };
        if std::mem::take(&mut self.at_key) {
            // Paused before a long key: it comes first.
            let c = self.next_byte()?;
            self.object_key(b, keys, c)?;
            if self.pos > limit {
                return Ok(None);
            }
        }
        let b_raw: *mut B = b;
        'value: loop {
            // For a short input the builder's address is made opaque on every round: LLVM otherwise computes the
            // addresses of the builder's fields the loop uses once, before it, and keeps them in ~60 stack slots,
            // a fixed cost of 8 ns per call (decoding `1`: 48.8 -> 40.0 ns; a 65-byte object 116.0 -> 111.5 ns,
            // OTP 29).
            // A long input gains from the hoisting (citm_catalog 3% faster with it).
            // SAFETY: `b_raw` is `b`, used only through this reborrow.
            let b = unsafe { &mut *if SHORT { opaque(b_raw) } else { b_raw } };
            let mut v = if let Some(v) = resumed.take() {
                v
            } else {
                let c = self.next_byte()?;
                match c {
                    b'"' => {
                        let span = self.string()?;
                        let s = self.str_of(span);
                        b.string(s)
                    }
                    b'{' => {
                        if frames.len() >= self.max_depth {
                            return Err(ParseError::UnexpectedByte(self.pos));
                        }
                        self.pos += 1;
                        let c = self.next_byte()?;
                        if c == b'}' {
                            self.pos += 1;
                            b.object(&[], &[])
                        } else {
                            if frames.push(Frame {
                                kind: Kind::Object,
                                values_start: values.len(),
                                keys_start: keys.len(),
                            }) {
                                self.charge_depth(frames.len())?;
                                if limit != usize::MAX {
                                    limit = GROWTH_ENDS_SLICE;
                                }
                            }
                            if TRACK_KEYS {
                                push(key_starts, self.pos);
                            }
                            self.object_key(b, keys, c)?;
                            if self.pos > limit {
                                return Ok(None);
                            }
                            continue 'value;
                        }
                    }
                    b'[' => {
                        if frames.len() >= self.max_depth {
                            return Err(ParseError::UnexpectedByte(self.pos));
                        }
                        self.pos += 1;
                        let c = self.next_byte()?;
                        if c == b']' {
                            self.pos += 1;
                            b.array(&[])
                        } else {
                            if frames.push(Frame {
                                kind: Kind::Array,
                                values_start: values.len(),
                                keys_start: keys.len(),
                            }) {
                                self.charge_depth(frames.len())?;
                                if limit != usize::MAX {
                                    limit = GROWTH_ENDS_SLICE;
                                }
                            }
                            if self.pos > limit {
                                return Ok(None);
                            }
                            continue 'value;
                        }
                    }
                    b'-' | b'0'..=b'9' => self.number(b)?,
                    b't' => {
                        self.literal(b"true")?;
                        b.boolean(true)
                    }
                    b'f' => {
                        self.literal(b"false")?;
                        b.boolean(false)
                    }
                    b'n' => {
                        self.literal(b"null")?;
                        b.null()
                    }
                    _ => return Err(ParseError::UnexpectedByte(self.pos)),
                }
            };
            // After a value: close containers or move to the next element.
            loop {
                let Some(frame) = frames.last() else {
                    if self.one_value {
                        return Ok(Some(v));
                    }
                    self.skip_ws();
                    return if self.pos == self.input.len() {
                        Ok(Some(v))
                    } else {
                        Err(ParseError::UnexpectedByte(self.pos))
                    };
                };
                let c = self.next_byte()?;
                match (frame.kind, c) {
                    (Kind::Array, b',') => {
                        self.pos += 1;
                        push(values, v);
                        if self.pos > limit {
                            return Ok(None);
                        }
                        // Runs of numbers (coordinates, ids, matrices) stay in this loop while a comma follows
                        // each: no round through the value dispatch and the frame match per element.
                        loop {
                            // `1,2` and `1, 2` without the general whitespace skip.
                            if self.input.get(self.pos) == Some(&b' ') {
                                self.pos += 1;
                            }
                            if !matches!(self.input.get(self.pos), Some(b'-' | b'0'..=b'9')) {
                                continue 'value;
                            }
                            v = self.number(b)?;
                            if self.input.get(self.pos) != Some(&b',') {
                                // `]`, whitespace or an error: the general path takes it from here.
                                break;
                            }
                            self.pos += 1;
                            push(values, v);
                            if self.pos > limit {
                                return Ok(None);
                            }
                        }
                    }
                    (Kind::Object, b',') => {
                        self.report_refused_key(keys.len())?;
                        self.pos += 1;
                        push(values, v);
                        let c = self.next_byte()?;
                        if TRACK_KEYS {
                            push(key_starts, self.pos);
                        }
                        self.object_key(b, keys, c)?;
                        if self.pos > limit {
                            return Ok(None);
                        }
                        continue 'value;
                    }
                    (Kind::Array, b']') => {
                        let start = frame.values_start;
                        let len = values.len() - start + 1;
                        if len >= LARGE_CONTAINER && b.defer_build(len, false) {
                            push(values, v);
                            *held = true;
                            return Ok(None);
                        }
                        self.charge(len)?;
                        self.pos += 1;
                        frames.pop();
                        if start == values.len() {
                            // Single-element array: no collection.
                            v = b.array(std::slice::from_ref(&v));
                        } else {
                            push(values, v);
                            v = b.array(&values[start..]);
                            values.truncate(start);
                        }
                    }
                    (Kind::Object, b'}') => {
                        self.report_refused_key(keys.len())?;
                        let start = frame.values_start;
                        let kstart = frame.keys_start;
                        let len = keys.len() - kstart;
                        if len >= LARGE_CONTAINER && b.defer_build(len, true) {
                            push(values, v);
                            *held = true;
                            return Ok(None);
                        }
                        if TRACK_KEYS {
                            if let Some(i) = b.first_duplicate(&keys[kstart..]) {
                                return Err(self.duplicate_key(key_starts[kstart + i]));
                            }
                        }
                        self.charge(len.max(1))?;
                        self.pos += 1;
                        frames.pop();
                        if TRACK_KEYS {
                            push(values, v);
                            let starts = &key_starts[kstart..];
                            v = b.object_with_starts(&keys[kstart..], starts, &values[start..]);
                            values.truncate(start);
                            key_starts.truncate(kstart);
                        } else if start == values.len() {
                            v = b.object(&keys[kstart..], std::slice::from_ref(&v));
                        } else {
                            push(values, v);
                            v = b.object(&keys[kstart..], &values[start..]);
                            values.truncate(start);
                        }
                        keys.truncate(kstart);
                    }
                    _ => return Err(ParseError::UnexpectedByte(self.pos)),
                }
                if self.pos > limit {
                    // Long runs of closing brackets have no other pause point.
                    push(values, v);
                    *held = true;
                    return Ok(None);
                }
            }
        }
    }

    #[inline]
    fn str_of(&self, span: Span) -> Str<'_> {
        match span {
            Span::Input(start, end) => Str::Input {
                start,
                end,
                bytes: &self.input[start..end],
            },
            Span::Scratch(start, end) => Str::Unescaped(&self.scratch[start..end]),
        }
    }

    /// Jason reports a bad or truncated literal at its first byte.
    #[inline]
    fn literal(&mut self, word: &[u8]) -> Result<(), ParseError> {
        if self.input[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(ParseError::UnexpectedByte(self.pos))
        }
    }
}

mod builder;
mod chunked_stack;
mod expected_key;
mod keys;
pub mod locate;
mod number;
mod stacks;
mod strings;

pub use builder::{Builder, Str};
use chunked_stack::{ChunkedStack, GROWTH_ENDS_SLICE};
pub use expected_key::ExpectedKey;
pub use stacks::Stacks;
pub use strings::string_at;
pub(crate) use strings::{scan_escape, EscapeScan, ESCAPE_MAX};
#[cfg(test)]
mod tests;
