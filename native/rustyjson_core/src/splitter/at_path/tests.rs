//! The path splitter against the whole document: the same items and errors whatever the cuts.

use super::*;

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
