//! The ceiling on a decoded term's memory: the VM allocates a term's heap itself, and aborts when it cannot
//! (`eheap_alloc: Cannot allocate`), so a decode stops with an error before its term passes what this OS process
//! may hold. Learned once from the memory the process may use: its address-space limit (`ulimit -v`), its cgroup's
//! memory limit, and the machine's physical memory, whichever is least; a term may take a sixteenth of that (the
//! VM's own reservations, the input, the decoder's stacks and the copy a garbage collection makes come on top: a
//! VM limited to 4 GB could not take a 384 MB list). `config :rusty_json, max_term_bytes: n` sets it instead.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

/// A term may take this fraction of the memory the process may use.
const SHARE: usize = 16;

/// Where nothing tells the memory (no limit and no physical size known): 1 GiB for a term.
const UNKNOWN: usize = 1 << 30;

/// Set by configuration (0: learned).
static CONFIGURED: AtomicUsize = AtomicUsize::new(0);

/// What was learned: the memory the process may use, and which bound gave it.
static LEARNED: OnceLock<(usize, &'static str)> = OnceLock::new();

/// The most bytes a decoded term may take.
#[inline]
pub fn max_term_bytes() -> usize {
    match CONFIGURED.load(Relaxed) {
        0 => {
            let (memory, _) = learned();
            if memory == usize::MAX {
                UNKNOWN
            } else {
                memory / SHARE
            }
        }
        configured => configured,
    }
}

/// Sets the ceiling (`config :rusty_json, max_term_bytes:`); 0 goes back to the learned one.
pub fn configure(bytes: usize) {
    CONFIGURED.store(bytes, Relaxed);
}

/// The memory the process may use and its source: `"address_space"`, `"cgroup"`, `"physical"` or `"unknown"`.
pub fn learned() -> (usize, &'static str) {
    *LEARNED.get_or_init(|| {
        [
            (address_space_limit(), "address_space"),
            (cgroup_limit(), "cgroup"),
            (physical_memory(), "physical"),
        ]
        .into_iter()
        .filter_map(|(bytes, source)| Some((bytes?, source)))
        .min_by_key(|&(bytes, _)| bytes)
        .unwrap_or((usize::MAX, "unknown"))
    })
}

#[cfg(unix)]
fn address_space_limit() -> Option<usize> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY)
        .then(|| usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX))
}

#[cfg(not(unix))]
fn address_space_limit() -> Option<usize> {
    None
}

/// cgroup v2's `memory.max` of this process's group, or v1's `memory.limit_in_bytes` ("max", or v1's huge
/// number, when there is none).
#[cfg(target_os = "linux")]
fn cgroup_limit() -> Option<usize> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let v2 = read("/proc/self/cgroup").and_then(|groups| {
        let path = groups
            .lines()
            .find_map(|line| line.strip_prefix("0::"))?
            .trim()
            .to_owned();
        read(&format!("/sys/fs/cgroup{path}/memory.max"))
            .or_else(|| read("/sys/fs/cgroup/memory.max"))
    });
    let text = v2.or_else(|| read("/sys/fs/cgroup/memory/memory.limit_in_bytes"))?;
    let bytes: u64 = text.trim().parse().ok()?;
    // v1 says "no limit" with a number near i64::MAX rounded to pages.
    (bytes < 1 << 60).then(|| usize::try_from(bytes).unwrap_or(usize::MAX))
}

#[cfg(not(target_os = "linux"))]
fn cgroup_limit() -> Option<usize> {
    None
}

#[cfg(any(target_os = "linux", target_os = "macos"))]
fn physical_memory() -> Option<usize> {
    // SAFETY: sysconf has no preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages > 0 && size > 0).then(|| (pages as usize).saturating_mul(size as usize))
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn physical_memory() -> Option<usize> {
    None
}
