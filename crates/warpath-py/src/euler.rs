//! Euler circuits and paths of directed multigraphs given as edge arrays.

use gpu_runtime::Exec;
use graph_core::{EulerTrail, Graph, euler_circuit, euler_path};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyNotImplementedError;
use pyo3::prelude::*;

use crate::arrays::IndexPair;
use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(euler_trail, m)?)?;
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

/// Native half of `warpath.euler_circuit`: `sources[i] -> targets[i]` is edge `i` (uint32
/// vertex ids below `n_vertices`; `directed=False` is not supported yet). Returns `(edge_index, vertices)` as int64
/// arrays: the input positions of the edges in walk order, and the `m + 1` vertices visited
/// (both empty without edges). `path=True` allows an open trail.
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
    if !directed {
        // graph-core's undirected multigraphs (UndirectedGraph::from_endpoints with
        // undirected_euler_circuit / undirected_euler_path, whose edge ids are the input
        // positions) are not merged yet; wire them here when they are.
        return Err(PyNotImplementedError::new_err(
            "undirected Euler circuits need graph-core's undirected multigraphs, which this \
             build of warpath does not have yet",
        ));
    }
    let (s, t) = (sources.as_array(), targets.as_array());
    let (edges, vertices) = py.detach(|| {
        let (s, t) = (s.as_standard_layout(), t.as_standard_layout());
        let s = s.as_slice().expect("standard layout");
        let t = t.as_slice().expect("standard layout");
        let g = Graph::from_sources_targets(n_vertices, s, t).map_err(Failure::Graph)?;
        let (trail, _) = if path {
            euler_path(&g, exec)
        } else {
            euler_circuit(&g, exec)
        }
        .map_err(Failure::Euler)?;
        input_order(s, trail)
    })?;
    Ok((edges.into_pyarray(py), vertices.into_pyarray(py)))
}

/// The trail with CSR edge ids replaced by input positions. The CSR keeps each vertex's edges
/// in input order (a stable counting sort), so CSR edge `e` is input edge `perm[e]`, where
/// `perm` is the stable sorting permutation of the sources.
fn input_order(sources: &[u32], trail: EulerTrail) -> Result<(Vec<i64>, Vec<i64>), Failure> {
    let perm = gpu_primitives::argsort(sources, Exec::Cpu).map_err(Failure::Primitive)?;
    let edges = trail
        .edges
        .iter()
        .map(|&e| i64::from(perm[e as usize]))
        .collect();
    let vertices = trail.vertices.iter().map(|&v| i64::from(v)).collect();
    Ok((edges, vertices))
}
