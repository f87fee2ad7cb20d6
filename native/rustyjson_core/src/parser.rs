//! An iterative JSON parser (RFC 8259) that drives a [`Builder`].
//!
//! It keeps its own stack of open containers on the heap, so nesting depth is bounded by memory,
//! never by the machine stack.

/// Where a string's bytes are: a slice of the input (no escapes) or unescaped bytes in a scratch buffer.
pub enum Str<'a> {
    /// Bytes `start..end` of the input, taken verbatim.
    Input { start: usize, end: usize },
    /// Unescaped bytes, valid only for the duration of the call.
    Unescaped(&'a [u8]),
}

/// Receives parse events. Containers are announced at their start and end; the builder keeps its own stack.
pub trait Builder {
    fn null(&mut self);
    fn boolean(&mut self, value: bool);
    /// An integer token (`-?digits`), as text.
    fn integer(&mut self, text: &[u8]);
    /// A float token, its text and its value.
    fn float(&mut self, text: &[u8], value: f64);
    fn string(&mut self, input: &[u8], s: Str);
    fn key(&mut self, input: &[u8], s: Str);
    fn start_array(&mut self);
    fn end_array(&mut self);
    fn start_object(&mut self);
    fn end_object(&mut self);
}

/// Why a parse failed, with Jason's positions.
#[derive(Debug, PartialEq, Eq, Clone)]
pub enum ParseError {
    /// An unexpected byte at this position.
    UnexpectedByte(usize),
    /// Input ended at this position (the input's length).
    UnexpectedEnd(usize),
    /// An invalid token: bytes `start..end` of the input.
    Token { start: usize, end: usize },
}

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    Array,
    Object,
}

/// Parses `input` as one JSON document, sending events to `builder`.
pub fn parse<B: Builder>(input: &[u8], builder: &mut B) -> Result<(), ParseError> {
    Parser {
        input,
        pos: 0,
        stack: Vec::new(),
        scratch: Vec::new(),
    }
    .run(builder)
}

struct Parser<'a> {
    input: &'a [u8],
    pos: usize,
    stack: Vec<Frame>,
    scratch: Vec<u8>,
}

