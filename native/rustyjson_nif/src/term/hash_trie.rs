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
    /// Each node's bitmap, in the order the nodes are written (see [`Hashed::shape`]).
    bitmaps: Vec<u16>,
    /// The trie of the last [`Hashed::template`].
    pub template: Template,
}

/// Where a trie's words go: a [`Template`] (kept for a shape seen again) or the VM's heap (written in place).
trait Sink {
    fn raw(&mut self, at: usize, word: usize);
    fn node(&mut self, at: usize, node: usize);
    fn leaf(&mut self, at: usize, key: usize);
}

impl Sink for Template {
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
    cell: *mut usize,
    tags: &'a Tags,
    keys: &'a [T],
    values: &'a [T],
}

impl Sink for Heap<'_> {
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
        let node_words = Self::shape(scratch);
        let Scratch {
            sorted,
            bitmaps,
            template,
            ..
        } = scratch;
        template.words.clear();
        template.words.resize(node_words, Word::Raw(0));
        template.leaves = 0;
        self.fill(template, sorted, bitmaps);
    }

    /// Writes the map of `keys` to `values` whose hashes [`Hashed::plan`] sorted, in the words `alloc` gives
    /// (`None`: a tuple of `fills`, a buffer of the immediate `fill` grown here as needed, is written over).
    ///
    /// # Safety
    /// `env` must be the environment the terms are built in; `keys` (those planned) and `values` terms of it;
    /// `alloc` must give that many words of its heap, which this writes every one of.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn write(
        &self,
        env: *mut ErlNifEnv,
        alloc: impl FnOnce(usize) -> Option<*mut usize>,
        fill: T,
        fills: &mut Vec<T>,
        scratch: &mut Scratch,
        keys: &[T],
        values: &[T],
    ) -> T {
        let node_words = Self::shape(scratch);
        let total = node_words + 2 * scratch.sorted.len();
        let base = alloc(total).unwrap_or_else(|| {
            if fills.len() < total - 1 {
                fills.resize(total - 1, fill);
            }
            // A tuple of `total - 1` immediates is `total` words.
            let tuple = enif_make_tuple_from_array(env, fills.as_ptr(), (total - 1) as u32);
            (bits(tuple) - self.tags.boxed()) as *mut usize
        });
        let mut heap = Heap {
            base,
            cell: base.add(node_words),
            tags: &self.tags,
            keys,
            values,
        };
        self.fill(&mut heap, &scratch.sorted, &scratch.bitmaps);
        term(base as usize | self.tags.boxed())
    }

    /// The nodes' bitmaps, in the order [`Hashed::fill`] meets them, into `scratch.bitmaps`; returns the words
    /// the nodes take (each a header and a slot per bit, and the head's size).
    ///
    /// One pass over the sorted hashes: a key shares its first `shared` nibbles with the key before, so the nodes
    /// of depth 0 to `shared` are that key's too, and it opens nodes below them down to the depth at which it
    /// parts from the key after as well; its leaf is a slot there.
    fn shape(scratch: &mut Scratch) -> usize {
        let Scratch {
            sorted, bitmaps, ..
        } = scratch;
        bitmaps.clear();
        bitmaps.push(0);
        // The node open at each depth, as an index into `bitmaps`.
        let mut open = [0usize; DEPTHS as usize];
        let mut before = 0;
        for (i, &e) in sorted.iter().enumerate() {
            let after = sorted.get(i + 1).map_or(0, |&next| shared(e, next));
            let depth = before.max(after);
            for d in before + 1..=depth {
                bitmaps[open[d - 1]] |= 1 << nibble(e, d - 1);
                open[d] = bitmaps.len();
                bitmaps.push(0);
            }
            bitmaps[open[depth]] |= 1 << nibble(e, depth);
            before = after;
        }
        bitmaps.len() * 2 + sorted.len()
    }

    /// Writes the trie that [`Hashed::shape`] measured, the same pass again: each node's header and the head's
    /// size where it opens, then its slots as its children come, a node below or a leaf.
    #[inline]
    fn fill<S: Sink>(&self, sink: &mut S, sorted: &[u64], bitmaps: &[u16]) {
        // Where the next node goes, how many nodes are open, and the next slot of the node open at each depth.
        let (mut next, mut opened) = (0, 0);
        let mut slots = [0usize; DEPTHS as usize];
        let mut open = |sink: &mut S, depth: usize, slots: &mut [usize; DEPTHS as usize]| {
            let bitmap = usize::from(bitmaps[opened]);
            opened += 1;
            let at = next;
            let header = match (depth, bitmap) {
                (0, 0xFFFF) => self.head_array,
                (0, _) => self.tags.map() | HEAD_BITMAP << 6 | 1 << 8 | bitmap << 16,
                _ => self.tags.map() | NODE_BITMAP << 6 | bitmap << 16,
            };
            sink.raw(at, header);
            if depth == 0 {
                sink.raw(at + 1, sorted.len());
            }
            slots[depth] = at + 1 + usize::from(depth == 0);
            next = slots[depth] + bitmap.count_ones() as usize;
            at
        };
        open(sink, 0, &mut slots);
        let mut before = 0;
        for (i, &e) in sorted.iter().enumerate() {
            let after = sorted.get(i + 1).map_or(0, |&next| shared(e, next));
            let depth = before.max(after);
            for d in before + 1..=depth {
                let node = open(sink, d, &mut slots);
                sink.node(slots[d - 1], node);
                slots[d - 1] += 1;
            }
            sink.leaf(slots[depth], e as u32 as usize);
            slots[depth] += 1;
            before = after;
        }
    }

    /// Learns the head array's header from a map the VM makes, then checks that tries laid out here are the VM's
    /// own for 20 sets of binary keys (33 to 5,000 keys; short, long and empty keys; keys sharing a prefix):
    /// read back from the VM's maps, each must be the program [`Hashed::plan`] writes, word for word. Once, at
    /// load, on a dirty scheduler (its time is not measured on its own).
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
            let written = hashed.write(
                env,
                |_| None,
                values[0],
                &mut Vec::new(),
                &mut scratch,
                &keys,
                &values,
            );
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

/// How many nibbles two sorted entries share from the top (below [`DEPTHS`]: `plan` refused equal hashes).
#[inline(always)]
fn shared(a: u64, b: u64) -> usize {
    ((a ^ b).leading_zeros() / 4) as usize
}

/// An entry's slot at `depth`.
#[inline(always)]
fn nibble(e: u64, depth: usize) -> usize {
    (e >> (60 - 4 * depth)) as usize & 0xF
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
