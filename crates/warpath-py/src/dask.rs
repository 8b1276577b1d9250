//! Chunked k-means: the native half of `warpath.dask.KMeans`. Each function is one Dask task's
//! work on one chunk, over `clustering::chunked`; all release the GIL while they compute, so the
//! threads of a worker run in parallel. The driver's loop is [`LloydRun`]: the centroid update
//! and the stopping rules of `warpath.KMeans`'s own loop.
//!
//! Statistics travel as one flat float64 array (`k d` sums, `k` weights, the inertia), far
//! points as rows of `[dist, global index, label, weight, point...]`, so that the Python side
//! can add and concatenate them with numpy.

use clustering::Element;
use clustering::chunked::{
    ChunkStats, FarPoint, LloydRun as Run, chunk_farthest, chunk_stats, sample_centroids,
};
use ndarray::{Array2, Ix1, Ix2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::arrays::{dispatch, readonly};
use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, [kmeans_chunk_stats, kmeans_chunk_farthest]);
    m.add_class::<LloydRun>()?;
    add_functions!(m, [kmeans_sample_centroids]);
    Ok(())
}

/// A read-only borrow of `obj` as a 2-D float64 array (centroids).
fn f64_matrix<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<PyReadonlyArray2<'py, f64>> {
    readonly(
        obj.cast::<PyArray2<f64>>()
            .map_err(|_| PyTypeError::new_err(format!("{what} must be a 2-D float64 array")))?,
    )
}

/// The weights of a chunk, in the chunk's dtype.
fn weights<'py, T: numpy::Element>(
    w: Option<&Bound<'py, PyAny>>,
) -> PyResult<Option<PyReadonlyArray<'py, T, Ix1>>> {
    w.map(|w| {
        readonly(w.cast::<PyArray1<T>>().map_err(|_| {
            PyTypeError::new_err("sample_weight must be a 1-D array of the data's dtype")
        })?)
    })
    .transpose()
}

/// Statistics of one chunk against `centers` (`k x d`, float64): a flat float64 array of
/// `k d` sums, `k` weights and the inertia share. `row_offset` is the global index of the
/// chunk's first row (errors name global rows).
#[pyfunction]
#[pyo3(signature = (x, centers, row_offset, backend, sample_weight=None))]
fn kmeans_chunk_stats<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    centers: &Bound<'py, PyAny>,
    row_offset: u64,
    backend: &str,
    sample_weight: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let exec = parse_backend(backend)?;
    let c = f64_matrix(centers, "centers")?;
    dispatch!(x, Ix2, [f64, f32], |a| stats(
        py,
        a,
        &c,
        row_offset,
        exec,
        sample_weight
    ))
}

fn stats<'py, T: Element + numpy::Element>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, T>,
    c: &PyReadonlyArray2<'py, f64>,
    row_offset: u64,
    exec: gpu_runtime::Exec,
    sample_weight: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let w = weights::<T>(sample_weight)?;
    let (xv, cv, wv) = (x.as_array(), c.as_array(), w.as_ref().map(|w| w.as_array()));
    let s = py
        .detach(|| chunk_stats(xv, wv, cv, row_offset, exec))
        .map_err(py_err)?;
    Ok(s.to_flat().into_pyarray(py))
}

/// Values per far-point row besides the point: dist, global index, label, weight.
const FAR_HEAD: usize = 4;

/// The `m` rows of one chunk farthest from their nearest centre, as an `(r, 4 + d)` float64
/// array of `[dist, global index, label, weight, point...]`, farthest first.
#[pyfunction]
#[pyo3(signature = (x, centers, m, row_offset, sample_weight=None))]
fn kmeans_chunk_farthest<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    centers: &Bound<'py, PyAny>,
    m: usize,
    row_offset: u64,
    sample_weight: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let c = f64_matrix(centers, "centers")?;
    dispatch!(x, Ix2, [f64, f32], |a| farthest(
        py,
        a,
        &c,
        m,
        row_offset,
        sample_weight
    ))
}

fn farthest<'py, T: Element + numpy::Element>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, T>,
    c: &PyReadonlyArray2<'py, f64>,
    m: usize,
    row_offset: u64,
    sample_weight: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let w = weights::<T>(sample_weight)?;
    let d = c.as_array().ncols();
    let (xv, cv, wv) = (x.as_array(), c.as_array(), w.as_ref().map(|w| w.as_array()));
    let far = py
        .detach(|| chunk_farthest(xv, wv, cv, m, row_offset))
        .map_err(py_err)?;
    let mut out = Array2::<f64>::zeros((far.len(), FAR_HEAD + d));
    for (mut row, p) in out.rows_mut().into_iter().zip(&far) {
        row[0] = p.dist;
        row[1] = p.index as f64;
        row[2] = p.label as f64;
        row[3] = p.weight;
        for (o, v) in row.iter_mut().skip(FAR_HEAD).zip(&p.point) {
            *o = *v;
        }
    }
    Ok(out.into_pyarray(py))
}

/// Merged statistics (a flat float64 array, as `kmeans_chunk_stats` returns them) against `k x
/// d` centres.
fn flat_stats(stats: &Bound<'_, PyAny>, k: usize, d: usize) -> PyResult<ChunkStats> {
    let stats = readonly(
        stats
            .cast::<PyArray1<f64>>()
            .map_err(|_| PyTypeError::new_err("stats must be a 1-D float64 array"))?,
    )?;
    ChunkStats::from_flat(&stats.as_array().to_vec(), k, d).map_err(py_err)
}

