//! An iterative JSON parser (RFC 8259) that drives a [`Builder`] and reports Jason's error positions.
//!
//! The parser owns the container stack and one shared value stack (plus one key stack for objects), so a
//! container's elements are a slice of that stack when it closes: no per-container collection, and nesting
//! depth is bounded by memory, never by the machine stack.

use crate::utf8;

/// Jason's limit: an integer token longer than this many bytes is an error.
pub const MAX_INTEGER_TOKEN: usize = 1024;

/// Containers of at least this many entries (an object's pairs, an array's items) are offered to
/// [`Builder::defer_build`] before they are built.
pub const LARGE_CONTAINER: usize = 2048;

/// Where a string's bytes are: a slice of the input (no escapes) or unescaped bytes in a scratch buffer.
#[derive(Clone, Copy, Debug)]
pub enum Str<'a> {
    /// Bytes `start..end` of the input (`bytes` is that slice), taken verbatim.
    Input {
        start: usize,
        end: usize,
        bytes: &'a [u8],
    },
    /// Unescaped bytes, valid only for the duration of the call.
    Unescaped(&'a [u8]),
}

impl<'a> Str<'a> {
    /// The string's bytes.
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        match *self {
            Str::Input { bytes, .. } => bytes,
            Str::Unescaped(b) => b,
        }
    }
}

/// Builds values bottom-up. `V` is the builder's value type (a BEAM term in the NIF).
pub trait Builder {
    /// A built value.
    type V: Copy;
    /// A built object key.
    type K: Copy;
    fn null(&mut self) -> Self::V;
    fn boolean(&mut self, value: bool) -> Self::V;
    /// An integer that fits in 64 bits.
    fn int(&mut self, value: i64) -> Self::V;
    /// A longer integer token (`-?digits`, at most [`MAX_INTEGER_TOKEN`] bytes).
    fn big_int(&mut self, text: &[u8]) -> Self::V;
    /// A float token, its text and its (finite) value.
    fn float(&mut self, text: &[u8], value: f64) -> Self::V;
    /// A float token out of the `f64` range (`1e400`): Jason's token error unless the builder takes it
    /// (`floats: :decimals` does).
    fn float_out_of_range(&mut self, _text: &[u8]) -> Option<Self::V> {
        None
    }
    fn string(&mut self, s: Str) -> Self::V;
    /// An object key; `Err(())` aborts the parse with [`ParseError::Key`] (e.g. `keys: :atoms!`).
    #[allow(clippy::result_unit_err)]
    fn key(&mut self, s: Str) -> Result<Self::K, ()>;
    /// The object key the builder expects next, if it predicts one (`keys: :intern` does, from the order keys
    /// came in before). When the input holds exactly that key next, the parser takes it with
    /// [`Builder::expected_key_found`] instead of scanning it and calling [`Builder::key`].
    #[inline(always)]
    fn expected_key(&mut self) -> Option<ExpectedKey> {
        None
    }
    /// The key [`Builder::expected_key`] returned is at `input[start..end]`.
    fn expected_key_found(&mut self, _start: usize, _end: usize) -> Self::K {
        unreachable!("no key was expected")
    }
    /// An array of the given elements (possibly none).
    fn array(&mut self, items: &[Self::V]) -> Self::V;
    /// An object: `keys[i]` maps to `values[i]`, in document order (duplicates possible; the first wins).
    fn object(&mut self, keys: &[Self::K], values: &[Self::V]) -> Self::V;
    /// Whether to stop before building the container about to close, of `len` entries (at least
    /// [`LARGE_CONTAINER`]), so the caller can build it elsewhere: a NIF on a normal scheduler moves the build of
    /// a million-key map (hundreds of milliseconds in one VM call) to a dirty one. The parser then returns
    /// [`Progress::Paused`] with the closing bracket unread, and asks again when called again.
    #[inline(always)]
    fn defer_build(&mut self, _len: usize, _object: bool) -> bool {
        false
    }
}

/// A predicted object key, matched against the input in one 16-byte load: the key's bytes, zero-padded, and the
/// mask of its length; the quotes around it are checked on their own. Keys of up to [`ExpectedKey::MAX_LEN`]
/// bytes, which hold no quote, backslash or control byte (they were read from an escape-free key of the same
/// input), so a match is exactly that key.
#[derive(Clone, Copy, Debug)]
pub struct ExpectedKey {
    key: u128,
    mask: u128,
    len: usize,
}

impl ExpectedKey {
    /// The longest key that fits in one 16-byte load.
    pub const MAX_LEN: usize = 16;

