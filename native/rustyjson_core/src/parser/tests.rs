//! The parser's tests: values, positions of errors, pauses and resumption, deferred builds.

use super::*;

#[test]
fn expected_keys_match_exactly_their_quoted_bytes() {
    for len in 0..=ExpectedKey::MAX_LEN {
        let key: Vec<u8> = (0..len).map(|i| b'a' + (i * 5 % 26) as u8).collect();
        let mut words = [0u8; 16];
        words[..len].copy_from_slice(&key);
        let lo = u64::from_le_bytes(words[..8].try_into().unwrap());
        let hi = u64::from_le_bytes(words[8..].try_into().unwrap());
        let expected = ExpectedKey::new(lo, hi, len);
        assert_eq!(expected.len(), len);
        let mut input = b"  \"".to_vec();
        input.extend(&key);
        input.extend(b"\": 1, \"padding\": true}");
        assert!(expected.at(&input, 2), "len {len}");
        assert!(!expected.at(&input, 1), "len {len} one byte early");
        // Any byte of the quoted key changed: no match; bytes after the closing quote do not matter.
        for i in 2..2 + len + 2 {
            let mut changed = input.clone();
            changed[i] ^= 0x20;
            assert!(!expected.at(&changed, 2), "len {len} byte {i}");
        }
        let mut after = input.clone();
        after[2 + len + 2] = b'?';
        assert!(expected.at(&after, 2), "len {len}");
        // A longer key with this one as its prefix.
        let mut longer = input[..2 + 1 + len].to_vec();
        longer.extend(b"x\":1,\"padding\":true}");
        assert!(!expected.at(&longer, 2), "len {len} prefix");
        // It needs 16 bytes of input after the opening quote: nearer the end the parser scans the key as
        // any other.
        let near_end = &input[..2 + len + 2];
        assert_eq!(expected.at(near_end, 2), len + 1 >= 16, "len {len}");
    }
}

