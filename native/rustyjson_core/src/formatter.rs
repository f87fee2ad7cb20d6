//! `Jason.Formatter` as a byte-level streaming reformatter: `pretty_print` and `minimize` lay out JSON text
//! without parsing it (whitespace outside strings dropped, nesting from brackets), byte for byte as Jason does.

/// The layout strings: `indent` per level, `line` between elements, `record` between top-level containers,
/// `after_colon`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout<'a> {
    pub indent: &'a [u8],
    pub line: &'a [u8],
    pub record: &'a [u8],
    pub after_colon: &'a [u8],
}

impl Layout<'_> {
    /// `minimize`: nothing between tokens, `record` between top-level containers.
    pub fn minimize(record: &[u8]) -> Layout<'_> {
        Layout {
            indent: b"",
            line: b"",
            record,
            after_colon: b"",
        }
    }
}

/// The formatter's state between chunks of input (iodata comes in pieces).
#[derive(Clone, Debug, Default)]
pub struct Formatter {
    /// Nesting depth; `None` before the first container opened (Jason's `:first`).
    depth: Option<usize>,
    /// The last byte opened a container (its first element goes on a new line; `{}` stays together).
    empty: bool,
    /// Inside a string, and just after a backslash in it.
    in_string: bool,
    backslash: bool,
}

impl Formatter {
    pub fn new() -> Self {
        Self::default()
    }

    /// A formatter for text that sits `depth` levels inside a document being written (a fragment).
    pub fn nested(depth: usize) -> Self {
        Formatter {
            depth: (depth > 0).then_some(depth),
            ..Self::default()
        }
    }

    fn newline<S: Sink>(out: &mut S, layout: &Layout, depth: usize) {
        out.extend_from_slice(layout.line);
        if !layout.indent.is_empty() {
            out.repeat(layout.indent, depth);
        }
    }

    /// Formats one chunk of input into `out`.
    pub fn feed(&mut self, input: &[u8], layout: &Layout, out: &mut Vec<u8>) {
        self.feed_to(input, layout, out);
    }

    /// Formats one chunk of input into `out`, a buffer or a [`Length`].
    pub fn feed_to<S: Sink>(&mut self, input: &[u8], layout: &Layout, out: &mut S) {
        let mut i = 0;
        let n = input.len();
        while i < n {
            if self.in_string {
                // Copy up to the closing quote.
                let start = i;
                while i < n {
                    let b = input[i];
                    i += 1;
                    if self.backslash {
                        self.backslash = false;
                    } else if b == b'\\' {
                        self.backslash = true;
                    } else if b == b'"' {
                        self.in_string = false;
                        break;
                    }
                }
                out.extend_from_slice(&input[start..i]);
                continue;
            }
            let b = input[i];
            i += 1;
            match b {
                b' ' | b'\n' | b'\r' | b'\t' => {}
                b'{' | b'[' => {
                    let depth = match self.depth {
                        None => 1,
                        Some(0) => {
                            out.extend_from_slice(layout.record);
                            1
                        }
                        Some(d) => {
                            if self.empty {
                                Self::newline(out, layout, d);
                            }
                            d + 1
                        }
                    };
                    out.push(b);
                    self.depth = Some(depth);
                    self.empty = true;
                }
                b'}' | b']' => {
                    let depth = self.depth.unwrap_or(0).saturating_sub(1);
                    if !self.empty {
                        Self::newline(out, layout, depth);
                    }
                    out.push(b);
                    self.depth = Some(depth);
                    self.empty = false;
                }
                b',' => {
                    out.push(b',');
                    Self::newline(out, layout, self.depth.unwrap_or(0));
                    self.empty = false;
                }
                b':' => {
                    out.push(b':');
                    out.extend_from_slice(layout.after_colon);
                    self.empty = false;
                }
                _ => {
                    if self.empty {
                        Self::newline(out, layout, self.depth.unwrap_or(0));
                    }
                    self.empty = false;
                    if b == b'"' {
                        out.push(b);
                        self.in_string = true;
                    } else {
                        // A run of scalar bytes.
                        let start = i - 1;
                        while i < n
                            && !matches!(
                                input[i],
                                b' ' | b'\n'
                                    | b'\r'
                                    | b'\t'
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
                        out.extend_from_slice(&input[start..i]);
                    }
                }
            }
        }
    }
}

/// Formats a whole input.
pub fn format(input: &[u8], layout: &Layout) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() + input.len() / 2);
    Formatter::new().feed(input, layout, &mut out);
    out
}

