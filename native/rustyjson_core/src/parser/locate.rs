//! Finds the values at JSON Pointer paths ([`Paths`]) in a document while validating all of it, building nothing.
//!
//! The walk is the parser's grammar with the parser's own token functions (strings with their UTF-8 and escapes,
//! numbers with the digit limit and the float range, literals), so a document is valid here exactly when
//! [`parse`](super::parse) accepts it, and an error is reported at the same position. Containers are a stack of
//! open frames on the heap, never recursion. Only the frames on a path look up keys; everything else is skipped at
//! the speed of the token scans.
//!
//! The walk is resumable at every step (a token, or a bracket, comma or colon): [`Locator::run`] stops past a
//! byte limit (a NIF's slice), before a token too long for a normal scheduler's slice, and, for a stream
//! ([`LocateOptions::stream`]), where its input ends inside a token (the caller feeds that token again with the
//! bytes after it), at a token longer than [`LocateOptions::max_token`] (a bounded stream), or at the `[` of the
//! array it streams (the caller splits that array into items and resumes after its `]`).

use super::*;

mod paths;
mod skim;
pub use paths::{array_index, NodeId, Paths};
use skim::{Skim, Skimmed};

/// Which of an object's repeated keys a path follows (`duplicate_keys:` as in the decoder).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Duplicates {
    /// The first, as the decoder keeps the first by default: later ones are skipped.
    First,
    /// The last: each repeat followed again replaces what was found under the earlier one.
    Last,
    /// A repeat of a key the path follows is a [`ParseError::DuplicateKey`] at its opening quote.
    Error,
}

/// How a [`Locator`] walks.
#[derive(Clone, Copy, Debug)]
pub struct LocateOptions {
    /// The nesting and integer limits (`duplicate_keys_error` is not read: see `duplicates`).
    pub limits: Limits,
    pub duplicates: Duplicates,
    /// Floats out of the `f64` range are valid (`floats: :decimals` decodes them).
    pub decimals: bool,
    /// The input comes in pieces: the end of one is not the end of the document unless the caller says so, and
    /// the value at the (single) path, when an array, is left to the caller ([`Located::Array`]).
    pub stream: bool,
    /// A stream: a string, number or literal of more bytes than this stops the walk ([`Located::TooLong`]), so
    /// the caller never keeps more of a token cut by its pieces' ends (`max_bytes:`).
    pub max_token: usize,
}

impl Default for LocateOptions {
    fn default() -> Self {
        LocateOptions {
            limits: Limits::default(),
            duplicates: Duplicates::First,
            decimals: false,
            stream: false,
            max_token: usize::MAX,
        }
    }
}

/// Where [`Locator::run`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Located {
    /// The document is whole and valid: [`Locator::found`] holds the spans.
    Done,
    /// Past the byte limit, at a step boundary.
    Paused,
    /// Before a string or number too long to scan in this slice (the limit given to `run` as `scan`).
    LongToken,
    /// A stream's input ends inside a token or between values: feed the bytes from the returned position on again,
    /// followed by the next piece.
    NeedMore,
    /// A stream reached the `[` (at this position) of the array at its path: the caller takes the array and calls
    /// [`Locator::array_done`] after its `]`.
    Array(usize),
    /// A stream's token at this position is longer than [`LocateOptions::max_token`] (known before its end).
    TooLong(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// A value, at this node of the paths (or none).
    Value(Option<NodeId>),
    /// After `[`: `]` or the first item.
    ArrayFirst,
    /// After `{`: `}` or the first key.
    ObjectFirst,
    /// An object key.
    Key,
    /// The `:` after a key, then the value at this node.
    Colon(Option<NodeId>),
    /// After a value: `,` or a closing bracket, or the end.
    After,
    /// After the top-level value: whitespace to the end.
    End,
}

/// An open container.
struct Open {
    kind: Kind,
    /// Its node on the paths, when one ends here or goes on below.
    node: Option<NodeId>,
    /// Its opening bracket (absolute).
    start: u64,
    /// Items before the current one (arrays).
    count: usize,
    /// The members followed so far (objects on a path: repeated keys).
    followed: Vec<NodeId>,
}

