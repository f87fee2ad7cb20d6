//! The locator against the parser: the same verdict and error position on every input, and the value found at a
//! path equal to the parsed document's value there; in slices, and in pieces cut anywhere as a stream.

use super::super::tests::tree::{Tree, Value};
use super::*;

fn pointer(text: &str) -> Vec<Vec<u8>> {
    if text.is_empty() {
        return Vec::new();
    }
    text[1..]
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~").into_bytes())
        .collect()
}

/// The whole walk in one call.
fn locate(
    doc: &[u8],
    pointers: &[&str],
    options: LocateOptions,
) -> Result<Vec<Option<(u64, u64)>>, ParseError> {
    let paths: Vec<_> = pointers.iter().map(|p| pointer(p)).collect();
    let mut l = Locator::new(&paths, options);
    let mut pos = 0;
    assert_eq!(l.run(doc, &mut pos, usize::MAX, None, true)?, Located::Done);
    Ok(l.found().to_vec())
}

/// The walk in slices of `slice` bytes, with long tokens as the NIF takes them (the rest in one call).
fn locate_sliced(
    doc: &[u8],
    pointers: &[&str],
    slice: usize,
) -> Result<Vec<Option<(u64, u64)>>, ParseError> {
    let paths: Vec<_> = pointers.iter().map(|p| pointer(p)).collect();
    let mut l = Locator::new(&paths, LocateOptions::default());
    let mut pos = 0;
    loop {
        let limit = pos + slice;
        match l.run(doc, &mut pos, limit, Some(slice), true)? {
            Located::Done => return Ok(l.found().to_vec()),
            Located::Paused => {}
            Located::LongToken => {
                assert_eq!(l.run(doc, &mut pos, usize::MAX, None, true)?, Located::Done);
                return Ok(l.found().to_vec());
            }
            other => panic!("{other:?}"),
        }
    }
}

/// The value at `pointer` in a parsed document, as the decoder keeps repeated keys (the first).
fn lookup<'a>(mut v: &'a Value, pointer: &[Vec<u8>]) -> Option<&'a Value> {
    for token in pointer {
        v = match v {
            Value::Object(pairs) => {
                &pairs
                    .iter()
                    .find(|(k, _)| matches!(k, Value::Str(s, _) if s.as_bytes() == &token[..]))?
                    .1
            }
            Value::Array(items) => items.get(array_index(token)?)?,
            _ => return None,
        };
    }
    Some(v)
}

fn parsed(doc: &[u8]) -> Result<Value, ParseError> {
    let mut t = Tree::default();
    let i = parse(doc, &mut t)?;
    Ok(t.arena[i].clone())
}

/// Checks the locator against the parser on `doc` for `pointers`.
fn check(doc: &[u8], pointers: &[&str]) {
    let whole = parsed(doc);
    let found = locate(doc, pointers, LocateOptions::default());
    match (&whole, &found) {
        (Err(e), Err(f)) => assert_eq!(e, f, "{:?}", String::from_utf8_lossy(doc)),
        (Ok(value), Ok(found)) => {
            for (p, span) in pointers.iter().zip(found) {
                let expected = lookup(value, &pointer(p));
                let got = span.map(|(s, e)| parsed(&doc[s as usize..e as usize]).unwrap());
                assert_eq!(
                    expected,
                    got.as_ref(),
                    "{p} in {:?}",
                    String::from_utf8_lossy(doc)
                );
            }
        }
        _ => panic!(
            "{:?}: parser {whole:?}, locator {found:?}",
            String::from_utf8_lossy(doc)
        ),
    }
    for slice in [1, 7, 64] {
        assert_eq!(
            locate_sliced(doc, pointers, slice),
            found,
            "slices of {slice}"
        );
    }
}

const DOC: &str = r#" {"data": [{"id": 1, "tags": ["a", "b"]}, {"id": 2.5e3, "x": null}],
  "meta": {"total": 2, "a/b": true, "m~n": "é\u00e9", "": [0, -1, {"": {}}]}, "meta": {"total": 3}} "#;

#[test]
fn values_at_paths_are_the_parsed_document_s() {
    let pointers = [
        "",
        "/data",
        "/data/0",
        "/data/1/id",
        "/data/0/tags/1",
        "/meta/total",
        "/meta/a~1b",
        "/meta/m~0n",
        "/meta/",
        "/meta//2/",
        "/data/2",
        "/data/-",
        "/data/01",
        "/missing",
        "/meta/total/x",
        "/data/0/id/0",
    ];
    check(DOC.as_bytes(), &pointers);
    let found = locate(
        DOC.as_bytes(),
        &["/meta/total", "/data/1/id"],
        LocateOptions::default(),
    )
    .unwrap();
    let text = |i: usize| found[i].map(|(s, e)| &DOC[s as usize..e as usize]);
    assert_eq!(text(0), Some("2"), "the first of repeated keys");
    assert_eq!(text(1), Some("2.5e3"));
}

