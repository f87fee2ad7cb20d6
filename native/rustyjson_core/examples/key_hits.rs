//! How often `keys: :intern`'s key predictions hold on JSON files: `cargo run --release --example key_hits --
//! FILE...`. Counts the keys taken as predicted (first or second guess, one compare each) against the keys that
//! had to be scanned and looked up. A builder that makes no terms, with the cache the NIF uses.
#[macro_use]
#[path = "support/scalars.rs"]
mod scalars;

use rustyjson_core::intern::{ExpectedKey, KeyCache};
use rustyjson_core::parser::{parse, Builder, Str};

/// Counts keys; a key's value is the number of keys made before it.
struct B<'a> {
    input: &'a [u8],
    cache: KeyCache<u64>,
    expected_hits: usize,
    looked: usize,
    scanned: usize,
    made: u64,
}

impl Builder for B<'_> {
    type V = u64;
    type K = u64;
    u64_scalars!();
    fn expected_key(&mut self) -> Option<ExpectedKey> {
        self.cache.expected()
    }
    fn expected_key_found(&mut self, _s: usize, _e: usize) -> u64 {
        self.expected_hits += 1;
        self.cache.take_expected()
    }
    fn alternate_key(&mut self) -> Option<ExpectedKey> {
        self.cache.alternate()
    }
    fn alternate_key_found(&mut self, _s: usize, _e: usize) -> u64 {
        self.expected_hits += 1;
        self.cache.take_alternate()
    }
    fn key(&mut self, s: Str) -> Result<u64, ()> {
        self.scanned += 1;
        if let Str::Input { start, end, .. } = s {
            if self.cache.look_up_next() {
                self.looked += 1;
                let made = &mut self.made;
                return self.cache.get_or_insert::<()>(self.input, start, end, || {
                    *made += 1;
                    Ok(*made)
                });
            }
        }
        Ok(0)
    }
    fn array(&mut self, items: &[u64]) -> u64 {
        items.len() as u64
    }
    fn object(&mut self, _: &[u64], values: &[u64]) -> u64 {
        self.cache.object_done();
        values.len() as u64
    }
}

fn main() {
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).unwrap();
        let mut b = B {
            input: &data,
            cache: KeyCache::new(),
            expected_hits: 0,
            looked: 0,
            scanned: 0,
            made: 0,
        };
        b.cache.restart();
        parse(&data, &mut b).unwrap();
        println!(
            "{path}: expected hits {}, scanned {} (looked up {}), distinct made {}",
            b.expected_hits, b.scanned, b.looked, b.made
        );
    }
}