/// The walk's state, carried from call to call.
pub struct Locator {
    paths: Paths,
    options: LocateOptions,
    /// In chunks, as the parser's (a deep document grows it without copying it).
    frames: ChunkedStack<Open>,
    next: Next,
    /// Where the input given to `run` starts in the document (spans are absolute).
    base: u64,
    found: Vec<Option<(u64, u64)>>,
    /// A stream: the value at the path was an array, taken by the caller.
    streamed: bool,
    /// A stream: bytes of the token at the input's start already scanned for its end (see `token_end`).
    scanned: usize,
    scratch: Vec<u8>,
    /// A skim of a container no path enters, paused at a slice's end.
    skim: Option<Skim>,
    /// A skim had a doubt about the container that is frame `n` (when `Some(n)`): it and all inside it are walked
    /// token by token (one skim over a bad document, not one per nested container).
    unskimmed: Option<usize>,
    /// Input before this position is known to be UTF-8 (carried from skim to skim).
    utf8_to: usize,
}

/// How far one [`Locator::run`] walks: past `limit` it pauses at a step boundary; a string may run `scan` bytes
/// past it (without `scan`, any length).
#[derive(Clone, Copy)]
struct Slice {
    limit: usize,
    scan: Option<usize>,
}

impl Slice {
    /// Sets how far `p` scans a string before calling it long.
    fn bound_strings(&self, p: &mut Parser) {
        if let Some(scan) = self.scan {
            p.string_end = self.limit.saturating_add(scan).min(p.input.len());
            p.defers = true;
        }
    }
}

/// The parser's builder for a walk that builds nothing.
struct Skip {
    decimals: bool,
}

impl Builder for Skip {
    type V = ();
    type K = ();
    fn null(&mut self) {}
    fn boolean(&mut self, _: bool) {}
    fn int(&mut self, _: i64) {}
    fn big_int(&mut self, _: &[u8]) {}
    fn float(&mut self, _: &[u8], _: f64) {}
    fn float_out_of_range(&mut self, _: &[u8]) -> Option<()> {
        self.decimals.then_some(())
    }
    fn string(&mut self, _: Str) {}
    fn key(&mut self, _: Str) -> Result<(), ()> {
        Ok(())
    }
    fn array(&mut self, _: &[()]) {}
    fn object(&mut self, _: &[()], _: &[()]) {}
}

#[inline]
fn ends_scalar(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\r' | b'\n' | b'[' | b']' | b'{' | b'}' | b',' | b':' | b'"'
    )
}

impl Locator {
    /// A walk looking for `pointers` (each a list of unescaped reference tokens) from the start of a document.
    pub fn new<T: AsRef<[u8]>>(pointers: &[Vec<T>], options: LocateOptions) -> Self {
        Locator {
            paths: Paths::new(pointers),
            options,
            frames: ChunkedStack::default(),
            next: Next::Value(Some(Paths::ROOT)),
            base: 0,
            found: vec![None; pointers.len()],
            streamed: false,
            scanned: 0,
            scratch: Vec::new(),
            skim: None,
            unskimmed: None,
            utf8_to: 0,
        }
    }

    /// The span (absolute `start..end`) of the value found at each pointer, in the order given; `None` where the
    /// document has none. Final once [`Located::Done`] is returned.
    pub fn found(&self) -> &[Option<(u64, u64)>] {
        &self.found
    }

    /// A stream: whether the value at the path was an array that the caller took ([`Located::Array`]).
    pub fn streamed(&self) -> bool {
        self.streamed
    }

    /// A stream: the most bytes a token may have ([`LocateOptions::max_token`]).
    pub fn max_token(&self) -> usize {
        self.options.max_token
    }

    /// Where the input of the next `run` starts in the document.
    pub fn set_base(&mut self, base: u64) {
        self.base = base;
    }

    /// A stream: the array reported by [`Located::Array`] ended; the walk goes on after it.
    pub fn array_done(&mut self) {
        self.next = Next::After;
    }

