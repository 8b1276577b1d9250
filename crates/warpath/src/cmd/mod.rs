//! One module per subcommand (a folder where a crate has several). Each has `Args` (clap) and
//! `run(args, json)`; `info` and the algorithm subcommands also have a
//! `demo(size, rows)` that adds their rows to `warpath demo`, listed in [`DEMOS`].
//!
//! Imports go one way: `demo` reads [`DEMOS`] here, and the subcommands take what they share
//! ([`DemoSize`], [`Rows`]) from `crate::report`, never from `demo` or from this module.

use crate::report::{DemoSize, Rows};

pub(crate) mod assembly;
pub(crate) mod demo;
pub(crate) mod fhn;
pub(crate) mod graph;
pub(crate) mod info;
pub(crate) mod kmeans;
pub(crate) mod lap;
pub(crate) mod perm;
pub(crate) mod reproduce;
pub(crate) mod sort;

/// The rows of `warpath demo`, in the order of the crates: runtime, primitives, graphs,
/// assembly, permutations, assignment, clustering, PDE.
pub(crate) const DEMOS: [fn(DemoSize, &mut Rows); 8] = [
    info::demo,
    sort::demo,
    graph::demo,
    assembly::demo,
    perm::demo,
    lap::demo,
    kmeans::demo,
    fhn::demo,
];
