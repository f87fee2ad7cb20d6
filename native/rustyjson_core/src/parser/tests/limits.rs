//! The limits for untrusted input: nesting depth, integer length, repeated keys.

use super::*;

fn parse_limited(input: &[u8], limits: Limits) -> Result<Value, ParseError> {
    let mut t = Tree {
        limits,
        ..Tree::default()
    };
    let i = parse(input, &mut t)?;
    Ok(t.arena[i].clone())
}

fn depth(max_depth: usize) -> Limits {
    Limits {
        max_depth,
        ..Limits::default()
    }
}

fn integer_bytes(integer_bytes: usize) -> Limits {
    Limits {
        integer_bytes,
        ..Limits::default()
    }
}

fn duplicates_refused() -> Limits {
    Limits {
        duplicate_keys_error: true,
        ..Limits::default()
    }
}

/// `d` levels of alternating arrays and objects around `1`, with the position of each opening bracket.
fn nested(d: usize) -> (Vec<u8>, Vec<usize>) {
    let (mut text, mut close, mut opens) = (Vec::new(), Vec::new(), Vec::new());
    for level in 0..d {
        opens.push(text.len());
        if level % 2 == 0 {
            text.extend(b"[ ");
            close.push(b']');
        } else {
            text.extend(b"{\"k\": ");
            close.push(b'}');
        }
    }
    text.push(b'1');
    text.extend(close.iter().rev());
    (text, opens)
}

#[test]
fn depth_counts_arrays_and_objects_and_fails_at_the_bracket_past_the_limit() {
    for max in 0..6 {
        for d in 0..8 {
            let (text, opens) = nested(d);
            let got = parse_limited(&text, depth(max));
            if d <= max {
                assert!(got.is_ok(), "depth {d} under max {max}: {got:?}");
            } else {
                assert_eq!(
                    got,
                    Err(ParseError::UnexpectedByte(opens[max])),
                    "depth {d}, max {max}"
                );
            }
        }
    }
}

#[test]
fn empty_containers_have_depth_one_and_scalars_zero() {
    for text in [&b"[]"[..], b"{}", b" [ ] "] {
        assert!(parse_limited(text, depth(1)).is_ok());
        let at = text.iter().position(|&c| c == b'[' || c == b'{').unwrap();
        assert_eq!(
            parse_limited(text, depth(0)),
            Err(ParseError::UnexpectedByte(at))
        );
    }
    for text in [&b"1"[..], b"\"s\"", b"null"] {
        assert!(parse_limited(text, depth(0)).is_ok());
    }
    // Siblings do not add up: `[[], []]` is depth 2.
    assert!(parse_limited(b"[[], {}, [1]]", depth(2)).is_ok());
    assert_eq!(
        parse_limited(b"[[], [[]]]", depth(2)),
        Err(ParseError::UnexpectedByte(6))
    );
}

#[test]
fn deep_documents_are_limited_exactly() {
    // (The test builder's values are recursive, so not a million deep here.)
    let d = 2_000;
    let text = [vec![b'['; d], vec![b']'; d]].concat();
    assert!(parse_limited(&text, depth(d)).is_ok());
    assert_eq!(
        parse_limited(&text, depth(d - 1)),
        Err(ParseError::UnexpectedByte(d - 1))
    );
}

#[test]
fn integer_limit_counts_the_token_bytes_minus_sign_included() {
    for limit in [2usize, 5, 18, 19, 20, 40, 1024] {
        let digits = |n: usize| "7".repeat(n);
        for text in [digits(limit), format!("-{}", digits(limit - 1))] {
            let got = parse_limited(text.as_bytes(), integer_bytes(limit));
            assert!(got.is_ok(), "{text} under {limit}: {got:?}");
        }
        for (text, start) in [(digits(limit + 1), 0), (format!("-{}", digits(limit)), 0)] {
            // Alone and inside an array after another number (the array's number loop).
            let end = text.len();
            assert_eq!(
                parse_limited(text.as_bytes(), integer_bytes(limit)),
                Err(ParseError::Token { start, end }),
                "{text} over {limit}"
            );
            let in_array = format!("[1,{text}]");
            assert_eq!(
                parse_limited(in_array.as_bytes(), integer_bytes(limit)),
                Err(ParseError::Token {
                    start: 3,
                    end: 3 + end
                }),
                "{in_array} over {limit}"
            );
        }
    }
}

