//! The written keys of objects that have the same keys, kept for the rest of one encode.
//!
//! An object's keys are given as machine words that name them: the NIF passes a flat map's keys tuple, whose
//! words are equal exactly when the keys are the same terms (a boxed key is its address). Records built from one
//! literal (`%{"id" => id, "name" => name}`, what view functions return) share their keys, as do maps made from
//! one by `Map.put` and maps decoded with interned keys. The second time an encode opens an object with a given
//! set of keys, its keys are recorded as they are written; from the third on they are copied from here, not read,
//! checked and escaped again. A cache serves one encode (one escape mode) at a time, and the keys' terms must not
//! change or move while it does; [`KeyCache::clear`] readies it for the next one, keeping its memory (the NIF
//! keeps one per scheduler thread: setting one up cost a tenth of encoding ten records).

/// Direct-mapped slots, by a hash of the key words.
const SLOTS: usize = 64;
/// Recorded bytes kept across [`KeyCache::clear`] at most.
const KEEP_BYTES: usize = 16 * 1024;
/// Recorded keys' words and spans kept across [`KeyCache::clear`] at most (8 bytes each): an object of many keys
/// reserves them all as it starts recording, and an encode that fails then has recorded few of their bytes.
const KEEP_KEYS: usize = 2048;
/// Misses a ready slot can bank.
const MAX_CREDIT: u8 = 4;
/// Recorded bytes at most: an encode with many different key sets stops recording past this.
const MAX_BYTES: usize = 64 * 1024;

/// What an object does with its keys.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum KeyUse {
    /// Written as usual.
    Write,
    /// Written as usual and recorded into `slot`, from span `first` on.
    Record { slot: u16, first: u32 },
    /// Copied from the spans from `first` on.
    Cached { first: u32 },
}

#[derive(Clone, Copy, Default)]
struct Slot {
    /// The encode this slot was set in (other generations' slots are empty).
    generation: u32,
    hash: u64,
    /// Where the keys of the object last recorded or copied here are.
    address: usize,
    state: State,
    /// The first of the recorded keys' spans and words.
    first: u32,
    len: u32,
    /// Misses a ready slot survives (one per hit, up to `MAX_CREDIT`).
    credit: u8,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Seen,
    Recording,
    Ready,
}

/// See the module's documentation.
#[derive(Default)]
pub struct KeyCache {
    generation: u32,
    slots: Vec<Slot>,
    /// The key words of each recorded key set, and each key's place in `bytes`: (start, length); one entry per key.
    words: Vec<usize>,
    spans: Vec<(u32, u32)>,
    bytes: Vec<u8>,
}

