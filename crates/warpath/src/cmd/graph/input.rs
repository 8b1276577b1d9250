//! What the graph subcommands share: reading a graph file, a graph of either kind, and
//! errors that name vertices as the input does.

use std::path::Path;

use anyhow::{Context, Result};
use gpu_runtime::{Backend, Exec};
use graph_core::{
    EulerError, EulerStyle, EulerTrail, Graph, GraphFormat, euler_circuit, euler_path,
    is_euler_circuit, is_euler_path, read_graph_file,
};

/// Reads a graph file (`-` for standard input, an edge list unless `format` says otherwise).
pub(super) fn load(file: &Path, format: Option<GraphFormat>) -> Result<Graph> {
    let g = if file.as_os_str() == "-" {
        let f = format.unwrap_or(GraphFormat::EdgeList);
        graph_core::read_graph(std::io::stdin().lock(), f)
    } else {
        read_graph_file(file, format)
    };
    g.with_context(|| format!("reading {}", file.display()))
}

/// A graph of either kind, as `euler` reads or generates it.
pub(super) enum AnyGraph {
    Directed(Graph),
    Undirected(graph_core::UndirectedGraph),
}

impl AnyGraph {
    pub(super) fn vertex_label(&self, v: u32) -> String {
        match self {
            AnyGraph::Directed(g) => g.vertex_label(v),
            AnyGraph::Undirected(g) => g.vertex_label(v),
        }
    }
    pub(super) fn names(&self) -> Option<&graph_core::VertexNames> {
        match self {
            AnyGraph::Directed(g) => g.names(),
            AnyGraph::Undirected(g) => g.names(),
        }
    }
    pub(super) fn vertex_count(&self) -> usize {
        match self {
            AnyGraph::Directed(g) => g.vertex_count(),
            AnyGraph::Undirected(g) => g.vertex_count(),
        }
    }
    pub(super) fn edge_count(&self) -> u64 {
        match self {
            AnyGraph::Directed(g) => g.edge_count(),
            AnyGraph::Undirected(g) => g.edge_count(),
        }
    }
    /// An Euler path or circuit where `exec` says.
    pub(super) fn trail(
        &self,
        path: bool,
        exec: Exec,
    ) -> Result<(EulerTrail, Backend), EulerError> {
        match (self, path) {
            (AnyGraph::Directed(g), true) => euler_path(g, exec),
            (AnyGraph::Directed(g), false) => euler_circuit(g, exec),
            (AnyGraph::Undirected(g), true) => graph_core::undirected_euler_path(g, None, exec),
            (AnyGraph::Undirected(g), false) => graph_core::undirected_euler_circuit(g, None, exec),
        }
    }
    /// The independent check of a trail.
    pub(super) fn verify(&self, path: bool, t: &EulerTrail) -> bool {
        match (self, path) {
            (AnyGraph::Directed(g), true) => is_euler_path(g, t),
            (AnyGraph::Directed(g), false) => is_euler_circuit(g, t),
            (AnyGraph::Undirected(g), true) => graph_core::is_undirected_euler_path(g, t),
            (AnyGraph::Undirected(g), false) => graph_core::is_undirected_euler_circuit(g, t),
        }
    }
}

/// The directed graph `g` with its edges undirected (names kept).
pub(super) fn undirected(g: Graph) -> Result<graph_core::UndirectedGraph> {
    let sources = g.edge_sources();
    let u = graph_core::UndirectedGraph::from_endpoints(g.vertex_count(), &sources, g.targets())?;
    Ok(match g.names() {
        Some(n) => u.with_names(n.clone())?,
        None => u,
    })
}

/// The error with the vertex as the input names it (its name, or its number when the graph
/// has no names), never the internal 0-based id next to a name.
pub(super) fn named(label: &dyn Fn(u32) -> String, e: EulerError) -> anyhow::Error {
    let message = match &e {
        EulerError::Unbalanced {
            vertex,
            in_degree,
            out_degree,
        } => format!(
            "no Euler circuit: vertex `{}` has in-degree {in_degree} but out-degree {out_degree}",
            label(*vertex)
        ),
        EulerError::PathDegrees {
            vertex,
            in_degree,
            out_degree,
            reason,
        } => format!(
            "no Euler path: vertex `{}` has in-degree {in_degree} and out-degree {out_degree} ({reason})",
            label(*vertex)
        ),
        EulerError::OddDegree { vertex, degree } => format!(
            "no Euler circuit: vertex `{}` has odd degree {degree}",
            label(*vertex)
        ),
        EulerError::TooManyOddVertices {
            count,
            vertex,
            degree,
        } => format!(
            "no Euler path: {count} vertices have odd degree, at most 2 may; the third, vertex \
             `{}`, has degree {degree}",
            label(*vertex)
        ),
        _ => return anyhow::Error::new(e),
    };
    crate::fail::Fail {
        kind: "no_solution",
        message,
    }
    .into()
}

pub(super) fn style_name(style: EulerStyle) -> &'static str {
    match style {
        EulerStyle::Deep => "deep",
        EulerStyle::Shallow => "shallow",
    }
}