    /// Walks `input` from `*pos` until the document ends or, at a step boundary, past byte `limit` (which moves
    /// back as far as a skim's doubt sends the walk back, so bytes walked again count against it). `scan`: how
    /// far past `limit` a string may run (a longer one, or a number of more than [`LONG_NUMBER`] bytes, stops the
    /// walk before it with [`Located::LongToken`]). `last`: `input` ends the stream (always true unless
    /// [`LocateOptions::stream`]). Errors are the parser's, at the parser's positions (relative to `input`).
    /// The bytes its stack of open containers holds.
    pub fn held_bytes(&self) -> usize {
        self.frames.held_bytes()
    }

    pub fn run(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        limit: usize,
        scan: Option<usize>,
        last: bool,
    ) -> Result<Located, ParseError> {
        let mut p = Parser::new(input, *pos, self.options.limits, true);
        p.scratch = std::mem::take(&mut self.scratch);
        let slice = Slice { limit, scan };
        slice.bound_strings(&mut p);
        let partial = self.options.stream && !last;
        let result = self.walk(&mut p, slice, partial);
        self.scratch = std::mem::take(&mut p.scratch);
        *pos = p.pos;
        match result {
            Err(ParseError::LongToken(at)) => {
                *pos = at;
                Ok(Located::LongToken)
            }
            result => result,
        }
    }

