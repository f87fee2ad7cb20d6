//! The path splitter against the whole document: the same items and errors whatever the cuts.

use super::*;
use crate::splitter::tests::{reported, Nothing, Reported, ESCAPES};

/// The items' texts (or the error's position), the marks and what was found, for `doc` cut into `pieces`.
fn split(pieces: &[&[u8]], pointer: &[&str]) -> (Vec<String>, Option<u64>, Option<Found>) {
    let doc: Vec<u8> = pieces.concat();
    let mut s = PathSplitter::new(pointer, Limits::default());
    let mut spans = Vec::new();
    for piece in pieces {
        if let Err(e) = s.feed_direct(piece, &mut spans, &mut Vec::<()>::new(), |_, _| None) {
            return (texts(&doc, &spans), Some(position(e)), None);
        }
    }
    match s.finish() {
        Ok((end, found)) => {
            spans.extend(end.last);
            let error = end.error.map(|e| e.position);
            (texts(&doc, &spans), error, Some(found))
        }
        Err(e) => (texts(&doc, &spans), Some(position(e)), None),
    }
}

fn position(e: Failure) -> u64 {
    match e {
        Failure::Array(e) => e.position,
        Failure::Envelope(e) => e.position,
        Failure::TooLong(at) => at,
    }
}

fn texts(doc: &[u8], spans: &[Span]) -> Vec<String> {
    spans
        .iter()
        .map(|s| String::from_utf8_lossy(&doc[s.start as usize..s.end as usize]).into_owned())
        .collect()
}

fn check(doc: &str, pointer: &[&str], expected: (Vec<&str>, Option<u64>, Option<Found>)) {
    let expected = (
        expected.0.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        expected.1,
        expected.2,
    );
    let doc = doc.as_bytes();
    assert_eq!(split(&[doc], pointer), expected, "whole");
    for cut in 0..=doc.len() {
        assert_eq!(
            split(&[&doc[..cut], &doc[cut..]], pointer),
            expected,
            "cut at {cut}"
        );
    }
    let bytes: Vec<&[u8]> = doc.chunks(1).collect();
    assert_eq!(split(&bytes, pointer), expected, "1-byte pieces");
}

