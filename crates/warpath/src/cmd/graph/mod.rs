//! `warpath euler`, `warpath graph` and `warpath debruijn-graph` (graph-core): one file per
//! subcommand, `euler --sweep` apart, and the graph reading they share in `input`; here the
//! head of their `--json` reports.

/// The graph formats and conventions, for `--help` (a macro, so `concat!` can use it).
macro_rules! graph_formats {
    () => {
        "\
Graph files (format detected, or --format): edge lists `a b` (whitespace or commas; NetworkX's
write_edgelist dialects: extra columns such as weights and attribute dicts `a b {...}` are
ignored; a first line `source target` is a header), `a -> b, c` adjacency lines, SNAP edge
lists, Matrix Market .mtx (vertices named by their 1-based indices). # and % start comments.
Vertices are reported as the file names them.

Graphs are directed multigraphs (NetworkX's MultiDiGraph) unless --undirected (euler: a
MultiGraph): parallel edges and self loops count. Vertices without edges are ignored by the
Euler conditions (NetworkX's is_eulerian is False when there are any); a graph without edges
has the empty circuit."
    };
}

mod debruijn;
mod euler;
mod input;
mod summary;
mod sweep;

/// A graph whose size the `--json` reports state.
trait Counted {
    /// The numbers of edges and of vertices.
    fn counts(&self) -> (u64, usize);
}

impl Counted for graph_core::Graph {
    fn counts(&self) -> (u64, usize) {
        (self.edge_count(), self.vertex_count())
    }
}

impl Counted for input::AnyGraph {
    fn counts(&self) -> (u64, usize) {
        (self.edge_count(), self.vertex_count())
    }
}

/// Prints a graph command's `--json` report: the fields every one has (the edges of `g` as `n`,
/// its vertices, the backend that ran, the seconds taken), then those of `rest`.
fn print_graph_json(
    g: &impl Counted,
    backend: gpu_runtime::Backend,
    seconds: f64,
    rest: serde_json::Value,
) {
    let (edges, vertices) = g.counts();
    crate::cli_io::print_merged_json(
        serde_json::json!({
            "n": edges,
            "vertices": vertices,
            "backend": backend,
            "seconds": seconds,
        }),
        rest,
    );
}

pub(crate) use debruijn::{DebruijnArgs, run_debruijn};
pub(crate) use euler::{EulerArgs, demo, run_euler};
pub(crate) use summary::{GraphArgs, run_graph};
