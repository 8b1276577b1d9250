#![doc = include_str!("../README.md")]
// The README links the seed's experiments, a module behind the `experiments` feature: docs
// built without it leave those links unresolved (docs.rs builds them with it; so does
// `cargo doc --features experiments`, which reports every other broken link).
#![cfg_attr(not(feature = "experiments"), allow(rustdoc::broken_intra_doc_links))]

mod cuda;
pub mod device;
mod distinct;
mod error;
#[cfg(feature = "experiments")]
pub mod experiments;
mod histogram;
mod key;
mod radix_cpu;
mod reduce;
mod scan;
mod select;
mod simd_sort;
mod sort;

pub use distinct::{
    Distinct, DistinctOptions, distinct, distinct_reference, distinct_sorted, distinct_with,
};
pub use error::PrimitiveError;
pub use gpu_runtime::{Backend, Exec};
pub use histogram::{histogram, histogram_reference};
pub use key::{Element, Equality, RadixBits, SortKey, Summable, total_cmp};
pub use reduce::{
    reduce_max, reduce_min, reduce_min_max, reduce_min_max_reference, reduce_sum,
    reduce_sum_reference,
};
pub use scan::{
    exclusive_scan, exclusive_scan_reference, inclusive_scan, inclusive_scan_reference,
};
pub use select::{
    Split, compact, partition, select_by_flags, select_by_flags_reference, split_by_bit,
    split_by_flags, split_by_flags_reference,
};
pub use sort::{
    argsort, argsort_into, radix_passes_needed, radix_sort, radix_sort_desc, radix_sort_pairs,
    radix_sort_pairs_desc, sort_into, sort_reference,
};

/// Asks the core to load the cache line holding `*x` (a hint: it never faults, never reads
/// through the pointer in the language's sense, and has no visible effect). Loops over memory
/// they reach at irregular intervals (random walks, rows that a test may skip) issue it for the
/// element they will touch a few steps later, so several cache misses are in flight at once.
/// A no-op off x86-64.
#[inline(always)]
pub fn prefetch<T>(x: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults and has no visible effect.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(x.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Below this many elements streaming operations (reduce, scan, select, split, histogram) stay
/// on one thread: rayon's fork/join costs more than it saves.
pub const PARALLEL_THRESHOLD: usize = 1 << 16;

/// `Exec::Auto` sends streaming operations (reduce, scan, select, split, histogram) of at least
/// this many elements to the GPU. They move every byte over PCIe twice for O(1) work per byte,
/// so from host slices the GPU rarely pays: on an H100 (2026-11-27, BENCHMARKS.md) `distinct`
/// of 2^26 host keys took 40 ms on the GPU with transfers and 14 ms on the 16 host cores. Use
/// the [`device`] variants to keep data on the GPU.
pub const GPU_THRESHOLD_STREAM: u64 = 1 << 26;

/// `Exec::Auto` sends sorts and `distinct` of at least this many keys to the GPU. Measured on an
/// H100 with transfers (2026-11-27, BENCHMARKS.md): the GPU's u32 sort took 30 ms at 2^24 keys
/// against 16 ms on 16 host cores (about 60 ms on 2), 59 ms against 81 ms at 2^26; below 2^24
/// the module load and launch latency (about 14 ms in a fresh process) dominate.
pub const GPU_THRESHOLD_SORT: u64 = 1 << 24;

/// The CPU sort paths one by one, for the timing examples and benches (not a stable API).
#[doc(hidden)]
pub mod __paths {
    use crate::key::RadixBits;

    /// The LSD radix sort of unsigned keys (on all rayon threads from 2^17 keys).
    pub fn radix_sort_bits<B: RadixBits>(keys: &mut [B]) {
        crate::radix_cpu::sort_bits(keys, &mut vec![(); keys.len()]);
    }

    /// One vectorized partition of `u32` keys at `pivot` (AVX-512 only): the split point.
    pub fn simd_partition_u32(keys: &mut [u32], pivot: u32) -> Option<usize> {
        crate::simd_sort::partition_u32(keys, pivot)
    }

    /// Sorts each `chunk` keys of `keys` with the vectorized sort's in-register network
    /// (`chunk` at most 16 registers); `false` when this CPU lacks it.
    pub fn simd_sort_chunks<B: RadixBits>(keys: &mut [B], chunk: usize) -> bool {
        crate::simd_sort::sort_chunks(keys, chunk)
    }

    /// The vectorized quicksort of unsigned keys; `false` when this CPU lacks it.
    pub fn simd_sort_bits<B: RadixBits>(keys: &mut [B], parallel: bool) -> bool {
        crate::simd_sort::sort_unsigned(keys, parallel)
    }
}
