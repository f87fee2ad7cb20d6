//! The items of the array at a JSON Pointer path of a streamed document (`decode_array(stream, at: pointer)`).
//!
//! The document around the array (its envelope) is walked by the parser's [`Locator`], which validates it as it
//! goes and keeps nothing of it but the open containers; the array itself is split into items by a nested
//! [`Splitter`], exactly as a top-level array is. A token of the envelope cut by a chunk's end is kept (only that
//! token) and walked again with the next chunk: the next chunk is appended to it (each byte is copied into it
//! once, not the whole token again at every chunk), and it is scanned for its end once in all, however small the
//! chunks. Validating a long token once it ends is work in proportion to it: [`PathSplitter::carried`] tells the
//! caller how long it is (the NIF moves such a call off a normal scheduler). A token longer than the splitter's
//! `max_token` fails ([`Failure::TooLong`]) as soon as that many of its bytes are in, so an endless one never
//! grows the carried bytes past it and a piece. (Not carrying a skipped token at all would take a resumable
//! string and number check: the parser's checks take the whole token.)

use super::{count_newlines, End, Span, SplitError, Splitter};
use crate::parser::locate::{LocateOptions, Located, Locator};
use crate::parser::{Limits, ParseError};

/// What the stream held at the path, known at its end ([`PathSplitter::finish`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// The array, whose items were split.
    Array,
    /// No value there.
    Missing,
    /// A value that is not an array.
    NotArray,
}

/// An error in the envelope: the parser's error, at absolute positions, on line `line`; `token` the bytes of an
/// invalid token (a bad escape or number), else the offending byte (empty at the end of the stream).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvelopeError {
    pub position: u64,
    pub line: u64,
    pub token: Vec<u8>,
}

/// The state carried from chunk to chunk.
pub struct PathSplitter {
    locator: Locator,
    /// The array's splitter, while inside it.
    array: Option<Splitter>,
    /// The array's `[` and the offset after its `]`, once reached.
    marks: (Option<u64>, Option<u64>),
    /// The envelope token cut by the last chunk's end, and its offset.
    carry: Vec<u8>,
    carry_at: u64,
    /// Bytes copied into or moved inside `carry` so far (a test's measure of the work: linear in the stream).
    copied: u64,
    /// The offset of the next byte to be fed, and the newlines of the envelope so far.
    offset: u64,
    newlines: u64,
    failed: Option<Failure>,
}

impl PathSplitter {
    /// Splits the array at `pointer` (its tokens, unescaped), validating the rest within `limits`.
    pub fn new<T: AsRef<[u8]>>(pointer: &[T], limits: Limits) -> Self {
        Self::bounded(pointer, limits, usize::MAX)
    }

    /// [`PathSplitter::new`], failing at a token of the envelope longer than `max_token` bytes.
    pub fn bounded<T: AsRef<[u8]>>(pointer: &[T], limits: Limits, max_token: usize) -> Self {
        let options = LocateOptions {
            limits,
            stream: true,
            max_token,
            ..LocateOptions::default()
        };
        let tokens: Vec<&[u8]> = pointer.iter().map(|t| t.as_ref()).collect();
        PathSplitter {
            locator: Locator::new(&[tokens], options),
            array: None,
            marks: (None, None),
            carry: Vec::new(),
            carry_at: 0,
            copied: 0,
            offset: 0,
            newlines: 0,
            failed: None,
        }
    }

    /// Where the array's `[` is and where it ends (after its `]`), as far as known.
    pub fn marks(&self) -> (Option<u64>, Option<u64>) {
        self.marks
    }

    /// The most bytes a token of the envelope may have.
    pub fn max_token(&self) -> usize {
        self.locator.max_token()
    }

    /// The bytes of the envelope token carried from the last chunk (the next chunk's walk starts with them).
    pub fn carried(&self) -> usize {
        self.carry.len()
    }

    /// The bytes copied into (or moved inside) the carried token so far.
    pub fn copied(&self) -> u64 {
        self.copied
    }

    /// Where the item in progress started, if one continues in the next chunk.
    pub fn open_item(&self) -> Option<u64> {
        self.array.as_ref()?.open_item()
    }

