//! Maps of more than 32 keys whose key sequence was seen before, built by copying the shape of the VM's own hash
//! trie instead of having the VM hash and sort the keys again (decode); and the pairs of a hash map read from its
//! trie in the NIF iterator's order (encode, [`read_pairs`]).
//!
//! `enif_make_map_from_arrays` turns a large object into a hash array mapped trie: it hashes every key, sorts by
//! hash and builds the nodes (a third of twitter's decode time goes there: 173 user objects of about 40 keys).
//! Where the node layout depends only on the keys, objects with the same keys in the same order (records of an
//! API response) get the same trie. So the first such object is built by the VM, its trie is read back into a
//! [`Template`] (node headers, sizes, and which key each leaf holds), and later objects are written from the
//! template: the same nodes, with leaves `[key | value]` of their own keys and values.
//!
//! The layout (32-bit and 64-bit alike, OTP 18 to 29 at least: `erl_map.h`; a header's 16-bit bitmap is its top
//! half on a 32-bit VM): a head node `[header, size, slots...]`, inner nodes
//! `[header, slots...]`, 16 slots or one per bit of the header's 16-bit bitmap; a slot is a boxed pointer to a
//! node or a list pointer to a leaf cons cell. Headers are read from the VM's map, never made up; the map tag
//! in their low six bits (0x3C before OTP 27, 0x2C from it) and the pointer tags are learned from maps, floats
//! and list cells the VM makes ([`Tags::learn`]), which also checks that maps written this way are identical to
//! the VM's. Any trie this reader does not recognize (a collision node, another header) gets no template and is
//! built by the VM as before.

use super::word::{bits, term, T};
use rustler::sys::{
    enif_get_map_size, enif_get_map_value, enif_is_identical, enif_make_int64,
    enif_make_map_from_arrays, enif_make_tuple_from_array, enif_map_iterator_create,
    enif_map_iterator_destroy, enif_map_iterator_get_pair, enif_map_iterator_next, ErlNifEnv,
    ErlNifMapIterator, ErlNifMapIteratorEntry,
};
use std::collections::HashMap;
use std::mem::MaybeUninit;

/// Objects of more keys than this are left to the VM (hashing their keys to find a template would cost more
/// than it saves on the rare large records).
pub const MAX_KEYS: usize = 256;

/// The node types in the two bits above a map header's tag (`erl_map.h`; a reader that meets another type, or a
/// VM whose tries written this way differ from its own, gets no template).
pub(super) const NODE_BITMAP: usize = 1;
pub(super) const HEAD_ARRAY: usize = 2;
pub(super) const HEAD_BITMAP: usize = 3;

/// The tags of the running VM: the low six bits of every map header, and the primary tags of boxed pointers
/// (to nodes) and list pointers (to leaves).
#[derive(Clone, Copy)]
pub struct Tags {
    map: usize,
    boxed: usize,
    list: usize,
}

/// One word of a template: copied as is (a header or the size), a pointer to another node at a word offset, or
/// a leaf holding the key at an index of the object's keys.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Word {
    Raw(usize),
    Node(u32),
    Leaf(u32),
}

/// The trie of a large map, as a program that writes it for new values.
#[derive(Default)]
pub struct Template {
    pub(super) words: Vec<Word>,
    pub(super) leaves: usize,
}

