//! # gpu-primitives
//!
//! Data-parallel primitives on CPU and GPU: scan, reduce, compact, split, radix sort, distinct, histogram.
//!
//! This crate is being built; see the workspace README for what is available.
