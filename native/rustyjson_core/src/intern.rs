//! The per-call key cache behind `keys: :intern`: key bytes (a span of the input) to the key's value, so a key
//! repeated across objects is built once.
//!
//! A caller may keep one cache and [`KeyCache::restart`] it for each input: entries of earlier inputs are then
//! ignored by their generation, and the table is not allocated and cleared again per call.
//!
//! A small open-addressing table keyed by a fast hash of short keys. It watches its hit rate and switches itself
//! off when hits are rare (documents whose keys never repeat), so it then costs one branch per key.

/// Keys longer than this are never cached (they rarely repeat, and hashing them costs).
pub const MAX_KEY: usize = 64;
const SLOTS: usize = 1024;
const PROBES: usize = 4;
/// The first check comes after `FIRST_WINDOW` lookups and gives up only if none of them hit (a document whose
/// first keys never repeat, such as one object with unique keys), and in the document's first object it only
/// waits for that object to end (see `KeyCache::check`); later checks come every `WINDOW` lookups and give up
/// when fewer than a quarter hit.
const FIRST_WINDOW: u32 = 8;
const WINDOW: u32 = 256;
/// A cache that gave up tries again (for `FIRST_WINDOW` lookups) after this many keys: documents that start
/// with keys that never repeat but repeat others later still get the hits, while documents whose keys never
/// repeat pay for about one key in sixty-four.
const RETRY_AFTER: u32 = 512;

/// No slot (`KeyCache::last`, `Slot::next`).
const NONE: u16 = u16::MAX;

/// A cached key in 32 bytes (so the table stays within 32 KB): keys of up to 16 bytes are held as two words
/// (`a`, `b`, zero-padded) and compared without touching the input; longer ones keep a hash in `a` and their
/// start in the input in `b`, and are compared byte for byte.
#[derive(Clone, Copy)]
struct Slot<V> {
    a: u64,
    b: u64,
    value: V,
    len: u16,
    /// The slot of the key that followed this one the last time (the next key is predicted from it), and of
    /// the other key that followed it before that: a key like `"id"` or `"url"` that several kinds of object
    /// share is followed by one of a few keys, and the second guess takes most of the rest.
    next: u16,
    next2: u16,
    /// The entry is live only when this is the cache's generation.
    gen: u16,
}

/// The first `n` (< 8) bytes of a little-endian word.
#[inline(always)]
fn low_bytes(n: usize) -> u64 {
    if n == 0 {
        0
    } else {
        u64::MAX >> (64 - 8 * n)
    }
}

/// A key of at most 16 bytes as two zero-padded words.
#[inline(always)]
fn short_key(input: &[u8], start: usize, len: usize) -> Option<(u64, u64)> {
    if len > 16 {
        return None;
    }
    let mut buf = [0u8; 16];
    let w = match input.get(start..start + 16) {
        Some(w) => w,
        None => {
            // Near the end of the input: the same words from a zero-padded copy.
            buf[..len].copy_from_slice(input.get(start..start + len)?);
            &buf[..]
        }
    };
    let a = u64::from_le_bytes(w[..8].try_into().unwrap());
    let b = u64::from_le_bytes(w[8..].try_into().unwrap());
    Some(if len >= 8 {
        (a, b & low_bytes(len - 8))
    } else {
        (a & low_bytes(len), 0)
    })
}

pub use crate::parser::ExpectedKey;

/// Where a key stands in a [`KeyCache`] ([`KeyCache::lookup`]).
pub enum Lookup<V> {
    /// Cached: its value.
    Hit(V),
    /// Not cached, and a slot is free for it: make its value and [`KeyCache::fill`] the slot.
    Vacant(Vacant),
    /// Not cached and not to be (the cache is off, the key is long, or its slots are taken): make its value.
    Skip,
}

/// The free slot a key goes in, and the key's words (see [`Lookup::Vacant`]).
pub struct Vacant {
    slot: usize,
    a: u64,
    b: u64,
    len: u16,
}

