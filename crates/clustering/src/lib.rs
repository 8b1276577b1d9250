#![doc = include_str!("../README.md")]
// The README links the seed's experiments, a module behind the `experiments` feature: docs
// built without it leave those links unresolved (docs.rs builds them with it; so does
// `cargo doc --features experiments`, which reports every other broken link).
#![cfg_attr(not(feature = "experiments"), allow(rustdoc::broken_intra_doc_links))]

#[macro_use]
mod isa;
mod assign;
mod bf16;
mod bounds;
mod centres;
pub mod checkpoint;
pub mod chunked;
#[cfg(feature = "cli")]
pub mod cli;
mod cpu;
mod cuda;
pub mod data;
#[cfg(feature = "mpi")]
pub mod distributed;
mod element;
mod error;
#[cfg(feature = "experiments")]
pub mod experiments;
mod fused;
mod init;
mod kmeans;
pub mod launch;
mod lloyd;
mod sums;
mod team;
mod verify;

pub use element::Element;
pub use error::KMeansError;
pub use kmeans::{
    Algorithm, Convergence, DEFAULT_PARALLEL_ROUNDS, Draws, Init, KMEANS_GPU_THRESHOLD, KMeans,
    KMeansResult, Progress, predict, transform,
};
pub use verify::{VERIFY_DISTANCES, Verified, VerifyError, verify};
#[cfg(test)]
mod tests;
