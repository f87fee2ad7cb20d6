//! A key sequence's bytes kept from one call to the next (the NIF's large-object shapes), bounded in bytes.
//!
//! What a scheduler thread keeps between calls must not grow with the input: a shape of long keys would keep
//! their bytes (forty keys of 2.5 MB each kept 100 MB per slot). So a sequence is kept only when each key and
//! the whole fit small bounds that real documents' shapes stay well within, and a sequence that does not fit
//! leaves the kept one as it was (its memory stays within the bounds too).

use crate::buffer::prefix_be;

/// Keys longer than this are never kept. The longest key of a 33-256-key object in the benchmark documents
/// (twitter, citm_catalog, github_events) has 34 bytes; long keys are rare and rarely repeat.
pub const KEY_MAX: usize = 128;
/// The most a kept sequence holds: its key bytes and 4 bytes a key for where each ends (the benchmark
/// documents' largest, citm_catalog's 184 keys, takes 2.4 KB; 256 keys of 60 bytes fit).
pub const BYTES_MAX: usize = 16 * 1024;

/// See the module's documentation.
#[derive(Default)]
pub struct KeptKeys {
    /// The keys' bytes, one after another, and where each ends.
    bytes: Vec<u8>,
    ends: Vec<u32>,
}

/// The key bytes and the count of `keys`, or `None` when a key or the whole is over the bounds.
#[inline]
fn kept_size<'k>(keys: impl Iterator<Item = &'k [u8]>) -> Option<(usize, usize)> {
    let (mut bytes, mut count) = (0usize, 0usize);
    for k in keys {
        if k.len() > KEY_MAX {
            return None;
        }
        bytes += k.len();
        count += 1;
        if bytes + 4 * count > BYTES_MAX {
            return None;
        }
    }
    Some((bytes, count))
}

/// Whether two keys are the same bytes: keys of up to 16 bytes compared as two words from their ends (a
/// `memcmp` call per key was most of checking a large map's shape).
#[inline(always)]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    match (a.last_chunk::<8>(), b.last_chunk::<8>()) {
        (Some(x), Some(y)) if a.len() <= 16 => prefix_be(a) == prefix_be(b) && x == y,
        (Some(_), Some(_)) => a == b,
        _ => prefix_be(a) == prefix_be(b),
    }
}

impl KeptKeys {
    /// Whether these are the kept keys, in this order.
    #[inline]
    pub fn holds<'k>(&self, keys: impl ExactSizeIterator<Item = &'k [u8]>) -> bool {
        if self.ends.len() != keys.len() {
            return false;
        }
        let mut start = 0;
        keys.zip(&self.ends).all(|(k, &end)| {
            let same = same_bytes(&self.bytes[start..end as usize], k);
            start = end as usize;
            same
        })
    }

    /// Keeps `keys` in place of the kept ones, if they fit the bounds; false (and the kept ones unchanged) if not.
    pub fn remember<'k, I>(&mut self, keys: I) -> bool
    where
        I: Iterator<Item = &'k [u8]> + Clone,
    {
        let Some((bytes, count)) = kept_size(keys.clone()) else {
            return false;
        };
        if self.bytes.capacity().max(bytes) + 4 * self.ends.capacity().max(count) > BYTES_MAX {
            // Capacities left by a sequence of other proportions (long keys, then many short ones): made anew.
            *self = KeptKeys::default();
        }
        self.bytes.clear();
        self.ends.clear();
        // Exactly: the capacities never pass what the bounds allow.
        self.bytes.reserve_exact(bytes);
        self.ends.reserve_exact(count);
        for k in keys {
            self.bytes.extend_from_slice(k);
            self.ends.push(self.bytes.len() as u32);
        }
        true
    }

    /// The bytes this holds (its vectors' capacities).
    pub fn kept_bytes(&self) -> usize {
        self.bytes.capacity() + 4 * self.ends.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` distinct keys of `len` bytes (or the digits of their index, if longer).
    fn keys(n: usize, len: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                let digits = i.to_string().into_bytes();
                let mut key = vec![b'k'; len.saturating_sub(digits.len())];
                key.extend(digits);
                key
            })
            .collect()
    }

    fn slices(keys: &[Vec<u8>]) -> impl ExactSizeIterator<Item = &[u8]> + Clone {
        keys.iter().map(Vec::as_slice)
    }

    #[test]
    fn kept_keys_are_held_in_order_only() {
        let ks = keys(40, 10);
        let mut kept = KeptKeys::default();
        assert!(!kept.holds(slices(&ks)));
        assert!(kept.remember(slices(&ks)));
        assert!(kept.holds(slices(&ks)));
        let mut swapped = ks.clone();
        swapped.swap(3, 4);
        assert!(!kept.holds(slices(&swapped)));
        assert!(!kept.holds(slices(&ks[1..])));
        let mut other = ks.clone();
        other[39].push(b'x');
        assert!(!kept.holds(slices(&other)));
    }

    #[test]
    fn a_long_key_is_never_kept_and_the_kept_keys_stay() {
        let short = keys(40, 10);
        let mut kept = KeptKeys::default();
        assert!(kept.remember(slices(&short)));
        let mut long = keys(40, 10);
        long[7] = vec![b'k'; KEY_MAX + 1];
        assert!(!kept.remember(slices(&long)));
        assert!(kept.holds(slices(&short)));
        assert!(kept.kept_bytes() <= BYTES_MAX);
        // At the bound, it is kept.
        long[7] = vec![b'k'; KEY_MAX];
        assert!(kept.remember(slices(&long)));
        assert!(kept.holds(slices(&long)));
    }

    #[test]
    fn keys_past_the_total_bound_are_not_kept() {
        let mut kept = KeptKeys::default();
        // 256 keys of 60 bytes (16,384 bytes kept) fit; of 61 they do not.
        let fits = keys(256, BYTES_MAX / 256 - 4);
        assert!(kept.remember(slices(&fits)));
        assert_eq!(kept.kept_bytes(), BYTES_MAX);
        let over = keys(256, BYTES_MAX / 256 - 3);
        assert!(!kept.remember(slices(&over)));
        assert!(kept.holds(slices(&fits)));
    }

    #[test]
    fn memory_stays_within_the_bound_whatever_is_offered() {
        let mut kept = KeptKeys::default();
        for (n, len) in [
            (33, 100_000),
            (40, 2_500),
            (256, 128),
            (100, 100),
            (33, 1),
            (200, 80),
            (126, 124),
        ] {
            kept.remember(slices(&keys(n, len)));
            assert!(kept.kept_bytes() <= BYTES_MAX, "{n} keys of {len} bytes");
        }
        // Long keys, then many empty ones: each fits, their capacities together would not.
        let empty = vec![Vec::new(); 4000];
        assert!(kept.remember(slices(&empty)));
        assert!(kept.holds(slices(&empty)));
        assert!(kept.kept_bytes() <= BYTES_MAX);
    }

    #[test]
    fn same_bytes_compares_every_length() {
        for len in 0..40 {
            let a: Vec<u8> = (0..len as u8).collect();
            assert!(same_bytes(&a, &a.clone()));
            for i in 0..len {
                let mut b = a.clone();
                b[i] ^= 1;
                assert!(!same_bytes(&a, &b), "len {len}, byte {i}");
            }
            assert!(!same_bytes(&a, &a[..len.saturating_sub(1)]) || len == 0);
        }
    }
}
