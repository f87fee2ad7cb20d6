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
                    keys.push(b.expected_key_found(start, end));
                    return Ok(());
                }
                if let Some(alternate) = b.alternate_key() {
                    if alternate.at(self.input, self.pos) {
                        let (start, end) = self.take_expected(alternate.len)?;
                        keys.push(b.alternate_key_found(start, end));
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
        let span = self.string()?;
        let key_end = self.pos - 1;
        let s = self.str_of(span);
        let k = b.key(s).map_err(|()| ParseError::Key {
            start: key_start,
            end: key_end,
        })?;
        self.colon()?;
        keys.push(k);
        Ok(())
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