    /// The key of `len` (at most [`ExpectedKey::MAX_LEN`]) bytes held in `lo`, `hi` as little-endian words,
    /// zero-padded. (The key is compared from its first byte, so nothing is shifted: shifts of a u128 cost a
    /// dozen instructions, and this runs for every key of `keys: :intern`.)
    #[inline(always)]
    pub fn new(lo: u64, hi: u64, len: usize) -> Self {
        debug_assert!(len <= Self::MAX_LEN);
        ExpectedKey {
            key: (lo as u128) | ((hi as u128) << 64) | CLOSING_QUOTE[len],
            mask: KEY_MASK[len],
            len,
        }
    }

    /// The key's length (without its quotes).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the key is `""`.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `input[pos..]` starts with the quoted key. (The closing quote is part of the compared word
    /// unless the key fills all 16 bytes.)
    #[inline(always)]
    fn at(&self, input: &[u8], pos: usize) -> bool {
        input.get(pos) == Some(&b'"')
            && match input.get(pos + 1..pos + 17) {
                Some(w) => {
                    (u128::from_le_bytes(w.try_into().unwrap()) ^ self.key) & self.mask == 0
                        && (self.len < Self::MAX_LEN || input.get(pos + 17) == Some(&b'"'))
                }
                None => false,
            }
    }
}

/// The closing quote after a key of each length, in the key's 16-byte word (none for 16 bytes: it is checked
/// apart).
static CLOSING_QUOTE: [u128; ExpectedKey::MAX_LEN + 1] = {
    let mut t = [0u128; ExpectedKey::MAX_LEN + 1];
    let mut len = 0;
    while len < ExpectedKey::MAX_LEN {
        t[len] = (b'"' as u128) << (8 * len);
        len += 1;
    }
    t
};

/// The bytes of a key of each length and its closing quote, in a little-endian 16-byte word.
static KEY_MASK: [u128; ExpectedKey::MAX_LEN + 1] = {
    let mut t = [u128::MAX; ExpectedKey::MAX_LEN + 1];
    let mut len = 0;
    while len < ExpectedKey::MAX_LEN {
        t[len] = u128::MAX >> (8 * (ExpectedKey::MAX_LEN - len - 1));
        len += 1;
    }
    t
};

/// Why a parse failed, with Jason's positions.
#[derive(Debug, PartialEq, Eq, Clone)]
pub enum ParseError {
    /// An unexpected byte at this position.
    UnexpectedByte(usize),
    /// Input ended at this position (the input's length).
    UnexpectedEnd(usize),
    /// An invalid token: bytes `start..end` of the input.
    Token { start: usize, end: usize },
    /// The builder refused the object key at bytes `start..end` of the input (the quotes excluded).
    Key { start: usize, end: usize },
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

/// The parser's working storage, reusable across parses (a caller may keep one per thread to save the
/// allocations on small documents).
pub struct Stacks<V, K> {
    frames: Vec<Frame>,
    values: Vec<V>,
    keys: Vec<K>,
    scratch: Vec<u8>,
    /// Paused right after a value, which is the last of `values`.
    held: bool,
}

impl<V, K> Default for Stacks<V, K> {
    fn default() -> Self {
        Stacks {
            frames: Vec::new(),
            values: Vec::new(),
            keys: Vec::new(),
            scratch: Vec::new(),
            held: false,
        }
    }
}

impl<V, K> Stacks<V, K> {
    /// The values and keys of the containers still open (after [`Progress::Paused`]).
    pub fn pending(&mut self) -> (&mut [V], &mut [K]) {
        (&mut self.values, &mut self.keys)
    }

    /// Empties the stacks, and drops storage grown large by a big document rather than keep it.
    fn reset(&mut self) {
        const KEEP: usize = 4096;
        if self.frames.capacity() > KEEP {
            self.frames = Vec::new();
        }
        if self.values.capacity() > KEEP {
            self.values = Vec::new();
        }
        if self.keys.capacity() > KEEP {
            self.keys = Vec::new();
        }
        if self.scratch.capacity() > 16 * KEEP {
            self.scratch = Vec::new();
        }
        self.held = false;
        self.frames.clear();
        self.values.clear();
        self.keys.clear();
        self.scratch.clear();
    }
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
        stacks.reset();
    }
    let mut p = Parser {
        input,
        pos: *pos,
        scratch: std::mem::take(&mut stacks.scratch),
    };
    let result = p.run(
        builder,
        &mut stacks.frames,
        &mut stacks.values,
        &mut stacks.keys,
        &mut stacks.held,
        limit,
    );
    stacks.scratch = p.scratch;
    *pos = p.pos;
    match result {
        Ok(None) => Ok(Progress::Paused),
        result => {
            // Release what a big document grew at once, rather than hold it until the next parse.
            stacks.reset();
            result.map(|v| Progress::Done(v.expect("a value")))
        }
    }
}

