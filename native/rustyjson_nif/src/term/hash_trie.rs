//! Hash maps of more than 32 keys laid out here from each key's hash, as the VM would lay them out, instead of by
//! `enif_make_map_from_arrays` (decode, objects of keys not seen in that order before).
//!
//! The VM's build hashes every key, sorts the pairs with `qsort` through a comparison call, and counts each
//! node's bits (a libgcc call on builds for CPUs without `popcnt`): on objects of 100 distinct keys that was two
//! thirds of the decode. Here each key's hash comes from the VM itself (`enif_hash` with `ERL_NIF_INTERNAL_HASH`
//! and salt 0, the hash a map places a key by on every release so far), the pairs are sorted as integers, and the
//! trie is written as a [`Template`] program by [`super::hamt`]'s writer.
//!
//! The trie (`erl_map.h`): a key's slot at depth `d` is bits `4d..4d+4` of its hash; a node holds one slot per
//! distinct value among its keys, a leaf where one key is left, a node below where more are. Past 32 bits the VM
//! rehashes (OTP 25) or reads on (64-bit hashes): a map with two keys whose low 32 bits agree (equal keys too) is
//! left to the VM. That the running VM agrees is checked at load ([`Hashed::learn`]): maps of binary keys built by
//! the VM, read back, must be the very programs written here, word for word.

use super::hamt::{Tags, Template, Word, HEAD_BITMAP, NODE_BITMAP};
use super::word::{bits, new_binary, term, T};
use rustler::sys::{
    enif_hash, enif_make_int64, enif_make_map_from_arrays, enif_make_tuple_from_array, ErlNifEnv,
    ErlNifHash,
};
use std::mem::MaybeUninit;

/// Maps of more keys than this are left to the VM: the writer makes the trie's words one tuple, and a tuple's
/// arity is bounded (2^24 words on every release); this keeps a trie of these many keys well below it.
pub const MAX_KEYS: usize = 1 << 20;

/// Depths the hash's low 32 bits give.
const DEPTHS: u32 = 8;

/// What the running VM's tries need besides [`Tags`]: the header of a head node whose 16 slots are all used (an
/// array, not a bitmap), read from a map the VM made.
#[derive(Clone, Copy)]
pub struct Hashed {
    tags: Tags,
    head_array: usize,
}

/// The buffers a decode reuses for every large map.
#[derive(Default)]
pub struct Scratch {
    /// Per key: its hash's low 32 bits with the nibbles in depth order from the top, then its index; and the
    /// same sorted.
    entries: Vec<u64>,
    sorted: Vec<u64>,
    /// The trie of the last [`Hashed::template`].
    pub template: Template,
}

/// Where a trie's words go: a [`Template`] (kept for a shape seen again) or the VM's heap (written in place).
trait Sink {
    /// Appends `words` words, returning the offset of the first.
    fn reserve(&mut self, words: usize) -> usize;
    fn raw(&mut self, at: usize, word: usize);
    fn node(&mut self, at: usize, node: usize);
    fn leaf(&mut self, at: usize, key: usize);
}

impl Sink for Template {
    fn reserve(&mut self, words: usize) -> usize {
        let at = self.words.len();
        self.words.extend(std::iter::repeat_n(Word::Raw(0), words));
        at
    }
    fn raw(&mut self, at: usize, word: usize) {
        self.words[at] = Word::Raw(word);
    }
    fn node(&mut self, at: usize, node: usize) {
        self.words[at] = Word::Node(node as u32);
    }
    fn leaf(&mut self, at: usize, key: usize) {
        self.leaves += 1;
        self.words[at] = Word::Leaf(key as u32);
    }
}

/// The trie written in place: nodes from `base`, then the leaves' cells `[key | value]`.
struct Heap<'a> {
    base: *mut usize,
    used: usize,
    cell: *mut usize,
    tags: &'a Tags,
    keys: &'a [T],
    values: &'a [T],
}

impl Sink for Heap<'_> {
    #[inline(always)]
    fn reserve(&mut self, words: usize) -> usize {
        self.used += words;
        self.used - words
    }
    #[inline(always)]
    fn raw(&mut self, at: usize, word: usize) {
        // SAFETY: `at` is below the node words the writer counted and allocated.
        unsafe { *self.base.add(at) = word }
    }
    #[inline(always)]
    fn node(&mut self, at: usize, node: usize) {
        let pointer = unsafe { self.base.add(node) } as usize | self.tags.boxed();
        self.raw(at, pointer);
    }
    #[inline(always)]
    fn leaf(&mut self, at: usize, key: usize) {
        // SAFETY: one cell per key, allocated after the nodes.
        unsafe {
            *self.cell = bits(self.keys[key]);
            *self.cell.add(1) = bits(self.values[key]);
            self.raw(at, self.cell as usize | self.tags.list());
            self.cell = self.cell.add(2);
        }
    }
}