    /// Scans `chunk` as [`Splitter::feed_direct`] does, for the items of the array; the envelope is walked and
    /// validated. Returns the first error (structural in the array, or anything in the envelope).
    pub fn feed_direct<V>(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<Span>,
        values: &mut Vec<V>,
        mut parse: impl FnMut(&[u8], usize) -> Option<(usize, V)>,
    ) -> Result<(), Failure> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let base = self.offset;
        let mut i = 0;
        while i < chunk.len() {
            if let Some(array) = &mut self.array {
                array
                    .feed_direct_from(chunk, i, out, values, &mut parse)
                    .map_err(Failure::Array)?;
                let Some(end) = array.array_end() else {
                    break;
                };
                self.newlines = array.newlines();
                self.marks.1 = Some(end);
                self.array = None;
                self.locator.array_done();
                i = (end - base) as usize;
                continue;
            }
            i += self.walk(&chunk[i..], base + i as u64, false)?;
        }
        self.offset = base + chunk.len() as u64;
        Ok(())
    }

    /// Walks the envelope in `bytes` (at `at`), after the carried token: returns the index in `bytes` where the
    /// walk stopped (its end, or the array's `[`, where a nested splitter now starts).
    fn walk(&mut self, bytes: &[u8], at: u64, last: bool) -> Result<usize, Failure> {
        let carry = std::mem::take(&mut self.carry);
        if carry.is_empty() {
            return self.walk_in(bytes, at, last);
        }
        self.walk_carried(bytes, at, last, carry)
    }

    /// [`PathSplitter::walk`] after a carried token: `bytes` appended to it (only they are copied), the walk
    /// resumes at the token, which the locator scans from where it stopped.
    fn walk_carried(
        &mut self,
        bytes: &[u8],
        at: u64,
        last: bool,
        mut carry: Vec<u8>,
    ) -> Result<usize, Failure> {
        carry.extend_from_slice(bytes);
        self.copied += bytes.len() as u64;
        let carry_at = self.carry_at;
        let (stop, cut) = self.walk_buf(&carry, carry_at, at, last)?;
        if let Some(pos) = cut {
            // Cut again: keep the bytes from `pos` on, in the same buffer (what is dropped was walked; what is
            // kept began in `bytes`, unless it is the same token, kept whole with no copy).
            if pos > 0 {
                carry.drain(..pos);
                self.copied += carry.len() as u64;
            }
            // An emptied buffer is let go (a long token's would be held for nothing).
            self.carry = if carry.is_empty() { Vec::new() } else { carry };
            self.carry_at = carry_at + pos as u64;
        }
        Ok(stop)
    }

    /// [`PathSplitter::walk`] without a carried token: only a token cut by the end of `bytes` is copied.
    fn walk_in(&mut self, bytes: &[u8], at: u64, last: bool) -> Result<usize, Failure> {
        let (stop, cut) = self.walk_buf(bytes, at, at, last)?;
        if let Some(pos) = cut {
            self.carry = bytes[pos..].to_vec();
            self.copied += self.carry.len() as u64;
            self.carry_at = at + pos as u64;
        }
        Ok(stop)
    }

    /// Walks `buf` (at `buf_at`; `bytes`, fed at `at`, are its tail): the index in `bytes` where the walk stopped
    /// and, when `buf` ends inside a token, where in `buf` that token starts (to be carried).
    fn walk_buf(
        &mut self,
        buf: &[u8],
        buf_at: u64,
        at: u64,
        last: bool,
    ) -> Result<(usize, Option<usize>), Failure> {
        self.locator.set_base(buf_at);
        let mut pos = 0;
        let located = self.locator.run(buf, &mut pos, usize::MAX, None, last);
        let before = self.newlines;
        self.newlines += count_newlines(&buf[..pos.min(buf.len())]);
        let (stop, cut) = match located {
            Ok(Located::Array(start)) => {
                let open = buf_at + start as u64;
                self.marks.0 = Some(open);
                self.array = Some(Splitter::nested_array(open, self.newlines));
                (start, None)
            }
            Ok(Located::NeedMore) => (buf.len(), Some(pos)),
            Ok(Located::TooLong(start)) => return Err(self.too_long(buf_at + start as u64)),
            Ok(_) => (buf.len(), None),
            Err(e) => return Err(self.fail(e, buf, buf_at, before)),
        };
        // Back to an index in `bytes` (the carried bytes came before it; the array's `[` never is one of them).
        Ok((stop.saturating_sub((at - buf_at) as usize), cut))
    }

    #[cold]
    fn fail(&mut self, e: ParseError, buf: &[u8], buf_at: u64, newlines: u64) -> Failure {
        let (start, end) = match e {
            ParseError::Token { start, end } | ParseError::DuplicateKey { start, end } => {
                (start, end)
            }
            ParseError::UnexpectedByte(at) => (at, at + 1),
            ParseError::UnexpectedEnd(at)
            | ParseError::LongToken(at)
            | ParseError::Key { start: at, .. }
            | ParseError::Memory { at, .. }
            | ParseError::TooLarge { at, .. } => (at, at),
        };
        let end = end.min(buf.len());
        let start = start.min(end);
        let error = EnvelopeError {
            position: buf_at + start as u64,
            line: newlines + count_newlines(&buf[..start]) + 1,
            token: buf[start..end].to_vec(),
        };
        self.failed = Some(Failure::Envelope(error.clone()));
        Failure::Envelope(error)
    }

    /// The token at `at` is longer than `max_token` (its carried bytes were let go with the walk's buffer).
    #[cold]
    fn too_long(&mut self, at: u64) -> Failure {
        self.failed = Some(Failure::TooLong(at));
        Failure::TooLong(at)
    }

    /// The end of the stream: the array's last item and error as [`Splitter::finish`] gives them, or the
    /// envelope's error, and what the path held.
    pub fn finish(&mut self) -> Result<(End, Found), Failure> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if let Some(array) = &mut self.array {
            return Ok((array.finish(), Found::Array));
        }
        let at = self.offset;
        self.walk(&[], at, true)?;
        let found = match self.locator.found()[0] {
            None => Found::Missing,
            Some(_) if self.locator.streamed() => Found::Array,
            Some(_) => Found::NotArray,
        };
        Ok((End::default(), found))
    }
}

/// Why a [`PathSplitter`] stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The array's structure (a missing comma, ...), as a top-level array's.
    Array(SplitError),
    /// The envelope is invalid.
    Envelope(EnvelopeError),
    /// A token of the envelope, starting at this offset, is longer than the splitter's `max_token`.
    TooLong(u64),
}

#[cfg(test)]
mod tests;
