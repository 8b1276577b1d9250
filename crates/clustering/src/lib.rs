//! # clustering
//!
//! k-means clustering: sequential, multi-core, GPU and distributed over MPI.
//!
//! This crate is being built; see the workspace README for what is available.
