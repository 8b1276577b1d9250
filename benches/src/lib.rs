//! Shared helpers for warpath's criterion benchmarks (`benches/benches/*.rs`).
//!
//! Run them with `cargo bench -p warpath-benches --bench <crate>`; the GPU bundle carries
//! them to a machine with a GPU (`target/gpu-bundle/run.sh --bench`).

/// A deterministic pseudo-random `u64` stream (SplitMix64) for bench inputs, so every
/// bench and every machine sees the same data without pulling an RNG crate into benches.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
