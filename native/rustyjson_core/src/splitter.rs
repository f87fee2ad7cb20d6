//! A resumable splitter for streams of JSON: fed chunks one after another, it finds where top-level values end.
//!
//! Each byte is looked at once; the state between chunks is a handful of counters and flags (depth, inside a
//! string, after a backslash, inside a scalar, the absolute offset and the newline count), so a value may be cut
//! anywhere: inside a string, an escape, a number or a multi-byte character. Depth is a counter, never recursion,
//! and bracket kinds are not matched (`[1}` is one item; the parser rejects it).
//!
//! The splitter does not validate items: the parser does. It only finds their extent, and it must never cut a
//! valid item wrong. Two modes:
//!
//! * [`Mode::Documents`]: JSON Lines / NDJSON (`\n` or `\r\n`, blank lines allowed) and concatenated or
//!   whitespace-separated documents: every top-level value is an item. A scalar (number, literal) ends at the
//!   next delimiter (whitespace, bracket, comma, colon, quote) or at the end of the stream. A closing bracket,
//!   comma or colon where a document would start is an error at that byte.
//! * [`Mode::ArrayItems`]: the stream is one top-level array and the items are its elements. The `[`, the
//!   commas and the `]` are checked here; anything other than whitespace after `]`, or a stream that ends
//!   before `]`, is an error (at that byte, or at the end).
//!
//! Newlines inside strings are not counted: a raw newline there is invalid JSON, so the item fails at or before
//! it and the stream stops; line numbers are exact up to the first error.

/// What the items of the stream are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every top-level value is an item (JSON Lines, NDJSON, concatenated documents).
    Documents,
    /// The stream is one array; its elements are the items.
    ArrayItems,
}

/// Where an item is in the stream: bytes `start..end` (absolute offsets), starting on line `line` (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub end: u64,
    pub line: u64,
}

/// A structural error: the byte at `position` (absolute; the end of the stream for a stream cut short), on
/// line `line` (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitError {
    pub position: u64,
    pub line: u64,
}

/// What is left at the end of the stream ([`Splitter::finish`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct End {
    /// The last item: a scalar that ends with the stream, or (`open`) an item cut short, for the parser to report.
    pub last: Option<Span>,
    /// `last` is cut short (an unclosed container or string): it is invalid, and the parser says where.
    pub open: bool,
    /// An error at the end of the stream (an array without its `]`), after `last`.
    pub error: Option<SplitError>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Documents: between items. ArrayItems: before the `[`.
    Between,
    /// ArrayItems: after `[`: an item or `]`.
    First,
    /// ArrayItems: after an item: `,` or `]`.
    AfterItem,
    /// ArrayItems: after `,`: an item.
    Next,
    /// ArrayItems: after `]`: whitespace only.
    Done,
    /// Inside an item.
    Item,
    /// An error was reported; nothing more is scanned.
    Failed,
}

/// The splitter's state, carried from chunk to chunk.
#[derive(Clone, Debug)]
pub struct Splitter {
    mode: Mode,
    phase: Phase,
    /// Open containers inside the current item.
    depth: u64,
    in_string: bool,
    escaped: bool,
    in_scalar: bool,
    /// Absolute offset of the next byte to scan.
    offset: u64,
    /// Newlines scanned so far (outside strings).
    newlines: u64,
    /// Where the current item started, and on which line.
    item_start: u64,
    item_line: u64,
}

#[inline]
fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

#[inline]
fn ends_scalar(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\r' | b'\n' | b'[' | b']' | b'{' | b'}' | b',' | b':' | b'"'
    )
}

impl Splitter {
    /// A splitter at the start of a stream.
    pub fn new(mode: Mode) -> Self {
        Splitter {
            mode,
            phase: Phase::Between,
            depth: 0,
            in_string: false,
            escaped: false,
            in_scalar: false,
            offset: 0,
            newlines: 0,
            item_start: 0,
            item_line: 1,
        }
    }

    /// The absolute offset of the next byte to be fed.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Where the item in progress started (it continues in the next chunk), if one is.
    pub fn open_item(&self) -> Option<u64> {
        (self.phase == Phase::Item).then_some(self.item_start)
    }

