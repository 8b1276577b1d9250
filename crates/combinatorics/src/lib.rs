//! # combinatorics
//!
//! Permutations (rank, unrank, next, Heap, GPU batches and search) and De Bruijn sequences.
//!
//! This crate is being built; see the workspace README for what is available.
