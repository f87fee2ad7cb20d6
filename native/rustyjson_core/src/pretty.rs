//! Pretty-printing as a writer mode (Jason's `pretty:` option, which lays out like `Jason.Formatter`).

use crate::buffer::{Buffer, Storage};
use crate::formatter::{Formatter, Layout, Length, Sink};

/// The layout strings of `pretty:`: `indent` per level, `line_separator`, `after_colon`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pretty {
    pub indent: Vec<u8>,
    pub line: Vec<u8>,
    pub after_colon: Vec<u8>,
}

impl Pretty {
    /// Jason's defaults: two spaces, `\n`, one space after the colon.
    pub fn jason_default() -> Self {
        Pretty {
            indent: b"  ".to_vec(),
            line: b"\n".to_vec(),
            after_colon: b" ".to_vec(),
        }
    }

    /// Writes the line separator and `depth` indents.
    #[inline]
    pub fn newline<S: Storage>(&self, out: &mut Buffer<S>, depth: usize) {
        out.extend(&self.line);
        for _ in 0..depth {
            out.extend(&self.indent);
        }
    }

    /// Writes JSON text `json` (e.g. a fragment) laid out as pretty output nested `depth` levels deep: whitespace
    /// outside strings is dropped, empty `{}` and `[]` stay as they are. `len` is [`Pretty::reformatted_len`]'s
    /// answer (the caller has counted it to budget the work), reserved at once: a fragment's nesting can lay out
    /// to more than the output's ceiling, which is then an overflow before anything is written.
    pub fn reformat<S: Storage>(&self, out: &mut Buffer<S>, json: &[u8], depth: usize, len: u64) {
        out.reserve(usize::try_from(len).unwrap_or(usize::MAX));
        Formatter::nested(depth).feed_to(json, &self.layout(), out);
    }

    /// The length of what [`Pretty::reformat`] writes (saturating), found without writing it: deep nesting in a
    /// short fragment makes long lines.
    pub fn reformatted_len(&self, json: &[u8], depth: usize) -> u64 {
        let mut len = Length(0);
        Formatter::nested(depth).feed_to(json, &self.layout(), &mut len);
        len.0
    }

    fn layout(&self) -> Layout<'_> {
        Layout {
            indent: &self.indent,
            line: &self.line,
            record: b"",
            after_colon: &self.after_colon,
        }
    }
}

/// The formatter writing into an output buffer (room is reserved by the caller or, if not, grown as it goes).
impl<S: Storage> Sink for Buffer<S> {
    #[inline]
    fn push(&mut self, byte: u8) {
        Buffer::push(self, byte);
    }
    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.extend(bytes);
    }
    fn repeat(&mut self, bytes: &[u8], n: usize) {
        for _ in 0..n {
            self.extend(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reformats_compact_json() {
        let p = Pretty::jason_default();
        let mut out = Buffer::default();
        let json = br#"{"a":[1, 2,{}],"b" : "x, y: [z]", "c":[ ]}"#;
        p.reformat(&mut out, json, 1, p.reformatted_len(json, 1));
        assert_eq!(
            String::from_utf8(out.into_vec()).unwrap(),
            "{\n    \"a\": [\n      1,\n      2,\n      {}\n    ],\n    \"b\": \"x, y: [z]\",\n    \"c\": []\n  }"
        );
        for (json, depth) in [
            (&b"[[[1, {}]]]"[..], 3),
            (b"{\"a\":[{\"b\":[]}]}", 0),
            (b"1", 5),
        ] {
            let mut out = Buffer::default();
            p.reformat(&mut out, json, depth, p.reformatted_len(json, depth));
            assert_eq!(p.reformatted_len(json, depth), out.into_vec().len() as u64);
        }
    }

    #[test]
    fn a_fragment_laid_out_past_the_ceiling_overflows_before_writing() {
        use crate::overflow::{catch_overflow, Overflow};
        let p = Pretty::jason_default();
        let deep = "[".repeat(3_000) + &"]".repeat(3_000);
        let needed = p.reformatted_len(deep.as_bytes(), 2) as usize;
        let mut out = Buffer::default();
        out.set_limit(needed - 1);
        let caught = catch_overflow(|| p.reformat(&mut out, deep.as_bytes(), 2, needed as u64));
        assert_eq!(
            caught,
            Err(Overflow::Limit {
                needed,
                limit: needed - 1
            })
        );
        assert!(out.is_empty());
    }
}
