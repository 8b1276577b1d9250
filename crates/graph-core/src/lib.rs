//! # graph-core
//!
//! Directed multigraphs in CSR form, Euler circuits and paths (CPU and GPU), De Bruijn graphs, GraphViz output.
//!
//! This crate is being built; see the workspace README for what is available.
