//! Object keys: `"key" :` (the builder's expected key or a scanned one), and the error for a repeated key.

use super::*;

impl Parser<'_> {
    /// Parses `"key" :` where `c` is the (non-whitespace) byte at `pos`, and pushes the key onto `keys`. The
    /// builder's expected key (or its alternate), when the input holds it, costs one compare here; any other key
    /// is scanned out of line. The key is pushed where it is made, not returned: returned through the scanned
    /// path's memory, a key was written in words and read back as a 16-byte vector, a failed store-to-load
    /// forwarding that cost a sixth of a stream's decode (perf, OTP 29).
    #[inline(always)]
    pub(super) fn object_key<B: Builder>(
        &mut self,
        b: &mut B,
        keys: &mut Vec<B::K>,
        c: u8,
    ) -> Result<(), ParseError> {
        if c == b'"' {
            if let Some(expected) = b.expected_key() {
                if expected.at(self.input, self.pos) {
                    let (start, end) = self.take_expected(expected.len)?;
                    push(keys, b.expected_key_found(start, end));
                    return Ok(());
                }
                if let Some(alternate) = b.alternate_key() {
                    if alternate.at(self.input, self.pos) {
                        let (start, end) = self.take_expected(alternate.len)?;
                        push(keys, b.alternate_key_found(start, end));
                        return Ok(());
                    }
                }
            }
        }
        self.scanned_key(b, keys, c)
    }

    /// Steps over an expected key of `len` bytes found at `pos` and the `:` after it; the key's span.
    #[inline(always)]
    fn take_expected(&mut self, len: usize) -> Result<(usize, usize), ParseError> {
        let start = self.pos + 1;
        let end = start + len;
        self.pos = end + 1;
        if self.input.get(self.pos) == Some(&b':') {
            self.pos += 1;
        } else {
            self.colon()?;
        }
        Ok((start, end))
    }

    #[inline]
    fn scanned_key<B: Builder>(
        &mut self,
        b: &mut B,
        keys: &mut Vec<B::K>,
        c: u8,
    ) -> Result<(), ParseError> {
        if c != b'"' {
            return Err(ParseError::UnexpectedByte(self.pos));
        }
        let key_start = self.pos + 1;
        let span = match self.string() {
            Ok(span) => span,
            Err(e) => {
                // A long key: the parse resumes with it.
                self.at_key = matches!(e, ParseError::LongToken(_));
                return Err(e);
            }
        };
        let key_end = self.pos - 1;
        let s = self.str_of(span);
        let k = match b.key(s) {
            Ok(k) => k,
            Err(()) => self.refuse_key(b, key_start, key_end, keys.len()),
        };
        self.colon()?;
        push(keys, k);
        Ok(())
    }

    /// Remembers a refused key (bytes `start..end`, to be the key stack's entry `index`) and gives its stand-in.
    /// Jason converts a key after its value and the `,` or `}` that follows: only then is the refusal reported,
    /// so an error before that point comes first. A refusal inside the value of another refused key's pair
    /// replaces it, as it is reported first.
    #[cold]
    fn refuse_key<B: Builder>(
        &mut self,
        b: &mut B,
        start: usize,
        end: usize,
        index: usize,
    ) -> B::K {
        self.refused = Some(RefusedKey { start, end, index });
        b.refused_key()
    }

    /// At the `,` or `}` after an object's value (`keys` entries on the key stack): the refusal of that pair's key.
    #[inline(always)]
    pub(super) fn report_refused_key(&self, keys: usize) -> Result<(), ParseError> {
        match self.refused {
            Some(RefusedKey { start, end, index }) if index + 1 == keys => {
                Err(ParseError::Key { start, end })
            }
            _ => Ok(()),
        }
    }

    /// The `:` after a key, past any whitespace.
    #[inline]
    fn colon(&mut self) -> Result<(), ParseError> {
        if self.next_byte()? != b':' {
            return Err(ParseError::UnexpectedByte(self.pos));
        }
        self.pos += 1;
        Ok(())
    }

    /// The error for the repeated key whose opening quote is at `start` (the key was scanned before: its closing
    /// quote is the first one not escaped).
    #[cold]
    pub(super) fn duplicate_key(&self, start: usize) -> ParseError {
        let mut end = start + 1;
        while self.input[end] != b'"' {
            end += if self.input[end] == b'\\' { 2 } else { 1 };
        }
        ParseError::DuplicateKey {
            start,
            end: end + 1,
        }
    }
}