#[test]
fn repeated_keys_follow_the_rule_asked_for() {
    let doc = br#"{"a": {"b": 1}, "a": {"c": 2, "b": 3}}"#;
    let options = |duplicates| LocateOptions {
        duplicates,
        ..LocateOptions::default()
    };
    let spans = |d| locate(doc, &["/a/b", "/a/c"], options(d));
    let text = |s: Option<(u64, u64)>| s.map(|(s, e)| &doc[s as usize..e as usize]);
    let first = spans(Duplicates::First).unwrap();
    assert_eq!((text(first[0]), text(first[1])), (Some(&b"1"[..]), None));
    let last = spans(Duplicates::Last).unwrap();
    assert_eq!(
        (text(last[0]), text(last[1])),
        (Some(&b"3"[..]), Some(&b"2"[..]))
    );
    assert_eq!(
        spans(Duplicates::Error),
        Err(ParseError::DuplicateKey { start: 16, end: 19 })
    );
    // Repeats off the paths are no error.
    assert!(locate(
        br#"{"x": 1, "x": 2, "a": 0}"#,
        &["/a"],
        options(Duplicates::Error)
    )
    .is_ok());
}

#[test]
fn limits_are_the_parser_s() {
    let limits = Limits {
        max_depth: 2,
        integer_bytes: 3,
        ..Limits::default()
    };
    let options = LocateOptions {
        limits,
        ..LocateOptions::default()
    };
    for doc in [
        &b"[[1]]"[..],
        b"[[[1]]]",
        b"{\"a\":[{}]}",
        b"[1234]",
        b"[-123]",
        b"[123]",
        b"[1e400]",
    ] {
        let mut t = Tree {
            limits,
            ..Tree::default()
        };
        let expected = parse(doc, &mut t).map(|_| ());
        assert_eq!(
            locate(doc, &["/0"], options).map(|_| ()),
            expected,
            "{doc:?}"
        );
    }
    let decimals = LocateOptions {
        decimals: true,
        ..LocateOptions::default()
    };
    assert!(locate(b"[1e400]", &[], decimals).is_ok());
}

#[test]
fn json_test_suite_verdicts_and_positions_are_the_parser_s() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/JSONTestSuite/test_parsing");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut checked = 0;
    for entry in entries {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        check(&data, &["", "/0", "/a", "/0/0"]);
        checked += 1;
    }
    assert!(checked > 300);
}

/// `count` variants of `base`, each with one to three edits: a byte replaced by one JSON gives meaning to (or an
/// invalid one), a byte removed, or (`cut`) the rest cut off, else a byte inserted. Deterministic (xorshift).
pub(super) fn mutations(
    base: &[u8],
    count: usize,
    cut: bool,
) -> impl Iterator<Item = Vec<u8>> + '_ {
    let specials = b"\"\\{}[]:,.-+eE0123456789 \t\n\x00\x1f\x7f\x80\xbf\xc3\xed\xf0\xf4\xffuntrfl";
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    (0..count).map(move |_| {
        let mut doc = base.to_vec();
        for _ in 0..1 + next(3) {
            if doc.is_empty() {
                break;
            }
            let at = next(doc.len());
            match next(3) {
                0 => doc[at] = specials[next(specials.len())],
                1 => {
                    doc.remove(at);
                }
                _ if cut => doc.truncate(at),
                _ => doc.insert(at, specials[next(specials.len())]),
            }
        }
        doc
    })
}

#[test]
fn mutated_documents_give_the_parser_s_verdict() {
    for doc in mutations(DOC.as_bytes(), 20_000, true) {
        let whole = parsed(&doc).map(|_| ());
        let found = locate(&doc, &["/data/0", "/meta/total"], LocateOptions::default()).map(|_| ());
        assert_eq!(whole, found, "{:?}", String::from_utf8_lossy(&doc));
    }
}

#[test]
fn long_tokens_stop_the_slice_before_them() {
    let doc = format!("[1, \"{}\", 2]", "x".repeat(100_000));
    let mut l = Locator::new(&[pointer("/2")], LocateOptions::default());
    let mut pos = 0;
    assert_eq!(
        l.run(doc.as_bytes(), &mut pos, 10, Some(1000), true),
        Ok(Located::LongToken)
    );
    assert_eq!(pos, 4);
    assert_eq!(
        l.run(doc.as_bytes(), &mut pos, usize::MAX, None, true),
        Ok(Located::Done)
    );
    assert_eq!(
        l.found()[0],
        Some((doc.len() as u64 - 2, doc.len() as u64 - 1))
    );
    check(doc.as_bytes(), &["/1", "/2"]);
}

