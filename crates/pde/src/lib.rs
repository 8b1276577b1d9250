//! # pde
//!
//! The spatial FitzHugh-Nagumo equation (explicit, adaptive, implicit schemes) and tridiagonal solvers.
//!
//! This crate is being built; see the workspace README for what is available.