struct Parser<'a> {
    input: &'a [u8],
    pos: usize,
    scratch: Vec<u8>,
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

    #[inline]
    fn err_at(&self, pos: usize) -> ParseError {
        if pos >= self.input.len() {
            ParseError::UnexpectedEnd(self.input.len())
        } else {
            ParseError::UnexpectedByte(pos)
        }
    }

    fn run<B: Builder>(
        &mut self,
        b: &mut B,
        frames: &mut Vec<Frame>,
        values: &mut Vec<B::V>,
        keys: &mut Vec<B::K>,
        held: &mut bool,
        limit: usize,
    ) -> Result<Option<B::V>, ParseError> {
        // Paused right after a value: it waits on top of the value stack.
        let mut resumed = if std::mem::take(held) {
            values.pop()
        } else {
            None
        };
        'value: loop {
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
                        self.pos += 1;
                        let c = self.next_byte()?;
                        if c == b'}' {
                            self.pos += 1;
                            b.object(&[], &[])
                        } else {
                            frames.push(Frame {
                                kind: Kind::Object,
                                values_start: values.len(),
                                keys_start: keys.len(),
                            });
                            let k = self.object_key(b, c)?;
                            keys.push(k);
                            if self.pos > limit {
                                return Ok(None);
                            }
                            continue 'value;
                        }
                    }
                    b'[' => {
                        self.pos += 1;
                        let c = self.next_byte()?;
                        if c == b']' {
                            self.pos += 1;
                            b.array(&[])
                        } else {
                            frames.push(Frame {
                                kind: Kind::Array,
                                values_start: values.len(),
                                keys_start: keys.len(),
                            });
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
                        values.push(v);
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
                            values.push(v);
                            if self.pos > limit {
                                return Ok(None);
                            }
                        }
                    }
                    (Kind::Object, b',') => {
                        self.pos += 1;
                        values.push(v);
                        let c = self.next_byte()?;
                        let k = self.object_key(b, c)?;
                        keys.push(k);
                        if self.pos > limit {
                            return Ok(None);
                        }
                        continue 'value;
                    }
                    (Kind::Array, b']') => {
                        let start = frame.values_start;
                        let len = values.len() - start + 1;
                        if len >= LARGE_CONTAINER && b.defer_build(len, false) {
                            values.push(v);
                            *held = true;
                            return Ok(None);
                        }
                        self.pos += 1;
                        frames.pop();
                        if start == values.len() {
                            // Single-element array: no collection.
                            v = b.array(std::slice::from_ref(&v));
                        } else {
                            values.push(v);
                            v = b.array(&values[start..]);
                            values.truncate(start);
                        }
                    }
                    (Kind::Object, b'}') => {
                        let start = frame.values_start;
                        let kstart = frame.keys_start;
                        let len = keys.len() - kstart;
                        if len >= LARGE_CONTAINER && b.defer_build(len, true) {
                            values.push(v);
                            *held = true;
                            return Ok(None);
                        }
                        self.pos += 1;
                        frames.pop();
                        if start == values.len() {
                            v = b.object(&keys[kstart..], std::slice::from_ref(&v));
                        } else {
                            values.push(v);
                            v = b.object(&keys[kstart..], &values[start..]);
                            values.truncate(start);
                        }
                        keys.truncate(kstart);
                    }
                    _ => return Err(ParseError::UnexpectedByte(self.pos)),
                }
                if self.pos > limit {
                    // Long runs of closing brackets have no other pause point.
                    values.push(v);
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

    /// Parses `"key" :` where `c` is the (non-whitespace) byte at `pos`. The builder's expected key, when the
    /// input holds it, costs one compare here; any other key is scanned out of line.
    #[inline(always)]
    fn object_key<B: Builder>(&mut self, b: &mut B, c: u8) -> Result<B::K, ParseError> {
        if c == b'"' {
            if let Some(expected) = b.expected_key() {
                if expected.at(self.input, self.pos) {
                    let start = self.pos + 1;
                    let end = start + expected.len;
                    let k = b.expected_key_found(start, end);
                    self.pos = end + 1;
                    if self.input.get(self.pos) == Some(&b':') {
                        self.pos += 1;
                        return Ok(k);
                    }
                    return self.colon(k);
                }
            }
        }
        self.scanned_key(b, c)
    }

    #[inline]
    fn scanned_key<B: Builder>(&mut self, b: &mut B, c: u8) -> Result<B::K, ParseError> {
        if c != b'"' {
            return Err(ParseError::UnexpectedByte(self.pos));
        }
        let key_start = self.pos + 1;
        let span = self.string()?;
        let key_end = self.pos - 1;
        let s = self.str_of(span);
        let k = b.key(s).map_err(|()| ParseError::Key {
            start: key_start,
            end: key_end,
        })?;
        self.colon(k)
    }

    /// The `:` after key `k`, past any whitespace.
    #[inline]
    fn colon<K>(&mut self, k: K) -> Result<K, ParseError> {
        if self.next_byte()? != b':' {
            return Err(ParseError::UnexpectedByte(self.pos));
        }
        self.pos += 1;
        Ok(k)
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

mod number;
mod strings;
#[cfg(test)]
mod tests;