/// A hash of the first and last key words and the count, in a few instructions: a hit compares all the words.
#[inline(always)]
fn hash(keys: &[usize]) -> u64 {
    let (first, last) = match keys {
        [] => (0, 0),
        [only] => (*only, 0),
        [first, .., last] => (*first, *last),
    };
    let h = (first as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (last as u64).rotate_left(29);
    (h ^ keys.len() as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)
}

impl KeyCache {
    /// Called as an object opens, with the words naming its keys in the order they are written, found at
    /// `address` (objects with keys at one address have the same keys: their words are not compared again).
    #[inline]
    pub fn open(&mut self, address: usize, keys: &[usize]) -> KeyUse {
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); SLOTS];
            self.generation = 1;
        }
        let hash = hash(keys);
        let index = (hash >> 58) as usize;
        let generation = self.generation;
        let slot = &mut self.slots[index];
        if slot.generation != generation {
            *slot = Slot {
                generation,
                hash,
                ..Slot::default()
            };
            return KeyUse::Write;
        }
        if slot.hash != hash {
            // A ready slot that keeps being used holds its place against objects whose keys pass once (the
            // keys of decoded maps, ids as keys), which come through the slots all the time.
            if slot.state == State::Ready && slot.credit > 0 {
                slot.credit -= 1;
                return KeyUse::Write;
            }
            *slot = Slot {
                generation,
                hash,
                ..Slot::default()
            };
            return KeyUse::Write;
        }
        let first = slot.first as usize;
        match slot.state {
            State::Ready
                if slot.address == address
                    || self.words[first..first + slot.len as usize] == *keys =>
            {
                slot.address = address;
                slot.credit = (slot.credit + 1).min(MAX_CREDIT);
                KeyUse::Cached { first: slot.first }
            }
            // Same hash, other keys: written as usual.
            State::Ready => KeyUse::Write,
            // An object nested in one of the same keys while that one records: written as usual.
            State::Recording => KeyUse::Write,
            State::Seen if self.bytes.len() < MAX_BYTES && !keys.is_empty() => {
                let first = self.spans.len() as u32;
                // Every key's span reserved now: objects opened while this one records put theirs after these.
                self.spans.resize(self.spans.len() + keys.len(), (0, 0));
                self.words.extend_from_slice(keys);
                *slot = Slot {
                    generation,
                    hash,
                    address,
                    state: State::Recording,
                    first,
                    len: keys.len() as u32,
                    credit: 0,
                };
                KeyUse::Record {
                    slot: index as u16,
                    first,
                }
            }
            State::Seen => KeyUse::Write,
        }
    }

    /// Records key `i` of a recording object of `len` keys as written (`written`); the last one makes the slot
    /// ready.
    #[inline(never)]
    pub fn record(&mut self, slot: u16, first: u32, i: usize, len: usize, written: &[u8]) {
        self.spans[first as usize + i] = (self.bytes.len() as u32, written.len() as u32);
        self.bytes.extend_from_slice(written);
        if i + 1 == len {
            let slot = &mut self.slots[slot as usize];
            // The slot may have been taken by other keys meanwhile: then this recording goes unused.
            if slot.state == State::Recording && slot.first == first {
                slot.state = State::Ready;
            }
        }
    }

    /// Empties the cache for the next encode, keeping its memory (up to [`KEEP_BYTES`] of recorded keys and
    /// [`KEEP_KEYS`] of their words and spans).
    pub fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Once in 2^32 encodes: slots of this generation may be left from the last wrap.
            self.slots.fill(Slot::default());
            self.generation = 1;
        }
        self.words.clear();
        self.spans.clear();
        self.bytes.clear();
        if self.bytes.capacity() > KEEP_BYTES
            || self.words.capacity() > KEEP_KEYS
            || self.spans.capacity() > KEEP_KEYS
        {
            *self = KeyCache {
                generation: self.generation,
                slots: std::mem::take(&mut self.slots),
                ..KeyCache::default()
            };
        }
    }

    /// Key `i` of an object whose keys are cached from span `first` on, as written.
    #[inline(always)]
    pub fn key(&self, first: u32, i: usize) -> &[u8] {
        let (start, len) = self.spans[first as usize + i];
        &self.bytes[start as usize..(start + len) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Opens an object whose keys are the given words, at an address of their own (as a new map's would be).
    fn open_words(cache: &mut KeyCache, keys: &[usize]) -> KeyUse {
        let own: &'static [usize] = Vec::leak(keys.to_vec());
        cache.open(own.as_ptr() as usize, own)
    }

    fn warm(cache: &mut KeyCache) {
        assert_eq!(cache.open(0, &[8]), KeyUse::Write);
    }

    #[test]
    fn keys_seen_twice_are_recorded_then_copied() {
        let mut cache = KeyCache::default();
        warm(&mut cache);
        assert_eq!(
            open_words(&mut cache, &[0x7f00_1000, 0x7f00_1010]),
            KeyUse::Write
        );
        let KeyUse::Record { slot, first } = open_words(&mut cache, &[0x7f00_1000, 0x7f00_1010])
        else {
            panic!("second sighting records")
        };
        // Still recording: an object of the same keys inside it writes its own.
        assert_eq!(
            open_words(&mut cache, &[0x7f00_1000, 0x7f00_1010]),
            KeyUse::Write
        );
        cache.record(slot, first, 0, 2, b"\"id\"");
        cache.record(slot, first, 1, 2, b"\"name\"");
        // The same words from another object: the same keys.
        let other = vec![0x7f00_1000, 0x7f00_1010];
        let KeyUse::Cached { first } = cache.open(other.as_ptr() as usize, &other) else {
            panic!("third sighting copies")
        };
        assert_eq!(cache.key(first, 0), b"\"id\"");
        assert_eq!(cache.key(first, 1), b"\"name\"");
        // Other keys, or the same in another order, are not these.
        assert_eq!(
            open_words(&mut cache, &[0x7f00_1010, 0x7f00_1000]),
            KeyUse::Write
        );
        assert_eq!(open_words(&mut cache, &[0x7f00_1000]), KeyUse::Write);
    }

    /// Key words whose slot is `slot`, other than `not`.
    fn rival(slot: u16, not: usize) -> usize {
        (1..1 << 20)
            .map(|n| not + n * 8)
            .find(|&w| (hash(&[w]) >> 58) as u16 == slot)
            .unwrap()
    }

    #[test]
    fn a_slot_taken_by_other_keys_while_recording_is_not_made_ready() {
        let mut cache = KeyCache::default();
        warm(&mut cache);
        let keys = 0x7f00_2000;
        open_words(&mut cache, &[keys]);
        let KeyUse::Record { slot, first } = open_words(&mut cache, &[keys]) else {
            panic!("records")
        };
        let rival = rival(slot, keys);
        assert_eq!(open_words(&mut cache, &[rival]), KeyUse::Write);
        cache.record(slot, first, 0, 1, b"\"a\"");
        assert_eq!(
            open_words(&mut cache, &[rival]),
            KeyUse::Record {
                slot,
                first: first + 1
            }
        );
        assert_eq!(open_words(&mut cache, &[keys]), KeyUse::Write);
    }

    #[test]
    fn a_ready_slot_in_use_outlives_keys_that_pass_once() {
        let mut cache = KeyCache::default();
        warm(&mut cache);
        let keys = 0x7f00_5000;
        open_words(&mut cache, &[keys]);
        let KeyUse::Record { slot, first } = open_words(&mut cache, &[keys]) else {
            panic!("records")
        };
        cache.record(slot, first, 0, 1, b"\"k\"");
        for n in 0..100 {
            assert!(matches!(
                open_words(&mut cache, &[keys]),
                KeyUse::Cached { .. }
            ));
            assert_eq!(
                open_words(&mut cache, &[rival(slot, keys + n * 8)]),
                KeyUse::Write
            );
        }
        // Unused, it gives the slot up.
        for n in 0..=MAX_CREDIT as usize {
            open_words(&mut cache, &[rival(slot, keys + n * 8)]);
        }
        assert_eq!(open_words(&mut cache, &[keys]), KeyUse::Write);
    }

    #[test]
    fn objects_recording_inside_each_other_keep_their_own_spans() {
        let mut cache = KeyCache::default();
        warm(&mut cache);
        let (outer, inner) = ([0x7f00_3000, 0x7f00_3008], [0x7f00_4008]);
        cache.open(outer.as_ptr() as usize, &outer);
        cache.open(inner.as_ptr() as usize, &inner);
        let KeyUse::Record { slot: o, first: of } = cache.open(outer.as_ptr() as usize, &outer)
        else {
            panic!("outer records")
        };
        cache.record(o, of, 0, 2, b"\"a\"");
        // The inner object opens between the outer's keys.
        let KeyUse::Record {
            slot: i,
            first: inf,
        } = cache.open(inner.as_ptr() as usize, &inner)
        else {
            panic!("inner records")
        };
        cache.record(i, inf, 0, 1, b"\"x\"");
        cache.record(o, of, 1, 2, b"\"b\"");
        let (KeyUse::Cached { first: of }, KeyUse::Cached { first: inf }) = (
            cache.open(outer.as_ptr() as usize, &outer),
            cache.open(inner.as_ptr() as usize, &inner),
        ) else {
            panic!("both cached")
        };
        assert_eq!(
            (cache.key(of, 0), cache.key(of, 1)),
            (&b"\"a\""[..], &b"\"b\""[..])
        );
        assert_eq!(cache.key(inf, 0), b"\"x\"");
    }

    #[test]
    fn recording_stops_at_the_byte_bound() {
        let mut cache = KeyCache::default();
        warm(&mut cache);
        let key = vec![b'k'; 1000];
        let mut recorded = 0;
        for n in 0..200 {
            let keys = [0x10_0000 + n * 4096];
            cache.open(keys.as_ptr() as usize, &keys);
            if let KeyUse::Record { slot, first } = cache.open(keys.as_ptr() as usize, &keys) {
                cache.record(slot, first, 0, 1, &key);
                recorded += 1;
            }
        }
        assert_eq!(recorded, MAX_BYTES.div_ceil(key.len()));
        assert!(cache.bytes.len() < MAX_BYTES + key.len());
    }

    #[test]
    fn a_clear_drops_the_words_of_a_large_object_that_never_recorded() {
        let mut cache = KeyCache::default();
        warm(&mut cache);
        let keys: Vec<usize> = (0..100_000).map(|i| 0x10_0000 + i * 8).collect();
        cache.open(keys.as_ptr() as usize, &keys);
        // Recording starts (every key's word and span reserved), and the encode fails before any key is written.
        assert!(matches!(
            cache.open(keys.as_ptr() as usize, &keys),
            KeyUse::Record { .. }
        ));
        cache.clear();
        assert!(cache.words.capacity() <= KEEP_KEYS && cache.spans.capacity() <= KEEP_KEYS);
        assert!(cache.bytes.capacity() <= KEEP_BYTES);
    }

    #[test]
    fn a_cleared_cache_starts_over() {
        let mut cache = KeyCache::default();
        let keys = [0x7f00_6000, 0x7f00_6008];
        cache.open(keys.as_ptr() as usize, &keys);
        let KeyUse::Record { slot, first } = cache.open(keys.as_ptr() as usize, &keys) else {
            panic!("records")
        };
        cache.record(slot, first, 0, 2, b"\"a\"");
        cache.record(slot, first, 1, 2, b"\"b\"");
        assert!(matches!(
            cache.open(keys.as_ptr() as usize, &keys),
            KeyUse::Cached { .. }
        ));
        cache.clear();
        // The next encode (another escape mode, perhaps) sees these keys for the first time.
        assert_eq!(cache.open(keys.as_ptr() as usize, &keys), KeyUse::Write);
        assert!(matches!(
            cache.open(keys.as_ptr() as usize, &keys),
            KeyUse::Record { first: 0, .. }
        ));
        // Across the generation counter's wrap too.
        cache.generation = u32::MAX;
        cache.clear();
        assert_eq!(cache.open(keys.as_ptr() as usize, &keys), KeyUse::Write);
    }
}