impl Template {
    /// Reads the trie of `map`, built by the VM from `keys` (distinct, `keys.len()` of them); `None` when it
    /// holds anything this module does not know.
    ///
    /// # Safety
    /// `map` must be a live map term made from exactly `keys`.
    pub unsafe fn read(map: T, keys: &[T], tags: &Tags) -> Option<Template> {
        let n = keys.len();
        if n > u32::MAX as usize || bits(map) & 0x3 != tags.boxed {
            return None;
        }
        let mut t = Template {
            words: Vec::with_capacity(n * 2),
            leaves: 0,
        };
        // Each key's index, by term; an index is taken out once its leaf is found.
        let mut index: HashMap<usize, u32> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (bits(k), i as u32))
            .collect();
        if index.len() != n {
            return None;
        }
        t.node(
            (bits(map) - tags.boxed) as *const usize,
            true,
            &mut index,
            tags,
            0,
        )?;
        (t.leaves == n && index.is_empty()).then_some(t)
    }

    unsafe fn node(
        &mut self,
        p: *const usize,
        head: bool,
        index: &mut HashMap<usize, u32>,
        tags: &Tags,
        depth: u32,
    ) -> Option<u32> {
        // A 32-bit hash in 4-bit steps, then the VM rehashes: far fewer levels than this in practice.
        if depth > 16 {
            return None;
        }
        let header = *p;
        if header & 0x3F != tags.map {
            return None;
        }
        let slots = slot_count(header, head)?;
        let at = self.words.len();
        self.words.push(Word::Raw(header));
        if head {
            let size = *p.add(1);
            if size != index.len() {
                return None;
            }
            self.words.push(Word::Raw(size));
        }
        let first = self.words.len();
        self.words.extend(std::iter::repeat_n(Word::Raw(0), slots));
        for i in 0..slots {
            let slot = *p.add(first - at + i);
            let word = match slot & 0x3 {
                tag if tag == tags.boxed => {
                    let node = (slot - tags.boxed) as *const usize;
                    Word::Node(self.node(node, false, index, tags, depth + 1)?)
                }
                tag if tag == tags.list => {
                    // A leaf `[key | value]`: its key must be one of the object's, not seen before.
                    let cell = (slot - tags.list) as *const usize;
                    self.leaves += 1;
                    Word::Leaf(index.remove(&*cell)?)
                }
                _ => return None,
            };
            self.words[first + i] = word;
        }
        Some(at as u32)
    }

    /// Writes the map of `keys` (the same key sequence the template was read with) and `values`. `fills` is a
    /// buffer of the immediate `fill` the memory is first filled with (grown here as needed).
    ///
    /// # Safety
    /// `env` must be the environment the terms are built in; `keys` and `values` terms of it.
    pub unsafe fn write(
        &self,
        env: *mut ErlNifEnv,
        tags: &Tags,
        fill: T,
        fills: &mut Vec<T>,
        keys: &[T],
        values: &[T],
    ) -> T {
        let nodes = self.words.len();
        let total = nodes + 2 * self.leaves;
        if fills.len() < total - 1 {
            fills.resize(total - 1, fill);
        }
        // A tuple of `total - 1` immediates is `total` words: the trie's nodes, then its leaf cells.
        let base = (bits(enif_make_tuple_from_array(
            env,
            fills.as_ptr(),
            (total - 1) as u32,
        )) - tags.boxed) as *mut usize;
        let mut cell = base.add(nodes);
        for (i, w) in self.words.iter().enumerate() {
            *base.add(i) = match *w {
                Word::Raw(x) => x,
                Word::Node(off) => base.add(off as usize) as usize | tags.boxed,
                Word::Leaf(j) => {
                    *cell = bits(keys[j as usize]);
                    *cell.add(1) = bits(values[j as usize]);
                    let leaf = cell as usize | tags.list;
                    cell = cell.add(2);
                    leaf
                }
            };
        }
        term(base as usize | tags.boxed)
    }
}

/// How many slots a node with `header` has (`head`: the map's head node), or `None` for a node this module does
/// not know.
fn slot_count(header: usize, head: bool) -> Option<usize> {
    let kind = (header >> 6) & 0x3;
    let arity = (header >> 8) & 0xFF;
    let bitmap = (header >> 16) & 0xFFFF;
    let slots = match (head, kind, arity) {
        (true, HEAD_ARRAY, 1) => 16,
        (true, HEAD_BITMAP, 1) | (false, NODE_BITMAP, 0) => bitmap.count_ones() as usize,
        _ => return None,
    };
    (slots > 0).then_some(slots)
}

/// Appends the pairs of the hash map `map` as the NIF iterator lists them from its head (depth first, slots in
/// order: checked at load by [`check_reads`]), read from the leaf cells in place, without the iterator's
/// per-step bit counts. False (and `pairs` to be dropped) on a node this module does not know; the caller also
/// checks that the count is the map's size.
///
/// # Safety
/// `map` must be a live hash map term.
pub unsafe fn read_pairs(map: T, tags: &Tags, pairs: &mut Vec<(T, T)>) -> bool {
    bits(map) & 0x3 == tags.boxed
        && read_node(
            (bits(map) - tags.boxed) as *const usize,
            true,
            tags,
            pairs,
            0,
        )
}

unsafe fn read_node(
    p: *const usize,
    head: bool,
    tags: &Tags,
    pairs: &mut Vec<(T, T)>,
    depth: u32,
) -> bool {
    let header = *p;
    if depth > 16 || header & 0x3F != tags.map {
        return false;
    }
    let Some(slots) = slot_count(header, head) else {
        return false;
    };
    let first = p.add(if head { 2 } else { 1 });
    for i in 0..slots {
        let slot = *first.add(i);
        match slot & 0x3 {
            tag if tag == tags.boxed => {
                if !read_node(
                    (slot - tags.boxed) as *const usize,
                    false,
                    tags,
                    pairs,
                    depth + 1,
                ) {
                    return false;
                }
            }
            tag if tag == tags.list => {
                let cell = (slot - tags.list) as *const usize;
                pairs.push((term(*cell), term(*cell.add(1))));
            }
            _ => return false,
        }
    }
    true
}

