//! The per-call key cache behind `keys: :intern`: key bytes (a span of the input) to the key's value, so a key
//! repeated across objects is built once.
//!
//! A small open-addressing table keyed by a fast hash of short keys. It watches its hit rate and switches itself
//! off when hits are rare (documents whose keys never repeat), so it then costs one branch per key.

/// Keys longer than this are never cached (they rarely repeat, and hashing them costs).
pub const MAX_KEY: usize = 64;
const SLOTS: usize = 1024;
const PROBES: usize = 4;
/// The hit rate is checked after this many lookups, then every `WINDOW` lookups.
const WINDOW: u32 = 256;

#[derive(Clone, Copy)]
struct Slot<V> {
    hash: u32,
    len: u32,
    start: usize,
    value: Option<V>,
}

/// A bounded cache from key bytes to values, valid for one parse of one input.
pub struct KeyCache<V: Copy> {
    slots: Vec<Slot<V>>,
    lookups: u32,
    hits: u32,
    enabled: bool,
}

impl<V: Copy> Default for KeyCache<V> {
    fn default() -> Self {
        Self::new()
    }
}

#[inline(always)]
fn hash(bytes: &[u8]) -> u32 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = (h.rotate_left(5) ^ u64::from_le_bytes(c.try_into().unwrap())).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
    }
    (h >> 32) as u32
}

impl<V: Copy> KeyCache<V> {
    pub fn new() -> Self {
        KeyCache {
            slots: Vec::new(),
            lookups: 0,
            hits: 0,
            enabled: true,
        }
    }

    /// Whether the cache still looks keys up (false once it has given up on a low hit rate).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The value for the key at `input[start..end]`: a cached one, or `make()` (then cached when there is room).
    #[inline]
    pub fn get_or_insert<E>(
        &mut self,
        input: &[u8],
        start: usize,
        end: usize,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Result<V, E> {
        let len = end - start;
        if !self.enabled || len > MAX_KEY {
            return make();
        }
        self.lookups += 1;
        if self.lookups.is_multiple_of(WINDOW) {
            // Give up when fewer than a quarter of the lookups hit.
            if self.hits * 4 < self.lookups {
                self.enabled = false;
            }
            self.lookups /= 2;
            self.hits /= 2;
        }
        if self.slots.is_empty() {
            self.slots = vec![
                Slot {
                    hash: 0,
                    len: 0,
                    start: 0,
                    value: None
                };
                SLOTS
            ];
        }
        let key = &input[start..end];
        let h = hash(key);
        let mut i = h as usize & (SLOTS - 1);
        for _ in 0..PROBES {
            let slot = &mut self.slots[i];
            match slot.value {
                None => {
                    let v = make()?;
                    *slot = Slot {
                        hash: h,
                        len: len as u32,
                        start,
                        value: Some(v),
                    };
                    return Ok(v);
                }
                Some(v) => {
                    if slot.hash == h
                        && slot.len as usize == len
                        && &input[slot.start..slot.start + len] == key
                    {
                        self.hits += 1;
                        return Ok(v);
                    }
                }
            }
            i = (i + 1) & (SLOTS - 1);
        }
        make()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_hit() {
        let input = b"abcabcxyz";
        let mut cache = KeyCache::<u32>::new();
        let mut made = 0;
        let mut get = |c: &mut KeyCache<u32>, s, e| {
            c.get_or_insert::<()>(input, s, e, || {
                made += 1;
                Ok(made)
            })
            .unwrap()
        };
        let a = get(&mut cache, 0, 3);
        let b = get(&mut cache, 3, 6);
        let c = get(&mut cache, 6, 9);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(get(&mut cache, 0, 2), 3);
        assert_eq!(get(&mut cache, 3, 5), 3);
    }

    #[test]
    fn unique_keys_switch_it_off() {
        let input: Vec<u8> = (0..20_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut cache = KeyCache::<u32>::new();
        for i in 0..5_000 {
            cache
                .get_or_insert::<()>(&input, i * 4, i * 4 + 4, || Ok(i as u32))
                .unwrap();
        }
        assert!(!cache.enabled());
    }

    #[test]
    fn errors_pass_through() {
        let mut cache = KeyCache::<u32>::new();
        assert_eq!(cache.get_or_insert(b"k", 0, 1, || Err("no")), Err("no"));
        assert_eq!(cache.get_or_insert::<()>(b"k", 0, 1, || Ok(7)), Ok(7));
    }
}