#[test]
fn expected_keys_are_taken_in_place_of_scanned_ones() {
    // A builder that expects "id" before every key: objects whose keys are "id" take it, others scan.
    struct Expecting {
        found: Vec<(usize, usize)>,
        scanned: Vec<String>,
    }
    impl Builder for Expecting {
        type V = ();
        type K = u8;
        fn null(&mut self) {}
        fn boolean(&mut self, _: bool) {}
        fn int(&mut self, _: i64) {}
        fn big_int(&mut self, _: &[u8]) {}
        fn float(&mut self, _: &[u8], _: f64) {}
        fn string(&mut self, _: Str) {}
        fn key(&mut self, s: Str) -> Result<u8, ()> {
            self.scanned
                .push(String::from_utf8(s.bytes().to_vec()).unwrap());
            Ok(0)
        }
        fn expected_key(&mut self) -> Option<ExpectedKey> {
            Some(ExpectedKey::new(
                u64::from_le_bytes(*b"id\0\0\0\0\0\0"),
                0,
                2,
            ))
        }
        fn expected_key_found(&mut self, start: usize, end: usize) -> u8 {
            self.found.push((start, end));
            1
        }
        fn array(&mut self, _: &[()]) {}
        fn object(&mut self, _: &[u8], _: &[()]) {}
    }
    let input =
        br#"[{"id" : 1, "idx": 2, "i\u0064": 3}, {"id":4,"name":"id"}, {"ids":5}, {"id":6}]"#;
    let mut b = Expecting {
        found: Vec::new(),
        scanned: Vec::new(),
    };
    parse(input, &mut b).unwrap();
    let at = |s: &str| {
        input
            .windows(s.len())
            .position(|w| w == s.as_bytes())
            .unwrap()
    };
    assert_eq!(b.found.len(), 2);
    assert_eq!(b.found[0], (3, 5));
    assert_eq!(b.found[1], (at("{\"id\":4") + 2, at("{\"id\":4") + 4));
    assert_eq!(b.scanned, ["idx", "id", "name", "ids", "id"]);
    // Errors after an expected key keep their positions.
    assert!(matches!(
        parse(br#"{"id" 1,              "x":2}"#, &mut b),
        Err(ParseError::UnexpectedByte(6))
    ));
    assert!(matches!(
        parse(br#"{"id":,               "x":2}"#, &mut b),
        Err(ParseError::UnexpectedByte(6))
    ));
}

fn parse_str(s: &[u8]) -> Result<Value, ParseError> {
    let mut t = Tree::default();
    let i = parse(s, &mut t)?;
    Ok(t.arena[i].clone())
}

fn s(x: &str) -> Value {
    Value::Str(x.to_string(), true)
}

#[test]
fn parses_values() {
    use Value::*;
    assert_eq!(
        parse_str(b" [1, -2.5e3, \"a\\nb\", {\"k\": [true, false, null]}, {}, []] ").unwrap(),
        Array(vec![
            Int(1),
            Float(-2500.0),
            Str("a\nb".into(), false),
            Object(vec![(s("k"), Array(vec![Bool(true), Bool(false), Null]))]),
            Object(vec![]),
            Array(vec![]),
        ])
    );
    assert_eq!(
        parse_str(b"\"\\ud83d\\ude00\"").unwrap(),
        Str("😀".into(), false)
    );
    assert_eq!(
        parse_str(b"{\"a\":1,\"a\":2}").unwrap(),
        Object(vec![(s("a"), Int(1)), (s("a"), Int(2))])
    );
    assert_eq!(
        parse_str(b"[[[1]]]").unwrap(),
        Array(vec![Array(vec![Array(vec![Int(1)])])])
    );
}

/// Short inputs and long ones are parsed by two instances of the parse loop (`SHORT_INPUT`): the same document
/// just under and just over the limit, and its errors, come out the same.
#[test]
fn short_and_long_inputs_parse_alike() {
    let item = br#"{"k": [1, -2.5, "a\nb", true, null], "\u00e9": {"x": "y"}}"#;
    for target in [
        SHORT_INPUT - 200,
        SHORT_INPUT - 1,
        SHORT_INPUT,
        SHORT_INPUT + 1,
        SHORT_INPUT + 200,
    ] {
        let mut doc = b"[".to_vec();
        doc.extend(item);
        // Items while one more and the closing bracket fit, then spaces up to the target length.
        while doc.len() + 1 + item.len() < target {
            doc.push(b',');
            doc.extend(item);
        }
        doc.resize(target - 1, b' ');
        doc.push(b']');
        assert_eq!(doc.len(), target);
        let Value::Array(items) = parse_str(&doc).unwrap() else {
            panic!("an array")
        };
        let one = parse_str(item).unwrap();
        assert!(
            items.len() > 10 && items.iter().all(|v| *v == one),
            "{target} bytes"
        );
        // An error near the end, at its position.
        let mut bad = doc.clone();
        bad[target - 3] = b'x';
        assert_eq!(
            parse_str(&bad),
            Err(ParseError::UnexpectedByte(target - 3)),
            "{target} bytes"
        );
    }
}

#[test]
fn numbers() {
    use Value::*;
    assert_eq!(parse_str(b"-0").unwrap(), Int(0));
    assert_eq!(parse_str(b"-0.0").unwrap(), Float(-0.0));
    assert!(matches!(parse_str(b"-0.0").unwrap(), Float(f) if f.is_sign_negative()));
    assert_eq!(parse_str(b"9223372036854775807").unwrap(), Int(i64::MAX));
    assert_eq!(parse_str(b"-9223372036854775808").unwrap(), Int(i64::MIN));
    assert_eq!(
        parse_str(b"9223372036854775808").unwrap(),
        Big("9223372036854775808".into())
    );
    assert_eq!(
        parse_str(b"123456789012345678").unwrap(),
        Int(123456789012345678)
    );
    assert_eq!(parse_str(b"1E2").unwrap(), Float(100.0));
    assert!(matches!(parse_str(b"-0e-0").unwrap(), Float(f) if f == 0.0 && f.is_sign_positive()));
    assert!(matches!(parse_str(b"-0.0e1").unwrap(), Float(f) if f == 0.0 && f.is_sign_negative()));
    assert_eq!(parse_str(b"0.1").unwrap(), Float(0.1));
    assert_eq!(
        parse_str(b"1.7976931348623157e308").unwrap(),
        Float(f64::MAX)
    );
    assert_eq!(parse_str(b"5e-324").unwrap(), Float(5e-324));
    for text in [
        "-0.0636837780476",
        "0.000000001234567890123",
        "0.0000000012345678901234567",
        "2.34647130966",
        "-65.613616999999977",
        "12345678.12345678",
        "0.1234567812345678e-5",
        "100000000.000000001",
        "1.00000000000000000000000000001",
    ] {
        let expected: f64 = text.parse().unwrap();
        match parse_str(text.as_bytes()).unwrap() {
            Float(v) => assert_eq!(v.to_bits(), expected.to_bits(), "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    let long = "9".repeat(1024);
    assert_eq!(parse_str(long.as_bytes()).unwrap(), Big(long.clone()));
    let too_long = "9".repeat(1025);
    assert_eq!(
        parse_str(too_long.as_bytes()),
        Err(ParseError::Token {
            start: 0,
            end: 1025
        })
    );
}

#[test]
fn digit_runs_of_every_length_anywhere() {
    use Value::*;
    // Integer and fraction runs of 1-24 digits, at the end of the input (where fewer than 8 bytes remain)
    // and inside arrays of numbers with every separator, read the same as the standard library reads them.
    for int_len in 1..=24 {
        for frac_len in 0..=24 {
            let int: String = (0..int_len)
                .map(|i| (b'1' + (i * 7 % 9) as u8) as char)
                .collect();
            let frac: String = (0..frac_len)
                .map(|i| (b'0' + (i * 3 % 10) as u8) as char)
                .collect();
            let text = if frac_len == 0 {
                int.clone()
            } else {
                format!("{int}.{frac}")
            };
            let expected = |t: &str| match t.parse::<i64>() {
                Ok(i) if frac_len == 0 => Int(i),
                _ if frac_len == 0 => Big(t.to_string()),
                _ => Float(t.parse::<f64>().unwrap()),
            };
            assert_eq!(
                parse_str(text.as_bytes()).unwrap(),
                expected(&text),
                "{text}"
            );
            for sep in [",", ", ", " ,", ",\n  "] {
                let doc = format!("[{text}{sep}-{text}{sep}{text}]");
                let neg = format!("-{text}");
                assert_eq!(
                    parse_str(doc.as_bytes()).unwrap(),
                    Array(vec![expected(&text), expected(&neg), expected(&text)]),
                    "{doc}"
                );
            }
        }
    }
    for (doc, err) in [
        (&b"[1, ]"[..], ParseError::UnexpectedByte(4)),
        (b"[1,,2]", ParseError::UnexpectedByte(3)),
        (b"[1, 2 3]", ParseError::UnexpectedByte(6)),
        (b"[1,2", ParseError::UnexpectedEnd(4)),
        (b"[1, -]", ParseError::UnexpectedByte(5)),
        (b"[1, 01]", ParseError::UnexpectedByte(5)),
    ] {
        assert_eq!(parse_str(doc), Err(err), "{:?}", std::str::from_utf8(doc));
    }
}

#[test]
fn errors_have_jason_positions() {
    use ParseError::*;
    let cases: &[(&[u8], ParseError)] = &[
        (b"[1,]", UnexpectedByte(3)),
        (b"[1", UnexpectedEnd(2)),
        (b"01", UnexpectedByte(1)),
        (b"-", UnexpectedEnd(1)),
        (b"1.e5", UnexpectedByte(2)),
        (b"1e400", Token { start: 0, end: 5 }),
        (b"1.7976931348623159e308", Token { start: 0, end: 22 }),
        (b"tru", UnexpectedByte(0)),
        (b"nulll", UnexpectedByte(4)),
        (b"\"\\ud800\"", UnexpectedByte(7)),
        (b"\"\\udc00\"", Token { start: 1, end: 7 }),
        (b"\"\\ud800\\u0041\"", Token { start: 1, end: 13 }),
        (b"\"\\u12\"", UnexpectedByte(1)),
        (b"\"\\u12G4\"", Token { start: 1, end: 7 }),
        (b"\"\\x\"", UnexpectedByte(1)),
        (b"\"\\k\"", UnexpectedByte(2)),
        (b"\"\\ud8aa\\udcxx\"", Token { start: 7, end: 13 }),
        (b"\"\\", UnexpectedByte(1)),
        (b"\"abc", UnexpectedEnd(4)),
        (b"\"\xC3", UnexpectedByte(1)),
        (b"\"\xF1\x8F", UnexpectedByte(1)),
        (b"[\"a\"\x00]", UnexpectedByte(4)),
        (b"[\"a\x00\"]", UnexpectedByte(3)),
        (b"\"\xED\xA0\x80\"", UnexpectedByte(1)),
        (b"\"\xC0\x80\"", UnexpectedByte(1)),
        (b"{\"a\" 1}", UnexpectedByte(5)),
        (b"", UnexpectedEnd(0)),
    ];
    for (input, expected) in cases {
        assert_eq!(
            &parse_str(input).unwrap_err(),
            expected,
            "{}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn deferred_builds_pause_before_the_bracket_and_resume_to_the_same_value() {
    let n = LARGE_CONTAINER;
    let items = (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let pairs = (0..n)
        .map(|i| format!("\"k{i}\":{i}"))
        .collect::<Vec<_>>()
        .join(",");
    let small = "[1,2]";
    let doc = format!("[[{items}],{{{pairs}}},{small},{{\"x\":[{items}]}}]");
    let expected = parse_str(doc.as_bytes()).unwrap();
    let mut t = Tree {
        defer_large: true,
        ..Tree::default()
    };
    let mut stacks = Stacks::default();
    let mut pos = 0;
    let mut pauses = Vec::new();
    let v = loop {
        match parse_some(doc.as_bytes(), &mut t, &mut stacks, &mut pos, usize::MAX).unwrap() {
            Progress::Done(v) => break v,
            Progress::Paused => pauses.push(doc.as_bytes()[pos]),
        }
    };
    assert_eq!(t.arena[v], expected);
    // Each large container once, before its closing bracket; the small ones and the outer array not at all.
    assert_eq!(pauses, b"]}]");
    assert_eq!(t.deferred, [(n, false), (n, true), (n, false)]);
}

#[test]
fn paused_parses_resume_to_the_same_value() {
    let doc: &[u8] = b" {\"a\": [1, 2.5, \"x\\ny\", {\"b\": [], \"c\": {}}, [[3], [4, 5]]], \"d\": null, \"e\": [true, false]} ";
    let expected = parse_str(doc).unwrap();
    for step in 0..doc.len() {
        let mut t = Tree::default();
        let mut stacks = Stacks::default();
        let mut pos = 0;
        let mut pauses = 0;
        let v = loop {
            let limit = pos + step;
            match parse_some(doc, &mut t, &mut stacks, &mut pos, limit).unwrap() {
                Progress::Done(v) => break v,
                Progress::Paused => pauses += 1,
            }
            assert!(pauses < doc.len(), "no progress");
        };
        assert_eq!(t.arena[v], expected, "step {step}");
        if step == 0 {
            assert!(pauses >= 8, "{pauses}");
        }
    }
    // Runs of brackets with no comma pause too (deep single-element nesting).
    let deep = "{\"a\":[".repeat(1000) + "1" + &"]}".repeat(1000);
    let mut t = Tree::default();
    let mut stacks = Stacks::default();
    let (mut pos, mut pauses) = (0, 0);
    let v = loop {
        let limit = pos;
        match parse_some(deep.as_bytes(), &mut t, &mut stacks, &mut pos, limit).unwrap() {
            Progress::Done(v) => break v,
            Progress::Paused => pauses += 1,
        }
    };
    assert_eq!(t.arena[v], parse_str(deep.as_bytes()).unwrap());
    assert!(pauses >= 4000, "{pauses}");
    // Errors after a pause keep their positions.
    let mut stacks = Stacks::default();
    let mut pos = 0;
    let mut t = Tree::default();
    let bad = b"[1, 2, 3, x]";
    let err = loop {
        let limit = pos;
        match parse_some(bad, &mut t, &mut stacks, &mut pos, limit) {
            Ok(Progress::Paused) => {}
            other => break other,
        }
    };
    assert_eq!(err, Err(ParseError::UnexpectedByte(10)));
}

#[test]
fn builder_can_refuse_a_key() {
    let mut t = Tree {
        reject_key: Some("no"),
        ..Default::default()
    };
    assert_eq!(
        parse(b"{\"ok\": {\"no\": 1}}", &mut t),
        Err(ParseError::Key { start: 9, end: 11 })
    );
}

/// Computes each value's nesting depth: cheap for very deep documents.
struct Depth;

impl Builder for Depth {
    type V = usize;
    type K = ();
    fn null(&mut self) -> usize {
        0
    }
    fn boolean(&mut self, _: bool) -> usize {
        0
    }
    fn int(&mut self, _: i64) -> usize {
        0
    }
    fn big_int(&mut self, _: &[u8]) -> usize {
        0
    }
    fn float(&mut self, _: &[u8], _: f64) -> usize {
        0
    }
    fn string(&mut self, _: Str) -> usize {
        0
    }
    fn key(&mut self, _: Str) -> Result<(), ()> {
        Ok(())
    }
    fn array(&mut self, items: &[usize]) -> usize {
        1 + items.iter().copied().max().unwrap_or(0)
    }
    fn object(&mut self, _: &[()], values: &[usize]) -> usize {
        1 + values.iter().copied().max().unwrap_or(0)
    }
}

#[test]
fn json_test_suite() {
    // ../shared/data/JSONTestSuite beside the repository, when present: y_ accepted, n_ rejected, i_ answered.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/JSONTestSuite/test_parsing");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut counts = [0usize; 3];
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let data = std::fs::read(&path).unwrap();
        let result = parse(&data, &mut Depth);
        if name.starts_with("y_") {
            assert!(result.is_ok(), "{name}: {result:?}");
            counts[0] += 1;
        } else if name.starts_with("n_") {
            assert!(result.is_err(), "{name}");
            counts[1] += 1;
        } else {
            counts[2] += 1;
        }
    }
    assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
}

#[test]
fn mutated_documents_never_panic() {
    // Valid documents with bytes replaced, dropped or cut: the parser answers without panicking, and an
    // error position is always within the input.
    let seeds: &[&[u8]] = &[
        b"{\"a\": [1, -2.5e3, \"x\\u00e9\\ud83d\\ude00\", true, false, null], \"b\": {\"c\": \"\xc3\xa9\"}}",
        b"[0.000123, 123456789012345678901234567890, -0, 1E+2, \"\\\"\\/\\b\\f\\n\\r\\t\"]",
    ];
    let specials = b"\"\\{}[]:,.-+eE0123456789 \t\n\x00\x1f\x7f\x80\xbf\xc3\xed\xf0\xf4\xffu";
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for _ in 0..50_000 {
        let mut doc = seeds[next(seeds.len())].to_vec();
        for _ in 0..1 + next(3) {
            let at = next(doc.len());
            match next(3) {
                0 => doc[at] = specials[next(specials.len())],
                1 => {
                    doc.remove(at);
                }
                _ => doc.truncate(at),
            }
            if doc.is_empty() {
                break;
            }
        }
        let mut t = Tree::default();
        match parse(&doc, &mut t) {
            Ok(_) => {}
            Err(ParseError::UnexpectedByte(p)) => assert!(p < doc.len()),
            Err(ParseError::UnexpectedEnd(p)) => assert_eq!(p, doc.len()),
            Err(ParseError::Token { start, end }) => assert!(start < end && end <= doc.len()),
            Err(
                ParseError::Key { .. }
                | ParseError::DuplicateKey { .. }
                | ParseError::LongToken(_)
                | ParseError::Memory { .. }
                | ParseError::TooLarge { .. },
            ) => {
                unreachable!()
            }
        }
    }
}

#[test]
fn deep_nesting_does_not_recurse() {
    let depth = 1_000_000;
    let doc = "[".repeat(depth) + &"]".repeat(depth);
    assert_eq!(parse(doc.as_bytes(), &mut Depth), Ok(depth));
    let mut doc = "{\"a\":".repeat(depth);
    doc.push('1');
    doc.push_str(&"}".repeat(depth));
    assert_eq!(parse(doc.as_bytes(), &mut Depth), Ok(depth));
    let unclosed = "[".repeat(depth);
    assert_eq!(
        parse(unclosed.as_bytes(), &mut Depth),
        Err(ParseError::UnexpectedEnd(depth))
    );
}

#[test]
fn a_slice_pauses_after_its_frame_stack_takes_a_new_chunk() {
    use super::chunked_stack::CHUNK;
    // Pages a new chunk touches are work the byte limit does not see: the slice ends at the next boundary, right
    // after the bracket that took the chunk, however far its limit is. Without a limit nothing pauses.
    let depth = 3 * CHUNK + 10;
    let doc = "[".repeat(depth) + &"]".repeat(depth);
    let mut stacks = Stacks::default();
    let mut pos = 0;
    let mut pauses = Vec::new();
    let v = loop {
        match parse_some(doc.as_bytes(), &mut Depth, &mut stacks, &mut pos, doc.len()).unwrap() {
            Progress::Done(v) => break v,
            Progress::Paused => pauses.push(pos),
        }
    };
    assert_eq!(pauses, [CHUNK + 1, 2 * CHUNK + 1, 3 * CHUNK + 1]);
    assert_eq!(v, depth);
    assert_eq!(parse(doc.as_bytes(), &mut Depth), Ok(depth));
}

mod limits;
pub(super) mod tree;

use tree::{Tree, Value};
mod long_strings;
mod refused_keys;

/// A string's value or first fault, a byte at a time: what the block scan of escaped strings must agree with.
fn string_bytewise(doc: &[u8]) -> Result<Vec<u8>, ParseError> {
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        match doc.get(i) {
            None => return Err(ParseError::UnexpectedEnd(doc.len())),
            Some(b'"') => return Ok(out),
            Some(b'\\') => {
                let (end, cp) = strings::escape_at(doc, i)?;
                out.extend(char::from_u32(cp).unwrap().to_string().as_bytes());
                i = end;
            }
            Some(&b) if b < 0x20 => return Err(ParseError::UnexpectedByte(i)),
            Some(&b) if b < 0x80 => {
                out.push(b);
                i += 1;
            }
            Some(_) => {
                let (_, len) = utf8::decode_utf8(doc, i).ok_or(ParseError::UnexpectedByte(i))?;
                out.extend(&doc[i..i + len]);
                i += len;
            }
        }
    }
}

#[test]
fn escaped_strings_agree_with_a_bytewise_scan() {
    // Escapes, multi-byte characters, bad escapes, control bytes and invalid UTF-8 close together, across the
    // 16-byte blocks, ending the input or followed by more.
    let pieces: [&[u8]; 16] = [
        b"\\n",
        b"\\\"",
        b"\\\\",
        b"\\u00e9",
        b"\\ud83d\\ude00",
        b"\\q",
        b"\\u12",
        b"\\ud800x",
        b"\x01",
        "é".as_bytes(),
        "日本".as_bytes(),
        "😀".as_bytes(),
        b"\xE6\x97",
        b"\xFF",
        b"abc",
        b"\"",
    ];
    let mut state = 7u32;
    let mut next = |m: u32| {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        (state >> 16) % m
    };
    for _ in 0..30_000 {
        let mut doc = b"\"\\t".to_vec();
        for _ in 0..next(12) {
            doc.extend(std::iter::repeat_n(b'a', next(20) as usize));
            doc.extend(pieces[next(16) as usize]);
        }
        if next(3) > 0 {
            doc.extend(b"\" ");
        }
        let expected = string_bytewise(&doc);
        let got = match parse_str(&doc) {
            Ok(Value::Str(text, _)) => Ok(text.into_bytes()),
            Ok(other) => panic!("{other:?}"),
            // A parsed string followed by more than whitespace: only the string is compared.
            Err(ParseError::UnexpectedByte(at)) if expected.is_ok() && doc[at - 1] == b'"' => {
                expected.clone()
            }
            Err(e) => Err(e),
        };
        assert_eq!(got, expected, "{}", String::from_utf8_lossy(&doc));
    }
}
