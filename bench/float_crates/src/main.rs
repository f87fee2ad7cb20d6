//! Float parsing and shortest printing: RustyJson's core against fast-float2, lexical-core, ryu and dragonbox, on
//! the float tokens of JSON files. `MODE=... float_crates ROUNDS FILE...`; under callgrind, one pass is the
//! difference between ROUNDS 2 and 1. `own` scans a token byte by byte (the parser reads 8 digits a step) and
//! converts with `float::from_parts`; the crates parse the token whole. In place of the parser's own conversion
//! (`parser/number.rs`), the crates were measured by `examples/parse_time.rs` (bench note 21).
use rustyjson_core::buffer::Buffer;
use rustyjson_core::float::from_parts;
use rustyjson_core::number::{shortest_decimal, write_f64};
use std::hint::black_box;

/// The float tokens (with `.` or an exponent) of a JSON text.
fn tokens(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_str = false;
    while i < text.len() {
        let c = text[i];
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_str = true;
            i += 1;
            continue;
        }
        if c == b'-' || c.is_ascii_digit() {
            let s = i;
            while i < text.len()
                && matches!(text[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                i += 1;
            }
            let t = &text[s..i];
            if t.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) {
                out.push(t);
            }
            continue;
        }
        i += 1;
    }
    out
}

/// The parser's scan: sign, digits into `w`, fraction, exponent (as `parser/number.rs`), then `from_parts`.
#[inline(always)]
fn own(t: &[u8]) -> f64 {
    let mut p = 0;
    let neg = t[0] == b'-';
    p += neg as usize;
    let mut w: u64 = 0;
    let mut sig = 0u32;
    while p < t.len() && t[p].is_ascii_digit() {
        w = w.wrapping_mul(10).wrapping_add((t[p] - b'0') as u64);
        if w != 0 {
            sig += 1;
        }
        p += 1;
    }
    let mut q: i64 = 0;
    if p < t.len() && t[p] == b'.' {
        p += 1;
        let fs = p;
        while p < t.len() && t[p].is_ascii_digit() {
            w = w.wrapping_mul(10).wrapping_add((t[p] - b'0') as u64);
            if w != 0 {
                sig += 1;
            }
            p += 1;
        }
        q = -((p - fs) as i64);
    }
    if p < t.len() && (t[p] == b'e' || t[p] == b'E') {
        p += 1;
        let en = t[p] == b'-';
        if t[p] == b'-' || t[p] == b'+' {
            p += 1;
        }
        let mut e = 0i64;
        while p < t.len() {
            e = e * 10 + (t[p] - b'0') as i64;
            p += 1;
        }
        q += if en { -e } else { e };
    }
    let v = if sig <= 19 {
        from_parts(neg, w, q)
    } else {
        None
    };
    v.unwrap_or_else(|| rustyjson_core::float::parse_float(t).unwrap())
}

fn main() {
    let mode = std::env::var("MODE").unwrap_or_default();
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().unwrap().parse().unwrap();
    for path in args {
        let text = std::fs::read(&path).unwrap();
        let toks = tokens(&text);
        let floats: Vec<f64> = toks
            .iter()
            .map(|t| fast_float2::parse::<f64, _>(t).unwrap())
            .collect();
        // Every method's values are checked against the others' before timing.
        for (t, &f) in toks.iter().zip(&floats) {
            assert_eq!(
                own(t).to_bits(),
                f.to_bits(),
                "{}",
                String::from_utf8_lossy(t)
            );
            assert_eq!(
                lexical_core::parse::<f64>(t).unwrap().to_bits(),
                f.to_bits()
            );
        }
        let mut out = Buffer::with_capacity(floats.len() * 25);
        out.extend(&vec![0; floats.len() * 25]);
        let mut sum = 0u64;
        let t0 = std::time::Instant::now();
        for _ in 0..rounds {
            out.truncate(0);
            match mode.as_str() {
                "own" => {
                    for t in &toks {
                        sum = sum.wrapping_add(own(black_box(t)).to_bits())
                    }
                }
                "fast_float2" => {
                    for t in &toks {
                        sum = sum.wrapping_add(
                            fast_float2::parse::<f64, _>(black_box(t))
                                .unwrap()
                                .to_bits(),
                        )
                    }
                }
                "lexical" => {
                    for t in &toks {
                        sum = sum.wrapping_add(
                            lexical_core::parse::<f64>(black_box(t)).unwrap().to_bits(),
                        )
                    }
                }
                "std" => {
                    for t in &toks {
                        sum = sum.wrapping_add(
                            std::str::from_utf8(black_box(t))
                                .unwrap()
                                .parse::<f64>()
                                .unwrap()
                                .to_bits(),
                        )
                    }
                }
                "digits" => {
                    for &f in &floats {
                        let (d, e) = shortest_decimal(black_box(f));
                        sum = sum.wrapping_add(d ^ e as u64)
                    }
                }
                "write" => {
                    for &f in &floats {
                        write_f64(&mut out, black_box(f))
                    }
                }
                "ryu" => {
                    let mut b = ryu::Buffer::new();
                    for &f in &floats {
                        out.extend(b.format_finite(black_box(f)).as_bytes())
                    }
                }
                "lexical_write" => {
                    let mut b = [0u8; 64];
                    for &f in &floats {
                        out.extend(lexical_core::write(black_box(f), &mut b))
                    }
                }
                "dragonbox" => {
                    let mut b = dragonbox::Buffer::new();
                    for &f in &floats {
                        out.extend(b.format_finite(black_box(f)).as_bytes())
                    }
                }
                "none" => {}
                m => panic!("mode {m}"),
            }
        }
        let el = t0.elapsed().as_secs_f64();
        println!(
            "{mode} {path}: {} floats, {:.1} ns a float ({} {})",
            floats.len(),
            el * 1e9 / (rounds * floats.len()) as f64,
            sum,
            out.len()
        );
    }
}
