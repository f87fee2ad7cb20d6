//! Objects into maps: flat maps of 2-32 keys sorted here (and written by `term::write`, or shared under
//! `keys: :intern`), large maps from the VM's trie of an earlier object with the same keys (`term::hamt`) or built
//! by the VM, and duplicate keys resolved as Jason does (the first wins).

use super::*;
use rustyjson_core::kept_keys::KeptKeys;

/// Large-object shapes remembered (2^LARGE_SHAPE_BITS slots, by a hash of the key bytes). What a thread keeps
/// here is bounded: per slot at most `kept_keys::BYTES_MAX` (16 KB) of keys and a trie of at most
/// `hamt::MAX_KEYS` leaves (under 25 KB), so 16 slots hold well under 1 MB.
pub(super) const LARGE_SHAPE_BITS: u32 = 4;

/// A sequence of keys of a large object (33 to `hamt::MAX_KEYS` binary keys) and, from its second sighting, the
/// trie the VM built for it. Kept between calls, so bounded in bytes: a sequence of long keys is not remembered
/// (see [`KeptKeys`]), and the slot keeps what it held.
#[derive(Default)]
pub(super) struct LargeShape {
    hash: u64,
    keys: KeptKeys,
    template: Option<hamt::Template>,
    /// The trie could not be read (or the keys repeat): leave this shape to the VM.
    refused: bool,
    /// Only `hash` is kept: a shape met once (see [`LargeShape::sighted`]).
    once: bool,
}

impl LargeShape {
    fn holds(&self, hash: u64, keys: &[Key]) -> bool {
        self.hash == hash && self.keys.holds(keys.iter().map(Key::bytes))
    }

    fn remember(&mut self, hash: u64, keys: &[Key]) {
        self.once = false;
        if !self.keys.remember(keys.iter().map(Key::bytes)) {
            return;
        }
        self.hash = hash;
        self.template = None;
        self.refused = false;
    }

    /// A shape met for the first time: only its hash is kept, and the shape held before is forgotten.
    fn sighted(&mut self, hash: u64) {
        self.keys.remember(std::iter::empty());
        self.hash = hash;
        self.once = true;
        self.template = None;
        self.refused = false;
    }
}

/// Shapes remembered by `keys: :intern` (2^SHAPE_BITS slots).
const SHAPE_BITS: u32 = 5;

/// An object shape under `keys: :intern`: its key terms in document order, their sorted order and the keys
/// tuple in that order.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    /// Live only when this is the key cache's generation.
    gen: u64,
    n: u8,
    terms: [usize; FLATMAP_MAX],
    idx: [u8; FLATMAP_MAX],
    tuple: Option<T>,
}

impl Shape {
    const EMPTY: Shape = Shape {
        gen: 0,
        n: 0,
        terms: [0; FLATMAP_MAX],
        idx: [0; FLATMAP_MAX],
        tuple: None,
    };
}

/// A hash of a key sequence: each key's length and first and last 8 bytes, mixed on their own (the keys' hashes
/// are independent: a chain of multiplies through every byte of every key was most of a large map's build), then
/// folded in order. Only a slot's guess: [`LargeShape::holds`] compares the bytes.
fn keys_hash(keys: &[Key]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let h = keys.iter().fold(keys.len() as u64, |h, k| {
        let b = k.bytes();
        let ends = match b.last_chunk::<8>() {
            Some(tail) => {
                rustyjson_core::buffer::prefix_be(b) ^ u64::from_le_bytes(*tail).rotate_left(29)
            }
            None => rustyjson_core::buffer::prefix_be(b),
        };
        h.rotate_left(7) ^ (ends ^ b.len() as u64).wrapping_mul(K)
    });
    h.wrapping_mul(K) ^ (h >> 29)
}

