//! Times float formatting alone (`number::write_f64`, OTP's `[:short]` layout) on the floats of JSON files:
//! `cargo run --release --example float_time -- FILE...`. Deterministic enough for callgrind; `RAW=1`
//! times ryu's own text instead, for comparison, and `DIGITS=1` the shortest-digits routine alone (no text).
use rustyjson_core::buffer::Buffer;
use rustyjson_core::number::{shortest_decimal, write_f64};
use std::time::Instant;

fn floats(v: &serde_json::Value, out: &mut Vec<f64>) {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => out.push(n.as_f64().unwrap()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| floats(x, out)),
        serde_json::Value::Object(m) => m.values().for_each(|x| floats(x, out)),
        _ => {}
    }
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS").map_or(20, |r| r.parse().unwrap());
    let raw = std::env::var("RAW").is_ok();
    let digits = std::env::var("DIGITS").is_ok();
    for path in std::env::args().skip(1) {
        let text = std::fs::read(&path).unwrap();
        let mut fs = Vec::new();
        floats(&serde_json::from_slice(&text).unwrap(), &mut fs);
        let mut best = f64::MAX;
        let mut bytes = 0;
        // One buffer, written over before the first round: the first touch of fresh pages (page faults) is the
        // allocator's cost, not the routine's.
        let mut out = Buffer::with_capacity(fs.len() * 25);
        out.extend(&vec![0; fs.len() * 25]);
        for _ in 0..rounds {
            out.truncate(0);
            let t = Instant::now();
            if digits {
                // The digits and exponent only, folded into the output so they are computed.
                let mut sum = 0u64;
                for &f in &fs {
                    let (d, e) = shortest_decimal(f);
                    sum = sum.wrapping_add(d ^ e as u64);
                }
                out.extend(&sum.to_le_bytes());
            } else if raw {
                // ryu's own text (not OTP's layout), for comparison.
                let mut rb = ryu::Buffer::new();
                for &f in &fs {
                    out.extend(rb.format_finite(f).as_bytes());
                }
            } else {
                for &f in &fs {
                    write_f64(&mut out, f);
                }
            }
            best = best.min(t.elapsed().as_secs_f64());
            bytes = out.len();
        }
        println!(
            "{path}: {} floats, {bytes} bytes, {:.1} ns per float (best of {rounds})",
            fs.len(),
            best * 1e9 / fs.len() as f64
        );
    }
}