#[test]
fn integer_limit_reads_small_integers_right_and_spares_zero_and_floats() {
    // Under a small limit integers leave the fast path; their values stay right.
    assert_eq!(parse_limited(b"-42", integer_bytes(3)), Ok(Value::Int(-42)));
    assert_eq!(
        parse_limited(b"-9223372036854775808", integer_bytes(20)),
        Ok(Value::Int(i64::MIN))
    );
    assert_eq!(
        parse_limited(b"9223372036854775808", integer_bytes(19)),
        Ok(Value::Big("9223372036854775808".into()))
    );
    // Jason reads `0` and `-0` apart, with no check.
    assert_eq!(parse_limited(b"-0", integer_bytes(0)), Ok(Value::Int(0)));
    assert_eq!(parse_limited(b"0", integer_bytes(0)), Ok(Value::Int(0)));
    assert_eq!(
        parse_limited(b"1", integer_bytes(0)),
        Err(ParseError::Token { start: 0, end: 1 })
    );
    assert!(parse_limited(b"123456.5e3", integer_bytes(2)).is_ok());
}

#[test]
fn repeated_keys_fail_at_the_later_key_with_its_text() {
    use ParseError::DuplicateKey;
    let cases: &[(&[u8], ParseError)] = &[
        (b"{\"a\":1,\"a\":2}", DuplicateKey { start: 7, end: 10 }),
        (
            b"{\"a\":1, \"b\":2,  \"a\" : 3}",
            DuplicateKey { start: 16, end: 19 },
        ),
        // The same key escaped differently is the same key.
        (
            b"{\"ab\":1,\"a\\u0062\":2}",
            DuplicateKey { start: 8, end: 17 },
        ),
        (
            b"{\"\\\"\":1,\"\\\"\":2}",
            DuplicateKey { start: 8, end: 12 },
        ),
        // The first object to close with a repeat: the inner one.
        (
            b"{\"a\":1,\"a\":{\"b\":1,\"b\":2}}",
            DuplicateKey { start: 18, end: 21 },
        ),
        // Of several repeats, the first to repeat.
        (
            b"{\"x\":1,\"y\":2,\"y\":3,\"x\":4}",
            DuplicateKey { start: 13, end: 16 },
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(
            &parse_limited(input, duplicates_refused()).unwrap_err(),
            expected,
            "{}",
            String::from_utf8_lossy(input)
        );
        // Allowed by default: every pair kept for the builder.
        assert!(parse_limited(input, Limits::default()).is_ok());
    }
}

#[test]
fn distinct_keys_pass_with_their_starts() {
    let text = b"{\"a\": {\"b\": 1, \"c\": []}, \"bb\": [{\"a\": 2}], \"b\": 3}";
    let mut t = Tree {
        limits: duplicates_refused(),
        ..Tree::default()
    };
    let i = parse(text, &mut t).unwrap();
    assert_eq!(t.arena[i], parse_str(text).unwrap());
    // Inner objects close first.
    assert_eq!(t.starts, vec![vec![7, 15], vec![33], vec![1, 25, 43]]);
}

#[test]
fn repeated_keys_are_found_across_pauses() {
    // One key per pause: the keys' starts travel in the stacks.
    let mut text = b"{".to_vec();
    for i in 0..40 {
        text.extend(format!("\"k{i}\": [{i}], ").as_bytes());
    }
    let repeat = text.len();
    text.extend(b"\"k3\": 0}");
    let mut t = Tree {
        limits: duplicates_refused(),
        ..Tree::default()
    };
    let mut stacks = Stacks::default();
    let mut pos = 0;
    let result = loop {
        let limit = pos;
        match parse_some(&text, &mut t, &mut stacks, &mut pos, limit) {
            Ok(Progress::Paused) => continue,
            other => break other,
        }
    };
    assert_eq!(
        result,
        Err(ParseError::DuplicateKey {
            start: repeat,
            end: repeat + 4
        })
    );
}