    fn walk(
        &mut self,
        p: &mut Parser,
        mut slice: Slice,
        partial: bool,
    ) -> Result<Located, ParseError> {
        let mut skip = Skip {
            decimals: self.options.decimals,
        };
        if let Some(skim) = self.skim.take() {
            if let Some(paused) = self.skim(p, skim, &mut slice) {
                return Ok(paused);
            }
        }
        loop {
            if p.pos > slice.limit {
                return Ok(Located::Paused);
            }
            if self.next == Next::After && self.frames.is_empty() {
                self.next = Next::End;
            }
            if self.next == Next::End {
                p.skip_ws();
                return if p.pos < p.input.len() {
                    Err(ParseError::UnexpectedByte(p.pos))
                } else if partial {
                    Ok(Located::NeedMore)
                } else {
                    Ok(Located::Done)
                };
            }
            p.skip_ws();
            let Some(&c) = p.input.get(p.pos) else {
                return if partial {
                    Ok(Located::NeedMore)
                } else {
                    Err(ParseError::UnexpectedEnd(p.input.len()))
                };
            };
            match self.next {
                Next::Value(node) => {
                    let start = p.pos;
                    match c {
                        b'"' => {
                            if let Some(stop) = self.stream_stop(p.input, start, true, partial) {
                                return Ok(stop);
                            }
                            p.string()?;
                            self.record(node, start, p.pos);
                            self.next = Next::After;
                        }
                        b'[' | b'{' => {
                            if self.frames.len() >= p.max_depth {
                                return Err(ParseError::UnexpectedByte(start));
                            }
                            let wanted = node.filter(|&n| {
                                self.paths.has_children(n) || !self.paths.targets(n).is_empty()
                            });
                            if skim::SKIMS
                                && wanted.is_none()
                                && !self.options.stream
                                && self.unskimmed.is_none()
                            {
                                let room = p.max_depth - self.frames.len();
                                let skim = Skim::new(start, room, self.utf8_to, self.options);
                                if let Some(paused) = self.skim(p, skim, &mut slice) {
                                    return Ok(paused);
                                }
                                if self.next == Next::After {
                                    continue;
                                }
                            }
                            if c == b'[' && self.options.stream {
                                if let Some(n) =
                                    wanted.filter(|&n| !self.paths.targets(n).is_empty())
                                {
                                    self.record(Some(n), start, start);
                                    self.streamed = true;
                                    return Ok(Located::Array(start));
                                }
                            }
                            p.pos += 1;
                            let (kind, next) = if c == b'[' {
                                (Kind::Array, Next::ArrayFirst)
                            } else {
                                (Kind::Object, Next::ObjectFirst)
                            };
                            let grew = self.frames.push(Open {
                                kind,
                                node: wanted,
                                start: self.base + start as u64,
                                count: 0,
                                followed: Vec::new(),
                            });
                            if grew && slice.limit != usize::MAX {
                                slice.limit = GROWTH_ENDS_SLICE;
                            }
                            self.next = next;
                        }
                        b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                            if let Some(stop) = self.stream_stop(p.input, start, false, partial) {
                                return Ok(stop);
                            }
                            match c {
                                b't' => p.literal(b"true")?,
                                b'f' => p.literal(b"false")?,
                                b'n' => p.literal(b"null")?,
                                _ => p.number(&mut skip)?,
                            }
                            self.record(node, start, p.pos);
                            self.next = Next::After;
                        }
                        _ => return Err(ParseError::UnexpectedByte(start)),
                    }
                }
                Next::ArrayFirst | Next::ObjectFirst => {
                    let array = self.next == Next::ArrayFirst;
                    if c == if array { b']' } else { b'}' } {
                        p.pos += 1;
                        self.close(p.pos);
                    } else if array {
                        self.next = Next::Value(self.item_node(0));
                    } else {
                        self.next = Next::Key;
                    }
                }
                Next::Key => {
                    if c != b'"' {
                        return Err(ParseError::UnexpectedByte(p.pos));
                    }
                    let quote = p.pos;
                    if let Some(stop) = self.stream_stop(p.input, quote, true, partial) {
                        return Ok(stop);
                    }
                    let span = p.string()?;
                    let node = self.member_node(p, span, quote)?;
                    self.next = Next::Colon(node);
                }
                Next::Colon(node) => {
                    if c != b':' {
                        return Err(ParseError::UnexpectedByte(p.pos));
                    }
                    p.pos += 1;
                    self.next = Next::Value(node);
                }
                Next::After => {
                    let top = self.frames.last_mut().expect("an open container");
                    match (top.kind, c) {
                        (Kind::Array, b',') => {
                            p.pos += 1;
                            top.count += 1;
                            let count = top.count;
                            self.next = Next::Value(self.item_node(count));
                        }
                        (Kind::Object, b',') => {
                            p.pos += 1;
                            self.next = Next::Key;
                        }
                        (Kind::Array, b']') | (Kind::Object, b'}') => {
                            p.pos += 1;
                            self.close(p.pos);
                        }
                        _ => return Err(ParseError::UnexpectedByte(p.pos)),
                    }
                }
                Next::End => unreachable!("handled above"),
            }
        }
    }

    /// Runs `skim` (of a container no path enters) from where it stopped: past the container when it ends
    /// (`next` is then [`Next::After`]), `Some(Paused)` past the slice's limit; on a doubt, back at its opening
    /// bracket, which the token walk then enters with what is left of the slice: the limit moves back by as much
    /// as the walk does (a skim paused many slices ago would otherwise leave the whole container to this one).
    fn skim(&mut self, p: &mut Parser, mut skim: Skim, slice: &mut Slice) -> Option<Located> {
        let skimmed = skim.run(p.input, slice.limit);
        self.utf8_to = skim.utf8_to;
        match skimmed {
            Skimmed::Ended(end) => {
                p.pos = end;
                self.next = Next::After;
                None
            }
            Skimmed::Paused(at) => {
                p.pos = at;
                self.skim = Some(skim);
                Some(Located::Paused)
            }
            Skimmed::Doubt => {
                // No limit (usize::MAX: one call walks it all) stays no limit.
                if slice.limit != usize::MAX {
                    let left = slice.limit.saturating_sub(skim.skimmed_to());
                    slice.limit = skim.start.saturating_add(left);
                    slice.bound_strings(p);
                }
                p.pos = skim.start;
                self.unskimmed = Some(self.frames.len());
                None
            }
        }
    }

    /// A stream (`partial`): where the walk stops before the token at `input[start]` (a string, or a number or
    /// literal): when the input ends inside it (it is fed again with the next piece), or when it is longer than
    /// `max_token` (known as soon as that many of its bytes are in, so what is kept of it stays bounded); `None`
    /// when it ends within `input`, so that the parser's verdict on it is final.
    #[inline]
    fn stream_stop(
        &mut self,
        input: &[u8],
        start: usize,
        string: bool,
        partial: bool,
    ) -> Option<Located> {
        if !partial {
            return None;
        }
        let end = self.token_end(input, start, string);
        if end.unwrap_or(input.len()) - start > self.options.max_token {
            self.scanned = 0;
            return Some(Located::TooLong(start));
        }
        end.is_none().then_some(Located::NeedMore)
    }

    /// A stream: where the token at `input[start]` ends within `input` (past its closing quote, at the delimiter
    /// after a scalar, or at an invalid escape, which the parser's error decides), or `None`. Remembers how far it
    /// looked, so a long token fed again with each new piece is scanned once in all.
    fn token_end(&mut self, input: &[u8], start: usize, string: bool) -> Option<usize> {
        let mut i = start + self.scanned.max(1);
        if string {
            while let Some(k) = input[i.min(input.len())..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\')
            {
                let j = i + k;
                if input[j] == b'"' {
                    self.scanned = 0;
                    return Some(j + 1);
                }
                // The escape spans what the parser reads of it (a quote in a `\u` escape is no string end).
                match scan_escape(&input[j..]) {
                    EscapeScan::Valid(len) => i = j + len,
                    // The parser's error on it is final: these bytes decide it.
                    EscapeScan::Invalid => {
                        self.scanned = 0;
                        return Some(j);
                    }
                    // Decided by the next piece: scan from the backslash again.
                    EscapeScan::NeedMore => {
                        self.scanned = j - start;
                        return None;
                    }
                }
            }
        } else if let Some(k) = input[i.min(input.len())..]
            .iter()
            .position(|&b| ends_scalar(b))
        {
            self.scanned = 0;
            return Some(i + k);
        }
        self.scanned = input.len() - start;
        None
    }

    /// The node of item `index` of the innermost open array.
    #[inline]
    fn item_node(&self, index: usize) -> Option<NodeId> {
        let node = self.frames.last()?.node?;
        self.paths.item(node, index)
    }

    /// The node of the member whose key (scanned, its opening quote at `quote`) is `span`, in the innermost open
    /// object, after the rule for repeated keys.
    #[inline]
    fn member_node(
        &mut self,
        p: &Parser,
        span: super::Span,
        quote: usize,
    ) -> Result<Option<NodeId>, ParseError> {
        let Some(top) = self.frames.last_mut() else {
            return Ok(None);
        };
        let Some(node) = top.node.filter(|&n| self.paths.has_children(n)) else {
            return Ok(None);
        };
        let Some(child) = self.paths.member(node, p.str_of(span).bytes()) else {
            return Ok(None);
        };
        if !top.followed.contains(&child) {
            top.followed.push(child);
            return Ok(Some(child));
        }
        match self.options.duplicates {
            Duplicates::First => Ok(None),
            Duplicates::Last => {
                for &t in self.paths.below(child) {
                    self.found[t] = None;
                }
                Ok(Some(child))
            }
            Duplicates::Error => Err(ParseError::DuplicateKey {
                start: quote,
                end: p.pos,
            }),
        }
    }

    /// The value at `node` lies at `start..end` of the input.
    #[inline]
    fn record(&mut self, node: Option<NodeId>, start: usize, end: usize) {
        if let Some(node) = node {
            for &t in self.paths.targets(node) {
                self.found[t] = Some((self.base + start as u64, self.base + end as u64));
            }
        }
    }

    /// The innermost container closed; its closing bracket ends before `end` (relative).
    fn close(&mut self, end: usize) {
        let open = self.frames.pop().expect("an open container");
        if self.unskimmed == Some(self.frames.len()) {
            self.unskimmed = None;
        }
        if let Some(node) = open.node {
            for &t in self.paths.targets(node) {
                self.found[t] = Some((open.start, self.base + end as u64));
            }
        }
        self.next = Next::After;
    }
}

#[cfg(test)]
mod tests;
