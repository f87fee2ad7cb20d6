//! Properties of the writers (and parser) checked on arbitrary input. The fuzz targets in `native/fuzz` call these
//! with libFuzzer's inputs; `cargo test` runs them over seed documents and pseudo-random inputs, so CI checks the
//! same properties without a fuzzer. Each panics on a violation.

use crate::buffer::Buffer;
use crate::escape::{write_string, Mode};
use crate::intern::{ExpectedKey, KeyCache};
use crate::number::{write_f64, write_i64, write_u64};
use crate::parser::locate::{LocateOptions, Locator};
use crate::parser::{parse, Builder, ParseError, Str};

/// The string writer, in every escape mode: it rejects exactly invalid UTF-8 (at the first bad sequence), and for
/// valid input writes a JSON string that means the input and keeps each mode's promises.
pub fn check_escape(data: &[u8]) {
    for mode in [Mode::Json, Mode::JavaScript, Mode::Html, Mode::Unicode] {
        let mut out = Buffer::default();
        let result = write_string(&mut out, data, mode);
        match std::str::from_utf8(data) {
            Err(e) => assert_eq!(result, Err(e.valid_up_to()), "mode {mode:?}"),
            Ok(s) => {
                assert_eq!(result, Ok(()), "mode {mode:?}");
                let json = out.into_vec();
                let back: String =
                    serde_json::from_slice(&json).expect("writer output is a JSON string");
                assert_eq!(back, s, "mode {mode:?}");
                let text = std::str::from_utf8(&json).expect("writer output is UTF-8");
                match mode {
                    Mode::Json => {}
                    Mode::Unicode => assert!(json.is_ascii()),
                    Mode::Html => {
                        assert!(!text.contains('<'));
                        assert!(!unescaped_slash(&json), "raw / in html_safe output");
                    }
                    Mode::JavaScript => {}
                }
                if mode != Mode::Json {
                    assert!(!text.contains('\u{2028}') && !text.contains('\u{2029}'));
                }
            }
        }
    }
}

/// True when the JSON string text has a `/` that is not escaped.
fn unescaped_slash(json: &[u8]) -> bool {
    let mut escaped = false;
    for &b in json {
        if escaped {
            escaped = false;
        } else if b == b'\\' {
            escaped = true;
        } else if b == b'/' {
            return true;
        }
    }
    false
}

/// The number writers on a 64-bit pattern: integers print exactly; a finite float prints as a JSON number that
/// reads back to the same float.
pub fn check_numbers(bits: u64) {
    let mut out = Buffer::default();
    write_u64(&mut out, bits);
    assert_eq!(out.into_vec(), bits.to_string().into_bytes());

    let mut out = Buffer::default();
    write_i64(&mut out, bits as i64);
    assert_eq!(out.into_vec(), (bits as i64).to_string().into_bytes());

    let f = f64::from_bits(bits);
    if f.is_finite() {
        let mut out = Buffer::default();
        write_f64(&mut out, f);
        let text = String::from_utf8(out.into_vec()).expect("ASCII");
        let value: serde_json::Value = serde_json::from_str(&text).expect("a JSON number");
        assert!(value.is_f64(), "{text} must read as a float");
        let back: f64 = text.parse().expect("Rust reads it");
        assert_eq!(
            back.to_bits(),
            f.to_bits(),
            "{text} does not round-trip {f:?}"
        );
    }
}

/// A builder that records every object's keys (their bytes, in order), through the key cache as `keys: :intern`
/// uses it (expected keys included) or by scanning alone.
struct Keys<'a> {
    input: &'a [u8],
    cache: Option<KeyCache<usize>>,
    /// The distinct keys made so far (a key's value is its index here).
    made: Vec<Vec<u8>>,
    objects: Vec<Vec<Vec<u8>>>,
}

impl<'a> Keys<'a> {
    fn new(input: &'a [u8], cached: bool) -> Self {
        Keys {
            input,
            cache: cached.then(KeyCache::new),
            made: Vec::new(),
            objects: Vec::new(),
        }
    }

    fn make(&mut self, bytes: &[u8]) -> usize {
        self.made.push(bytes.to_vec());
        self.made.len() - 1
    }
}

