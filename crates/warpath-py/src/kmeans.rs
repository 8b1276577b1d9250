//! k-means: the native half of the `warpath.KMeans` estimator.

use clustering::{Algorithm, Draws, Element, Init, KMeans, KMeansResult, predict, transform};
use ndarray::{Ix1, Ix2};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::arrays::{dispatch, readonly};
use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        [
            kmeans_fit,
            kmeans_predict,
            kmeans_transform,
            kmeans_equal_choice
        ]
    );
    Ok(())
}

/// The row numpy's `RandomState.choice(n, p=p)` draws with the uniform number `u` when
/// every probability is the same `c` (scikit-learn's `p = w / w.sum()` for equal weights: `c`
/// is `1 / n` rounded to the data's type, then widened to `float64`), without numpy's `O(n)`
/// passes: the first `i` whose normalised running sum `fl(S_i / S_{n-1})` exceeds `u`, where
/// `S_i` is numpy's sequential `float64` sum of `i + 1` copies of `c`. Inside one binade every
/// addition of `c` adds the same multiple of the spacing, so the sums are a few arithmetic
/// runs, found in `O(log n)` steps and searched by bisection.
#[pyfunction]
fn kmeans_equal_choice(n: usize, c: f64, u: f64) -> PyResult<usize> {
    if n == 0 || !(c > 0.0 && c.is_finite()) || !(0.0..1.0).contains(&u) {
        return Err(PyValueError::new_err(format!(
            "kmeans_equal_choice needs n >= 1, c > 0 and u in [0, 1), not {n}, {c}, {u}"
        )));
    }
    let runs = equal_sums(n, c);
    let total = runs.last().map_or(c, |r| r.at(r.len - 1));
    // Bisection over i for the first fl(S_i / total) > u.
    let sum_at = |i: usize| {
        let r = &runs[runs.partition_point(|r| r.first <= i) - 1];
        r.at(i - r.first)
    };
    let (mut lo, mut hi) = (0usize, n - 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if sum_at(mid) / total > u {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo)
}

/// A run of numpy's running sums of a constant: `S_{first + j} = start + j * step` for
/// `j < len` (every value exact).
struct SumRun {
    first: usize,
    start: f64,
    step: f64,
    len: usize,
}

impl SumRun {
    fn at(&self, j: usize) -> f64 {
        // `j * step` and the sum stay on the run's binade's grid: both exact.
        self.start + j as f64 * self.step
    }
}

/// The running sums `S_0 = c`, `S_i = fl(S_{i-1} + c)` for `i < n`, as runs.
fn equal_sums(n: usize, c: f64) -> Vec<SumRun> {
    let mut runs = Vec::new();
    let (mut i, mut s) = (0usize, c);
    while i < n {
        // The spacing of the doubles at s, and the top of its binade.
        let low = f64::from_bits(s.to_bits() & 0x7ff0_0000_0000_0000);
        let ulp = low * f64::EPSILON;
        let top = 2.0 * low;
        let q = c / ulp;
        let rest = n - 1 - i;
        let steps = if q - q.floor() == 0.5 {
            // A tie rounds to even, so the step depends on s: one addition at a time.
            0
        } else {
            let step = q.round() * ulp;
            if step == 0.0 {
                rest
            } else {
                // Steps whose result stays at least two spacings below the top, where
                // fl(x + c) = x + step for certain.
                let room = ((top - 2.0 * ulp - s) / ulp).max(0.0) as u64;
                (room / (step / ulp) as u64).min(rest as u64) as usize
            }
        };
        if steps > 0 {
            let step = q.round() * ulp;
            runs.push(SumRun {
                first: i,
                start: s,
                step,
                len: steps + 1,
            });
            s += steps as f64 * step;
            i += steps;
        } else {
            runs.push(SumRun {
                first: i,
                start: s,
                step: 0.0,
                len: 1,
            });
        }
        // One addition as numpy makes it (across a binade's top, or a tie).
        if i + 1 < n {
            s += c;
        }
        i += 1;
    }
    runs
}

/// `"k-means++"`, `"random"`, a `(k, d)` float64 array of initial centres, or a list of
/// one run's draws per run (scikit-learn's random stream, drawn by `warpath.KMeans`): a
/// `(first_row, uniforms)` tuple (k-means++, `uniforms` a 1-D float64 array) or a 1-D int64
/// array of rows (`init="random"`).
pub(crate) fn parse_init(init: &Bound<'_, PyAny>) -> PyResult<Init> {
    if let Ok(s) = init.extract::<String>() {
        return s.parse::<Init>().map_err(PyValueError::new_err);
    }
    if let Ok(a) = init.cast::<numpy::PyArray2<f64>>() {
        return Ok(Init::Given(readonly(a)?.as_array().to_owned()));
    }
    if let Ok(runs) = init.cast::<pyo3::types::PyList>() {
        return runs
            .iter()
            .map(|r| parse_draws(&r))
            .collect::<PyResult<_>>()
            .map(Init::Drawn);
    }
    Err(PyTypeError::new_err(
        "init must be 'k-means++', 'random' or a 2-D float64 array of initial centres",
    ))
}

/// One run's draws of a drawn start (see [`parse_init`]).
fn parse_draws(run: &Bound<'_, PyAny>) -> PyResult<Draws> {
    let index = |v: i64| {
        usize::try_from(v).map_err(|_| PyValueError::new_err(format!("row {v} is negative")))
    };
    if let Ok((first, uniforms)) = run.extract::<(i64, Bound<'_, PyAny>)>() {
        let u = uniforms.cast::<PyArray1<f64>>().map_err(|_| {
            PyTypeError::new_err("k-means++ draws: the uniforms must be a 1-D float64 array")
        })?;
        return Ok(Draws::PlusPlus {
            first: index(first)?,
            uniforms: readonly(u)?.as_array().to_vec(),
        });
    }
    if let Ok(rows) = run.cast::<PyArray1<i64>>() {
        let rows = readonly(rows)?
            .as_array()
            .iter()
            .map(|&v| index(v))
            .collect::<PyResult<_>>()?;
        return Ok(Draws::Rows(rows));
    }
    Err(PyTypeError::new_err(
        "a run's draws are a (first_row, float64 uniforms) tuple or an int64 array of rows",
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
