//! One module per subcommand. Each has `Args` (clap) and `run(args, json)`; algorithm
//! subcommands also have `demo(size) -> Vec<DemoRow>` for `warpath demo`.

pub(crate) mod demo;
pub(crate) mod info;
pub(crate) mod kmeans;
