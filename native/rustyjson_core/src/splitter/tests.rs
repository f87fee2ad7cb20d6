use super::*;
use crate::parser::{parse, parse_value, Builder, ParseError, Stacks, Str};

#[derive(Debug, PartialEq)]
struct Run {
    items: Vec<(u64, u64, u64)>,
    open: bool,
    error: Option<(u64, u64)>,
}

/// Feeds `input` in pieces cut at `cuts` and collects every item and the first error.
fn run(mode: Mode, input: &[u8], cuts: &[usize]) -> Run {
    run_with(mode, input, cuts, None)
}

/// [`run`] with [`Splitter::feed_direct`] and the real parser, declining every `decline`-th item (0: never):
/// the items parsed directly, merged with the spans by their start, give the same run.
fn run_direct(mode: Mode, input: &[u8], cuts: &[usize], decline: usize) -> Run {
    run_with(mode, input, cuts, Some(decline))
}

fn run_with(mode: Mode, input: &[u8], cuts: &[usize], direct: Option<usize>) -> Run {
    let mut s = Splitter::new(mode);
    let mut spans = Vec::new();
    let mut offered = 0;
    let mut from = 0;
    let mut error = None;
    for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
        let chunk = &input[from..cut];
        let base = s.offset();
        let mut values = Vec::new();
        let fed = match direct {
            None => s.feed(chunk, &mut spans),
            Some(decline) => s.feed_direct(chunk, &mut spans, &mut values, |chunk, i| {
                offered += 1;
                if decline > 0 && offered % decline == 0 {
                    return None;
                }
                let mut pos = i;
                let mut stacks = Stacks::default();
                parse_value(chunk, &mut Nothing, &mut stacks, &mut pos).ok()?;
                Some((pos, (base + i as u64, base + pos as u64)))
            }),
        };
        for (start, end) in values {
            let line = 1 + input[..start as usize]
                .iter()
                .filter(|&&c| c == b'\n')
                .count();
            spans.push(Span {
                start,
                end,
                line: line as u64,
            });
        }
        if let Err(e) = fed {
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
    spans.sort_by_key(|s| s.start);
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

/// Builds nothing: the tests below only need where the parser says a value ends.
pub(super) struct Nothing;

impl Builder for Nothing {
    type V = ();
    type K = ();
    fn null(&mut self) {}
    fn boolean(&mut self, _: bool) {}
    fn int(&mut self, _: i64) {}
    fn big_int(&mut self, _: &[u8]) {}
    fn float(&mut self, _: &[u8], _: f64) {}
    fn string(&mut self, _: Str) {}
    fn key(&mut self, _: Str) -> Result<(), ()> {
        Ok(())
    }
    fn array(&mut self, _: &[()]) {}
    fn object(&mut self, _: &[()], _: &[()]) {}
}

/// The same result whole, at every single cut point, at every pair of cut points, and byte by byte; and the
/// same again with items parsed directly (always, or declining some).
fn every_cut(mode: Mode, input: &str) -> Run {
    let bytes = input.as_bytes();
    let whole = run(mode, bytes, &[]);
    for decline in [0, 1, 2, 3] {
        assert_eq!(
            run_direct(mode, bytes, &[], decline),
            whole,
            "direct, {input:?}"
        );
        for a in 0..=bytes.len() {
            let direct = run_direct(mode, bytes, &[a], decline);
            assert_eq!(direct, whole, "direct, cut at {a} of {input:?}");
        }
        let singles: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(run_direct(mode, bytes, &singles, decline), whole);
    }
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

#[test]
fn direct_items_keep_lines_and_scalar_ends() {
    // Pretty documents (newlines inside containers), scalars followed by every delimiter, and scalars that the
    // parser ends before the splitter does (`1x`: one item for the splitter, which the parser rejects).
    for input in [
        "{\n  \"a\": [\n    1\n  ]\n}\n[\n]\n7",
        "1 2\t3\r\n4[5]6{}7\"8\"true null,",
        "1x 2",
        "tru e",
        "-\n1",
        "[1,2]]",
        "\"a\"\"b\"{}[]",
    ] {
        every_cut(Mode::Documents, input);
    }
    for input in [
        "[\n {\"a\":\n1},\n 2 ,3\n]",
        "[1x,2]",
        "[true,fals]",
        "[\"a\",1e5,[],{}]",
    ] {
        every_cut(Mode::ArrayItems, input);
    }
}

#[test]
fn newlines_counted_in_blocks() {
    let mut bytes = Vec::new();
    let mut state = 7u32;
    for _ in 0..20_000 {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        bytes.push(if state >> 28 < 3 {
            b'\n'
        } else {
            (state >> 16) as u8
        });
    }
    for len in [0, 1, 31, 32, 33, 255 * 32, 255 * 32 + 1, 9_999, 20_000] {
        for from in [0, 1, 17] {
            let part = &bytes[from.min(len)..len];
            let naive = part.iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(count_newlines(part), naive, "{from}..{len}");
        }
    }
    assert_eq!(count_newlines(&[b'\n'; 10_000]), 10_000);
    // Sparse newlines, as in records: most 64-byte blocks have none, some one at either end.
    let sparse: Vec<u8> = (0..5_000)
        .map(|i| {
            if i % 97 == 0 || i % 64 == 63 && i % 3 == 0 {
                b'\n'
            } else {
                b'a'
            }
        })
        .collect();
    for len in [63, 64, 65, 127, 128, 129, 1_000, 5_000] {
        for from in [0, 1, 63, 64] {
            let part = &sparse[from.min(len)..len];
            let naive = part.iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(count_newlines(part), naive, "sparse {from}..{len}");
        }
    }
    // The word-at-a-time count other targets use.
    for word in bytes.as_chunks::<8>().0 {
        let naive = word.iter().filter(|&&b| b == b'\n').count() as u32;
        assert_eq!(newlines_in_word(u64::from_le_bytes(*word)), naive);
    }
    for b in 0..=255u8 {
        assert_eq!(
            newlines_in_word(u64::from(b) << 56),
            u32::from(b == b'\n'),
            "{b}"
        );
    }
}

/// Escapes cut short or damaged (fewer than 4 hex digits, a high surrogate followed by a bad or cut `\u`, a
/// quote inside one), and valid ones: the tests put them in strings whose closing quote follows at once, so a
/// quote often falls inside what the parser reads of the escape.
pub(super) const ESCAPES: &[&str] = &[
    r"\u",
    r"\u1",
    r"\u12",
    r"\u123",
    r"\u12x4",
    r"\uD83D",
    r"\uD83D\u",
    r"\uD83D\u1",
    r"\uD83D\uDE0",
    r#"\uD83D\u"E00"#,
    r#"\uD83D\uDE"0"#,
    r"\uD83D\u00E9",
    r"\uD83Dx",
    r"\uDE00",
    r"\x",
    r"\",
    r"\uD83D\uDE00",
    r"\u00e9",
    r#"\""#,
];

/// An error as the stream reports it: the absolute position and the token (a [`ParseError::Token`]'s bytes).
pub(super) type Reported = (u64, Option<Vec<u8>>);

/// `e`, the parser's error on `input`, which starts at offset `at` of the stream.
pub(super) fn reported(input: &[u8], e: ParseError, at: u64) -> Reported {
    match e {
        ParseError::Token { start, end } => (at + start as u64, Some(input[start..end].to_vec())),
        ParseError::UnexpectedByte(p) | ParseError::UnexpectedEnd(p) => (at + p as u64, None),
        e => panic!("not a syntax error: {e:?}"),
    }
}

/// What a stream reports for `input` split as `r`: the first item the parser rejects (items are decoded in
/// order, before the splitter's own error is raised), else the splitter's error.
fn stream_error(input: &[u8], r: &Run) -> Option<Reported> {
    for &(start, end, _) in &r.items {
        let item = &input[start as usize..end as usize];
        if let Err(e) = parse(item, &mut Nothing) {
            return Some(reported(item, e, start));
        }
    }
    r.error.map(|(position, _)| (position, None))
}

/// The parser's first error reading `input` as documents one after another.
fn documents_error(input: &[u8]) -> Option<Reported> {
    let mut pos = 0;
    loop {
        while input.get(pos).is_some_and(|&b| is_whitespace(b)) {
            pos += 1;
        }
        if pos == input.len() {
            return None;
        }
        if let Err(e) = parse_value(input, &mut Nothing, &mut Stacks::default(), &mut pos) {
            return Some(reported(input, e, 0));
        }
    }
}

#[test]
fn damaged_escapes_fail_as_the_parser_fails_on_the_whole_text_whatever_the_cuts() {
    for escape in ESCAPES {
        let array = format!(r#"[1,"a{escape}",{{"k":"{escape}"}}]"#);
        let documents = format!("{{\"a\":1}}\n\"{escape}\"\n[\"{escape}\"] 2\n");
        for (mode, text) in [(Mode::ArrayItems, array), (Mode::Documents, documents)] {
            let text = text.as_bytes();
            // Cut by the end of the stream, too, anywhere from the first escape on.
            let first = text.iter().position(|&b| b == b'\\').unwrap();
            for len in first..=text.len() {
                let input = &text[..len];
                let expected = match mode {
                    Mode::ArrayItems => parse(input, &mut Nothing)
                        .err()
                        .map(|e| reported(input, e, 0)),
                    Mode::Documents => documents_error(input),
                };
                let mut cuts: Vec<Vec<usize>> = (0..=len).map(|cut| vec![cut]).collect();
                cuts.push((1..len).collect());
                for cuts in &cuts {
                    for direct in [None, Some(0)] {
                        let r = run_with(mode, input, cuts, direct);
                        assert_eq!(
                            stream_error(input, &r),
                            expected,
                            "{mode:?} {:?} cut at {cuts:?}",
                            String::from_utf8_lossy(input)
                        );
                    }
                }
            }
        }
    }
}