impl<'a> Parser<'a> {
    #[inline]
    fn skip_ws(&mut self) {
        while let Some(&b) = self.input.get(self.pos) {
            if b == b' ' || b == b'\n' || b == b'\r' || b == b'\t' {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    fn peek(&self) -> Result<u8, ParseError> {
        self.input
            .get(self.pos)
            .copied()
            .ok_or(ParseError::UnexpectedEnd(self.input.len()))
    }

    fn unexpected(&self) -> ParseError {
        if self.pos >= self.input.len() {
            ParseError::UnexpectedEnd(self.input.len())
        } else {
            ParseError::UnexpectedByte(self.pos)
        }
    }

    fn run<B: Builder>(mut self, b: &mut B) -> Result<(), ParseError> {
        'value: loop {
            self.skip_ws();
            match self.peek()? {
                b'{' => {
                    self.pos += 1;
                    b.start_object();
                    self.skip_ws();
                    if self.peek()? == b'}' {
                        self.pos += 1;
                        b.end_object();
                    } else {
                        self.stack.push(Frame::Object);
                        self.object_key(b)?;
                        continue 'value;
                    }
                }
                b'[' => {
                    self.pos += 1;
                    b.start_array();
                    self.skip_ws();
                    if self.peek()? == b']' {
                        self.pos += 1;
                        b.end_array();
                    } else {
                        self.stack.push(Frame::Array);
                        continue 'value;
                    }
                }
                b'"' => {
                    let s = self.string()?;
                    b.string(self.input, s.resolve(&self.scratch));
                }
                b'-' | b'0'..=b'9' => self.number(b)?,
                b't' => self.literal(b"true", |b: &mut B| b.boolean(true), b)?,
                b'f' => self.literal(b"false", |b: &mut B| b.boolean(false), b)?,
                b'n' => self.literal(b"null", |b: &mut B| b.null(), b)?,
                _ => return Err(self.unexpected()),
            }
            // After a value: close containers or move to the next element.
            loop {
                self.skip_ws();
                let Some(&frame) = self.stack.last() else {
                    return if self.pos == self.input.len() {
                        Ok(())
                    } else {
                        Err(ParseError::UnexpectedByte(self.pos))
                    };
                };
                match (frame, self.peek()?) {
                    (_, b',') => {
                        self.pos += 1;
                        if frame == Frame::Object {
                            self.skip_ws();
                            self.object_key(b)?;
                        }
                        continue 'value;
                    }
                    (Frame::Array, b']') => {
                        self.pos += 1;
                        self.stack.pop();
                        b.end_array();
                    }
                    (Frame::Object, b'}') => {
                        self.pos += 1;
                        self.stack.pop();
                        b.end_object();
                    }
                    _ => return Err(self.unexpected()),
                }
            }
        }
    }

    fn object_key<B: Builder>(&mut self, b: &mut B) -> Result<(), ParseError> {
        if self.peek()? != b'"' {
            return Err(self.unexpected());
        }
        let s = self.string()?;
        b.key(self.input, s.resolve(&self.scratch));
        self.skip_ws();
        if self.peek()? != b':' {
            return Err(self.unexpected());
        }
        self.pos += 1;
        Ok(())
    }

    fn literal<B: Builder>(
        &mut self,
        word: &[u8],
        emit: impl FnOnce(&mut B),
        b: &mut B,
    ) -> Result<(), ParseError> {
        for &expected in word {
            if self.peek()? != expected {
                return Err(self.unexpected());
            }
            self.pos += 1;
        }
        emit(b);
        Ok(())
    }

    fn number<B: Builder>(&mut self, b: &mut B) -> Result<(), ParseError> {
        let start = self.pos;
        let digit = |p: &Self| matches!(p.input.get(p.pos), Some(b'0'..=b'9'));
        if self.input[self.pos] == b'-' {
            self.pos += 1;
        }
        match self.peek()? {
            b'0' => self.pos += 1,
            b'1'..=b'9' => {
                while digit(self) {
                    self.pos += 1;
                }
            }
            _ => return Err(self.unexpected()),
        }
        let mut is_float = false;
        if self.input.get(self.pos) == Some(&b'.') {
            is_float = true;
            self.pos += 1;
            if !digit(self) {
                return Err(self.unexpected());
            }
            while digit(self) {
                self.pos += 1;
            }
        }
        if matches!(self.input.get(self.pos), Some(b'e' | b'E')) {
            is_float = true;
            self.pos += 1;
            if matches!(self.input.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !digit(self) {
                return Err(self.unexpected());
            }
            while digit(self) {
                self.pos += 1;
            }
        }
        let text = &self.input[start..self.pos];
        if is_float {
            // The token is ASCII by construction.
            let value: f64 = std::str::from_utf8(text).unwrap().parse().unwrap();
            if !value.is_finite() {
                return Err(ParseError::Token {
                    start,
                    end: self.pos,
                });
            }
            b.float(text, value);
        } else {
            b.integer(text);
        }
        Ok(())
    }

    /// Parses a string starting at the opening quote.
    fn string(&mut self) -> Result<StrSpan, ParseError> {
        self.pos += 1;
        let start = self.pos;
        let mut escaped = false;
        self.scratch.clear();
        let mut run_start = start;
        loop {
            let b = self.peek()?;
            match b {
                b'"' => {
                    let end = self.pos;
                    self.pos += 1;
                    if escaped {
                        self.scratch.extend_from_slice(&self.input[run_start..end]);
                        return Ok(StrSpan::Scratch);
                    }
                    return Ok(StrSpan::Input { start, end });
                }
                b'\\' => {
                    escaped = true;
                    self.scratch
                        .extend_from_slice(&self.input[run_start..self.pos]);
                    self.escape()?;
                    run_start = self.pos;
                }
                0x00..=0x1F => return Err(ParseError::UnexpectedByte(self.pos)),
                0x80..=0xFF => self.utf8_char()?,
                _ => self.pos += 1,
            }
        }
    }

    fn escape(&mut self) -> Result<(), ParseError> {
        self.pos += 1;
        let c = self.peek()?;
        let simple = match c {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0C,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let esc_start = self.pos - 1;
                self.pos += 1;
                let mut cp = self.hex4(esc_start)?;
                if (0xD800..0xDC00).contains(&cp) {
                    if self.input.get(self.pos) == Some(&b'\\')
                        && self.input.get(self.pos + 1) == Some(&b'u')
                    {
                        let low_start = self.pos;
                        self.pos += 2;
                        let low = self.hex4(low_start)?;
                        if !(0xDC00..0xE000).contains(&low) {
                            return Err(ParseError::Token {
                                start: esc_start,
                                end: self.pos,
                            });
                        }
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    } else {
                        return Err(ParseError::Token {
                            start: esc_start,
                            end: self.pos,
                        });
                    }
                } else if (0xDC00..0xE000).contains(&cp) {
                    return Err(ParseError::Token {
                        start: esc_start,
                        end: self.pos,
                    });
                }
                let ch = char::from_u32(cp).expect("surrogates handled above");
                let mut utf8 = [0u8; 4];
                self.scratch
                    .extend_from_slice(ch.encode_utf8(&mut utf8).as_bytes());
                return Ok(());
            }
            _ => return Err(ParseError::UnexpectedByte(self.pos)),
        };
        self.scratch.push(simple);
        self.pos += 1;
        Ok(())
    }

    fn hex4(&mut self, token_start: usize) -> Result<u32, ParseError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let b = self.peek()?;
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => {
                    return Err(ParseError::Token {
                        start: token_start,
                        end: self.pos,
                    })
                }
            };
            v = v * 16 + d as u32;
            self.pos += 1;
        }
        Ok(v)
    }

    /// Validates one multi-byte UTF-8 character at `pos` and steps over it.
    fn utf8_char(&mut self) -> Result<(), ParseError> {
        let rest = &self.input[self.pos..self.input.len().min(self.pos + 4)];
        let len = match rest[0] {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return Err(ParseError::UnexpectedByte(self.pos)),
        };
        if rest.len() < len {
            return Err(self.unexpected_in_char(rest));
        }
        match std::str::from_utf8(&rest[..len]) {
            Ok(_) => {
                self.pos += len;
                Ok(())
            }
            Err(_) => Err(ParseError::UnexpectedByte(self.pos)),
        }
    }

    fn unexpected_in_char(&self, rest: &[u8]) -> ParseError {
        if rest.len() < 2 && self.pos + rest.len() >= self.input.len() {
            ParseError::UnexpectedEnd(self.input.len())
        } else {
            ParseError::UnexpectedByte(self.pos)
        }
    }
}