#[test]
fn the_items_of_the_array_at_the_path_whatever_the_cuts() {
    let doc = r#"{"meta": {"total": 3, "s": "a\"]\u00e9"}, "hits": {"hits": [{"a": [1]}, "x]", 3]}, "z": [true]}"#;
    check(
        doc,
        &["hits", "hits"],
        (
            vec![r#"{"a": [1]}"#, r#""x]""#, "3"],
            None,
            Some(Found::Array),
        ),
    );
    check(doc, &["z"], (vec!["true"], None, Some(Found::Array)));
    check(doc, &["meta"], (vec![], None, Some(Found::NotArray)));
    check(doc, &["nope"], (vec![], None, Some(Found::Missing)));
    check(" [1, 2] ", &[], (vec!["1", "2"], None, Some(Found::Array)));
    check(
        r#"{"a": [], "a": [1]}"#,
        &["a"],
        (vec![], None, Some(Found::Array)),
    );
    check(
        "[[], [7, 8]]",
        &["1"],
        (vec!["7", "8"], None, Some(Found::Array)),
    );
}

#[test]
fn errors_before_inside_and_after_the_array_are_at_their_position() {
    check(r#"{"m": tru, "d": [1]}"#, &["d"], (vec![], Some(6), None));
    check(
        r#"{"d": [1 2], "m": 1}"#,
        &["d"],
        (vec!["1"], Some(9), None),
    );
    check(
        r#"{"d": [1, 2], "m": 1e}"#,
        &["d"],
        (vec!["1", "2"], Some(21), None),
    );
    check(
        r#"{"d": [1, 2]} x"#,
        &["d"],
        (vec!["1", "2"], Some(14), None),
    );
    check(r#"{"d": [1, 2]"#, &["d"], (vec!["1", "2"], Some(12), None));
    check(
        r#"{"d": [1, 2"#,
        &["d"],
        (vec!["1", "2"], Some(11), Some(Found::Array)),
    );
}

#[test]
fn an_envelope_error_has_its_line_and_token() {
    let doc = b"{\"m\": 1,\n \"s\": \"\\u12x4\",\n \"d\": []}";
    let mut s = PathSplitter::new(&["d"], Limits::default());
    let e = s.feed_direct(doc, &mut Vec::new(), &mut Vec::<()>::new(), |_, _| None);
    assert_eq!(
        e,
        Err(Failure::Envelope(EnvelopeError {
            position: 16,
            line: 2,
            token: b"\\u12x4".to_vec()
        }))
    );
}

/// What a stream at `pointer` reports for `doc` fed as `pieces`: the first item the parser rejects, else the
/// splitter's error (an envelope error names its token when it is one, as the Elixir side does).
fn stream_error(doc: &[u8], pieces: &[&[u8]], pointer: &[&str]) -> Option<Reported> {
    let mut s = PathSplitter::new(pointer, Limits::default());
    let mut spans = Vec::new();
    let mut failure = None;
    for piece in pieces {
        if let Err(e) = s.feed_direct(piece, &mut spans, &mut Vec::<()>::new(), |_, _| None) {
            failure = Some(e);
            break;
        }
    }
    if failure.is_none() {
        match s.finish() {
            Ok((end, _)) => {
                spans.extend(end.last);
                failure = end.error.map(Failure::Array);
            }
            Err(e) => failure = Some(e),
        }
    }
    for span in &spans {
        let item = &doc[span.start as usize..span.end as usize];
        if let Err(e) = crate::parser::parse(item, &mut Nothing) {
            return Some(reported(item, e, span.start));
        }
    }
    failure.map(|f| match f {
        Failure::Array(e) => (e.position, None),
        Failure::Envelope(e) => (e.position, (e.token.len() > 1).then_some(e.token)),
        Failure::TooLong(at) => (at, None),
    })
}

#[test]
fn damaged_escapes_fail_as_the_parser_fails_on_the_whole_document_whatever_the_cuts() {
    for escape in ESCAPES {
        for doc in [
            format!(r#"{{"k":"{escape}","d":[1]}}"#),
            format!(r#"{{"{escape}":1,"d":[]}}"#),
            format!(r#"{{"d":[1,"{escape}"],"z":"{escape}"}}"#),
        ] {
            let doc = doc.as_bytes();
            let first = doc.iter().position(|&b| b == b'\\').unwrap();
            for len in first..=doc.len() {
                let doc = &doc[..len];
                let expected = crate::parser::parse(doc, &mut Nothing)
                    .err()
                    .map(|e| reported(doc, e, 0));
                let bytes: Vec<&[u8]> = doc.chunks(1).collect();
                let name = String::from_utf8_lossy(doc);
                assert_eq!(stream_error(doc, &bytes, &["d"]), expected, "{name} bytes");
                for cut in 0..=len {
                    let pieces = [&doc[..cut], &doc[cut..]];
                    assert_eq!(
                        stream_error(doc, &pieces, &["d"]),
                        expected,
                        "{name} cut at {cut}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_long_envelope_token_is_copied_once_however_small_the_chunks() {
    // Appended chunk by chunk: copying the whole carried token again at every chunk was quadratic (a 4 MB string
    // in 64 KiB chunks copied 125 MB, in 1 KiB chunks 8 GB).
    let doc = format!(r#"{{"meta":"{}","data":[1,2]}}"#, "a".repeat(4_000_000));
    for size in [65_536, 1_024, 7] {
        let mut s = PathSplitter::new(&["data"], Limits::default());
        let mut spans = Vec::new();
        let mut longest = 0;
        for piece in doc.as_bytes().chunks(size) {
            s.feed_direct(piece, &mut spans, &mut Vec::<()>::new(), |_, _| None)
                .unwrap();
            longest = longest.max(s.carried());
        }
        assert_eq!(s.finish().unwrap().1, Found::Array);
        assert_eq!(texts(doc.as_bytes(), &spans), ["1", "2"]);
        assert!(longest > 3_900_000, "the string was carried: {longest}");
        assert_eq!(s.carried(), 0, "and let go");
        assert!(
            s.copied() < doc.len() as u64 + 2 * size as u64,
            "{size}-byte chunks: {} bytes copied",
            s.copied()
        );
    }
}

/// What a splitter at `/d` with tokens of at most `max_token` bytes reports for `doc` fed as `pieces`.
fn bounded_result(pieces: &[&[u8]], max_token: usize) -> Result<Found, Failure> {
    let mut s = PathSplitter::bounded(&["d"], Limits::default(), max_token);
    for piece in pieces {
        s.feed_direct(piece, &mut Vec::new(), &mut Vec::<()>::new(), |_, _| None)?;
    }
    s.finish().map(|(_, found)| found)
}

#[test]
fn an_envelope_token_longer_than_max_token_fails_at_its_start_whatever_the_cuts() {
    // Each token is 10 bytes: 9 is too few, 10 enough, whether it is cut or not.
    for (doc, at) in [
        (r#"{"m":"abcdefgh","d":[1]}"#, 5),
        (r#"{"abcdefgh":1,"d":[1]}"#, 1),
        (r#"{"m":-123456789,"d":[1]}"#, 5),
        (r#"{"m":1.23456789,"d":[1]}"#, 5),
        (r#"{"d":[1],"m":"a\u00e9b"}"#, 13),
        (r#"{"d":[1],"m":{"n":[1e12345678]}}"#, 19),
    ] {
        let doc = doc.as_bytes();
        for cut in 0..=doc.len() {
            let pieces = [&doc[..cut], &doc[cut..]];
            let name = format!("{} cut at {cut}", String::from_utf8_lossy(doc));
            assert_eq!(
                bounded_result(&pieces, 9),
                Err(Failure::TooLong(at)),
                "{name}"
            );
            let fits = bounded_result(&pieces, 10);
            assert!(
                !matches!(fits, Err(Failure::TooLong(_))),
                "{name}: {fits:?}"
            );
        }
    }
}

#[test]
fn an_endless_envelope_token_fails_early_and_keeps_no_more_than_max_token_and_a_piece() {
    const MAX: usize = 10_000;
    const PIECE: usize = 4_096;
    // Endless strings, keys, numbers and literals before the array, around it and after it.
    for (head, fill, at) in [
        (r#"{"b":""#, b'a', 5),
        (r#"{""#, b'k', 1),
        (r#"{"b":1"#, b'2', 5),
        (r#"{"b":-0.5e"#, b'7', 5),
        (r#"{"b":tru"#, b'e', 5),
        (r#"{"m":{"x":[1,""#, b'a', 13),
        (r#"{"d":[1,2],"z":""#, b'a', 15),
        (r#"{"d":[1,2],""#, b'a', 11),
    ] {
        let mut s = PathSplitter::bounded(&["d"], Limits::default(), MAX);
        let (mut spans, mut values) = (Vec::new(), Vec::<()>::new());
        let fill = vec![fill; PIECE];
        let mut result = s.feed_direct(head.as_bytes(), &mut spans, &mut values, |_, _| None);
        let mut fed = 0;
        while result.is_ok() && fed < 100 {
            result = s.feed_direct(&fill, &mut spans, &mut values, |_, _| None);
            fed += 1;
            assert!(
                s.carried() <= MAX + PIECE,
                "{head}: {} carried",
                s.carried()
            );
        }
        assert_eq!(result, Err(Failure::TooLong(at)), "{head}");
        assert_eq!(fed, MAX / PIECE + 1, "{head}: stopped once past the limit");
        assert_eq!(
            s.finish(),
            Err(Failure::TooLong(at)),
            "{head}: and stays failed"
        );
    }
}
