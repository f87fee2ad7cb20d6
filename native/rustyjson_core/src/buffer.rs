//! The output buffer every writer appends to.
//!
//! A [`Buffer`] writes through a raw pointer into memory owned by a [`Storage`]. The hot appends check the
//! capacity inline; growth is out of line and cold. The NIF supplies a storage backed by an Erlang binary (so the
//! output becomes the result binary without a copy); tests and Rust callers use a `Vec<u8>`.
//!
//! A buffer has a ceiling ([`Buffer::set_limit`]): growth past it, or growth the allocator refuses, leaves the
//! write with an [`Overflow`] before any memory is touched (`overflow.rs`).

use std::ptr;

use crate::overflow::{overflow, Overflow};

/// Memory a [`Buffer`] writes into.
///
/// # Safety
/// `grow` must return a pointer to at least `needed` writable bytes whose first `len` bytes are the bytes the
/// buffer wrote so far (at the previous pointer), and the returned memory must stay valid until the next `grow` or
/// until the storage is dropped.
pub unsafe trait Storage {
    /// Makes room for at least `needed` bytes (and at most `limit`, which is at least `needed`), keeping the first
    /// `len`; returns the (new) pointer and capacity. When the allocator refuses, leaves with
    /// [`Overflow::Memory`] (never aborts).
    fn grow(&mut self, ptr: *mut u8, len: usize, needed: usize, limit: usize) -> (*mut u8, usize);
}

/// A `Vec<u8>` as storage: the vector's own length stays 0 while the buffer writes; see [`Buffer::into_vec`].
unsafe impl Storage for Vec<u8> {
    fn grow(&mut self, _ptr: *mut u8, len: usize, needed: usize, limit: usize) -> (*mut u8, usize) {
        // SAFETY: the buffer wrote `len` initialised bytes into this vector's allocation.
        unsafe { self.set_len(len) };
        let target = needed.max(len.saturating_mul(2)).max(64).min(limit);
        if self.try_reserve_exact(target - len).is_err() {
            unsafe { self.set_len(0) };
            overflow(Overflow::Memory { needed: target });
        }
        unsafe { self.set_len(0) };
        (self.as_mut_ptr(), self.capacity())
    }
}

/// A growable byte buffer over a [`Storage`].
pub struct Buffer<S: Storage = Vec<u8>> {
    ptr: *mut u8,
    len: usize,
    cap: usize,
    /// The most bytes the output may take ([`Buffer::set_limit`]).
    limit: usize,
    storage: S,
}

impl Default for Buffer<Vec<u8>> {
    fn default() -> Self {
        Buffer::with_capacity(0)
    }
}

impl Buffer<Vec<u8>> {
    pub fn with_capacity(capacity: usize) -> Self {
        let mut v = Vec::with_capacity(capacity);
        Buffer {
            ptr: v.as_mut_ptr(),
            len: 0,
            cap: v.capacity(),
            limit: usize::MAX,
            storage: v,
        }
    }

    pub fn into_vec(mut self) -> Vec<u8> {
        // SAFETY: `len` bytes were written into the vector's allocation.
        unsafe { self.storage.set_len(self.len) };
        self.storage
    }
}

impl<S: Storage> Buffer<S> {
    /// A buffer writing first into `initial` (`cap` bytes, e.g. a stack array), then into what `storage` grows.
    ///
    /// # Safety
    /// `initial` must be valid for `cap` bytes of writes for as long as the buffer writes there (until the first
    /// growth), and `storage.grow` must accept it as the previous pointer.
    pub unsafe fn from_raw(initial: *mut u8, cap: usize, storage: S) -> Self {
        Buffer {
            ptr: initial,
            len: 0,
            cap,
            limit: usize::MAX,
            storage,
        }
    }

