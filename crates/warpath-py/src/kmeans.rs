//! k-means: the native half of the `warpath.KMeans` estimator.

use clustering::{Algorithm, Element, Init, KMeans, KMeansResult, predict, transform};
use ndarray::{Ix1, Ix2};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::arrays::{dispatch, readonly};
use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, [kmeans_fit, kmeans_predict, kmeans_transform]);
    Ok(())
}

/// `"k-means++"`, `"random"`, or a `(k, d)` float64 array of initial centres.
fn parse_init(init: &Bound<'_, PyAny>) -> PyResult<Init> {
    if let Ok(s) = init.extract::<String>() {
        return s.parse::<Init>().map_err(PyValueError::new_err);
    }
    if let Ok(a) = init.cast::<numpy::PyArray2<f64>>() {
        return Ok(Init::Given(readonly(a)?.as_array().to_owned()));
    }
    Err(PyTypeError::new_err(
        "init must be 'k-means++', 'random' or a 2-D float64 array of initial centres",
    ))
}

/// What `kmeans_fit` returns: centres, labels (`None` without `compute_labels`), inertia,
/// iterations, backend name.
type FitOutput<'py> = (
    Bound<'py, PyAny>,
    Option<Bound<'py, PyArray1<i32>>>,
    f64,
    usize,
    String,
);

/// Native half of `KMeans.fit`: `x` is a 2-D float64 or float32 array (C-contiguous input is
/// read in place), `sample_weight` a 1-D array of the same dtype or `None`; without
/// `compute_labels` the final labelling pass is skipped (no labels, the last iteration's
/// inertia).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (x, n_clusters, init, n_init, max_iter, tol, seed, backend, sample_weight=None, algorithm="auto", compute_labels=true))]
fn kmeans_fit<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    n_clusters: usize,
    init: &Bound<'py, PyAny>,
    n_init: usize,
    max_iter: usize,
    tol: f64,
    seed: u64,
    backend: &str,
    sample_weight: Option<&Bound<'py, PyAny>>,
    algorithm: &str,
    compute_labels: bool,
) -> PyResult<FitOutput<'py>> {
    let params = KMeans::new(n_clusters)
        .compute_labels(compute_labels)
        .init(parse_init(init)?)
        .n_init(n_init)
        .max_iter(max_iter)
        .tol(tol)
        .seed(seed)
        .exec(parse_backend(backend)?)
        .algorithm(
            algorithm
                .parse::<Algorithm>()
                .map_err(PyValueError::new_err)?,
        );
    dispatch!(x, Ix2, [f64, f32], |a| fit(a, py, &params, sample_weight))
}

fn fit<'py, T: Element + numpy::Element>(
    x: PyReadonlyArray2<'py, T>,
    py: Python<'py>,
    params: &KMeans,
    sample_weight: Option<&Bound<'py, PyAny>>,
) -> PyResult<FitOutput<'py>> {
    let data = x.as_array();
    let weights: Option<PyReadonlyArray<'py, T, Ix1>> = match sample_weight {
        None => None,
        Some(w) => Some(readonly(w.cast::<numpy::PyArray1<T>>().map_err(|_| {
            PyTypeError::new_err("sample_weight must be a 1-D array of the data's dtype")
        })?)?),
    };
    let wview = weights.as_ref().map(|w| w.as_array());
    let r: KMeansResult<T> = py
        .detach(|| match wview {
            None => params.fit(data),
            Some(w) => params.fit_weighted(data, w),
        })
        .map_err(py_err)?;
    let labels = params.compute_labels.then(|| {
        let labels: Vec<i32> = r.labels.iter().map(|&l| l as i32).collect();
        labels.into_pyarray(py)
    });
    Ok((
        r.centroids.into_pyarray(py).into_any(),
        labels,
        r.inertia,
        r.iterations,
        r.backend.to_string(),
    ))
}

/// Native half of `KMeans.predict`: the index of the nearest centre of every row of `x`
/// (ties to the lower index); `centers` and `x` have the same dtype.
#[pyfunction]
#[pyo3(signature = (centers, x, backend))]
fn kmeans_predict<'py>(
    py: Python<'py>,
    centers: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    backend: &str,
) -> PyResult<Bound<'py, PyArray1<i32>>> {
    let exec = parse_backend(backend)?;
    dispatch!(x, Ix2, [f64, f32], |a| predict_labels(a, py, centers, exec))
}

fn predict_labels<'py, T: Element + numpy::Element>(
    x: PyReadonlyArray2<'py, T>,
    py: Python<'py>,
    centers: &Bound<'py, PyAny>,
    exec: gpu_runtime::Exec,
) -> PyResult<Bound<'py, PyArray1<i32>>> {
    let c = centers
        .cast::<numpy::PyArray2<T>>()
        .map_err(|_| PyTypeError::new_err("centers must be a 2-D array of the data's dtype"))?;
    let c = readonly(c)?;
    let (cv, xv) = (c.as_array(), x.as_array());
    let labels = py.detach(|| predict(cv, xv, exec)).map_err(py_err)?;
    let labels: Vec<i32> = labels.into_iter().map(|l| l as i32).collect();
    Ok(labels.into_pyarray(py))
}

/// Native half of `KMeans.transform`: the Euclidean distances of every row of `x` to every
/// centre (`n x k`, in the data's dtype); `centers` and `x` have the same dtype.
#[pyfunction]
#[pyo3(signature = (centers, x))]
fn kmeans_transform<'py>(
    py: Python<'py>,
    centers: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    dispatch!(x, Ix2, [f64, f32], |a| distances(a, py, centers))
}

fn distances<'py, T: Element + numpy::Element>(
    x: PyReadonlyArray2<'py, T>,
    py: Python<'py>,
    centers: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let c = centers
        .cast::<numpy::PyArray2<T>>()
        .map_err(|_| PyTypeError::new_err("centers must be a 2-D array of the data's dtype"))?;
    let c = readonly(c)?;
    let (cv, xv) = (c.as_array(), x.as_array());
    let out = py.detach(|| transform(cv, xv)).map_err(py_err)?;
    Ok(out.into_pyarray(py).into_any())
}
