//! Times the core parser alone (a builder that only counts) on JSON files: `cargo run --release --example
//! parse_time -- FILE...`. Useful to split parse cost from term-building cost.
#[macro_use]
#[path = "support/scalars.rs"]
mod scalars;

use rustyjson_core::parser::{parse, Builder, Str};
use std::time::Instant;

struct Count(usize);

impl Builder for Count {
    type V = u64;
    type K = u64;
    u64_scalars!();
    fn key(&mut self, s: Str) -> Result<u64, ()> {
        Ok(s.bytes().len() as u64)
    }
    fn array(&mut self, items: &[u64]) -> u64 {
        self.0 += items.len();
        items.len() as u64
    }
    fn object(&mut self, _: &[u64], values: &[u64]) -> u64 {
        self.0 += values.len();
        values.len() as u64
    }
}

fn main() {
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).unwrap();
        let mut best = f64::MAX;
        for _ in 0..std::env::var("ITERS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20)
        {
            let t = Instant::now();
            let mut c = Count(0);
            parse(&data, &mut c).unwrap();
            std::hint::black_box(c.0);
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{path}: {:.3} ms ({:.0} MB/s)",
            best * 1e3,
            data.len() as f64 / best / 1e6
        );
    }
}