/// The sorted order of 2..=32 binary keys in `idx` (key bytes order, which is term order for binaries); false
/// when two keys are equal.
#[inline]
fn sort_order(keys: &[Key], idx: &mut [u8; FLATMAP_MAX]) -> bool {
    let n = keys.len();
    // Keys compared by their first 8 bytes as one integer first: most pairs differ there, and a comparison of
    // whole slices (a `memcmp` call each) was most of the sorting.
    // Only the first `n` are written and read: a zeroed array was a 256-byte fill per small object.
    let mut prefixes = [MaybeUninit::<u64>::uninit(); FLATMAP_MAX];
    for (p, k) in prefixes.iter_mut().zip(keys) {
        p.write(rustyjson_core::buffer::prefix_be(k.bytes()));
    }
    // SAFETY: `a` and `b` are below `n`.
    let cmp = |a: usize, b: usize| unsafe {
        prefixes[a]
            .assume_init()
            .cmp(&prefixes[b].assume_init())
            .then_with(|| keys[a].bytes().cmp(keys[b].bytes()))
    };
    if (1..n).all(|i| cmp(i - 1, i).is_lt()) {
        for (i, x) in idx[..n].iter_mut().enumerate() {
            *x = i as u8;
        }
        return true;
    }
    if (1..n).all(|i| cmp(i - 1, i).is_gt()) {
        // Strictly descending (as some encoders write maps): reversed, no sort, no duplicates.
        for (i, x) in idx[..n].iter_mut().enumerate() {
            *x = (n - 1 - i) as u8;
        }
        return true;
    }
    // An insertion sort written out: the library's calls its comparison out of line, once per step.
    idx[0] = 0;
    for i in 1..n {
        let mut j = i;
        while j > 0 && cmp(idx[j - 1] as usize, i).is_gt() {
            idx[j] = idx[j - 1];
            j -= 1;
        }
        idx[j] = i as u8;
    }
    idx[..n]
        .windows(2)
        .all(|w| cmp(w[0] as usize, w[1] as usize).is_ne())
}

/// The index of the first key equal to an earlier one (`duplicate_keys: :error`). Binary keys are equal when
/// their bytes are, atom keys when their terms are.
pub(super) fn first_duplicate(keys: &[Key]) -> Option<usize> {
    fn id(k: &Key) -> Result<&[u8], usize> {
        if k.ptr.is_null() {
            Err(term_bits(k.term))
        } else {
            Ok(k.bytes())
        }
    }
    if keys.len() <= FLATMAP_MAX {
        return (1..keys.len()).find(|&j| keys[..j].iter().any(|k| id(k) == id(&keys[j])));
    }
    let mut seen = HashSet::with_capacity(keys.len());
    keys.iter().position(|k| !seen.insert(id(k)))
}

