//! Euler circuits and paths of directed and undirected multigraphs given as edge arrays.

use gpu_runtime::Exec;
use graph_core::{
    Graph, UndirectedGraph, euler_circuit, euler_path, undirected_euler_circuit,
    undirected_euler_path,
};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;

use crate::arrays::IndexPair;
use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, [euler_trail]);
    Ok(())
}

/// Why the native call failed, kept typed until the GIL is held again.
enum Failure {
    Graph(graph_core::GraphError),
    Euler(graph_core::EulerError),
    Primitive(gpu_primitives::PrimitiveError),
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Graph(e) => py_err(e),
            Failure::Euler(e) => py_err(e),
            Failure::Primitive(e) => py_err(e),
        }
    }
}

/// Native half of `warpath.euler_circuit`: edge `i` joins `sources[i]` and `targets[i]`
/// (uint32 vertex ids below `n_vertices`), from the first to the second when `directed`.
/// Returns `(edge_index, vertices)` as int64 arrays: the input positions of the edges in walk
/// order, and the `m + 1` vertices visited (both empty without edges); an undirected edge may
/// be walked from its second end. `path=True` allows an open trail.
#[pyfunction]
#[pyo3(signature = (sources, targets, n_vertices, path, directed, backend))]
fn euler_trail<'py>(
    py: Python<'py>,
    sources: PyReadonlyArray1<'py, u32>,
    targets: PyReadonlyArray1<'py, u32>,
    n_vertices: usize,
    path: bool,
    directed: bool,
    backend: &str,
) -> PyResult<IndexPair<'py, ndarray::Ix1>> {
    let exec = parse_backend(backend)?;
    let (s, t) = (sources.as_array(), targets.as_array());
    let (edges, vertices) = py.detach(|| {
        let (s, t) = (s.as_standard_layout(), t.as_standard_layout());
        let s = s.as_slice().expect("standard layout");
        let t = t.as_slice().expect("standard layout");
        trail(n_vertices, s, t, directed, path, exec)
    })?;
    Ok((edges.into_pyarray(py), vertices.into_pyarray(py)))
}

/// Edge positions and vertices of an Euler trail (a path when `path`, else a circuit) of the
/// directed multigraph `s[i] -> t[i]` or, unless `directed`, of the undirected multigraph
/// `s[i] -- t[i]` (NetworkX's `MultiGraph` semantics; its edge ids are the input positions).
fn trail(
    n: usize,
    s: &[u32],
    t: &[u32],
    directed: bool,
    path: bool,
    exec: Exec,
) -> Result<(Vec<i64>, Vec<i64>), Failure> {
    if !directed {
        let g = UndirectedGraph::from_endpoints(n, s, t).map_err(Failure::Graph)?;
        let (trail, _) = if path {
            undirected_euler_path(&g, None, exec)
        } else {
            undirected_euler_circuit(&g, None, exec)
        }
        .map_err(Failure::Euler)?;
        return Ok((widen(&trail.edges), widen(&trail.vertices)));
    }
    let g = Graph::from_sources_targets(n, s, t).map_err(Failure::Graph)?;
    let (trail, _) = if path {
        euler_path(&g, exec)
    } else {
        euler_circuit(&g, exec)
    }
    .map_err(Failure::Euler)?;
    // The CSR keeps each vertex's edges in input order (a stable counting sort), so CSR edge
    // `e` is input edge `perm[e]`, where `perm` is the stable sorting permutation of `s`.
    let perm = gpu_primitives::argsort(s, Exec::Cpu).map_err(Failure::Primitive)?;
    let edges = trail
        .edges
        .iter()
        .map(|&e| i64::from(perm[e as usize]))
        .collect();
    Ok((edges, widen(&trail.vertices)))
}

fn widen(v: &[u32]) -> Vec<i64> {
    v.iter().map(|&x| i64::from(x)).collect()
}