/// A bounded cache from key bytes to values, valid for one parse of one input.
pub struct KeyCache<V: Copy + Default> {
    slots: Vec<Slot<V>>,
    lookups: u32,
    hits: u32,
    /// Lookups left before the next hit-rate check.
    check_in: u32,
    /// Keys to skip before trying again, while off.
    off_for: u32,
    /// In the call's first window (see `FIRST_WINDOW`).
    first: bool,
    enabled: bool,
    /// Counts inputs (never wraps in practice); a slot holds its low 16 bits.
    gen: u64,
    /// The slot of the last key looked up (or `NONE`): its `next` predicts the key after it.
    last: u16,
    /// `next` and `next2` of `last`'s slot, kept here as `last` changes: a prediction then starts one dependent
    /// load closer.
    ahead: u16,
    ahead2: u16,
    /// An object has ended in this input; the cache waits for that before it gives up on a first window.
    object_seen: bool,
    waiting: bool,
}

impl<V: Copy + Default> Default for KeyCache<V> {
    fn default() -> Self {
        Self::new()
    }
}

#[inline(always)]
fn hash(bytes: &[u8]) -> u32 {
    (hash_bytes(bytes) >> 32) as u32
}

/// A fast 64-bit hash of `bytes` (FxHash-style, eight bytes a step; length included). Not for adversaries:
/// callers compare the bytes on a match.
#[inline(always)]
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = bytes.len() as u64;
    let (chunks, rest) = bytes.as_chunks::<8>();
    for c in chunks {
        h = (h.rotate_left(5) ^ u64::from_le_bytes(*c)).wrapping_mul(K);
    }
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
    }
    h
}

impl<V: Copy + Default> KeyCache<V> {
    pub fn new() -> Self {
        KeyCache {
            slots: Vec::new(),
            lookups: 0,
            hits: 0,
            check_in: FIRST_WINDOW,
            off_for: 0,
            first: true,
            enabled: true,
            gen: 1,
            last: NONE,
            ahead: NONE,
            ahead2: NONE,
            object_seen: false,
            waiting: false,
        }
    }

    /// Empties the cache for a new input (in constant time: entries of earlier generations are dead).
    pub fn restart(&mut self) {
        self.lookups = 0;
        self.hits = 0;
        self.check_in = FIRST_WINDOW;
        self.off_for = 0;
        self.first = true;
        self.enabled = true;
        self.forget_last();
        self.object_seen = false;
        self.waiting = false;
        self.gen += 1;
        if self.gen as u16 == 0 {
            // A slot's 16 bits wrapped: entries from 2^16 inputs ago must not come back to life (clearing the
            // table once in 65,535 inputs costs less than a wider field, which would not fit a slot in 32 bytes).
            for slot in &mut self.slots {
                slot.gen = 0;
            }
            self.gen += 1;
        }
    }

    /// The current generation (changes with every [`KeyCache::restart`]); a caller can tag its own per-input
    /// data with it.
    pub fn generation(&self) -> u64 {
        self.gen
    }

    /// Whether the cache still looks keys up (false once it has given up on a low hit rate).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether the next key should be looked up: true while the cache is on; while it is off, counts the key
    /// towards the next try (the caller then builds the key itself).
    #[inline(always)]
    pub fn look_up_next(&mut self) -> bool {
        if self.enabled {
            return true;
        }
        self.off_for -= 1;
        if self.off_for == 0 {
            self.enabled = true;
            self.check_in = FIRST_WINDOW;
            self.lookups = 0;
            self.hits = 0;
        }
        false
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
        match self.lookup(input, start, end) {
            Lookup::Hit(v) => Ok(v),
            Lookup::Vacant(vacant) => {
                let v = make()?;
                self.fill(vacant, v);
                Ok(v)
            }
            Lookup::Skip => make(),
        }
    }

