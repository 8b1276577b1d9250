//! `query`: the colors of each query record in a colored compacted De Bruijn graph.

use std::path::PathBuf;

use assembly::{AssemblyError, ColoredGraph, ReadSource};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, [query]);
    Ok(())
}

/// What `query` returns to the Python layer.
type Queried<'py> = (
    Vec<String>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray2<u32>>,
    Vec<String>,
);

/// Native half of `warpath.query`: the records' names, their k-mers, the `(records, colors)`
/// counts of each color's k-mers, and the color names.
#[pyfunction]
#[pyo3(signature = (unitigs, color_sets, k, queries, max_memory=None))]
fn query<'py>(
    py: Python<'py>,
    unitigs: PathBuf,
    color_sets: PathBuf,
    k: usize,
    queries: Vec<PathBuf>,
    max_memory: Option<u64>,
) -> PyResult<Queried<'py>> {
    let (colors, names, kmers, counts) = py
        .detach(|| {
            let mut graph =
                ColoredGraph::open(ReadSource::File(&unitigs), ReadSource::File(&color_sets), k)?;
            if let Some(m) = max_memory {
                graph = graph.with_max_memory(m);
            }
            let width = graph.colors().len();
            let sources: Vec<ReadSource<'_>> =
                queries.iter().map(|p| ReadSource::File(p)).collect();
            let (mut names, mut kmers, mut counts) = (Vec::new(), Vec::new(), Vec::new());
            graph.query(&sources, &mut |m| {
                names.push(m.name.to_string());
                kmers.push(m.kmers);
                let row = counts.len();
                counts.resize(row + width, 0u32);
                for &(c, n) in m.matches {
                    counts[row + c as usize] = n;
                }
                Ok(())
            })?;
            Ok::<_, AssemblyError>((graph.colors().to_vec(), names, kmers, counts))
        })
        .map_err(py_err)?;
    let counts = ndarray::Array2::from_shape_vec((names.len(), colors.len()), counts)
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok((
        names,
        kmers.into_pyarray(py),
        counts.into_pyarray(py),
        colors,
    ))
}