    /// Scans `chunk` (the bytes after everything fed so far) and appends the items that end in it to `out`.
    /// Returns the first structural error; after one, the splitter stays failed and scans nothing more.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Span>) -> Result<(), SplitError> {
        if self.phase == Phase::Failed {
            return Err(self.error_at(self.offset));
        }
        let base = self.offset;
        let mut i = 0;
        let n = chunk.len();
        while i < n {
            if self.phase == Phase::Item {
                i = self.scan_item(chunk, i, base, out);
                continue;
            }
            let b = chunk[i];
            if is_whitespace(b) {
                if b == b'\n' {
                    self.newlines += 1;
                }
                i += 1;
                continue;
            }
            let at = base + i as u64;
            match (self.mode, self.phase) {
                (Mode::Documents, Phase::Between)
                | (Mode::ArrayItems, Phase::First)
                | (Mode::ArrayItems, Phase::Next) => {
                    if self.phase == Phase::First && b == b']' {
                        self.phase = Phase::Done;
                        i += 1;
                        continue;
                    }
                    if matches!(b, b']' | b'}' | b',' | b':') {
                        return Err(self.fail(at));
                    }
                    self.start_item(b, at);
                    // A scalar's first byte is scanned again by `scan_item` (it is no delimiter).
                    if !self.in_scalar {
                        i += 1;
                    }
                }
                (Mode::ArrayItems, Phase::Between) => {
                    if b != b'[' {
                        return Err(self.fail(at));
                    }
                    self.phase = Phase::First;
                    i += 1;
                }
                (Mode::ArrayItems, Phase::AfterItem) => {
                    match b {
                        b',' => self.phase = Phase::Next,
                        b']' => self.phase = Phase::Done,
                        _ => return Err(self.fail(at)),
                    }
                    i += 1;
                }
                _ => return Err(self.fail(at)),
            }
        }
        self.offset = base + n as u64;
        Ok(())
    }

    /// The end of the stream: the last item (a scalar that ends here, or an item cut short) and any error.
    pub fn finish(&mut self) -> End {
        let at = self.offset;
        let mut end = End::default();
        match self.phase {
            Phase::Failed => {
                end.error = Some(self.error_at(at));
                return end;
            }
            Phase::Item => {
                end.last = Some(Span {
                    start: self.item_start,
                    end: at,
                    line: self.item_line,
                });
                end.open = !self.in_scalar;
                self.after_item();
            }
            _ => {}
        }
        if self.mode == Mode::ArrayItems && self.phase != Phase::Done {
            end.error = Some(self.fail(at));
        }
        end
    }

    fn start_item(&mut self, b: u8, at: u64) {
        self.phase = Phase::Item;
        self.item_start = at;
        self.item_line = self.newlines + 1;
        self.depth = 0;
        match b {
            b'[' | b'{' => self.depth = 1,
            b'"' => self.in_string = true,
            _ => self.in_scalar = true,
        }
    }

    fn after_item(&mut self) {
        self.in_scalar = false;
        self.in_string = false;
        self.escaped = false;
        self.depth = 0;
        self.phase = match self.mode {
            Mode::Documents => Phase::Between,
            Mode::ArrayItems => Phase::AfterItem,
        };
    }

    fn end_item(&mut self, end: u64, out: &mut Vec<Span>) {
        out.push(Span {
            start: self.item_start,
            end,
            line: self.item_line,
        });
        self.after_item();
    }

    /// Scans the item in progress from `chunk[i]`; returns where scanning stops (the item's end, or `n`).
    #[inline]
    fn scan_item(&mut self, chunk: &[u8], mut i: usize, base: u64, out: &mut Vec<Span>) -> usize {
        let n = chunk.len();
        if self.in_scalar {
            return match chunk[i..].iter().position(|&b| ends_scalar(b)) {
                Some(k) => {
                    // The delimiter is scanned again, between items.
                    self.end_item(base + (i + k) as u64, out);
                    i + k
                }
                None => n,
            };
        }
        while i < n {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                match chunk[i..].iter().position(|&b| b == b'"' || b == b'\\') {
                    None => return n,
                    Some(k) => {
                        let j = i + k;
                        i = j + 1;
                        if chunk[j] == b'\\' {
                            self.escaped = true;
                        } else {
                            self.in_string = false;
                            if self.depth == 0 {
                                self.end_item(base + i as u64, out);
                                return i;
                            }
                        }
                    }
                }
                continue;
            }
            let b = chunk[i];
            i += 1;
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => self.depth += 1,
                b']' | b'}' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.end_item(base + i as u64, out);
                        return i;
                    }
                }
                b'\n' => self.newlines += 1,
                _ => {}
            }
        }
        n
    }

    fn error_at(&self, at: u64) -> SplitError {
        SplitError {
            position: at,
            line: self.newlines + 1,
        }
    }

    fn fail(&mut self, at: u64) -> SplitError {
        self.phase = Phase::Failed;
        self.offset = at;
        self.error_at(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Run {
        items: Vec<(u64, u64, u64)>,
        open: bool,
        error: Option<(u64, u64)>,
    }

    /// Feeds `input` in pieces cut at `cuts` and collects every item and the first error.
    fn run(mode: Mode, input: &[u8], cuts: &[usize]) -> Run {
        let mut s = Splitter::new(mode);
        let mut spans = Vec::new();
        let mut from = 0;
        let mut error = None;
        for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
            if let Err(e) = s.feed(&input[from..cut], &mut spans) {
                error = Some((e.position, e.line));
                break;
            }
            from = cut;
        }
        let mut open = false;
        if error.is_none() {
            let end = s.finish();
            spans.extend(end.last);
            open = end.open;
            error = end.error.map(|e| (e.position, e.line));
        }
        Run {
            items: spans.iter().map(|s| (s.start, s.end, s.line)).collect(),
            open,
            error,
        }
    }

    fn items<'a>(input: &'a [u8], r: &Run) -> Vec<&'a str> {
        r.items
            .iter()
            .map(|&(s, e, _)| std::str::from_utf8(&input[s as usize..e as usize]).unwrap())
            .collect()
    }

    /// The same result whole, at every single cut point, at every pair of cut points, and byte by byte.
    fn every_cut(mode: Mode, input: &str) -> Run {
        let bytes = input.as_bytes();
        let whole = run(mode, bytes, &[]);
        for a in 0..=bytes.len() {
            assert_eq!(run(mode, bytes, &[a]), whole, "cut at {a} of {input:?}");
            for b in a..=bytes.len() {
                assert_eq!(
                    run(mode, bytes, &[a, b]),
                    whole,
                    "cuts {a},{b} of {input:?}"
                );
            }
        }
        let singles: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(
            run(mode, bytes, &singles),
            whole,
            "1-byte pieces of {input:?}"
        );
        whole
    }

    #[test]
    fn documents_lines_and_concatenated() {
        let input = "{\"a\":[1,\"]\\\"\"]}\r\n\n  1 -2.5e3\ttrue\"x\\\\\"[][{}]\nnull";
        let r = every_cut(Mode::Documents, input);
        assert_eq!(
            items(input.as_bytes(), &r),
            vec![
                "{\"a\":[1,\"]\\\"\"]}",
                "1",
                "-2.5e3",
                "true",
                "\"x\\\\\"",
                "[]",
                "[{}]",
                "null"
            ]
        );
        assert_eq!(
            r.items.iter().map(|i| i.2).collect::<Vec<_>>(),
            vec![1, 3, 3, 3, 3, 3, 3, 4]
        );
        assert!(!r.open);
        assert_eq!(r.error, None);
    }

    #[test]
    fn documents_empty_and_blank() {
        for input in ["", "\n\n", " \r\n\t"] {
            let r = every_cut(Mode::Documents, input);
            assert!(r.items.is_empty() && r.error.is_none());
        }
    }

    #[test]
    fn documents_errors() {
        let r = every_cut(Mode::Documents, "1\n]");
        assert_eq!((r.items.len(), r.error), (1, Some((2, 2))));
        for (input, at) in [(",", 0), ("[1] :", 4), ("{}}", 2)] {
            assert_eq!(every_cut(Mode::Documents, input).error, Some((at, 1)));
        }
    }

    #[test]
    fn documents_cut_short_items_are_open() {
        for input in ["[1,2", "{\"a\":\"}", "\"abc\\", "[[[]]"] {
            let r = every_cut(Mode::Documents, input);
            assert!(r.open, "{input:?}");
            assert_eq!(r.items, vec![(0, input.len() as u64, 1)]);
            assert_eq!(r.error, None);
        }
        // A scalar at the end of the stream is complete.
        let r = every_cut(Mode::Documents, "[] 12");
        assert!(!r.open);
        assert_eq!(items(b"[] 12", &r), vec!["[]", "12"]);
    }

    #[test]
    fn mismatched_brackets_are_one_item_for_the_parser() {
        let r = every_cut(Mode::Documents, "[1}{2]");
        assert_eq!(items(b"[1}{2]", &r), vec!["[1}", "{2]"]);
    }

    #[test]
    fn array_items() {
        let input = " [ 1 ,\"a,]\" ,{\"b\":[2,3]}\n,[],-0.5e-3 , null ] \n";
        let r = every_cut(Mode::ArrayItems, input);
        assert_eq!(
            items(input.as_bytes(), &r),
            vec!["1", "\"a,]\"", "{\"b\":[2,3]}", "[]", "-0.5e-3", "null"]
        );
        assert_eq!(r.error, None);
        for input in ["[]", " [ ] ", "[\n]\n"] {
            let r = every_cut(Mode::ArrayItems, input);
            assert!(r.items.is_empty() && r.error.is_none(), "{input:?}");
        }
    }

    #[test]
    fn array_items_errors() {
        for (input, items_before, at, line) in [
            ("", 0, 0, 1),
            ("  ", 0, 2, 1),
            ("{}", 0, 0, 1),
            ("1", 0, 0, 1),
            ("[", 0, 1, 1),
            ("[1", 1, 2, 1),
            ("[1,", 1, 3, 1),
            ("[1,]", 1, 3, 1),
            ("[,1]", 0, 1, 1),
            ("[1 2]", 1, 3, 1),
            ("[1]\n]", 1, 4, 2),
            ("[1] x", 1, 4, 1),
            ("[1][2]", 1, 3, 1),
            ("[1:2]", 1, 2, 1),
            ("[1,\n}", 1, 4, 2),
        ] {
            let r = every_cut(Mode::ArrayItems, input);
            assert_eq!(r.items.len(), items_before, "{input:?}");
            assert_eq!(r.error, Some((at, line)), "{input:?}");
        }
        // An item cut short is handed to the parser, then the missing `]` is reported at the end.
        let r = every_cut(Mode::ArrayItems, "[1,{\"a\":[");
        assert!(r.open);
        assert_eq!(r.items.last(), Some(&(3, 9, 1)));
        assert_eq!(r.error, Some((9, 1)));
    }

    #[test]
    fn deep_nesting_needs_no_recursion() {
        let depth = 1_000_000;
        let input = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let mut s = Splitter::new(Mode::Documents);
        let mut out = Vec::new();
        for piece in input.as_bytes().chunks(4096) {
            s.feed(piece, &mut out).unwrap();
        }
        assert_eq!(
            out,
            vec![Span {
                start: 0,
                end: 2 * depth as u64,
                line: 1
            }]
        );
    }

    #[test]
    fn failed_splitter_stays_failed() {
        let mut s = Splitter::new(Mode::Documents);
        let mut out = Vec::new();
        assert!(s.feed(b"1 }", &mut out).is_err());
        assert_eq!(
            s.feed(b"2", &mut out),
            Err(SplitError {
                position: 2,
                line: 1
            })
        );
        assert_eq!(out.len(), 1);
        assert!(s.finish().error.is_some());
    }

    #[test]
    fn long_stream_offsets() {
        let line = "{\"k\":\"v\",\"n\":[1,2,3]}\n";
        let input = line.repeat(10_000);
        let mut s = Splitter::new(Mode::Documents);
        let mut out = Vec::new();
        for piece in input.as_bytes().chunks(997) {
            s.feed(piece, &mut out).unwrap();
        }
        assert_eq!(out.len(), 10_000);
        for (k, span) in out.iter().enumerate() {
            let start = (k * line.len()) as u64;
            assert_eq!(
                *span,
                Span {
                    start,
                    end: start + line.len() as u64 - 1,
                    line: k as u64 + 1
                }
            );
        }
    }
}