/// Whether [`read_pairs`] lists maps as the VM's NIF iterator does from its head: maps of 33 to 1,000 keys
/// (three levels of nodes) built by the VM, each pair compared. Integer keys: nothing to allocate for them, and
/// the trie's layout does not depend on the keys' type. (Once, at load: about 0.3 ms here.)
///
/// # Safety
/// `env` must be a live NIF environment.
pub unsafe fn check_reads(env: *mut ErlNifEnv, tags: &Tags) -> bool {
    let keys: Vec<T> = (0..1000i64).map(|i| enif_make_int64(env, i)).collect();
    let values: Vec<T> = (0..1000i64).map(|i| enif_make_int64(env, -i - 1)).collect();
    [33, 64, 300, 1000].into_iter().all(|n| {
        let mut map = MaybeUninit::<T>::uninit();
        if enif_make_map_from_arrays(env, keys.as_ptr(), values.as_ptr(), n, map.as_mut_ptr()) == 0
        {
            return false;
        }
        let map = map.assume_init();
        let mut ours = Vec::new();
        if !read_pairs(map, tags, &mut ours) || ours.len() != n {
            return false;
        }
        let mut iter = MaybeUninit::<ErlNifMapIterator>::zeroed().assume_init();
        let from_head = ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_HEAD;
        if enif_map_iterator_create(env, map, &mut iter, from_head) == 0 {
            return false;
        }
        let mut same = true;
        for &(k, v) in &ours {
            let (mut key, mut value) = (T::default(), T::default());
            same &= enif_map_iterator_get_pair(env, &mut iter, &mut key, &mut value) != 0
                && bits(key) == bits(k)
                && bits(value) == bits(v);
            enif_map_iterator_next(env, &mut iter);
        }
        enif_map_iterator_destroy(env, &mut iter);
        same
    })
}

impl Tags {
    /// The low six bits of every map header.
    pub(super) fn map(&self) -> usize {
        self.map
    }

    /// The primary tag of boxed terms.
    pub(super) fn boxed(&self) -> usize {
        self.boxed
    }

    /// The primary tag of list cells.
    pub(super) fn list(&self) -> usize {
        self.list
    }

    /// Learns the tags from terms the VM makes, then checks them: see [`check`].
    ///
    /// # Safety
    /// `env` must be a live NIF environment.
    pub unsafe fn learn(env: *mut ErlNifEnv, primary: super::word::Primary) -> Option<Tags> {
        let super::word::Primary { boxed, list } = primary;
        let one = enif_make_int64(env, 1);
        let mut flat = MaybeUninit::<T>::uninit();
        if enif_make_map_from_arrays(env, &one, &one, 1, flat.as_mut_ptr()) == 0
            || bits(flat.assume_init()) & 0x3 != boxed
        {
            return None;
        }
        let header = *((bits(flat.assume_init()) - boxed) as *const usize);
        let tags = Tags {
            map: header & 0x3F,
            boxed,
            list,
        };
        check(env, &tags, one).then_some(tags)
    }
}

/// Builds maps of 14 sizes from 33 to 256 keys with the VM, reads their tries, writes them again with other values
/// and checks each result is identical to the VM's map of those values, every key found. (It runs in the first
/// call of the VM's life: 0.3-0.5 ms here; every size from 33 to 96 took 1.6 ms.)
unsafe fn check(env: *mut ErlNifEnv, tags: &Tags, fill: T) -> bool {
    let keys: Vec<T> = (0..MAX_KEYS)
        .map(|i| super::word::new_binary(env, format!("key_{i:03}").as_bytes()))
        .collect();
    let mut fills = Vec::new();
    let vm_map = |ks: &[T], vs: &[T]| {
        let mut m = MaybeUninit::<T>::uninit();
        (enif_make_map_from_arrays(env, ks.as_ptr(), vs.as_ptr(), ks.len(), m.as_mut_ptr()) != 0)
            .then(|| m.assume_init())
    };
    for n in [
        33, 34, 35, 40, 47, 48, 63, 64, 65, 80, 96, 128, 200, MAX_KEYS,
    ] {
        let ks = &keys[..n];
        let first: Vec<T> = (0..n as i64).map(|i| enif_make_int64(env, i)).collect();
        let other: Vec<T> = (0..n as i64)
            .map(|i| enif_make_int64(env, -7 * i - 1))
            .collect();
        let (Some(template_map), Some(expected)) = (vm_map(ks, &first), vm_map(ks, &other)) else {
            return false;
        };
        let Some(template) = Template::read(template_map, ks, tags) else {
            return false;
        };
        let ours = template.write(env, tags, fill, &mut fills, ks, &other);
        let mut size = 0;
        if enif_is_identical(ours, expected) == 0
            || enif_get_map_size(env, ours, &mut size) == 0
            || size != n
        {
            return false;
        }
        for (&k, &v) in ks.iter().zip(&other) {
            let mut got = MaybeUninit::<T>::uninit();
            if enif_get_map_value(env, ours, k, got.as_mut_ptr()) == 0
                || bits(got.assume_init()) != bits(v)
            {
                return false;
            }
        }
    }
    true
}
