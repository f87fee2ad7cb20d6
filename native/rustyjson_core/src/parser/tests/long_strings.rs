//! Strings longer than the builder's scan limit: the parse pauses before them and a call without the limit takes
//! them whole, to the same value or error as one uninterrupted parse.

use super::*;

/// Parses `doc` as a NIF on a normal scheduler does: slices of `step` bytes with strings scanned at most `scan`
/// bytes past the slice, each deferred string taken by one call without that limit (a dirty slice). Returns the
/// result and how many strings were deferred.
fn parse_deferring(doc: &[u8], step: usize, scan: usize) -> (Result<Value, ParseError>, usize) {
    let mut t = Tree {
        string_scan: Some(scan),
        ..Tree::default()
    };
    let mut stacks = Stacks::default();
    let mut pos = 0;
    let mut rounds = 0;
    let result = loop {
        let deferred = t.strings_deferred;
        let limit = pos + step;
        match parse_some(doc, &mut t, &mut stacks, &mut pos, limit) {
            Ok(Progress::Done(v)) => break Ok(t.arena[v].clone()),
            Err(e) => break Err(e),
            Ok(Progress::Paused) if t.strings_deferred > deferred => {
                assert_eq!(doc[pos], b'"', "paused before the string's quote");
                t.string_scan = None;
                let limit = pos;
                match parse_some(doc, &mut t, &mut stacks, &mut pos, limit) {
                    Ok(Progress::Done(v)) => break Ok(t.arena[v].clone()),
                    Err(e) => break Err(e),
                    Ok(Progress::Paused) => {}
                }
                t.string_scan = Some(scan);
            }
            Ok(Progress::Paused) => {}
        }
        rounds += 1;
        assert!(rounds <= 4 * doc.len() + 4, "no progress");
    };
    (result, t.strings_deferred)
}

fn docs() -> Vec<Vec<u8>> {
    let plain = "p".repeat(300);
    let escaped = "ab\\ncd\\u00e9\\uD83D\\uDE00".repeat(20);
    let multibyte = "é😀x".repeat(60);
    let mut docs: Vec<Vec<u8>> = [
        format!("\"{plain}\""),
        format!("\"{escaped}\""),
        format!("[\"{plain}\", \"{escaped}\", \"{multibyte}\", 1]"),
        format!("{{\"{escaped}\": {{\"{plain}\": \"{multibyte}\"}}, \"k\": [\"{escaped}\"]}}"),
        format!("{{\"a\": 1, \"{multibyte}\": 2, \"{plain}\": \"{plain}\"}}"),
    ]
    .iter()
    .map(|d| d.as_bytes().to_vec())
    .collect();
    // Errors inside and after long strings: a control byte, a bad escape, bad UTF-8, a truncated string.
    let mut bad = format!("[\"{escaped}").into_bytes();
    bad.push(0x01);
    bad.extend(b"\"]");
    docs.push(bad);
    docs.push(format!("[\"{plain}\\x\"]").into_bytes());
    let mut bad_utf8 = format!("{{\"{multibyte}").into_bytes();
    bad_utf8.extend([0xE9, b'"', b':', b'1', b'}']);
    docs.push(bad_utf8);
    docs.push(format!("[\"{escaped}").into_bytes());
    docs.push(format!("{{\"{plain}\": [1,]}}").into_bytes());
    docs
}

#[test]
fn long_strings_resume_to_the_same_value_or_error() {
    for doc in docs() {
        let mut t = Tree::default();
        let whole = parse(&doc, &mut t).map(|v| t.arena[v].clone());
        for scan in [0, 1, 2, 5, 7, 16, 33, 100] {
            for step in [0, 1, 3, 64] {
                let (result, deferred) = parse_deferring(&doc, step, scan);
                assert_eq!(
                    result,
                    whole,
                    "scan {scan} step {step}: {}",
                    String::from_utf8_lossy(&doc)
                );
                if scan < 100 && whole.is_ok() {
                    assert!(deferred > 0, "scan {scan} step {step}: no string deferred");
                }
            }
        }
    }
}

