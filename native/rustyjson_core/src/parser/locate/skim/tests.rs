//! Skims against the parser: a skim that ends agrees with the parser on the container's end; a doubt is allowed
//! only where the parser refuses (or for the cases the skim leaves to it); valid documents of every shape are
//! skimmed without a doubt, in one run and paused at every block.

use super::*;
use crate::parser::locate::LocateOptions;
use crate::parser::parse_value;

fn skim_all(input: &[u8], limit_step: usize) -> Skimmed {
    let mut skim = Skim::new(0, usize::MAX, 0, LocateOptions::default());
    let mut limit = limit_step;
    loop {
        match skim.run(input, limit) {
            Skimmed::Paused(at) => {
                assert!(
                    at > limit && (at % BLOCK) == 0,
                    "paused at {at}, limit {limit}"
                );
                limit = at + limit_step;
            }
            done => return done,
        }
    }
}

/// The parser's end of the value at the input's start, or `None` if it refuses it.
fn parsed_end(input: &[u8]) -> Option<usize> {
    let mut pos = 0;
    let mut skip = super::super::Skip { decimals: false };
    parse_value(input, &mut skip, &mut Default::default(), &mut pos).ok()?;
    Some(pos)
}

/// A skim never accepts what the parser refuses, and ends where the parser does.
fn agrees(input: &[u8]) -> Skimmed {
    let skimmed = skim_all(input, usize::MAX);
    if let Skimmed::Ended(end) = skimmed {
        assert_eq!(
            parsed_end(input),
            Some(end),
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
    skimmed
}

const VALID: &[&str] = &[
    "[]",
    "{}",
    "[[], {}, [[]], {\"\": {}}]",
    "[1, -0, 0.5, -12.25e-3, 1E+2, 123456789012345678901234567890, true, false, null]",
    r#"{"a": "b", "c\"d\\": "\u00e9\ud83d\ude00\/\b\f\n\r\t", "é": "日本語", "e": ["\\", "\\\"", "\\\\"]}"#,
    "[1e400]",
    " [\t\n\r1 ,\n 2 ] ",
];

#[test]
fn valid_containers_are_skimmed_to_the_parser_s_end() {
    for doc in VALID {
        // Shifted by a few bytes, and padded to cross blocks at every point.
        for pad in [0, 1, 31, 62, 63, 64, 65] {
            let padded = format!("[{}{}]", " ".repeat(pad), doc.trim());
            for input in [doc.trim(), &padded[..]] {
                let expected = parsed_end(input.as_bytes()).unwrap_or(usize::MAX);
                let outcome = skim_all(input.as_bytes(), 1);
                // `1e400` is out of the float range: the parser's own check refuses it.
                if doc.contains("1e400") {
                    assert_eq!(outcome, Skimmed::Doubt);
                } else {
                    assert_eq!(outcome, Skimmed::Ended(expected), "{input:?}");
                }
            }
        }
    }
}

#[test]
fn strings_across_blocks_are_followed() {
    for len in [0, 1, 60, 61, 62, 63, 64, 65, 127, 128, 200] {
        for tail in [
            "\\\"",
            "\\\\",
            "\\u00e9",
            "\\ud83d\\ude00",
            "é",
            "\"], [\"",
            "\\\"],[",
        ] {
            let doc = format!(
                "[\"{}{}\", 1, {{\"k\": \"{}\"}}]",
                "x".repeat(len),
                tail,
                "y".repeat(len)
            );
            let end = parsed_end(doc.as_bytes()).expect(&doc);
            assert_eq!(skim_all(doc.as_bytes(), 1), Skimmed::Ended(end), "{doc:?}");
            assert_eq!(skim_all(doc.as_bytes(), usize::MAX), Skimmed::Ended(end));
        }
    }
}

#[test]
fn the_nesting_limit_is_a_doubt() {
    let doc = b"[[[1]]]";
    let run = |room| Skim::new(0, room, 0, LocateOptions::default()).run(doc, usize::MAX);
    assert_eq!(run(3), Skimmed::Ended(7));
    assert_eq!(run(2), Skimmed::Doubt);
}

#[test]
fn json_test_suite_containers_are_never_wrongly_accepted() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/JSONTestSuite/test_parsing");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let (mut valid, mut valid_ended) = (0, 0);
    for entry in entries {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        if matches!(data.first(), Some(b'[' | b'{')) {
            let ended = matches!(agrees(&data), Skimmed::Ended(_));
            if path
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("y_")
            {
                valid += 1;
                valid_ended += ended as usize;
                if !ended {
                    println!("doubted: {path:?}");
                }
            }
        }
    }
    // Valid containers are doubted only for what the skim leaves to the parser (nesting past 63 levels).
    assert!(
        valid > 50 && valid_ended + 2 >= valid,
        "{valid_ended} of {valid}"
    );
}

#[test]
fn mutated_containers_are_never_wrongly_accepted() {
    let base = format!(
        "{{\"data\": [{}], \"meta\": {{\"t\": 2}}}}",
        VALID[1..5].join(", ")
    );
    let mut ended = 0;
    for doc in super::super::tests::mutations(base.as_bytes(), 50_000, false) {
        if doc.first() == Some(&b'{') && matches!(agrees(&doc), Skimmed::Ended(_)) {
            ended += 1;
        }
    }
    assert!(ended > 1_000, "{ended}");
}

#[test]
fn invalid_tokens_are_doubted() {
    for bad in [
        &b"01"[..],
        b"1.",
        b"-",
        b"--1",
        b"1e",
        b"tru",
        b"nul",
        b"truex",
        b"1x",
        b"0x1",
        b"1 2",
        b"{\"a\" 1}",
        b"{\"a\":1,}",
        b"1,",
        b"\"\\x\"",
        b"\"\\ud800\"",
        b"\"\\udc00\"",
        b"\"\\ud800\\u0041\"",
        b"\"a\x01\"",
        b"\"\xff\"",
        b"\"\xc0\xaf\"",
        b"\"\xed\xa0\x80\"",
        b"\\",
        b"}",
        b"{]",
        b"[}",
        b"{1:2}",
        b"{\"a\":}",
        b"\"a\"\"b\"",
    ] {
        for pad in [0, 60, 62, 63] {
            let doc = [&b"["[..], &vec![b' '; pad], bad, b"]"].concat();
            assert_eq!(
                parsed_end(&doc),
                None,
                "{:?}",
                String::from_utf8_lossy(&doc)
            );
            assert_eq!(
                skim_all(&doc, 1),
                Skimmed::Doubt,
                "{:?}",
                String::from_utf8_lossy(&doc)
            );
        }
    }
}
