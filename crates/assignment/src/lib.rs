//! # assignment
//!
//! Linear assignment solvers, from brute force to exact shortest-augmenting-path and auction solvers.
//!
//! This crate is being built; see the workspace README for what is available.