/// Far points as `kmeans_chunk_farthest` returns them (rows of every chunk, concatenated in
/// any order).
fn far_points(far: &Bound<'_, PyAny>, d: usize) -> PyResult<Vec<FarPoint>> {
    let far = f64_matrix(far, "far points")?;
    let far = far.as_array();
    if far.nrows() > 0 && far.ncols() != FAR_HEAD + d {
        return Err(PyValueError::new_err(format!(
            "far points must have {} columns, not {}",
            FAR_HEAD + d,
            far.ncols()
        )));
    }
    Ok(far
        .rows()
        .into_iter()
        .map(|r| FarPoint {
            dist: r[0],
            index: r[1] as u64,
            label: r[2] as u32,
            weight: r[3],
            point: r.iter().skip(FAR_HEAD).copied().collect(),
        })
        .collect())
}

/// The driver of one Lloyd run of `warpath.dask.KMeans` (`clustering::chunked::LloydRun`):
/// holds the centres and decides, from each iteration's merged statistics, the next centres
/// and whether to stop, by the rules of `warpath.KMeans`'s loop.
///
/// `KMeansLloydRun(centers, max_iter, tol, variance, final_labels)`: `centers` `k x d` float64,
/// `tol` relative to `variance` (the data's mean per-column variance).
#[pyclass(module = "warpath._native", name = "KMeansLloydRun")]
struct LloydRun {
    run: Run,
}

#[pymethods]
impl LloydRun {
    #[new]
    #[pyo3(signature = (centers, max_iter, tol, variance, final_labels))]
    fn new(
        centers: &Bound<'_, PyAny>,
        max_iter: usize,
        tol: f64,
        variance: f64,
        final_labels: bool,
    ) -> PyResult<Self> {
        let c = f64_matrix(centers, "centers")?;
        let run = Run::new(
            c.as_array().to_owned(),
            max_iter,
            tol,
            variance,
            final_labels,
        )
        .map_err(py_err)?;
        Ok(LloydRun { run })
    }

    /// The current centres (a new `k x d` float64 array).
    #[getter]
    fn centers<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        self.run.centroids().to_owned().into_pyarray(py)
    }

    /// Whether another iteration runs.
    #[getter]
    fn running(&self) -> bool {
        self.run.running()
    }

    /// Iterations done.
    #[getter]
    fn iterations(&self) -> usize {
        self.run.iterations()
    }

    /// Whether the run converged (rather than reaching `max_iter`).
    #[getter]
    fn converged(&self) -> bool {
        self.run.converged()
    }

    /// The run's inertia: the final centres' after `final_pass`, else the last iteration's.
    #[getter]
    fn inertia(&self) -> f64 {
        self.run.inertia()
    }

    /// Whether the final centres' inertia takes one more pass of statistics (`final_pass`).
    #[getter]
    fn needs_final_pass(&self) -> bool {
        self.run.needs_final_pass()
    }

    /// How many far points every chunk sends (`kmeans_chunk_farthest`) for the merged
    /// statistics `stats`: one per empty cluster, 0 when none is empty.
    fn far_points_needed(&self, stats: &Bound<'_, PyAny>) -> PyResult<usize> {
        let (k, d) = self.run.centroids().dim();
        Ok(flat_stats(stats, k, d)?.far_points_needed())
    }

    /// One iteration from the merged statistics `stats` and, when a cluster is empty, the far
    /// points of every chunk (`far`, concatenated; any `(0, n)` array otherwise); returns the
    /// summed squared shift of the centres.
    fn update(&mut self, stats: &Bound<'_, PyAny>, far: &Bound<'_, PyAny>) -> PyResult<f64> {
        let (k, d) = self.run.centroids().dim();
        let s = flat_stats(stats, k, d)?;
        let far = far_points(far, d)?;
        self.run.update(&s, far).map_err(py_err)
    }

    /// Takes the merged statistics against the final centres: the run's inertia is theirs.
    fn final_pass(&mut self, stats: &Bound<'_, PyAny>) -> PyResult<()> {
        let (k, d) = self.run.centroids().dim();
        let s = flat_stats(stats, k, d)?;
        self.run.final_pass(&s).map_err(py_err)
    }
}

/// Initial centres of run `run` from a sample of the rows: `"k-means++"`, `"random"` or
/// `"k-means||"` with `seed`, or a list of runs' draws (as `warpath.KMeans` passes them: run
/// `run` of the list), as `warpath.KMeans` picks them from the same rows.
#[pyfunction]
#[pyo3(signature = (sample, k, init, seed, run, sample_weight=None))]
fn kmeans_sample_centroids<'py>(
    py: Python<'py>,
    sample: &Bound<'py, PyAny>,
    k: usize,
    init: &Bound<'py, PyAny>,
    seed: u64,
    run: usize,
    sample_weight: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let init = crate::kmeans::parse_init(init)?;
    dispatch!(sample, Ix2, [f64, f32], |a| {
        let w = weights(sample_weight)?;
        let (xv, wv) = (a.as_array(), w.as_ref().map(|w| w.as_array()));
        let c = py
            .detach(|| sample_centroids(xv, wv, k, &init, seed, run))
            .map_err(py_err)?;
        Ok(c.into_pyarray(py))
    })
}
