use super::*;

const ALL_MODES: [Mode; 4] = [Mode::Json, Mode::JavaScript, Mode::Html, Mode::Unicode];

fn opts(mode: Mode, sort: bool, strict: bool) -> Options {
    Options { mode, sort, strict }
}

fn rw(input: &str, options: Options) -> String {
    let out = rewrite(input.as_bytes(), options).unwrap_or_else(|e| panic!("{input:?}: {e:?}"));
    String::from_utf8(out).unwrap()
}

fn plain(input: &str) -> String {
    rw(input, opts(Mode::Json, false, false))
}

/// A string as the core's writer writes it in `mode`.
fn written(s: &str, mode: Mode) -> String {
    let mut out = Buffer::default();
    escape::write_string(&mut out, s.as_bytes(), mode).unwrap();
    String::from_utf8(out.into_vec()).unwrap()
}

#[test]
fn strings_and_keys_are_written_again_in_the_mode() {
    // Elixir's JSON.Encoder writes a string raw in its own (`:json`) escaping whatever the encoder asks.
    let s = "é\u{2028}</script>\u{1F600}\"\\\n\u{1}";
    let input = format!(
        r#"{{"k":{},{}:[{}]}}"#,
        written(s, Mode::Json),
        written(s, Mode::Json),
        written(s, Mode::Json)
    );
    for mode in ALL_MODES {
        let w = written(s, mode);
        assert_eq!(
            rw(&input, opts(mode, false, false)),
            format!(r#"{{"k":{w},{w}:[{w}]}}"#)
        );
    }
    let html = rw(&input, opts(Mode::Html, false, false));
    assert!(!html.contains("</"), "{html}");
    assert!(!html.contains('\u{2028}'), "{html}");
}

#[test]
fn escapes_in_the_input_are_read_first() {
    // Any spelling of the same string is written the one way the mode writes it.
    let input = r#"["\u003c\/script\u003E", "\u00e9\u00E9é", "\ud83d\ude00", "\b\f\n\r\t\"\\\/"]"#;
    assert_eq!(
        plain(input),
        "[\"</script>\",\"ééé\",\"\u{1F600}\",\"\\b\\f\\n\\r\\t\\\"\\\\/\"]"
    );
    assert_eq!(
        rw(input, opts(Mode::Html, false, false)),
        "[\"\\u003C\\/script>\",\"ééé\",\"\u{1F600}\",\"\\b\\f\\n\\r\\t\\\"\\\\\\/\"]"
    );
    assert_eq!(
        rw(input, opts(Mode::Unicode, false, false)),
        "[\"</script>\",\"\\u00E9\\u00E9\\u00E9\",\"\\uD83D\\uDE00\",\"\\b\\f\\n\\r\\t\\\"\\\\/\"]"
    );
}

#[test]
fn numbers_keep_their_text_and_whitespace_goes() {
    let big = "9".repeat(2000);
    let input = format!(
        " [ 0 , -1 , 1.0E+2 , -0.0 , 1e400 , 2.50 , 9223372036854775807 , -9223372036854775808 , {big} , -{big} , true , false , null ] "
    );
    assert_eq!(
        plain(&input),
        format!("[0,-1,1.0E+2,-0.0,1e400,2.50,9223372036854775807,-9223372036854775808,{big},-{big},true,false,null]")
    );
    // An integer is written from its value: `-0` is the integer 0.
    assert_eq!(plain("-0"), "0");
    assert_eq!(
        plain("\t{ \"a\" :\n{ } , \"b\" : [ ] }\r\n"),
        r#"{"a":{},"b":[]}"#
    );
}

#[test]
fn sort_orders_every_object_by_its_unescaped_keys() {
    let input =
        r#"{"b":{"z":1,"y":[{"d":0,"c":0}]},"a b":1,"a":2,"\u00e9":3,"10":4,"\u0063":5,"B":6}"#;
    assert_eq!(
        rw(input, opts(Mode::Json, true, false)),
        r#"{"10":4,"B":6,"a":2,"a b":1,"b":{"y":[{"c":0,"d":0}],"z":1},"c":5,"é":3}"#
    );
    // The order is the keys' before escaping, the same in every mode.
    assert_eq!(
        rw(
            r#"{"é":1,"z":2,"<":3,"/":4}"#,
            opts(Mode::Unicode, true, false)
        ),
        r#"{"/":4,"<":3,"z":2,"\u00E9":1}"#
    );
    assert_eq!(
        rw(
            r#"{"é":1,"z":2,"<":3,"/":4}"#,
            opts(Mode::Html, true, false)
        ),
        r#"{"\/":4,"\u003C":3,"z":2,"é":1}"#
    );
    // Without `sort` the order is the text's.
    assert_eq!(plain(r#"{"b":1,"a":2}"#), r#"{"b":1,"a":2}"#);
}

#[test]
fn sort_is_stable_for_equal_keys() {
    assert_eq!(
        rw(
            r#"{"b":0,"a":1,"\u0061":2,"a":3}"#,
            opts(Mode::Json, true, false)
        ),
        r#"{"a":1,"a":2,"a":3,"b":0}"#
    );
}

#[test]
fn strict_refuses_a_repeated_key() {
    for (input, key) in [
        (r#"{"a":1,"b":2,"a":3}"#, "a"),
        (r#"{"a":1,"\u0061":2}"#, "a"),
        (r#"[{"x":{"é":1,"\u00e9":2}}]"#, "é"),
    ] {
        for sort in [false, true] {
            assert_eq!(
                rewrite(input.as_bytes(), opts(Mode::Json, sort, true)),
                Err(Error::DuplicateKey(key.as_bytes().to_vec())),
                "{input}"
            );
        }
    }
    // Many keys take the hash set: the first repeated one is reported.
    let mut many: Vec<String> = (0..100).map(|i| format!("\"k{i}\":{i}")).collect();
    many.push("\"k7\":0".into());
    many.push("\"k3\":0".into());
    let input = format!("{{{}}}", many.join(","));
    assert_eq!(
        rewrite(input.as_bytes(), opts(Mode::Json, false, true)),
        Err(Error::DuplicateKey(b"k7".to_vec()))
    );
    // Equal keys in different objects are no repeat; without `strict` a repeat is kept.
    assert_eq!(
        rw(r#"[{"a":1},{"a":2}]"#, opts(Mode::Json, false, true)),
        r#"[{"a":1},{"a":2}]"#
    );
    assert_eq!(plain(r#"{"a":1,"a":2}"#), r#"{"a":1,"a":2}"#);
}

#[test]
fn invalid_text_is_an_error_with_its_position() {
    for (input, error) in [
        ("", ParseError::UnexpectedEnd(0)),
        ("{\"a\":1,}", ParseError::UnexpectedByte(7)),
        ("[1 2]", ParseError::UnexpectedByte(3)),
        ("[1]x", ParseError::UnexpectedByte(3)),
        ("\"a\u{1}\"", ParseError::UnexpectedByte(2)),
        // Lone surrogates: no character, so no UTF-8 to write.
        (
            "[\"\u{1F600}\", \"\\udc00\"]",
            ParseError::Token { start: 10, end: 16 },
        ),
        (
            "[\"\u{1F600}\", \"\\ud800\"]",
            ParseError::UnexpectedByte(16),
        ),
        ("NaN", ParseError::UnexpectedByte(0)),
        ("[01]", ParseError::UnexpectedByte(2)),
        ("{\"a\"", ParseError::UnexpectedEnd(4)),
    ] {
        assert_eq!(
            rewrite(input.as_bytes(), opts(Mode::Html, true, true)),
            Err(Error::Parse(error)),
            "{input:?}"
        );
    }
    assert_eq!(
        rewrite(b"[\"ok\xFF\"]", opts(Mode::Json, false, false)),
        Err(Error::Parse(ParseError::UnexpectedByte(4)))
    );
}

#[test]
fn deep_nesting_needs_no_machine_stack() {
    let depth = 200_000;
    let input = format!(
        "{}1{}",
        "[{\"b\":0,\"a\":".repeat(depth),
        "}]".repeat(depth)
    );
    let out = rw(&input, opts(Mode::Html, true, true));
    assert_eq!(
        out,
        format!(
            "{}1{}",
            "[{\"a\":".repeat(depth),
            ",\"b\":0}]".repeat(depth)
        )
    );
}

/// A small xorshift generator: the same cases on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }
}

const PIECES: [&str; 14] = [
    "a",
    "</script>",
    "<!--",
    "é",
    "\u{2028}",
    "\u{2029}",
    "\u{1F600}",
    "\"",
    "\\",
    "/",
    "\n",
    "\u{1}",
    "z",
    "a",
];

fn random_string(rng: &mut Rng) -> String {
    (0..rng.below(5))
        .map(|_| PIECES[rng.below(PIECES.len() as u64)])
        .collect()
}

/// A random value written as text, its strings in any of the spellings JSON allows.
fn random_text(rng: &mut Rng, depth: usize, out: &mut String) {
    let spell = |rng: &mut Rng, s: &str, out: &mut String| {
        out.push('"');
        for c in s.chars() {
            match rng.below(3) {
                0 if c != '"' && c != '\\' && c >= ' ' => out.push(c),
                1 if c == '/' => out.push_str("\\/"),
                _ => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
        }
        out.push('"');
    };
    let ws = |rng: &mut Rng, out: &mut String| {
        if rng.below(4) == 0 {
            out.push_str([" ", "\n", "\t ", "\r\n"][rng.below(4)]);
        }
    };
    ws(rng, out);
    match if depth > 4 {
        rng.below(4)
    } else {
        rng.below(6)
    } {
        0 => out.push_str(["null", "true", "false", "-0.5e-3", "12", "1E40"][rng.below(6)]),
        1 | 2 => {
            let s = random_string(rng);
            spell(rng, &s, out);
        }
        3 => out.push_str(&rng.next().to_string()),
        4 => {
            out.push('[');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                }
                random_text(rng, depth + 1, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                let key = random_string(rng);
                spell(rng, &key, out);
                ws(rng, out);
                out.push(':');
                random_text(rng, depth + 1, out);
            }
            out.push('}');
        }
    }
    ws(rng, out);
}

#[test]
fn random_documents_keep_their_value_and_obey_the_mode() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..5_000 {
        let mut input = String::new();
        random_text(&mut rng, 0, &mut input);
        let value: serde_json::Value = serde_json::from_str(&input).unwrap();
        for mode in ALL_MODES {
            for sort in [false, true] {
                let options = opts(mode, sort, false);
                let out = rw(&input, options);
                // The same value (serde_json's objects compare as sets of members) ...
                let back: serde_json::Value = serde_json::from_str(&out).unwrap();
                assert_eq!(back, value, "{input:?} -> {out:?}");
                // ... written as RustyJson writes: a second rewrite changes nothing.
                assert_eq!(rw(&out, options), out, "{input:?}");
                match mode {
                    Mode::Html => assert!(!out.contains("</") && !out.contains("<!--"), "{out}"),
                    Mode::Unicode => assert!(out.is_ascii(), "{out}"),
                    _ => {}
                }
                if mode != Mode::Json {
                    assert!(!out.contains(['\u{2028}', '\u{2029}']), "{out}");
                }
            }
        }
    }
}
