//! One module per subcommand. Each has `Args` (clap) and `run(args, json)`; algorithm
//! subcommands also have `demo(size) -> Vec<DemoRow>` for `warpath demo`.

pub(crate) mod demo;
pub(crate) mod fhn;
pub(crate) mod graph;
pub(crate) mod info;
pub(crate) mod kmeans;
pub(crate) mod lap;
pub(crate) mod perm;
pub(crate) mod sort;