    /// The most bytes the output may take: growing past it leaves the write with [`Overflow::Limit`].
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
    }

    #[inline(always)]
    pub fn reserve(&mut self, additional: usize) {
        if self.cap - self.len < additional {
            self.grow(additional);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, additional: usize) {
        let needed = self.len.saturating_add(additional);
        if needed > self.limit {
            overflow(Overflow::Limit {
                needed,
                limit: self.limit,
            });
        }
        let (ptr, cap) = self.storage.grow(self.ptr, self.len, needed, self.limit);
        assert!(cap >= needed);
        self.ptr = ptr;
        self.cap = cap;
    }

    #[inline(always)]
    pub fn push(&mut self, byte: u8) {
        self.reserve(1);
        // SAFETY: capacity checked above.
        unsafe { self.push_unchecked(byte) };
    }

    /// # Safety
    /// The caller reserved room for the byte.
    #[inline(always)]
    pub unsafe fn push_unchecked(&mut self, byte: u8) {
        *self.ptr.add(self.len) = byte;
        self.len += 1;
    }

    #[inline(always)]
    pub fn extend(&mut self, bytes: &[u8]) {
        self.reserve(bytes.len());
        // SAFETY: capacity checked above.
        unsafe { self.extend_unchecked(bytes) };
    }

    /// # Safety
    /// The caller reserved room for the bytes.
    #[inline(always)]
    pub unsafe fn extend_unchecked(&mut self, bytes: &[u8]) {
        ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(self.len), bytes.len());
        self.len += bytes.len();
    }

    /// Where the next byte goes; the caller may write up to the reserved room there, then call `advance`.
    ///
    /// # Safety
    /// Writes through the pointer must stay within the room reserved with `reserve`.
    #[inline(always)]
    pub unsafe fn tail_ptr(&mut self) -> *mut u8 {
        self.ptr.add(self.len)
    }

    /// Counts `n` bytes written at `tail_ptr` as part of the output.
    ///
    /// # Safety
    /// The `n` bytes were reserved and written.
    #[inline(always)]
    pub unsafe fn advance(&mut self, n: usize) {
        self.len += n;
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets everything written after `len` bytes.
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        if len < self.len {
            self.len = len;
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `len` bytes were written at `ptr`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The storage, the current pointer and the written length (for a storage that turns into the result).
    pub fn into_parts(self) -> (S, *mut u8, usize) {
        (self.storage, self.ptr, self.len)
    }
}

/// Copies `len` (at most 32) bytes from `src` to `dst` by two loads and two stores that overlap, reading and
/// writing nothing outside the `len` bytes.
///
/// # Safety
/// `len` bytes must be readable at `src` and writable at `dst`, and not overlap.
#[inline(always)]
pub unsafe fn copy_short(src: *const u8, dst: *mut u8, len: usize) {
    debug_assert!(len <= 32);
    if len >= 16 {
        copy_ends::<u128>(src, dst, len);
    } else if len >= 8 {
        copy_ends::<u64>(src, dst, len);
    } else if len >= 4 {
        copy_ends::<u32>(src, dst, len);
    } else if len > 0 {
        let (a, b, c) = (*src, *src.add(len / 2), *src.add(len - 1));
        *dst = a;
        *dst.add(len / 2) = b;
        *dst.add(len - 1) = c;
    }
}

/// Copies `len` bytes (`size_of::<W>()` to twice that) as a word from each end, the two overlapping.
#[inline(always)]
unsafe fn copy_ends<W: Copy>(src: *const u8, dst: *mut u8, len: usize) {
    use std::ptr::{read_unaligned as load, write_unaligned as store};
    let tail = len - std::mem::size_of::<W>();
    let (a, b) = (load(src as *const W), load(src.add(tail) as *const W));
    store(dst as *mut W, a);
    store(dst.add(tail) as *mut W, b);
}

/// The first 8 bytes of `bytes` as a big-endian integer, zero-padded: byte strings whose prefixes differ order as
/// them. A shorter one from two overlapping loads combined in registers: built in a zeroed word on the stack, its
/// bytes were stored one to four at a time and loaded back as one word, a failed store forwarding that was most of
/// sorting a small object's keys (perf, OTP 29).
#[inline(always)]
pub fn prefix_be(bytes: &[u8]) -> u64 {
    if let Some(head) = bytes.first_chunk::<8>() {
        return u64::from_be_bytes(*head);
    }
    let len = bytes.len();
    // The tail piece's last byte goes to byte `len - 1` from the top; where the pieces overlap they agree.
    let tail_shift = 8 * (8 - len as u32);
    match len {
        4..=7 => {
            let head = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as u64;
            let tail = u32::from_be_bytes([
                bytes[len - 4],
                bytes[len - 3],
                bytes[len - 2],
                bytes[len - 1],
            ]);
            (head << 32) | ((tail as u64) << tail_shift)
        }
        2..=3 => {
            let head = u16::from_be_bytes([bytes[0], bytes[1]]) as u64;
            let tail = u16::from_be_bytes([bytes[len - 2], bytes[len - 1]]);
            (head << 48) | ((tail as u64) << tail_shift)
        }
        1 => (bytes[0] as u64) << 56,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_and_keeps_bytes() {
        let mut b = Buffer::default();
        for i in 0..1000u32 {
            b.extend(i.to_string().as_bytes());
            b.push(b',');
        }
        let expected: String = (0..1000u32).map(|i| format!("{i},")).collect();
        assert_eq!(b.as_slice(), expected.as_bytes());
        assert_eq!(b.into_vec(), expected.into_bytes());
    }

    #[test]
    fn starts_in_an_initial_array() {
        let mut stack = [0u8; 4];
        let mut b = unsafe { Buffer::from_raw(stack.as_mut_ptr(), 4, StackThenVec(Vec::new())) };
        b.extend(b"abc");
        b.extend(b"defgh");
        assert_eq!(b.as_slice(), b"abcdefgh");
    }

    #[test]
    fn growth_past_the_limit_is_an_overflow_before_it_allocates() {
        use crate::overflow::catch_overflow;
        let mut b = Buffer::default();
        b.set_limit(100);
        b.extend(&[b'a'; 60]);
        let caught = catch_overflow(|| b.extend(&[b'b'; 41]));
        assert_eq!(
            caught,
            Err(Overflow::Limit {
                needed: 101,
                limit: 100
            })
        );
        // The growth stopped at the limit, not past it; what fits still goes in.
        let mut b = Buffer::default();
        b.set_limit(100);
        b.extend(&[b'a'; 60]);
        b.extend(&[b'b'; 40]);
        assert_eq!(b.len(), 100);
        assert!(b.into_vec().capacity() <= 100);
    }

    struct StackThenVec(Vec<u8>);

    unsafe impl Storage for StackThenVec {
        fn grow(
            &mut self,
            ptr: *mut u8,
            len: usize,
            needed: usize,
            limit: usize,
        ) -> (*mut u8, usize) {
            if self.0.capacity() == 0 {
                let mut v = Vec::with_capacity(needed * 2);
                unsafe { ptr::copy_nonoverlapping(ptr, v.as_mut_ptr(), len) };
                self.0 = v;
                (self.0.as_mut_ptr(), self.0.capacity())
            } else {
                self.0.grow(ptr, len, needed, limit)
            }
        }
    }

    #[test]
    fn copy_short_copies_exactly_its_bytes() {
        let src: Vec<u8> = (1..=40).collect();
        for len in 0..=32 {
            for at in 0..=(40 - len) {
                let mut dst = [0u8; 48];
                unsafe { copy_short(src.as_ptr().add(at), dst.as_mut_ptr().add(8), len) };
                assert_eq!(&dst[8..8 + len], &src[at..at + len], "len {len} at {at}");
                assert!(
                    dst[..8].iter().chain(&dst[8 + len..]).all(|&b| b == 0),
                    "len {len}"
                );
            }
        }
    }

    #[test]
    fn prefix_be_is_the_zero_padded_first_eight_bytes() {
        let text = b"\xffabcdefghij\x00\x01";
        for start in 0..text.len() {
            for len in 0..=(text.len() - start).min(12) {
                let bytes = &text[start..start + len];
                let mut word = [0u8; 8];
                let n = len.min(8);
                word[..n].copy_from_slice(&bytes[..n]);
                assert_eq!(prefix_be(bytes), u64::from_be_bytes(word), "{bytes:?}");
            }
        }
    }
}