impl Builder for Keys<'_> {
    type V = ();
    type K = usize;
    fn null(&mut self) {}
    fn boolean(&mut self, _: bool) {}
    fn int(&mut self, _: i64) {}
    fn big_int(&mut self, _: &[u8]) {}
    fn float(&mut self, _: &[u8], _: f64) {}
    fn string(&mut self, _: Str) {}
    fn key(&mut self, s: Str) -> Result<usize, ()> {
        match (self.cache.take(), s) {
            (Some(mut cache), Str::Input { start, end, .. }) => {
                let input = self.input;
                let k = cache
                    .get_or_insert::<()>(input, start, end, || Ok(self.make(&input[start..end])));
                self.cache = Some(cache);
                k
            }
            (cache, s) => {
                self.cache = cache;
                Ok(self.make(s.bytes()))
            }
        }
    }
    fn expected_key(&mut self) -> Option<ExpectedKey> {
        self.cache.as_ref()?.expected()
    }
    fn expected_key_found(&mut self, start: usize, end: usize) -> usize {
        let k = self.cache.as_mut().unwrap().take_expected();
        assert_eq!(
            self.made[k],
            &self.input[start..end],
            "the expected key is the input's"
        );
        k
    }
    fn alternate_key(&mut self) -> Option<ExpectedKey> {
        self.cache.as_ref()?.alternate()
    }
    fn alternate_key_found(&mut self, start: usize, end: usize) -> usize {
        let k = self.cache.as_mut().unwrap().take_alternate();
        assert_eq!(
            self.made[k],
            &self.input[start..end],
            "the alternate key is the input's"
        );
        k
    }
    fn array(&mut self, _: &[()]) {}
    fn object(&mut self, keys: &[usize], _: &[()]) {
        let keys = keys.iter().map(|&k| self.made[k].clone()).collect();
        self.objects.push(keys);
        if let Some(cache) = &mut self.cache {
            cache.object_done();
        }
    }
}

/// The parser on arbitrary bytes: it never panics, every error position lies within the input, and it accepts
/// exactly what serde_json accepts, where the two are meant to agree (nesting under 100, which serde_json
/// limits, and no number long enough for Jason's 1024-byte integer limit or f64 overflow rules to differ). With
/// the key cache and its expected keys, it reads the same keys and fails the same way as without. `get`'s locator
/// agrees with it.
pub fn check_parse(data: &[u8]) {
    let mut scanned = Keys::new(data, false);
    let mut cached = Keys::new(data, true);
    let ours = parse(data, &mut scanned);
    assert_eq!(ours, parse(data, &mut cached));
    assert_eq!(scanned.objects, cached.objects);
    match ours {
        Ok(()) => {}
        Err(ParseError::UnexpectedByte(p)) => assert!(p < data.len(), "byte error at {p}"),
        Err(ParseError::UnexpectedEnd(p)) => assert_eq!(p, data.len()),
        Err(ParseError::Token { start, end }) => assert!(start < end && end <= data.len()),
        Err(ParseError::Key { .. }) => unreachable!("Keys takes every key"),
        Err(ParseError::DuplicateKey { .. }) => {
            unreachable!("repeated keys are allowed by default")
        }
        Err(ParseError::LongToken(_)) => unreachable!("parse pauses before long strings"),
        Err(ParseError::Memory { .. } | ParseError::TooLarge { .. }) => {
            unreachable!("fuzzed inputs are small, and no ceiling is set")
        }
    }
    // The locator, with no path (the whole document skimmed) and one into it (the containers inside skimmed),
    // gives the parser's verdict at the parser's position.
    for pointers in [&[][..], &[vec![b"0".to_vec()]][..]] {
        let mut locator = Locator::new(pointers, LocateOptions::default());
        let located = locator
            .run(data, &mut 0, usize::MAX, None, true)
            .map(|_| ());
        assert_eq!(
            located,
            ours,
            "locator on {:?}",
            String::from_utf8_lossy(data)
        );
    }
    if comparable_with_serde(data) {
        let theirs = serde_json::from_slice::<serde_json::Value>(data);
        assert_eq!(
            ours.is_ok(),
            theirs.is_ok(),
            "acceptance differs from serde_json ({theirs:?}) on {:?}",
            String::from_utf8_lossy(data)
        );
    }
}

