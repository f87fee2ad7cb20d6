//! Object keys predicted by the builder and matched against the input in one load ([`Builder::expected_key`]).

#[cfg(doc)]
use super::Builder;

/// A predicted object key, matched against the input in one 16-byte load: the key's bytes, zero-padded, and the
/// mask of its length; the quotes around it are checked on their own. Keys of up to [`ExpectedKey::MAX_LEN`]
/// bytes, which hold no quote, backslash or control byte (they were read from an escape-free key of the same
/// input), so a match is exactly that key.
#[derive(Clone, Copy, Debug)]
pub struct ExpectedKey {
    key: u128,
    mask: u128,
    pub(super) len: usize,
}

impl ExpectedKey {
    /// The longest key that fits in one 16-byte load.
    pub const MAX_LEN: usize = 16;

    /// The key of `len` (at most [`ExpectedKey::MAX_LEN`]) bytes held in `lo`, `hi` as little-endian words,
    /// zero-padded. (The key is compared from its first byte, so nothing is shifted: shifts of a u128 cost a
    /// dozen instructions, and this runs for every key of `keys: :intern`.)
    #[inline(always)]
    pub fn new(lo: u64, hi: u64, len: usize) -> Self {
        debug_assert!(len <= Self::MAX_LEN);
        ExpectedKey {
            key: (lo as u128) | ((hi as u128) << 64) | CLOSING_QUOTE[len],
            mask: KEY_MASK[len],
            len,
        }
    }

    /// The key's length (without its quotes).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the key is `""`.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `input[pos..]` starts with the quoted key. (The closing quote is part of the compared word
    /// unless the key fills all 16 bytes.)
    #[inline(always)]
    pub fn at(&self, input: &[u8], pos: usize) -> bool {
        input.get(pos) == Some(&b'"')
            && match input.get(pos + 1..pos + 17) {
                Some(w) => {
                    (u128::from_le_bytes(w.try_into().unwrap()) ^ self.key) & self.mask == 0
                        && (self.len < Self::MAX_LEN || input.get(pos + 17) == Some(&b'"'))
                }
                None => false,
            }
    }
}

/// The closing quote after a key of each length, in the key's 16-byte word (none for 16 bytes: it is checked
/// apart).
static CLOSING_QUOTE: [u128; ExpectedKey::MAX_LEN + 1] = {
    let mut t = [0u128; ExpectedKey::MAX_LEN + 1];
    let mut len = 0;
    while len < ExpectedKey::MAX_LEN {
        t[len] = (b'"' as u128) << (8 * len);
        len += 1;
    }
    t
};

/// The bytes of a key of each length and its closing quote, in a little-endian 16-byte word.
static KEY_MASK: [u128; ExpectedKey::MAX_LEN + 1] = {
    let mut t = [u128::MAX; ExpectedKey::MAX_LEN + 1];
    let mut len = 0;
    while len < ExpectedKey::MAX_LEN {
        t[len] = u128::MAX >> (8 * (ExpectedKey::MAX_LEN - len - 1));
        len += 1;
    }
    t
};
