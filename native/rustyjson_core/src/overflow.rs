//! Outputs that would pass their ceiling, or that the allocator cannot hold: a clean error, never an abort.
//!
//! Every writer appends through [`crate::buffer::Buffer`] after reserving room inline; making each of those hot
//! reservations return a `Result` would put a branch and an error path on every byte written. Instead, the one
//! cold place that grows a buffer checks the ceiling and the allocation there, before any memory is touched, and
//! on failure leaves the walk with [`overflow`]: an unwind that skips the panic hook (nothing is printed), which
//! the entry point that started the write turns back into a value with [`catch_overflow`]. Everything the walk
//! held is dropped on the way out.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// The default ceiling of one output, in bytes (1 GiB): no real document reaches it (a 10 MB term written in its
/// most expanding escape mode is about 60 MB), and what passes it is a layout quadratic in its nesting.
pub const DEFAULT_MAX_OUTPUT: usize = 1 << 30;

/// Why an output could not grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// `needed` bytes, past the ceiling of `limit` bytes.
    Limit { needed: usize, limit: usize },
    /// The allocator refused `needed` bytes (an address space limit, or a size no machine has).
    Memory { needed: usize },
}

/// Leaves the current write with `why`: unwinds to the nearest [`catch_overflow`] without calling the panic hook.
#[cold]
#[inline(never)]
pub fn overflow(why: Overflow) -> ! {
    resume_unwind(Box::new(why))
}

/// Runs `f`; an [`overflow`] inside it comes back as `Err`. Any other panic goes on unwinding.
pub fn catch_overflow<R>(f: impl FnOnce() -> R) -> Result<R, Overflow> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Ok(value),
        Err(payload) => match payload.downcast::<Overflow>() {
            Ok(why) => Err(*why),
            Err(other) => resume_unwind(other),
        },
    }
}

/// Reserves room for `additional` more elements in `vec`, or leaves the write with [`Overflow::Memory`] (for the
/// working stacks and buffers whose size the input decides). The room check is inline, as `Vec::reserve`'s: it
/// runs once per escape in an escaped string.
#[inline(always)]
pub fn try_grow<T>(vec: &mut Vec<T>, additional: usize) {
    if vec.capacity() - vec.len() < additional {
        grow(vec, additional);
    }
}

#[cold]
#[inline(never)]
fn grow<T>(vec: &mut Vec<T>, additional: usize) {
    if vec.try_reserve(additional).is_err() {
        let needed = vec
            .len()
            .saturating_add(additional)
            .saturating_mul(std::mem::size_of::<T>());
        overflow(Overflow::Memory { needed });
    }
}

/// `vec.push(value)`, growing (amortized, as `Vec` does) through [`try_grow`]: a working stack whose depth or
/// width the input decides fails into an overflow, never an abort.
#[inline(always)]
pub fn push<T>(vec: &mut Vec<T>, value: T) {
    let len = vec.len();
    if len == vec.capacity() {
        grow_one(vec);
    }
    // SAFETY: there is room for one more (checked or grown above): `Vec::push` would check again.
    unsafe {
        vec.as_mut_ptr().add(len).write(value);
        vec.set_len(len + 1);
    }
}

#[cold]
#[inline(never)]
fn grow_one<T>(vec: &mut Vec<T>) {
    grow(vec, 1);
}

/// An empty vector with room for exactly `capacity` elements, or an [`Overflow::Memory`].
pub fn try_with_capacity<T>(capacity: usize) -> Vec<T> {
    let mut vec = Vec::new();
    if vec.try_reserve_exact(capacity).is_err() {
        let needed = capacity.saturating_mul(std::mem::size_of::<T>());
        overflow(Overflow::Memory { needed });
    }
    vec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catches_an_overflow_and_lets_other_panics_through() {
        let caught = catch_overflow(|| -> u8 {
            overflow(Overflow::Limit {
                needed: 9,
                limit: 8,
            })
        });
        assert_eq!(
            caught,
            Err(Overflow::Limit {
                needed: 9,
                limit: 8
            })
        );
        assert_eq!(catch_overflow(|| 7), Ok(7));
        let other = std::panic::catch_unwind(|| catch_overflow(|| panic!("not an overflow")));
        assert!(other.is_err());
    }

    #[test]
    fn push_grows_as_a_vec_does() {
        let mut v: Vec<u32> = Vec::new();
        for i in 0..10_000 {
            push(&mut v, i);
        }
        assert_eq!(v, (0..10_000).collect::<Vec<_>>());
    }

    #[test]
    fn try_grow_reports_a_size_no_allocator_gives() {
        let mut v: Vec<u64> = Vec::new();
        let caught = catch_overflow(|| try_grow(&mut v, usize::MAX / 4));
        assert!(matches!(caught, Err(Overflow::Memory { needed }) if needed > usize::MAX / 32));
        try_grow(&mut v, 10);
        assert!(v.capacity() >= 10);
    }
}