fn comparable_with_serde(data: &[u8]) -> bool {
    let (mut depth, mut max_depth, mut digits, mut max_digits) = (0i64, 0i64, 0, 0);
    for &b in data {
        match b {
            b'[' | b'{' => {
                depth += 1;
                max_depth = max_depth.max(depth);
            }
            b']' | b'}' => depth -= 1,
            _ => {}
        }
        digits = if b.is_ascii_digit() { digits + 1 } else { 0 };
        max_digits = max_digits.max(digits);
    }
    max_depth < 100 && max_digits < 300
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*), so the checks see the same inputs on every run.
    pub(crate) struct Rng(u64);

    impl Rng {
        pub(crate) fn new(seed: u64) -> Self {
            Rng(seed | 1)
        }
        pub(crate) fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        /// Bytes biased towards what JSON writers find interesting: ASCII, escapes, UTF-8 leads and continuations.
        pub(crate) fn bytes(&mut self, max_len: usize) -> Vec<u8> {
            const PICKS: &[u8] = b"a\"\\/<\x00\x1f\x7f\xc2\xa0\xe2\x80\xa8\xed\xa0\x80\xf0\x9f\x98\x80\xf4\x90\xff\xc0";
            let len = (self.next() % (max_len as u64 + 1)) as usize;
            (0..len)
                .map(|_| {
                    let r = self.next();
                    if r.is_multiple_of(3) {
                        PICKS[(r >> 8) as usize % PICKS.len()]
                    } else {
                        (r >> 16) as u8
                    }
                })
                .collect()
        }
    }

    /// Public benchmark documents, when `../shared/data/bench/` is beside the project.
    pub(crate) fn seed_documents() -> Vec<Vec<u8>> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/bench");
        let mut docs = Vec::new();
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                if entry.path().extension().is_some_and(|e| e == "json") {
                    docs.push(std::fs::read(entry.path()).unwrap());
                }
            }
        }
        docs
    }

    #[test]
    fn escape_on_random_and_document_bytes() {
        let mut rng = Rng::new(0x5eed);
        for _ in 0..50_000 {
            check_escape(&rng.bytes(40));
        }
        for doc in seed_documents() {
            for chunk in doc.chunks(4096).take(64) {
                check_escape(chunk);
            }
        }
    }

    #[test]
    fn parse_on_mutated_documents_and_random_bytes() {
        let mut rng = Rng::new(0xdec0de);
        for _ in 0..20_000 {
            check_parse(&rng.bytes(64));
        }
        // Same-shaped objects whose keys are prefixes of one another and of every length an expected key can
        // have, so the key cache's expected keys meet mutated, cut and misplaced keys.
        let keys: Vec<String> = (0..18).map(|n| "k".repeat(n)).collect();
        let object = |i: usize| {
            let body: Vec<String> = (0..keys.len())
                .map(|j| format!("\"{}\":{}", keys[(i / 7 + j) % keys.len()], j))
                .collect();
            format!("{{{}}}", body.join(","))
        };
        let same_shaped = format!("[{}]", (0..60).map(object).collect::<Vec<_>>().join(","));
        for doc in seed_documents()
            .into_iter()
            .chain([same_shaped.into_bytes()])
        {
            let doc = &doc[..doc.len().min(16 * 1024)];
            for _ in 0..300 {
                let mut d = doc.to_vec();
                let at = (rng.next() % d.len() as u64) as usize;
                match rng.next() % 3 {
                    0 => d[at] = (rng.next() >> 8) as u8,
                    1 => {
                        d.remove(at);
                    }
                    _ => d.truncate(at),
                }
                check_parse(&d);
            }
        }
    }

    #[test]
    fn numbers_on_random_and_special_patterns() {
        let mut rng = Rng::new(0xf10a7);
        for _ in 0..300_000 {
            check_numbers(rng.next());
        }
        for f in [
            0.0f64,
            -0.0,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            5e-324,
            9007199254740992.0,
            1e21,
            1e-7,
        ] {
            check_numbers(f.to_bits());
        }
        for bits in [0u64, 1, u64::MAX, i64::MIN as u64, i64::MAX as u64] {
            check_numbers(bits);
        }
    }
}