enum StrSpan {
    Input { start: usize, end: usize },
    Scratch,
}

impl StrSpan {
    fn resolve<'s>(&self, scratch: &'s [u8]) -> Str<'s> {
        match *self {
            StrSpan::Input { start, end } => Str::Input { start, end },
            StrSpan::Scratch => Str::Unescaped(scratch),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rebuilds compact JSON text from the events, to check what the parser saw.
    #[derive(Default)]
    struct Echo {
        out: Vec<u8>,
        need_comma: Vec<bool>,
    }

    impl Echo {
        fn sep(&mut self) {
            if let Some(c) = self.need_comma.last_mut() {
                if *c {
                    self.out.push(b',');
                }
                *c = true;
            }
        }
        fn str(&mut self, input: &[u8], s: Str) {
            let bytes = match s {
                Str::Input { start, end } => &input[start..end],
                Str::Unescaped(b) => b,
            };
            self.out.push(b'"');
            self.out.extend_from_slice(bytes);
            self.out.push(b'"');
        }
    }

    impl Builder for Echo {
        fn null(&mut self) {
            self.sep();
            self.out.extend_from_slice(b"null");
        }
        fn boolean(&mut self, v: bool) {
            self.sep();
            self.out
                .extend_from_slice(if v { b"true" } else { b"false" });
        }
        fn integer(&mut self, t: &[u8]) {
            self.sep();
            self.out.extend_from_slice(t);
        }
        fn float(&mut self, t: &[u8], _: f64) {
            self.sep();
            self.out.extend_from_slice(t);
        }
        fn string(&mut self, input: &[u8], s: Str) {
            self.sep();
            self.str(input, s);
        }
        fn key(&mut self, input: &[u8], s: Str) {
            self.sep();
            self.str(input, s);
            self.out.push(b':');
            // The value after a key takes no comma.
            *self.need_comma.last_mut().unwrap() = false;
        }
        fn start_array(&mut self) {
            self.sep();
            self.out.push(b'[');
            self.need_comma.push(false);
        }
        fn end_array(&mut self) {
            self.need_comma.pop();
            self.out.push(b']');
        }
        fn start_object(&mut self) {
            self.sep();
            self.out.push(b'{');
            self.need_comma.push(false);
        }
        fn end_object(&mut self) {
            self.need_comma.pop();
            self.out.push(b'}');
        }
    }

    fn echo(s: &str) -> Result<String, ParseError> {
        let mut b = Echo::default();
        parse(s.as_bytes(), &mut b)?;
        Ok(String::from_utf8(b.out).unwrap())
    }

    #[test]
    fn parses_values() {
        assert_eq!(
            echo(" [1, -2.5e3, \"a\\nb\", {\"k\": [true, false, null]}, {}] ").unwrap(),
            "[1,-2.5e3,\"a\nb\",{\"k\":[true,false,null]},{}]"
        );
        assert_eq!(echo("\"\\ud83d\\ude00\"").unwrap(), "\"😀\"");
    }

    #[test]
    fn errors_have_positions() {
        assert_eq!(echo("[1,]"), Err(ParseError::UnexpectedByte(3)));
        assert_eq!(echo("[1"), Err(ParseError::UnexpectedEnd(2)));
        assert_eq!(echo("01"), Err(ParseError::UnexpectedByte(1)));
        assert_eq!(echo("1e400"), Err(ParseError::Token { start: 0, end: 5 }));
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let depth = 1_000_000;
        let doc = "[".repeat(depth) + &"]".repeat(depth);
        assert!(echo(&doc).is_ok());
    }
}
