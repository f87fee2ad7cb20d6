//! The NIF's global allocator: mimalloc, with a count of bytes held and their peak, so the benchmarks and the soak
//! test can report the native memory a call needs. Counting starts with the first [`reset_peak`] (only the
//! benchmarks and tests call it): until then an allocation costs one relaxed load more than mimalloc's, not two
//! atomic read-modify-writes of one shared cache line, which every scheduler's calls would contend for (rustler
//! allocates on every NIF call).

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::Relaxed};

use mimalloc::MiMalloc;

pub struct CountingMiMalloc;

static COUNTING: AtomicBool = AtomicBool::new(false);
/// Bytes allocated minus bytes freed since counting started (negative when more was freed than allocated since).
static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

#[inline(always)]
fn counting() -> bool {
    COUNTING.load(Relaxed)
}

#[inline]
fn grew(by: usize) {
    let now = CURRENT.fetch_add(by as isize, Relaxed) + by as isize;
    if now > PEAK.load(Relaxed) {
        PEAK.fetch_max(now, Relaxed);
    }
}

#[inline]
fn shrank(by: usize) {
    CURRENT.fetch_sub(by as isize, Relaxed);
}

unsafe impl GlobalAlloc for CountingMiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = MiMalloc.alloc(layout);
        if !p.is_null() && counting() {
            grew(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = MiMalloc.alloc_zeroed(layout);
        if !p.is_null() && counting() {
            grew(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        MiMalloc.dealloc(ptr, layout);
        if counting() {
            shrank(layout.size());
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = MiMalloc.realloc(ptr, layout, new_size);
        if !p.is_null() && counting() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        p
    }
}

/// mimalloc reserves address space for its heap in arenas, the first of 1 GiB on 64-bit. Under an address-space
/// limit (`ulimit -v`, RLIMIT_AS) that gigabyte is gone from what the VM can allocate before the NIF holds
/// anything (a quarter of 4 GB), so there arenas are a 64th of the limit (mimalloc doubles them every eighth).
/// Without a limit the default stays: 64 MiB arenas cost citm_catalog's encode and decode 4-8% (A/B, 6 rounds).
/// Set when the library loads, before its first allocation makes the first arena; RLIMIT_AS is a Linux concern,
/// hence ELF only.
#[cfg(target_os = "linux")]
mod arena_reserve {
    /// `mi_option_arena_reserve` in mimalloc's `mi_option_e` (v2 and v3 alike), in KiB.
    const MI_OPTION_ARENA_RESERVE: i32 = 23;
    const MIN_KIB: u64 = 16 * 1024;
    const DEFAULT_KIB: u64 = 1024 * 1024;

    extern "C" {
        fn mi_option_set(option: i32, value: std::ffi::c_long);
    }

    /// The arena size for an address-space limit of `limit` bytes (`None`: no limit, keep mimalloc's default).
    fn arena_kib(limit: Option<u64>) -> Option<u64> {
        limit.map(|bytes| (bytes / 64 / 1024).clamp(MIN_KIB, DEFAULT_KIB))
    }

    extern "C" fn set_arena_reserve() {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given; mi_option_set sets one option in mimalloc's static
        // table. Neither allocates.
        unsafe {
            let limited = libc::getrlimit(libc::RLIMIT_AS, &mut limit) == 0
                && limit.rlim_cur != libc::RLIM_INFINITY;
            // (rlim_t is 32 bits wide on 32-bit targets.)
            #[allow(clippy::unnecessary_cast)]
            let bytes = limit.rlim_cur as u64;
            if let Some(kib) = arena_kib(limited.then_some(bytes)) {
                mi_option_set(MI_OPTION_ARENA_RESERVE, kib as std::ffi::c_long);
            }
        }
    }

    #[used]
    #[link_section = ".init_array"]
    static SET_ARENA_RESERVE: extern "C" fn() = set_arena_reserve;
}

/// Starts counting (if not yet started) and returns the bytes held now, counted from that start; the peak
/// restarts from here.
pub fn reset_peak() -> isize {
    COUNTING.store(true, Relaxed);
    let now = CURRENT.load(Relaxed);
    PEAK.store(now, Relaxed);
    now
}

/// The most bytes held since the last [`reset_peak`], counted as there.
pub fn peak() -> isize {
    PEAK.load(Relaxed)
}

/// A binary of `size` bytes from the VM's allocator, or `None` when it refuses (rustler's `OwnedBinary::new`
/// aborts the VM there: sizes an input decides must fail into an error instead).
pub fn try_owned_binary(size: usize) -> Option<rustler::OwnedBinary> {
    // SAFETY: ErlNifBinary is plain data that enif_alloc_binary fills; on success the binary is owned here.
    unsafe {
        let mut bin: rustler::sys::ErlNifBinary = std::mem::MaybeUninit::zeroed().assume_init();
        (rustler::sys::enif_alloc_binary(size, &mut bin) != 0)
            .then(|| rustler::OwnedBinary::from_raw(bin))
    }
}