#[test]
fn strings_within_the_scan_limit_are_not_deferred() {
    let doc = b"[\"short\", {\"key\": \"a\\nb\"}, \"\\u00e9\"]";
    let (result, deferred) = parse_deferring(doc, 0, 64);
    assert!(result.is_ok());
    assert_eq!(deferred, 0);
    // Without a limit (a dirty slice, or the builder's default) nothing is deferred however long.
    let long = format!("[\"{}\"]", "x\\n".repeat(10_000));
    let mut t = Tree::default();
    let mut stacks = Stacks::default();
    let mut pos = 0;
    assert!(matches!(
        parse_some(long.as_bytes(), &mut t, &mut stacks, &mut pos, usize::MAX),
        Ok(Progress::Done(_))
    ));
    assert_eq!(t.strings_deferred, 0);
}

#[test]
fn string_at_unescapes_the_token_at_a_quote() {
    let doc = br#"{"a\nb": "\u00e9\uD83D\uDE00", "plain": 1}"#;
    assert_eq!(string_at(doc, 1, true).unwrap(), b"a\nb");
    assert_eq!(string_at(doc, 9, true).unwrap(), "é😀".as_bytes());
    let plain = doc.windows(7).position(|w| w == b"\"plain\"").unwrap();
    assert_eq!(string_at(doc, plain, true).unwrap(), b"plain");
    assert_eq!(string_at(doc, 0, true), None);
    assert_eq!(string_at(b"\"open", 0, true), None);
    // Raw bytes (`validate_strings: false`) are read back as the parse took them.
    let raw = b"{\"abc\xFFdef\": 1}";
    assert_eq!(string_at(raw, 1, true), None);
    assert_eq!(string_at(raw, 1, false).unwrap(), b"abc\xFFdef");
}

#[test]
fn long_numbers_are_deferred_like_long_strings() {
    let digits = "7".repeat(LONG_NUMBER + 1);
    let doc =
        format!("[1, {digits}, -{digits}, {{\"a\": {digits}}}, 0.{digits}, 1.{digits}e-5, 2]");
    let limits = Limits {
        integer_bytes: 2 * LONG_NUMBER,
        ..Limits::default()
    };
    let mut t = Tree {
        limits,
        ..Tree::default()
    };
    let whole = parse(doc.as_bytes(), &mut t).map(|v| t.arena[v].clone());
    assert!(whole.is_ok());
    let mut t = Tree {
        limits,
        string_scan: Some(1 << 20),
        ..Tree::default()
    };
    let (mut stacks, mut pos, mut pauses) = (Stacks::default(), 0, Vec::new());
    let result = loop {
        let deferred = t.strings_deferred;
        let limit = pos + 4;
        match parse_some(doc.as_bytes(), &mut t, &mut stacks, &mut pos, limit).unwrap() {
            Progress::Done(v) => break Ok(t.arena[v].clone()),
            Progress::Paused if t.strings_deferred > deferred => {
                pauses.push(pos);
                t.string_scan = None;
                let limit = pos;
                let done = parse_some(doc.as_bytes(), &mut t, &mut stacks, &mut pos, limit);
                if let Progress::Done(v) = done.unwrap() {
                    break Ok(t.arena[v].clone());
                }
                t.string_scan = Some(1 << 20);
            }
            Progress::Paused => {}
        }
    };
    assert_eq!(result, whole);
    // Before each long number (the minus sign included); the short ones are not deferred.
    let starts: Vec<usize> = doc
        .match_indices(&digits)
        .map(|(i, _)| match doc.as_bytes()[i - 2..i] {
            [b'0' | b'1', b'.'] => i - 2,
            [_, b'-'] => i - 1,
            _ => i,
        })
        .collect();
    assert_eq!(pauses, starts);
}
