//! What the examples' builders share: scalars that build nothing (a `u64` standing for each).

/// The scalar methods of a `Builder` whose values are `u64`s that stand for nothing in particular.
macro_rules! u64_scalars {
    () => {
        fn null(&mut self) -> u64 {
            0
        }
        fn boolean(&mut self, _: bool) -> u64 {
            1
        }
        fn int(&mut self, v: i64) -> u64 {
            v as u64
        }
        fn big_int(&mut self, t: &[u8]) -> u64 {
            t.len() as u64
        }
        fn float(&mut self, _: &[u8], v: f64) -> u64 {
            v.to_bits()
        }
        fn string(&mut self, s: Str) -> u64 {
            s.bytes().len() as u64
        }
    };
}