    /// Where the key at `input[start..end]` stands: cached, or where its value goes once made ([`KeyCache::fill`]),
    /// or not to be cached. Two steps rather than a closure, so a caller makes the value with its own state
    /// (taking the cache out of a builder to call a closure on the builder moved it through memory twice per
    /// key, and read it back in wide loads from narrow stores: a failed store forwarding).
    #[inline]
    pub fn lookup(&mut self, input: &[u8], start: usize, end: usize) -> Lookup<V> {
        let len = end - start;
        if !self.look_up_next() || len > MAX_KEY {
            self.forget_last();
            return Lookup::Skip;
        }
        self.count_lookup();
        if self.slots.is_empty() {
            self.slots = vec![
                Slot {
                    a: 0,
                    b: 0,
                    value: V::default(),
                    len: 0,
                    next: NONE,
                    next2: NONE,
                    gen: 0,
                };
                SLOTS
            ];
        }
        let key = &input[start..end];
        let (a, b, short) = match short_key(input, start, len) {
            Some((a, b)) => (a, b, true),
            None => (hash(key) as u64, start as u64, false),
        };
        // A long key's `b` is where it starts, not part of its bytes: only `a` (its hash) places it.
        let bits = if short { b } else { 0 };
        // The product's top bits: every input bit reaches them (a middle slice missed the key's last byte, so
        // `field_10` to `field_19` shared one slot and the fifth of them was never cached).
        let h = (a ^ bits.rotate_left(29) ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut i = (h >> (64 - SLOTS.trailing_zeros())) as usize;
        for _ in 0..PROBES {
            let slot = &self.slots[i];
            if slot.gen != self.gen as u16 {
                return Lookup::Vacant(Vacant {
                    slot: i,
                    a,
                    b,
                    len: len as u16,
                });
            }
            if slot.len as usize == len && slot.a == a {
                let same = if short {
                    slot.b == b
                } else {
                    let s = slot.b as usize;
                    &input[s..s + len] == key
                };
                if same {
                    let v = slot.value;
                    self.hits += 1;
                    self.follows(i);
                    return Lookup::Hit(v);
                }
            }
            i = (i + 1) & (SLOTS - 1);
        }
        self.forget_last();
        Lookup::Skip
    }

    /// Caches `value` for the key [`KeyCache::lookup`] found vacant (before any other lookup).
    #[inline]
    pub fn fill(&mut self, vacant: Vacant, value: V) {
        let Vacant { slot, a, b, len } = vacant;
        self.slots[slot] = Slot {
            a,
            b,
            value,
            len,
            next: NONE,
            next2: NONE,
            gen: self.gen as u16,
        };
        self.follows(slot);
    }

    /// Slot `i` holds the key just looked up: it is the last key's successor, and predicts the next (when it is
    /// short enough to be expected).
    #[inline(always)]
    fn follows(&mut self, i: usize) {
        let next = if self.slots[i].len as usize <= ExpectedKey::MAX_LEN {
            i as u16
        } else {
            NONE
        };
        if let Some(last) = self.slots.get_mut(self.last as usize) {
            if last.next != next {
                last.next2 = last.next;
                last.next = next;
            }
        }
        self.last = i as u16;
        self.ahead = self.slots[i].next;
        self.ahead2 = self.slots[i].next2;
    }

    /// No last key, so nothing to predict the next one from.
    #[inline(always)]
    fn forget_last(&mut self) {
        self.last = NONE;
        self.ahead = NONE;
        self.ahead2 = NONE;
    }

    /// Counts a lookup towards the hit-rate check, which runs (before it) once a window of lookups is done.
    #[inline(always)]
    fn count_lookup(&mut self) {
        if self.check_in == 0 {
            self.check();
        }
        self.lookups += 1;
        self.check_in -= 1;
    }

    /// Gives up when too few of the window's lookups hit. In the document's first object no key can have
    /// repeated yet, so a first window of misses there only waits (looking nothing up) for that object to end,
    /// then tries one more window: an array of wide same-shaped objects repeats from its second object on, while
    /// one large object of unique keys costs just the first window.
    #[cold]
    fn check(&mut self) {
        let give_up = if self.first {
            self.hits == 0
        } else {
            self.hits * 4 < self.lookups
        };
        self.check_in = WINDOW;
        self.lookups /= 2;
        self.hits /= 2;
        if !give_up {
            self.first = false;
        } else if self.first && !self.object_seen {
            self.enabled = false;
            self.waiting = true;
            self.off_for = u32::MAX;
        } else {
            self.first = false;
            self.enabled = false;
            self.off_for = RETRY_AFTER;
        }
    }

    /// An object ended (the caller says so for each one): the cache's wait for the first object ends.
    #[inline(always)]
    pub fn object_done(&mut self) {
        let first_object = !self.object_seen;
        self.object_seen = true;
        // Waiting, or the first window ended with the first object: its misses say nothing yet, so a fresh
        // first window starts with the next object.
        if self.waiting || (first_object && self.first && self.check_in == 0) {
            self.waiting = false;
            self.enabled = true;
            self.check_in = FIRST_WINDOW;
            self.lookups = 0;
            self.hits = 0;
        }
    }

    /// The key that followed the last one the last time, when it is short enough to be matched in one 16-byte
    /// load with its quotes: a parser that finds it next takes it with [`KeyCache::take_expected`], with no
    /// scan and no hash. Same-shaped objects repeat their keys in the same order, so this is the common case.
    #[inline(always)]
    pub fn expected(&self) -> Option<ExpectedKey> {
        if !self.enabled {
            return None;
        }
        // `ahead` (the `next` of `last`, a slot of this input) is a slot of this input too when set: a slot's
        // `next` restarts when a key takes the slot, and a slot of this input is not taken again before the next
        // restart. `follows` links only keys short enough to expect.
        self.expected_at(self.ahead)
    }

    /// The other key that followed the last one before (see [`KeyCache::expected`]), tried when the expected
    /// one is not next; taken with [`KeyCache::take_alternate`].
    #[inline(always)]
    pub fn alternate(&self) -> Option<ExpectedKey> {
        if !self.enabled {
            return None;
        }
        self.expected_at(self.ahead2)
    }

    #[inline(always)]
    fn expected_at(&self, i: u16) -> Option<ExpectedKey> {
        let slot = self.slots.get(i as usize)?;
        debug_assert!(slot.gen == self.gen as u16 && slot.len as usize <= ExpectedKey::MAX_LEN);
        Some(ExpectedKey::new(slot.a, slot.b, slot.len as usize))
    }

    /// The value of the key [`KeyCache::expected`] returned, which the input held next. Counted as a hit but not
    /// as a lookup: the hit-rate check is about the keys that had to be looked up, and needs no window while the
    /// predictions hold (a check then also finds more hits than a quarter of its lookups).
    #[inline(always)]
    pub fn take_expected(&mut self) -> V {
        self.take(self.ahead)
    }

    /// The value of the key [`KeyCache::alternate`] returned, which the input held next: it becomes the first
    /// guess after the last key, and the other one the second.
    #[inline(always)]
    pub fn take_alternate(&mut self) -> V {
        let last = &mut self.slots[self.last as usize];
        std::mem::swap(&mut last.next, &mut last.next2);
        self.take(self.ahead2)
    }

    #[inline(always)]
    fn take(&mut self, next: u16) -> V {
        let slot = &self.slots[next as usize];
        self.hits += 1;
        self.last = next;
        self.ahead = slot.next;
        self.ahead2 = slot.next2;
        slot.value
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
    fn unique_keys_switch_it_off_and_it_tries_again() {
        let input: Vec<u8> = (0..20_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut cache = KeyCache::<u32>::new();
        let get = |cache: &mut KeyCache<u32>, i: usize| {
            cache
                .get_or_insert::<()>(&input, i * 4, i * 4 + 4, || Ok(i as u32))
                .unwrap()
        };
        // Objects have ended (many small objects of unique keys): the first window of misses gives up.
        cache.object_done();
        for i in 0..FIRST_WINDOW as usize {
            get(&mut cache, i);
        }
        assert!(cache.enabled(), "the check runs before the next lookup");
        get(&mut cache, FIRST_WINDOW as usize);
        assert!(!cache.enabled(), "off after {FIRST_WINDOW} misses");
        for i in 0..RETRY_AFTER as usize - 1 {
            get(&mut cache, 100 + i);
            assert!(!cache.enabled());
        }
        get(&mut cache, 0);
        assert!(cache.enabled(), "on again after {RETRY_AFTER} keys");
        // The first keys were kept while it was off: a document that repeats them keeps it on.
        for round in 0..8 {
            for i in 0..FIRST_WINDOW as usize {
                assert_eq!(get(&mut cache, i), i as u32, "round {round}");
            }
            assert!(cache.enabled());
        }
    }

    #[test]
    fn in_the_first_object_a_window_of_misses_waits_for_its_end() {
        // Arrays of wide objects: the first object's keys all miss, the next object's repeat them.
        let input: Vec<u8> = (0..20_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut cache = KeyCache::<u32>::new();
        // The key `i` with `v` as its value if it is not cached.
        let get = |cache: &mut KeyCache<u32>, i: usize, v: u32| {
            cache
                .get_or_insert::<()>(&input, i * 4, i * 4 + 4, || Ok(v))
                .unwrap()
        };
        let window = FIRST_WINDOW as usize;
        let wide = window + 8;
        for i in 0..wide {
            get(&mut cache, i, 1);
        }
        assert!(
            !cache.enabled(),
            "waiting: the rest of the first object is not looked up"
        );
        assert!(cache.expected().is_none());
        cache.object_done();
        assert!(cache.enabled(), "on again when the first object ends");
        // The window's keys (and the one looked up as it closed) were cached; the rest were not.
        for i in 0..wide {
            let cached = if i <= window { 1 } else { 2 };
            assert_eq!(get(&mut cache, i, 2), cached, "key {i}");
        }
        cache.object_done();
        for round in 0..4 {
            for i in 0..wide {
                assert_eq!(get(&mut cache, i, 3), if i <= window { 1 } else { 2 });
            }
            cache.object_done();
            assert!(cache.enabled(), "round {round}");
        }
        // A first object of exactly a window's keys: the next object gets its own first window.
        cache.restart();
        for i in 0..window {
            get(&mut cache, 200 + i, 7);
        }
        cache.object_done();
        for i in 0..window {
            assert_eq!(get(&mut cache, 200 + i, 8), 7);
        }
        get(&mut cache, 200, 8);
        assert!(cache.enabled());
        // One large object of unique keys: the first window only, then nothing until it ends.
        cache.restart();
        for i in 0..1000 {
            get(&mut cache, 1000 + i, 4);
        }
        assert!(!cache.enabled());
        assert_eq!(
            get(&mut cache, 1000 + window + 5, 5),
            5,
            "not cached while waiting"
        );
        // It ends, and the next window of misses gives up (objects have ended now).
        cache.object_done();
        for i in 0..=window {
            get(&mut cache, 5000 + i, 6);
        }
        assert!(!cache.enabled());
        cache.object_done();
        assert!(!cache.enabled(), "given up, not waiting");
    }

    #[test]
    fn keys_that_differ_in_one_byte_are_all_cached() {
        // `field_10` to `field_99`, and keys differing only in their 8th or 16th byte.
        let mut input = Vec::new();
        let mut spans = Vec::new();
        for prefix in ["field_", "abcdefg", "abcdefghijklmno", "a"] {
            for i in 0..40 {
                let start = input.len();
                input.extend(format!("{prefix}{i}").bytes());
                spans.push((start, input.len()));
            }
        }
        let mut cache = KeyCache::<usize>::new();
        // Each key twice in a row, so the hit rate keeps the cache on.
        for round in 0..6 {
            for (k, &(s, e)) in spans.iter().enumerate().flat_map(|x| [x, x]) {
                let v = cache.get_or_insert::<()>(&input, s, e, || Ok(k + round * 1000));
                let key = std::str::from_utf8(&input[s..e]).unwrap();
                assert_eq!(v, Ok(k), "key {key} round {round}");
            }
        }
    }

    #[test]
    fn a_first_window_with_some_repeats_stays_on() {
        // Mostly new keys (a wide first object) with two repeats: kept on, unlike keys that never repeat.
        let input: Vec<u8> = (0..20_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut cache = KeyCache::<u32>::new();
        for i in 0..FIRST_WINDOW as usize {
            let k = if i % 8 == 7 { 0 } else { i };
            cache
                .get_or_insert::<()>(&input, k * 4, k * 4 + 4, || Ok(k as u32))
                .unwrap();
        }
        assert!(cache.enabled());
    }

    #[test]
    fn short_and_long_keys_of_every_length() {
        // Keys of every length up to 40, each twice, near and far from the end of the input.
        let mut input = Vec::new();
        let mut spans = Vec::new();
        for len in 1..=40usize {
            for copy in 0..2 {
                let start = input.len();
                input.extend((0..len).map(|i| b'a' + ((i * 7 + len) % 26) as u8));
                spans.push((len, copy, start, input.len()));
                input.push(b',');
            }
        }
        let mut cache = KeyCache::<usize>::new();
        let mut firsts = std::collections::HashMap::new();
        for &(len, copy, start, end) in &spans {
            let v = cache
                .get_or_insert::<()>(&input, start, end, || Ok(len * 10 + copy))
                .unwrap();
            let first = *firsts.entry(len).or_insert(v);
            assert_eq!(v, first, "len {len} copy {copy}");
            assert_eq!(v, len * 10, "len {len}");
        }
        // A prefix of a cached key is a different key.
        let v = cache.get_or_insert::<()>(&input, 0, 0, || Ok(999)).unwrap();
        assert_eq!(v, 999);
    }

    /// Where the first `"k"` of `input` starts and ends (without its quotes).
    fn key_span(input: &[u8], k: &str) -> (usize, usize) {
        let q = format!("\"{k}\"");
        let s = input
            .windows(q.len())
            .position(|w| w == q.as_bytes())
            .unwrap()
            + 1;
        (s, s + k.len())
    }

    /// The cached value of the first `"k"` of `input`, or `v` (then cached).
    fn get_key(cache: &mut KeyCache<u32>, input: &[u8], k: &str, v: u32) -> u32 {
        let (s, e) = key_span(input, k);
        cache.get_or_insert::<()>(input, s, e, || Ok(v)).unwrap()
    }

    #[test]
    fn the_key_that_followed_last_time_is_expected() {
        // Three objects' keys: "id","name" twice, then "id","nick".
        let input =
            br#"{"id":1,"name":2},{"id":3,"name":4},{"id":5,"nick":6},"long_key_of_20_bytes""#;
        let span = |k: &str| key_span(input, k);
        let mut cache = KeyCache::<u32>::new();
        let get = |c: &mut KeyCache<u32>, k: &str, v: u32| get_key(c, input, k, v);
        assert!(cache.expected().is_none(), "nothing seen yet");
        assert_eq!(get(&mut cache, "id", 1), 1);
        assert!(cache.expected().is_none(), "nothing followed \"id\" yet");
        assert_eq!(get(&mut cache, "name", 2), 2);
        assert_eq!(get(&mut cache, "id", 9), 1);
        // "name" followed "id": expected, and matched where the input holds it.
        let e = cache.expected().unwrap();
        assert_eq!(e.len(), 4);
        let (s, _) = span("name");
        let quoted = &input[s - 1..];
        assert!(quoted.starts_with(b"\"name\""));
        assert_eq!(cache.take_expected(), 2);
        // After "name" came "id": expected again.
        assert_eq!(cache.expected().unwrap().len(), 2);
        assert_eq!(cache.take_expected(), 1);
        // "nick" instead of the expected "name": looked up, and it now follows "id".
        assert_eq!(get(&mut cache, "nick", 6), 6);
        assert_eq!(get(&mut cache, "id", 9), 1);
        assert_eq!(cache.expected().unwrap().len(), 4);
        assert_eq!(cache.take_expected(), 6);
        // A key longer than an expected key can be is never expected.
        assert_eq!(get(&mut cache, "long_key_of_20_bytes", 7), 7);
        assert_eq!(get(&mut cache, "nick", 9), 6);
        assert_eq!(get(&mut cache, "long_key_of_20_bytes", 9), 7);
        assert_eq!(get(&mut cache, "nick", 9), 6);
        assert!(cache.expected().is_none());
        // A restart forgets the order too.
        get(&mut cache, "id", 1);
        get(&mut cache, "name", 2);
        get(&mut cache, "id", 1);
        assert!(cache.expected().is_some());
        cache.restart();
        get(&mut cache, "id", 1);
        assert!(cache.expected().is_none());
    }

    #[test]
    fn a_second_guess_is_the_other_key_that_followed() {
        // (Padded: a key is matched in a 16-byte load, which needs the bytes after it.)
        let input = br#"{"id":1,"name":2},{"id":3,"nick":4}                "#;
        let span = |k: &str| key_span(input, k);
        let mut cache = KeyCache::<u32>::new();
        let get = |c: &mut KeyCache<u32>, k: &str, v: u32| get_key(c, input, k, v);
        get(&mut cache, "id", 1);
        get(&mut cache, "name", 2);
        get(&mut cache, "id", 9);
        assert!(
            cache.alternate().is_none(),
            "one key has followed \"id\" so far"
        );
        assert_eq!(cache.expected().unwrap().len(), 4);
        // "nick" this time: it is the first guess after "id" now, and "name" the second.
        get(&mut cache, "nick", 4);
        get(&mut cache, "id", 9);
        let (expected, alternate) = (cache.expected().unwrap(), cache.alternate().unwrap());
        let (name, nick) = (span("name").0 - 1, span("nick").0 - 1);
        assert!(expected.at(input, nick) && !expected.at(input, name));
        assert!(alternate.at(input, name) && !alternate.at(input, nick));
        // Taking the second guess swaps them for the next time "id" comes.
        assert_eq!(cache.take_alternate(), 2);
        get(&mut cache, "id", 9);
        assert!(cache.expected().unwrap().at(input, name));
        assert!(cache.alternate().unwrap().at(input, nick));
        assert_eq!(cache.take_expected(), 2);
    }

    #[test]
    fn restart_forgets_earlier_inputs() {
        let first = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let second = b"abcdefghijklmnopqrstuvwxyZ0123456789";
        let mut cache = KeyCache::<u32>::new();
        for (s, e) in [(0, 3), (0, 20), (3, 30)] {
            assert_eq!(cache.get_or_insert::<()>(first, s, e, || Ok(1)), Ok(1));
        }
        let gen = cache.generation();
        cache.restart();
        assert_ne!(cache.generation(), gen);
        // Same spans, a new input: nothing comes from the first one.
        for (s, e) in [(0, 3), (0, 20), (3, 30)] {
            assert_eq!(cache.get_or_insert::<()>(second, s, e, || Ok(2)), Ok(2));
            assert_eq!(cache.get_or_insert::<()>(second, s, e, || Ok(3)), Ok(2));
        }
        // A cache that gave up works again after a restart.
        let input: Vec<u8> = (0..20_000u32).flat_map(|i| i.to_le_bytes()).collect();
        for i in 0..5_000 {
            cache
                .get_or_insert::<()>(&input, i * 4, i * 4 + 4, || Ok(0))
                .unwrap();
        }
        assert!(!cache.enabled());
        cache.restart();
        assert!(cache.enabled());
        // A slot keeps 16 bits of the generation: an entry made 2^16 inputs before has the same bits, and is not
        // revived because the table is cleared as the bits wrap; the cache's own count (which callers tag their
        // data with) goes on growing.
        cache.gen = 1 << 16 | 1;
        cache.get_or_insert::<()>(first, 0, 3, || Ok(7)).unwrap();
        cache.gen = 2 << 16 | 0xFFFF;
        cache.restart();
        assert_eq!(cache.generation(), 3 << 16 | 1);
        assert_eq!(cache.get_or_insert::<()>(first, 0, 3, || Ok(8)), Ok(8));
    }

    #[test]
    fn errors_pass_through() {
        let mut cache = KeyCache::<u32>::new();
        assert_eq!(cache.get_or_insert(b"k", 0, 1, || Err("no")), Err("no"));
        assert_eq!(cache.get_or_insert::<()>(b"k", 0, 1, || Ok(7)), Ok(7));
    }
}
