//! The memory bound: what a run may hold at once, and how each stage sizes its buffers and
//! buckets from it. Every stage allocates what it needs up front from these figures, so the
//! bound holds by construction (a bucket too large to count at once is counted in passes).

use crate::AssemblyError;
use crate::error::human_bytes;

/// What the process holds besides the stages' data: the program and its libraries, thread
/// stacks, reader buffers, the allocator's slack.
const FIXED: u64 = 20 << 20;
/// Per thread, on top of [`FIXED`].
const PER_THREAD: u64 = 4 << 20;
/// The smallest bound a run accepts: [`FIXED`] and the threads, plus 16 MiB to work in.
pub(crate) const MIN_WORK: u64 = 16 << 20;

/// The default memory bound: half of the memory available when the run starts (Linux
/// `MemAvailable`; 4 GiB where the system does not say).
///
/// # Examples
/// ```
/// assert!(assembly::default_max_memory() >= 1 << 20);
/// ```
pub fn default_max_memory() -> u64 {
    available_memory() / 2
}

/// The memory available now (Linux `MemAvailable`), 4 GiB when unknown.
pub(crate) fn available_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(4 << 30, |kib| kib * 1024)
}

/// Hands the memory a finished stage freed back to the system (glibc keeps freed blocks in
/// its arenas for reuse, where they still count as resident; the next stage's arrays are
/// mostly of other sizes). A no-op where the allocator is not glibc's.
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's own heaps to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Caps glibc's malloc arenas for a process whose work runs on `threads` threads (0:
/// `RAYON_NUM_THREADS`, else every core): one arena per four threads, at least one. glibc
/// gives each thread that finds the arenas busy one of its own, up to eight per core, and each
/// arena keeps the blocks its threads freed for their next requests: resident memory the
/// process no longer uses, which under a memory bound can set the peak more than the data
/// does. Fewer arenas share those blocks. It tunes the allocator of the whole process, so a
/// program calls it once, before it starts threads; this library never calls it itself (a
/// Python process keeps its own settings). A no-op where the allocator is not glibc's.
///
/// ```
/// assembly::limit_allocator_arenas(2);
/// ```
pub fn limit_allocator_arenas(threads: usize) {
    let threads = if threads == 0 {
        std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    } else {
        threads
    };
    let arenas = threads.div_ceil(4).clamp(1, 1 << 16) as i32;
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's tuning, for the arenas made from now on.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, arenas);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = arenas;
}

/// A run's memory bound split among its threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    /// The bound on the process's resident memory, in bytes.
    pub(crate) total: u64,
    /// Worker threads.
    pub(crate) threads: usize,
}

impl Budget {
    /// The budget for `max_memory` bytes (0: [`default_max_memory`]) and `threads` threads.
    ///
    /// # Errors
    /// [`AssemblyError::Memory`] when the bound leaves less than 16 MiB to work in.
    pub(crate) fn new(max_memory: u64, threads: usize) -> Result<Budget, AssemblyError> {
        let total = if max_memory == 0 {
            default_max_memory()
        } else {
            max_memory
        };
        let threads = threads.max(1);
        let b = Budget { total, threads };
        let least = FIXED + PER_THREAD * threads as u64 + MIN_WORK;
        if total < least {
            return Err(AssemblyError::Memory(format!(
                "a memory bound of {} is too small for {threads} threads: at least {} (the \
                 program itself takes about {})",
                human_bytes(total),
                human_bytes(least),
                human_bytes(FIXED + PER_THREAD * threads as u64)
            )));
        }
        Ok(b)
    }

    /// Bytes the stages may hold at once.
    pub(crate) fn usable(&self) -> u64 {
        self.total - FIXED - PER_THREAD * self.threads as u64
    }

    /// Bytes one thread's share of the work may hold.
    pub(crate) fn per_thread(&self) -> u64 {
        self.usable() / self.threads as u64
    }
}