/// The length of [`format()`]'s output (saturating at `u64::MAX`), found in time linear in the input whatever the
/// output's size: deep nesting makes long lines (a 40 KB input can lay out to 800 MB), and a caller that must
/// bound its work per call decides where to run from this.
pub fn formatted_len(input: &[u8], layout: &Layout) -> u64 {
    let mut len = Length(0);
    Formatter::new().feed_to(input, layout, &mut len);
    len.0
}

/// Where the formatter writes: a buffer, or a [`Length`] that only counts.
pub trait Sink {
    fn push(&mut self, byte: u8);
    fn extend_from_slice(&mut self, bytes: &[u8]);
    /// `bytes`, `n` times.
    fn repeat(&mut self, bytes: &[u8], n: usize);
}

impl Sink for Vec<u8> {
    #[inline]
    fn push(&mut self, byte: u8) {
        Vec::push(self, byte);
    }
    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        Vec::extend_from_slice(self, bytes);
    }
    fn repeat(&mut self, bytes: &[u8], n: usize) {
        for _ in 0..n {
            Vec::extend_from_slice(self, bytes);
        }
    }
}

/// A sink that counts the bytes it would write.
pub struct Length(pub u64);

impl Sink for Length {
    #[inline]
    fn push(&mut self, _byte: u8) {
        self.0 = self.0.saturating_add(1);
    }
    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.0 = self.0.saturating_add(bytes.len() as u64);
    }
    fn repeat(&mut self, bytes: &[u8], n: usize) {
        let total = (bytes.len() as u64).saturating_mul(n as u64);
        self.0 = self.0.saturating_add(total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRETTY: Layout = Layout {
        indent: b"  ",
        line: b"\n",
        record: b"\n",
        after_colon: b" ",
    };

    fn pp(s: &str) -> String {
        String::from_utf8(format(s.as_bytes(), &PRETTY)).unwrap()
    }

    #[test]
    fn pretty_prints_like_jason() {
        assert_eq!(pp("{}"), "{}");
        assert_eq!(
            pp(" { \"a\" : [ 1 , 2 ] , \"b\" : { } } "),
            "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}"
        );
        assert_eq!(pp("1 2"), "12");
        assert_eq!(pp("[1] [2]"), "[\n  1\n]\n[\n  2\n]");
        assert_eq!(
            pp("{\"a\":\"x\\\"y, [z]\"}"),
            "{\n  \"a\": \"x\\\"y, [z]\"\n}"
        );
    }

    #[test]
    fn streams_across_chunks() {
        let mut out = Vec::new();
        let mut f = Formatter::new();
        for chunk in ["[\"a\\", "\"b\",", " 1", "2]"] {
            f.feed(chunk.as_bytes(), &PRETTY, &mut out);
        }
        assert_eq!(String::from_utf8(out).unwrap(), "[\n  \"a\\\"b\",\n  12\n]");
    }

    #[test]
    fn formatted_len_is_the_output_length_without_writing_it() {
        let layouts = [
            PRETTY,
            Layout::minimize(b"\n"),
            Layout {
                indent: b"\t\t\t",
                line: b"\r\n",
                record: b"--",
                after_colon: b"",
            },
        ];
        for input in [
            " { \"a\" : [ 1 , 2 ] , \"b\" : { } } [3] ",
            "[[[[[[[[[[]]]]]]]]]]",
            "{\"a\":\"x\\\"y, [z]\"} 1 2 {\"b\":[{},[]]}",
            "",
            "]]]",
        ] {
            for layout in &layouts {
                assert_eq!(
                    formatted_len(input.as_bytes(), layout),
                    format(input.as_bytes(), layout).len() as u64,
                    "{input:?}"
                );
            }
        }
        // Deep nesting: output quadratic in the input, counted exactly.
        let deep = "[".repeat(2_000) + &"]".repeat(2_000);
        let len = formatted_len(deep.as_bytes(), &PRETTY);
        assert_eq!(len, format(deep.as_bytes(), &PRETTY).len() as u64);
        assert!(len > 2_000 * 2_000);
    }

    #[test]
    fn minimizes() {
        let out = format(b" [ 1 , {\"a\" : 2} ] [3]", &Layout::minimize(b"\n"));
        assert_eq!(out, b"[1,{\"a\":2}]\n[3]");
    }
}