impl Hashed {
    /// Sorts the hashes of `keys` (binaries or atoms, distinct) into `scratch`; false when two keys agree in their
    /// hash's low 32 bits (equal keys, or a rare collision), which the VM then builds.
    ///
    /// # Safety
    /// `keys` must be live terms.
    pub unsafe fn plan(&self, keys: &[T], scratch: &mut Scratch) -> bool {
        let n = keys.len();
        if !(2..=MAX_KEYS).contains(&n) {
            return false;
        }
        let Scratch {
            entries, sorted, ..
        } = scratch;
        entries.clear();
        let mut counts = [0usize; 16];
        entries.extend(keys.iter().enumerate().map(|(i, &k)| {
            let hash = enif_hash(ErlNifHash::ERL_NIF_INTERNAL_HASH, k, 0) as u32;
            let e = (u64::from(depth_order(hash)) << 32) | i as u64;
            counts[(e >> 60) as usize] += 1;
            e
        }));
        // By the first slot (a counting pass), then each slot's few entries by the rest: the VM's own build
        // sorts them all at once through a comparison call.
        let mut starts = [0usize; 17];
        for i in 0..16 {
            starts[i + 1] = starts[i] + counts[i];
        }
        sorted.clear();
        sorted.resize(n, 0);
        let mut next = starts;
        for &e in entries.iter() {
            let slot = (e >> 60) as usize;
            sorted[next[slot]] = e;
            next[slot] += 1;
        }
        for i in 0..16 {
            sorted[starts[i]..starts[i + 1]].sort_unstable();
        }
        !sorted.windows(2).any(|w| w[0] >> 32 == w[1] >> 32)
    }

    /// The trie [`Hashed::plan`] sorted, as a template in `scratch.template` (a shape to keep).
    pub fn template(&self, scratch: &mut Scratch) {
        let Scratch {
            sorted, template, ..
        } = scratch;
        template.words.clear();
        template.leaves = 0;
        self.node(template, sorted, 0);
    }

    /// Writes the map of `keys` to `values` whose hashes [`Hashed::plan`] sorted. `fills` is a buffer of the
    /// immediate `fill` the memory is first filled with (grown here as needed).
    ///
    /// # Safety
    /// `env` must be the environment the terms are built in; `keys` (those planned) and `values` terms of it.
    pub unsafe fn write(
        &self,
        env: *mut ErlNifEnv,
        fill: T,
        fills: &mut Vec<T>,
        scratch: &Scratch,
        keys: &[T],
        values: &[T],
    ) -> T {
        let sorted = &scratch.sorted;
        let n = sorted.len();
        // Nodes: the head, and one below for each prefix two keys or more share. A run of neighbours sharing a
        // longer prefix than the pair before opens that many.
        let mut nodes = 1;
        let mut before = 0;
        for w in sorted.windows(2) {
            let shared = (w[0] ^ w[1]).leading_zeros() / 4;
            nodes += shared.saturating_sub(before) as usize;
            before = shared;
        }
        // Each node a header and a slot per child (every node but the head is a child, as is every leaf), the
        // head's size, and a cell per leaf.
        let node_words = 2 * nodes + n;
        let total = node_words + 2 * n;
        if fills.len() < total - 1 {
            fills.resize(total - 1, fill);
        }
        // A tuple of `total - 1` immediates is `total` words.
        let base = (bits(enif_make_tuple_from_array(
            env,
            fills.as_ptr(),
            (total - 1) as u32,
        )) - self.tags.boxed()) as *mut usize;
        let mut heap = Heap {
            base,
            used: 0,
            cell: base.add(node_words),
            tags: &self.tags,
            keys,
            values,
        };
        self.node(&mut heap, sorted, 0);
        debug_assert_eq!(heap.used, node_words);
        term(base as usize | self.tags.boxed())
    }

