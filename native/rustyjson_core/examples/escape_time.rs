//! Times the string writer alone (`escape::write_string`) on the strings of JSON files: `cargo run --release
//! --example escape_time -- FILE...` (`MODE=unicode|html|javascript`, `ITERS`). The strings are collected by the
//! parser first (unescaped), then written back as JSON strings; instruction counts under callgrind are stable.
use rustyjson_core::buffer::Buffer;
use rustyjson_core::escape::{write_string, Mode};
use rustyjson_core::parser::{parse, Builder, Str};
use std::time::Instant;

/// Collects every string and key.
#[derive(Default)]
struct Strings(Vec<Vec<u8>>);

impl Builder for Strings {
    type V = ();
    type K = ();
    fn null(&mut self) {}
    fn boolean(&mut self, _: bool) {}
    fn int(&mut self, _: i64) {}
    fn big_int(&mut self, _: &[u8]) {}
    fn float(&mut self, _: &[u8], _: f64) {}
    fn string(&mut self, s: Str) {
        self.0.push(s.bytes().to_vec());
    }
    fn key(&mut self, s: Str) -> Result<(), ()> {
        self.0.push(s.bytes().to_vec());
        Ok(())
    }
    fn array(&mut self, _: &[()]) {}
    fn object(&mut self, _: &[()], _: &[()]) {}
}

fn main() {
    let mode = match std::env::var("MODE").as_deref() {
        Ok("unicode") => Mode::Unicode,
        Ok("html") => Mode::Html,
        Ok("javascript") => Mode::JavaScript,
        _ => Mode::Json,
    };
    let iters = std::env::var("ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).unwrap();
        let mut strings = Strings::default();
        parse(&data, &mut strings).unwrap();
        let bytes: usize = strings.0.iter().map(Vec::len).sum();
        let mut best = f64::MAX;
        let mut written = 0;
        for _ in 0..iters {
            let t = Instant::now();
            let mut out = Buffer::with_capacity(1024);
            for s in &strings.0 {
                write_string(&mut out, s, mode).unwrap();
            }
            written = std::hint::black_box(out.len());
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{path}: {} strings, {bytes} bytes -> {written}: {:.3} ms ({:.0} MB/s)",
            strings.0.len(),
            best * 1e3,
            bytes as f64 / best / 1e6
        );
    }
}
