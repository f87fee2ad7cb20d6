//! Object keys: `"key" :` (the builder's expected key or a scanned one), and the error for a repeated key.

use super::*;

impl Parser<'_> {
    /// Parses `"key" :` where `c` is the (non-whitespace) byte at `pos`. The builder's expected key, when the
    /// input holds it, costs one compare here; any other key is scanned out of line.
    #[inline(always)]
    pub(super) fn object_key<B: Builder>(&mut self, b: &mut B, c: u8) -> Result<B::K, ParseError> {
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