/// `{"a":1,"b":[…]}` where a skim of `b`'s array doubts only at its end: `items` items, then 64 levels more
/// than a skim tracks; then `tail` (valid: `}`).
fn doubted_at_the_end(items: usize, tail: &str) -> String {
    let items = r#"[1,{"x":[]}],"#.repeat(items);
    format!(
        r#"{{"a":1,"b":[{items}{}{}]{tail}"#,
        "[".repeat(64),
        "]".repeat(64)
    )
}

/// The opening bracket of `b`'s array in [`doubted_at_the_end`].
const DOUBTED: usize = 11;

#[test]
fn a_doubt_walks_its_container_again_in_slices() {
    // A step past the limit: a skim's block, or a token here.
    let (slice, step) = (1000, 64);
    for tail in ["}", "x}"] {
        let doc = doubted_at_the_end(2_000, tail);
        let mut l = Locator::new(&[pointer("/a")], LocateOptions::default());
        let (mut pos, mut back) = (0, 0);
        let result = loop {
            let from = pos;
            let located = l.run(doc.as_bytes(), &mut pos, from + slice, Some(slice), true);
            if pos < from {
                // Back at the container's start, with what was left of the slice (before, the run walked the
                // container again to the limit it was given, near the document's end).
                back += 1;
                assert!(pos <= DOUBTED + slice + step, "{pos}");
            } else {
                assert!(pos <= from + slice + step, "{from} to {pos}");
            }
            match located {
                Ok(Located::Paused) => {}
                Ok(Located::Done) => break Ok(l.found().to_vec()),
                Err(e) => break Err(e),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(back, skim::SKIMS as usize, "{tail}");
        assert_eq!(result, locate(doc.as_bytes(), &["/a"], Default::default()));
        assert_eq!(parsed(doc.as_bytes()).is_ok(), tail == "}");
    }
    check(doubted_at_the_end(40, "}").as_bytes(), &["/a", "/b/39/1"]);
    check(doubted_at_the_end(40, "x}").as_bytes(), &["/a"]);
}

#[test]
fn a_long_string_in_a_doubted_container_stops_the_slice_before_it() {
    // The skim crosses the string in one slice; walked again, the string is as long as it was.
    let doc = format!(
        r#"{{"a":1,"b":["{}",{}"#,
        "x".repeat(100_000),
        &doubted_at_the_end(100, "}")[DOUBTED + 1..]
    );
    let deep = doc.find("[[[[").unwrap();
    let mut l = Locator::new(&[pointer("/a")], LocateOptions::default());
    let mut pos = 0;
    let first = l.run(doc.as_bytes(), &mut pos, deep - 200, Some(1000), true);
    assert_eq!(first, Ok(Located::Paused));
    // The doubt early in this slice leaves most of it to the walk from the container's start, and the string
    // there may run only as far past that as past any limit.
    let limit = pos + 1000;
    let second = l.run(doc.as_bytes(), &mut pos, limit, Some(1000), true);
    if skim::SKIMS {
        assert_eq!((second, pos), (Ok(Located::LongToken), DOUBTED + 1));
    }
    assert_eq!(
        l.run(doc.as_bytes(), &mut pos, usize::MAX, None, true),
        Ok(Located::Done)
    );
    assert_eq!(l.found(), [Some((5, 6))]);
}

#[test]
fn deep_nesting_does_not_recurse() {
    let depth = 1_000_000;
    let doc = "[".repeat(depth) + &"]".repeat(depth);
    assert!(locate(doc.as_bytes(), &["/0/0/0"], LocateOptions::default()).unwrap()[0].is_some());
}

#[test]
fn a_slice_pauses_after_its_frame_stack_takes_a_new_chunk() {
    use crate::parser::chunked_stack::CHUNK;
    // Every level on the path, so each is a frame (a skim keeps none): as the parser's, a slice ends right after
    // the bracket that took a new chunk, however far its limit is.
    let depth = 2 * CHUNK + 10;
    let doc = "[".repeat(depth) + &"]".repeat(depth);
    let path = "/0".repeat(depth - 1);
    let paths = vec![pointer(&path)];
    let mut l = Locator::new(&paths, LocateOptions::default());
    let (mut pos, mut pauses) = (0, Vec::new());
    loop {
        match l.run(doc.as_bytes(), &mut pos, doc.len(), Some(doc.len()), true) {
            Ok(Located::Paused) => pauses.push(pos),
            Ok(Located::Done) => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(pauses, [CHUNK + 1, 2 * CHUNK + 1]);
    assert_eq!(l.found(), [Some((depth as u64 - 1, depth as u64 + 1))]);
}

/// A stream walk over `pieces`, standing in for the NIF: an incomplete token is fed again with the next piece,
/// and the array at the path is skipped (its end found with the parser). Returns whether the path held an array,
/// where it started, and the other spans found.
/// Whether the path held an array (streamed), and the span found there; or an error relative to a base.
type Streamed = Result<(bool, Option<(u64, u64)>), (u64, ParseError)>;

fn stream(pieces: &[&[u8]], path: &str) -> Streamed {
    let doc: Vec<u8> = pieces.concat();
    let options = LocateOptions {
        stream: true,
        ..LocateOptions::default()
    };
    let mut l = Locator::new(&[pointer(path)], options);
    let mut carry: Vec<u8> = Vec::new();
    let mut base = 0u64;
    let mut skip_to: Option<u64> = None;
    for (i, piece) in pieces.iter().enumerate() {
        let last = i + 1 == pieces.len();
        let mut buf = std::mem::take(&mut carry);
        buf.extend_from_slice(piece);
        let mut pos = 0usize;
        if let Some(end) = skip_to {
            if end > base + buf.len() as u64 {
                base += buf.len() as u64;
                continue;
            }
            pos = (end - base) as usize;
            skip_to = None;
            l.array_done();
        }
        l.set_base(base);
        loop {
            match l.run(&buf, &mut pos, usize::MAX, None, last) {
                Err(e) => return Err((base, e)),
                Ok(Located::NeedMore) => {
                    carry = buf[pos..].to_vec();
                    base += pos as u64;
                    break;
                }
                Ok(Located::Array(at)) => {
                    let start = base as usize + at;
                    let mut t = Tree::default();
                    let mut stacks = Stacks::default();
                    let mut end = start;
                    parse_value(&doc, &mut t, &mut stacks, &mut end).map_err(|e| (0, e))?;
                    if end as u64 > base + buf.len() as u64 {
                        skip_to = Some(end as u64);
                        base += buf.len() as u64;
                        break;
                    }
                    pos = end - base as usize;
                    l.array_done();
                }
                Ok(Located::Done) => return Ok((l.streamed(), l.found()[0])),
                Ok(other) => panic!("{other:?}"),
            }
        }
    }
    unreachable!("the last piece ends the walk")
}

#[test]
fn a_stream_cut_anywhere_finds_what_the_whole_document_holds() {
    let doc = DOC.as_bytes();
    let whole = stream(&[doc], "/data").unwrap();
    assert!(whole.0);
    assert_eq!(whole.1.map(|(s, _)| doc[s as usize]), Some(b'['));
    for path in ["/data", "/meta/", "/meta/total", "/nothing", "/data/0/tags"] {
        let expected = stream(&[doc], path);
        for cut in 0..=doc.len() {
            assert_eq!(
                stream(&[&doc[..cut], &doc[cut..]], path),
                expected,
                "{path} cut at {cut}"
            );
        }
        let bytes: Vec<&[u8]> = doc.chunks(1).collect();
        assert_eq!(stream(&bytes, path), expected, "{path} in 1-byte pieces");
    }
    assert!(!stream(&[doc], "/meta/total").unwrap().0);
}

#[test]
fn a_stream_s_errors_are_at_the_whole_document_s_positions() {
    for bad in [
        &br#"{"meta": {"a": tru}, "data": []}"#[..],
        br#"{"meta": {"a": "x\q"}, "data": []}"#,
        br#"{"meta": 01, "data": []}"#,
        br#"{"meta" 1}"#,
        br#"{"data": [1, 2]} x"#,
        br#"{"data": [1, 2]"#,
        b"{\"a\": \"\xc3\"}",
    ] {
        let expected = parse(bad, &mut Tree::default()).unwrap_err();
        let relative = |(base, e): (u64, ParseError)| match e {
            ParseError::UnexpectedByte(p) => ParseError::UnexpectedByte(p + base as usize),
            ParseError::UnexpectedEnd(p) => ParseError::UnexpectedEnd(p + base as usize),
            ParseError::Token { start, end } => ParseError::Token {
                start: start + base as usize,
                end: end + base as usize,
            },
            e => e,
        };
        for cut in 0..=bad.len() {
            let got = stream(&[&bad[..cut], &bad[cut..]], "/data").map_err(relative);
            assert_eq!(
                got,
                Err(expected.clone()),
                "{:?} cut at {cut}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
