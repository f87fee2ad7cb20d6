//! Keys the builder refuses are reported where Jason converts keys: after the pair's value and the `,` or `}`
//! that follows; an error before that point is reported instead.

use super::*;

fn refusing(doc: &[u8], key: &'static str) -> Result<Value, ParseError> {
    let mut t = Tree {
        reject_key: Some(key),
        ..Tree::default()
    };
    parse(doc, &mut t).map(|v| t.arena[v].clone())
}

/// `key`'s span (quotes excluded) at its first occurrence in `doc`.
fn span(doc: &[u8], key: &str) -> ParseError {
    let quoted = format!("\"{key}\"");
    let at = doc
        .windows(quoted.len())
        .position(|w| w == quoted.as_bytes())
        .unwrap();
    ParseError::Key {
        start: at + 1,
        end: at + 1 + key.len(),
    }
}

#[test]
fn a_refused_key_is_reported_after_its_value_and_the_next_comma_or_brace() {
    for doc in [
        &br#"{"no": 1}"#[..],
        br#"{"no": [1, {"x": 2}], "b": 3}"#,
        br#"{"no": 1, ]"#,
        br#"{"no": 1 , "#,
        br#"{"a": 1, "no": {"b": [true]} }"#,
        br#"[{"no": null}, 1,]"#,
    ] {
        assert_eq!(
            refusing(doc, "no"),
            Err(span(doc, "no")),
            "{}",
            String::from_utf8_lossy(doc)
        );
    }
}

#[test]
fn errors_before_the_pair_ends_come_first() {
    for (doc, error) in [
        (&br#"{"no": [1,}"#[..], ParseError::UnexpectedByte(10)),
        (br#"{"no": 1 ]"#, ParseError::UnexpectedByte(9)),
        (br#"{"no": tru}"#, ParseError::UnexpectedByte(7)),
        (br#"{"no": 1"#, ParseError::UnexpectedEnd(8)),
        (br#"{"no": "#, ParseError::UnexpectedEnd(7)),
        (br#"{"no" 1}"#, ParseError::UnexpectedByte(6)),
    ] {
        assert_eq!(
            refusing(doc, "no"),
            Err(error),
            "{}",
            String::from_utf8_lossy(doc)
        );
    }
}

#[test]
fn an_inner_refused_key_is_reported_before_the_outer_one() {
    // Jason converts the inner key at the inner `}`, before the outer key's `,`.
    let doc = br#"{"no": {"no": 1}, "x": 2}"#;
    assert_eq!(
        refusing(doc, "no"),
        Err(ParseError::Key { start: 9, end: 11 })
    );
}

#[test]
fn refused_keys_survive_pauses() {
    let doc = br#"{"a": [1, 2], "no": [3, {"b": [4, 5]}, 6], "c": 7}"#;
    for step in 0..doc.len() {
        let mut t = Tree {
            reject_key: Some("no"),
            ..Tree::default()
        };
        let mut stacks = Stacks::default();
        let mut pos = 0;
        let result = loop {
            let limit = pos + step;
            match parse_some(doc, &mut t, &mut stacks, &mut pos, limit) {
                Ok(Progress::Paused) => {}
                other => break other.map(|_| ()),
            }
        };
        assert_eq!(result, Err(span(doc, "no")), "step {step}");
    }
}
