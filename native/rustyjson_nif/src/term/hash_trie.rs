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
use super::word::{bits, new_binary, T};
use rustler::sys::{enif_hash, enif_make_int64, enif_make_map_from_arrays, ErlNifEnv, ErlNifHash};
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
    /// Per key: its hash's low 32 bits with the nibbles in depth order from the top, then its index.
    entries: Vec<u64>,
    pub template: Template,
}

impl Hashed {
    /// The tags, for the writer.
    pub fn tags(&self) -> &Tags {
        &self.tags
    }

    /// Lays out the trie of `keys` (binaries or atoms, distinct) in `scratch.template`; false when two keys
    /// agree in their hash's low 32 bits (equal keys, or a rare collision), which the VM then builds.
    ///
    /// # Safety
    /// `keys` must be live terms.
    pub unsafe fn plan(&self, keys: &[T], scratch: &mut Scratch) -> bool {
        let n = keys.len();
        if !(2..=MAX_KEYS).contains(&n) {
            return false;
        }
        let entries = &mut scratch.entries;
        entries.clear();
        entries.extend(keys.iter().enumerate().map(|(i, &k)| {
            let hash = enif_hash(ErlNifHash::ERL_NIF_INTERNAL_HASH, k, 0) as u32;
            (u64::from(depth_order(hash)) << 32) | i as u64
        }));
        entries.sort_unstable();
        if entries.windows(2).any(|w| w[0] >> 32 == w[1] >> 32) {
            return false;
        }
        let template = &mut scratch.template;
        template.words.clear();
        template.leaves = 0;
        self.node(template, entries, 0);
        true
    }

    /// Appends the node of `entries` (sorted, agreeing in their first `depth` nibbles, at least two) and the nodes
    /// below it; returns its word offset.
    fn node(&self, t: &mut Template, entries: &[u64], depth: u32) -> u32 {
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
        let at = t.words.len();
        let head = depth == 0;
        t.words.push(Word::Raw(if head && bitmap == 0xFFFF {
            self.head_array
        } else {
            let (kind, arity) = if head { (HEAD_BITMAP, 1) } else { (NODE_BITMAP, 0) };
            self.tags.map() | kind << 6 | arity << 8 | bitmap << 16
        }));
        if head {
            t.words.push(Word::Raw(entries.len()));
        }
        let first = t.words.len();
        t.words
            .extend(std::iter::repeat_n(Word::Raw(0), count));
        for (i, &(s, e)) in runs[..count].iter().enumerate() {
            let run = &entries[s as usize..e as usize];
            t.words[first + i] = if run.len() == 1 {
                t.leaves += 1;
                Word::Leaf(run[0] as u32)
            } else {
                // Two entries agree in all DEPTHS nibbles only if equal there, which `plan` refused.
                debug_assert!(depth + 1 < DEPTHS);
                Word::Node(self.node(t, run, depth + 1))
            };
        }
        at as u32
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
            (100, "a_fairly_long_common_prefix_that_makes_every_key_a_refc_binary_of_over_64_bytes_"),
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
            if !hashed.plan(&keys, &mut scratch)
                || scratch.template.leaves != theirs.leaves
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
    (enif_make_map_from_arrays(env, keys.as_ptr(), values.as_ptr(), keys.len(), map.as_mut_ptr())
        != 0)
        .then(|| map.assume_init())
}