    /// Writes the node of `entries` (sorted, agreeing in their first `depth` nibbles, at least two) and the nodes
    /// below it; returns its word offset.
    #[inline]
    fn node<S: Sink>(&self, sink: &mut S, entries: &[u64], depth: u32) -> usize {
        let shift = 60 - 4 * depth;
        let slot = |e: u64| (e >> shift) as usize & 0xF;
        // Each slot's run of entries: sorted, so runs are contiguous and in slot order.
        let mut runs = [(0u32, 0u32); 16];
        let (mut count, mut bitmap, mut start) = (0, 0usize, 0);
        while start < entries.len() {
            let s = slot(entries[start]);
            let mut end = start + 1;
            while end < entries.len() && slot(entries[end]) == s {
                end += 1;
            }
            runs[count] = (start as u32, end as u32);
            count += 1;
            bitmap |= 1 << s;
            start = end;
        }
        let head = depth == 0;
        let at = sink.reserve(1 + usize::from(head) + count);
        sink.raw(
            at,
            if head && bitmap == 0xFFFF {
                self.head_array
            } else {
                let (kind, arity) = if head {
                    (HEAD_BITMAP, 1)
                } else {
                    (NODE_BITMAP, 0)
                };
                self.tags.map() | kind << 6 | arity << 8 | bitmap << 16
            },
        );
        if head {
            sink.raw(at + 1, entries.len());
        }
        let first = at + 1 + usize::from(head);
        for (i, &(s, e)) in runs[..count].iter().enumerate() {
            let run = &entries[s as usize..e as usize];
            if run.len() == 1 {
                sink.leaf(first + i, run[0] as u32 as usize);
            } else {
                // Two entries agree in all DEPTHS nibbles only if equal there, which `plan` refused.
                debug_assert!(depth + 1 < DEPTHS);
                let node = self.node(sink, run, depth + 1);
                sink.node(first + i, node);
            }
        }
        at
    }

    /// Learns the head array's header from a map the VM makes, then checks that tries laid out here are the VM's
    /// own for 20 sets of binary keys (33 to 5,000 keys; short, long and empty keys; keys sharing a prefix):
    /// read back from the VM's maps, each must be the program [`Hashed::plan`] writes, word for word. About 5 ms
    /// once, at load, on a dirty scheduler.
    ///
    /// # Safety
    /// `env` must be a live NIF environment.
    pub unsafe fn learn(env: *mut ErlNifEnv, tags: Tags) -> Option<Hashed> {
        let ints: Vec<T> = (0..64i64).map(|i| enif_make_int64(env, i)).collect();
        // 64 small integers fill the head's 16 slots: its header is the array's (and that is checked below).
        let full = vm_map(env, &ints, &ints)?;
        let head_array = *((bits(full) - tags.boxed()) as *const usize);
        let hashed = Hashed { tags, head_array };
        let mut scratch = Scratch::default();
        let sets: [(usize, &str); 20] = [
            (33, "k"),
            (34, "field_"),
            (40, ""),
            (47, "a"),
            (48, "user.profile."),
            (63, "x"),
            (64, "id"),
            (65, "\u{e9}t\u{e9}_"),
            (80, "k"),
            (96, "name"),
            (
                100,
                "a_fairly_long_common_prefix_that_makes_every_key_a_refc_binary_of_over_64_bytes_",
            ),
            (128, "q"),
            (200, "k"),
            (256, "key_"),
            (300, ""),
            (500, "z"),
            (1000, "k"),
            (2000, "col"),
            (3000, ""),
            (5000, "w"),
        ];
        for (n, prefix) in sets {
            let keys: Vec<T> = (0..n)
                .map(|i| new_binary(env, format!("{prefix}{i}").as_bytes()))
                .collect();
            let values: Vec<T> = (0..n as i64).map(|i| enif_make_int64(env, -i)).collect();
            let map = vm_map(env, &keys, &values)?;
            let theirs = Template::read(map, &keys, &tags)?;
            if !hashed.plan(&keys, &mut scratch) {
                return None;
            }
            hashed.template(&mut scratch);
            let written = hashed.write(env, values[0], &mut Vec::new(), &scratch, &keys, &values);
            if scratch.template.leaves != theirs.leaves
                || Template::read(written, &keys, &tags)
                    .is_none_or(|ours| ours.words != theirs.words)
                || scratch.template.words != theirs.words
            {
                return None;
            }
        }
        Some(hashed)
    }
}

/// The 32-bit hash with its eight nibbles reversed: the nibble of depth 0 on top, so that integer order is the
/// trie's depth-first order.
#[inline]
fn depth_order(hash: u32) -> u32 {
    let bytes = hash.swap_bytes();
    ((bytes & 0x0F0F_0F0F) << 4) | ((bytes >> 4) & 0x0F0F_0F0F)
}

/// The VM's map of `keys` to `values`.
unsafe fn vm_map(env: *mut ErlNifEnv, keys: &[T], values: &[T]) -> Option<T> {
    let mut map = MaybeUninit::<T>::uninit();
    (enif_make_map_from_arrays(
        env,
        keys.as_ptr(),
        values.as_ptr(),
        keys.len(),
        map.as_mut_ptr(),
    ) != 0)
        .then(|| map.assume_init())
}