impl TermBuilder<'_> {
    /// A map of 2..=32 binary keys: hand the runtime its keys already sorted, or write it (see `raw`).
    #[inline]
    pub(super) fn flatmap(&mut self, keys: &[Key], values: &[T]) -> T {
        let n = keys.len();
        // Arrays of same-shaped objects: reuse the previous object's order when its keys are the same.
        // SAFETY: the first `shape_len` entries were written (below) before `shape_len` was set.
        let shape = unsafe {
            std::slice::from_raw_parts(self.shape.as_ptr() as *const Key, self.shape_len)
        };
        let same_shape = shape.len() == n
            && keys
                .iter()
                .zip(shape)
                .all(|(k, s)| k.term == s.term || k.bytes() == s.bytes());
        if !same_shape {
            if !sort_order(keys, &mut self.shape_idx) {
                self.shape_len = 0;
                return self.map_from_keys(keys, values);
            }
            for (slot, k) in self.shape.iter_mut().zip(keys) {
                slot.write(*k);
            }
            self.shape_len = n;
        }
        if !self.flat_maps {
            return self.flatmap_in_shape_order(keys, values);
        }
        // SAFETY: every slot of the keys tuple and of the map is written.
        unsafe {
            let (tuple, key_slots) = self.writes.tuple_slots(self.env, &self.arena, n);
            let (map, value_slots) = self.writes.flatmap_slots(self.env, &self.arena, tuple, n);
            for (j, &i) in self.shape_idx[..n].iter().enumerate() {
                *key_slots.add(j) = keys[i as usize].term;
                *value_slots.add(j) = values[i as usize];
            }
            map
        }
    }

    /// `keys: :intern` (while its cache hits): interned key terms are one per key, so an object's shape is its
    /// sequence of key terms. A small table of recent shapes gives their sorted order and keys tuple, so objects
    /// of a shape seen before (not only the previous object's: nested objects alternate) cost no comparisons and
    /// share the tuple.
    #[inline]
    pub(super) fn flatmap_interned(&mut self, keys: &[Key], values: &[T]) -> T {
        let n = keys.len();
        if self.shapes.is_empty() {
            self.shapes = vec![Shape::EMPTY; 1 << SHAPE_BITS];
        }
        let gen = self.cache.generation();
        let same = |shape: &Shape| {
            shape.gen == gen
                && shape.n as usize == n
                && shape.terms[..n]
                    .iter()
                    .zip(keys)
                    .all(|(&t, k)| t == term_bits(k.term))
        };
        // The last object's shape first (an array of same-shaped objects), then by hash (nested shapes).
        let (slot, hit) = if same(&self.shapes[self.last_shape]) {
            (self.last_shape, true)
        } else {
            let mut h = n as u64;
            for k in keys {
                h = (h.rotate_left(5) ^ term_bits(k.term) as u64)
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15);
            }
            let slot = (h >> (64 - SHAPE_BITS)) as usize;
            (slot, same(&self.shapes[slot]))
        };
        self.last_shape = slot;
        let shape = &mut self.shapes[slot];
        if !hit {
            let mut idx = [0u8; FLATMAP_MAX];
            if !sort_order(keys, &mut idx) {
                return self.map_from_keys(keys, values);
            }
            shape.gen = gen;
            shape.n = n as u8;
            shape.idx = idx;
            for (t, k) in shape.terms.iter_mut().zip(keys) {
                *t = term_bits(k.term);
            }
            shape.tuple = self.flat_maps.then(|| unsafe {
                let (tuple, key_slots) = self.writes.tuple_slots(self.env, &self.arena, n);
                for (j, &i) in idx[..n].iter().enumerate() {
                    *key_slots.add(j) = keys[i as usize].term;
                }
                tuple
            });
        }
        let shape = &self.shapes[slot];
        match shape.tuple {
            // SAFETY: every value slot is written.
            Some(tuple) => unsafe {
                let (map, value_slots) = self.writes.flatmap_slots(self.env, &self.arena, tuple, n);
                for (j, &i) in shape.idx[..n].iter().enumerate() {
                    *value_slots.add(j) = values[i as usize];
                }
                map
            },
            None => {
                let mut ks = [MaybeUninit::<T>::uninit(); FLATMAP_MAX];
                let mut vs = [MaybeUninit::<T>::uninit(); FLATMAP_MAX];
                for ((k, v), &i) in ks.iter_mut().zip(vs.iter_mut()).zip(&shape.idx[..n]) {
                    k.write(keys[i as usize].term);
                    v.write(values[i as usize]);
                }
                let ks = unsafe { std::slice::from_raw_parts(ks.as_ptr() as *const T, n) };
                let vs = unsafe { std::slice::from_raw_parts(vs.as_ptr() as *const T, n) };
                self.map_of(ks, vs)
            }
        }
    }

    /// A map of 33 to `hamt::MAX_KEYS` binary keys: written from the trie of an earlier object with the same keys
    /// in the same order, or built by the VM (and, on a shape's second sighting, its trie read for the next).
    pub(super) fn large_map(&mut self, keys: &[Key], values: &[T]) -> T {
        let Some(tags) = self.hash_maps else {
            return self.large_map_by_vm(keys, values);
        };
        if self.large_shapes.is_empty() {
            self.large_shapes = LARGE_SHAPES
                .with(|c| c.try_borrow_mut().map(|mut c| std::mem::take(&mut **c)))
                .unwrap_or_default();
            self.large_shapes
                .resize_with(1 << LARGE_SHAPE_BITS, LargeShape::default);
        }
        let hash = keys_hash(keys);
        let slot = (hash >> (64 - LARGE_SHAPE_BITS)) as usize;
        let shape = &mut self.large_shapes[slot];
        if !shape.holds(hash, keys) {
            if self.hashed_maps.is_some() && !(shape.once && shape.hash == hash) {
                // Laid out anyway: a shape's bytes are kept from its second sighting (most objects of many
                // distinct keys are never seen again, and copying their keys was a tenth of their decode).
                shape.sighted(hash);
                return self.large_map_laid_out(keys, values);
            }
            shape.remember(hash, keys);
            if self.hashed_maps.is_none() || !self.large_shapes[slot].holds(hash, keys) {
                return self.large_map_laid_out(keys, values);
            }
        }
        let shape = &self.large_shapes[slot];
        if shape.refused {
            return self.large_map_laid_out(keys, values);
        }
        self.key_terms.clear();
        self.key_terms.extend(keys.iter().map(|k| k.term));
        if let (None, Some(hashed)) = (&self.large_shapes[slot].template, self.hashed_maps) {
            // The second sighting: the trie laid out from the hashes becomes the shape's template.
            // SAFETY: `key_terms` are this call's live key terms.
            if unsafe { hashed.plan(&self.key_terms, &mut self.trie) } {
                hashed.template(&mut self.trie);
                self.large_shapes[slot].template = Some(std::mem::take(&mut self.trie.template));
            }
        }
        if let Some(template) = &self.large_shapes[slot].template {
            // SAFETY: the template was read from a map of these same keys in this order (`holds`), or laid out
            // from them.
            return unsafe {
                template.write(
                    self.env,
                    &tags,
                    self.nil,
                    &mut self.large_fills,
                    &self.key_terms,
                    values,
                )
            };
        }
        let map = self.large_map_by_vm(keys, values);
        let mut size = 0;
        let distinct =
            unsafe { enif_get_map_size(self.env, map, &mut size) } != 0 && size == keys.len();
        // SAFETY: `map` was just made from `key_terms`, which are distinct when the map has all of them.
        let template = distinct
            .then(|| unsafe { hamt::Template::read(map, &self.key_terms, &tags) })
            .flatten();
        let shape = &mut self.large_shapes[slot];
        shape.refused = template.is_none();
        shape.template = template;
        map
    }

    /// A map of more than 32 binary keys, laid out from the VM's hashes of its keys (`term::hash_trie`) where
    /// that is on and the keys' hashes differ, else built by the VM.
    pub(super) fn large_map_laid_out(&mut self, keys: &[Key], values: &[T]) -> T {
        let Some(hashed) = self.hashed_maps else {
            return self.large_map_by_vm(keys, values);
        };
        self.key_terms.clear();
        self.key_terms.extend(keys.iter().map(|k| k.term));
        // SAFETY: `key_terms` are this call's live key terms, and the trie is laid out from them in this order.
        unsafe {
            if !hashed.plan(&self.key_terms, &mut self.trie) {
                return self.large_map_by_vm(keys, values);
            }
            let (writes, arena, env) = (self.writes, &self.arena, self.env);
            hashed.write(
                self.env,
                |words| writes.words(env, arena, words),
                self.nil,
                &mut self.large_fills,
                &mut self.trie,
                &self.key_terms,
                values,
            )
        }
    }

    /// A map of more than 32 keys, built by the VM. Duplicate keys are rare, and found by the VM's build: its
    /// size falls short (OTP 25 and 27 accept them, into a hash map that may hold 32 keys or fewer, which the VM
    /// never makes and `===` and lookups misread) or it refuses them (OTP 29). Then the map is built again from
    /// the first pair of each key, as Jason keeps.
    pub(super) fn large_map_by_vm(&mut self, keys: &[Key], values: &[T]) -> T {
        self.key_terms.clear();
        self.key_terms.extend(keys.iter().map(|k| k.term));
        if let Some(map) = self.distinct_map(&self.key_terms, values) {
            return map;
        }
        let mut seen = HashSet::with_capacity(keys.len());
        self.key_terms.clear();
        let mut firsts = Vec::new();
        for (k, &v) in keys.iter().zip(values) {
            // Atom keys (no bytes) are equal when their terms are.
            let id = if k.ptr.is_null() {
                Err(term_bits(k.term))
            } else {
                Ok(k.bytes())
            };
            if seen.insert(id) {
                self.key_terms.push(k.term);
                firsts.push(v);
            }
        }
        self.distinct_map(&self.key_terms, &firsts)
            .expect("distinct keys make a map")
    }

    /// The map of `keys` (distinct, as the VM checks: `None` otherwise) to `values`.
    fn distinct_map(&self, keys: &[T], values: &[T]) -> Option<T> {
        let mut map = MaybeUninit::<T>::uninit();
        let mut size = 0;
        unsafe {
            let made = enif_make_map_from_arrays(
                self.env,
                keys.as_ptr(),
                values.as_ptr(),
                keys.len(),
                map.as_mut_ptr(),
            ) != 0;
            (made
                && enif_get_map_size(self.env, map.assume_init(), &mut size) != 0
                && size == keys.len())
            .then(|| map.assume_init())
        }
    }

    /// Builds the flatmap with its pairs in `shape_idx` order (sorted, no duplicate keys).
    #[inline]
    fn flatmap_in_shape_order(&self, keys: &[Key], values: &[T]) -> T {
        let n = keys.len();
        let mut ks = [MaybeUninit::<T>::uninit(); FLATMAP_MAX];
        let mut vs = [MaybeUninit::<T>::uninit(); FLATMAP_MAX];
        for (j, &i) in self.shape_idx[..n].iter().enumerate() {
            ks[j].write(keys[i as usize].term);
            vs[j].write(values[i as usize]);
        }
        let ks = unsafe { std::slice::from_raw_parts(ks.as_ptr() as *const T, n) };
        let vs = unsafe { std::slice::from_raw_parts(vs.as_ptr() as *const T, n) };
        self.map_of(ks, vs)
    }

    fn map_from_keys(&self, keys: &[Key], values: &[T]) -> T {
        let mut ks = [MaybeUninit::<T>::uninit(); FLATMAP_MAX];
        for (slot, k) in ks.iter_mut().zip(keys) {
            slot.write(k.term);
        }
        let ks = unsafe { std::slice::from_raw_parts(ks.as_ptr() as *const T, keys.len()) };
        self.map_of(ks, values)
    }

    /// The map of at most 32 `keys` to `values`: a flatmap, which the VM refuses to make with duplicate keys;
    /// then the first of each wins, as in Jason, by puts from the last pair back.
    #[inline(always)]
    pub(super) fn map_of(&self, keys: &[T], values: &[T]) -> T {
        debug_assert!(keys.len() <= FLATMAP_MAX);
        let mut map = MaybeUninit::<T>::uninit();
        unsafe {
            if enif_make_map_from_arrays(
                self.env,
                keys.as_ptr(),
                values.as_ptr(),
                keys.len(),
                map.as_mut_ptr(),
            ) != 0
            {
                return map.assume_init();
            }
            let mut map = enif_make_new_map(self.env);
            for (&k, &v) in keys.iter().zip(values).rev() {
                let mut out = MaybeUninit::<T>::uninit();
                enif_make_map_put(self.env, map, k, v, out.as_mut_ptr());
                map = out.assume_init();
            }
            map
        }
    }
}
