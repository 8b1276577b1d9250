#![doc = include_str!("../README.md")]
// The README links the seed's experiments, a module behind the `experiments` feature: docs
// built without it leave those links unresolved (docs.rs builds them with it; so does
// `cargo doc --features experiments`, which reports every other broken link).
#![cfg_attr(not(feature = "experiments"), allow(rustdoc::broken_intra_doc_links))]

mod batch;
mod debruijn;
mod error;
#[cfg(feature = "experiments")]
pub mod experiments;
mod heap;
mod next;
mod rank;
mod search;
#[cfg(test)]
mod test_support;

pub use batch::{
    BATCH_GPU_THRESHOLD, BatchOptions, MAX_GPU_STEPS, generate_permutations, lexicographic_rows,
    permutations_into, permutations_into_device, permutations_into_reference,
    permutations_into_with, permutations_on_device, write_permutations,
};
pub use debruijn::{
    Construction, MAX_DE_BRUIJN_LEN, alphabet_chars, de_bruijn, de_bruijn_euler,
    de_bruijn_euler_with, de_bruijn_fkm, de_bruijn_linear, de_bruijn_string, find_in_de_bruijn,
    verify_de_bruijn, word_to_symbols,
};
pub use error::{DeBruijnError, PermError};
pub use heap::{HeapPermutations, heap_visit};
pub use next::{next_permutation, prev_permutation};
pub use rank::{
    MAX_N_U64, MAX_N_U128, factorial_u64, factorial_u128, rank_permutation,
    rank_permutation_reference, rank_permutation_u128, unrank_elements, unrank_permutation,
    unrank_permutation_reference, unrank_permutation_u128,
};
pub use search::{
    Objective, SEARCH_GPU_THRESHOLD, SearchResult, search_permutations, search_permutations_range,
    search_permutations_reference,
};

/// The typed launchers of `kernels-cuda/combinatorics.cu` (used by `batch/cuda.rs` and
/// `search/cuda.rs`).
mod kernels {
    gpu_runtime::kernels!("combinatorics");
}

// The kernels hold a permutation in `COMB_MAX_N` bytes: every `n` with a `u64` rank must fit.
const _: () = assert!(MAX_N_U64 <= kernels::COMB_MAX_N as usize);
