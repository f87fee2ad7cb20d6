//! Pretty-printing as a writer mode (Jason's `pretty:` option, which lays out like `Jason.Formatter`).

use crate::buffer::{Buffer, Storage};

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
    /// outside strings is dropped, empty `{}` and `[]` stay as they are.
    pub fn reformat<S: Storage>(&self, out: &mut Buffer<S>, json: &[u8], depth: usize) {
        let mut depth = depth;
        let mut i = 0;
        let n = json.len();
        while i < n {
            let b = json[i];
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => i += 1,
                b'{' | b'[' => {
                    let close = if b == b'{' { b'}' } else { b']' };
                    let mut j = i + 1;
                    while j < n && matches!(json[j], b' ' | b'\t' | b'\n' | b'\r') {
                        j += 1;
                    }
                    if j < n && json[j] == close {
                        out.extend(&[b, close]);
                        i = j + 1;
                    } else {
                        out.push(b);
                        depth += 1;
                        self.newline(out, depth);
                        i += 1;
                    }
                }
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    self.newline(out, depth);
                    out.push(b);
                    i += 1;
                }
                b',' => {
                    out.push(b',');
                    self.newline(out, depth);
                    i += 1;
                }
                b':' => {
                    out.push(b':');
                    out.extend(&self.after_colon);
                    i += 1;
                }
                b'"' => {
                    let start = i;
                    i += 1;
                    while i < n && json[i] != b'"' {
                        i += if json[i] == b'\\' { 2 } else { 1 };
                    }
                    i = (i + 1).min(n);
                    out.extend(&json[start..i]);
                }
                _ => {
                    let start = i;
                    while i < n
                        && !matches!(
                            json[i],
                            b' ' | b'\t'
                                | b'\n'
                                | b'\r'
                                | b'{'
                                | b'['
                                | b'}'
                                | b']'
                                | b','
                                | b':'
                                | b'"'
                        )
                    {
                        i += 1;
                    }
                    out.extend(&json[start..i]);
                }
            }
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
        p.reformat(
            &mut out,
            br#"{"a":[1, 2,{}],"b" : "x, y: [z]", "c":[ ]}"#,
            1,
        );
        assert_eq!(
            String::from_utf8(out.into_vec()).unwrap(),
            "{\n    \"a\": [\n      1,\n      2,\n      {}\n    ],\n    \"b\": \"x, y: [z]\",\n    \"c\": []\n  }"
        );
    }
}
