//! Permutations (batches, rank, unrank) and De Bruijn sequences.

use combinatorics::{
    Construction, DeBruijnError, alphabet_chars, de_bruijn_euler_with, de_bruijn_fkm,
    de_bruijn_linear, factorial_u64, generate_permutations, rank_permutation_u128,
    unrank_permutation_u128,
};
use gpu_runtime::Exec;
use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        [
            permutations,
            rank_permutation,
            unrank_permutation,
            de_bruijn_sequence,
            de_bruijn_text,
        ]
    );
    Ok(())
}

/// Native half of `warpath.permutations`: the permutations of `0..n` with lexicographic ranks
/// `start..start + count` (`count=None`: all from `start`), as a `(count, n)` uint8 array.
#[pyfunction]
#[pyo3(signature = (n, start, count, backend))]
fn permutations<'py>(
    py: Python<'py>,
    n: usize,
    start: u64,
    count: Option<u64>,
    backend: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let exec = parse_backend(backend)?;
    // all the rest; n > 20 or start > n! leave 0 and the library names the problem
    let count =
        count.unwrap_or_else(|| factorial_u64(n).map_or(0, |total| total.saturating_sub(start)));
    let flat = py
        .detach(|| generate_permutations(n, start, count, exec))
        .map_err(py_err)?;
    let rows = usize::try_from(count).expect("the buffer of count rows was allocated");
    flat.into_pyarray(py)
        .reshape([rows, n])
        .map(Bound::into_any)
}

/// Native half of `warpath.rank_permutation`: the lexicographic rank of a sequence of distinct
/// int64 values (only their relative order matters), `n <= 34`.
#[pyfunction]
#[pyo3(signature = (perm,))]
fn rank_permutation(py: Python<'_>, perm: PyReadonlyArray1<'_, i64>) -> PyResult<u128> {
    let v = perm.as_array();
    py.detach(|| {
        let v = v.as_standard_layout();
        rank_permutation_u128(v.as_slice().expect("standard layout"))
    })
    .map_err(py_err)
}

/// Native half of `warpath.unrank_permutation`: the permutation of `0..n` with lexicographic
/// rank `rank`, as an int64 array, `n <= 34`.
#[pyfunction]
#[pyo3(signature = (n, rank))]
fn unrank_permutation(py: Python<'_>, n: usize, rank: u128) -> PyResult<Bound<'_, PyArray1<i64>>> {
    let p = py
        .detach(|| unrank_permutation_u128(n, rank))
        .map_err(py_err)?;
    Ok(p.into_iter()
        .map(|x| x as i64)
        .collect::<Vec<_>>()
        .into_pyarray(py))
}

fn parse_construction(name: &str) -> PyResult<Construction> {
    match name.to_ascii_lowercase().as_str() {
        "fkm" | "lyndon" => Ok(Construction::Fkm),
        "euler" => Ok(Construction::Euler),
        _ => Err(PyValueError::new_err(format!(
            "construction must be 'fkm' or 'euler', not {name:?}"
        ))),
    }
}

/// `B(k, n)` over symbols `0..k` by `construction` (the Euler one where `backend` says),
/// made linear when asked for. The GIL is released by the callers.
fn symbols(
    k: usize,
    n: usize,
    construction: Construction,
    linear: bool,
    exec: Exec,
) -> Result<Vec<u8>, DeBruijnError> {
    let seq = match construction {
        Construction::Fkm => de_bruijn_fkm(k, n)?,
        Construction::Euler => de_bruijn_euler_with(k, n, exec)?.0,
    };
    Ok(if linear {
        de_bruijn_linear(&seq, n)
    } else {
        seq
    })
}

/// The construction and backend, refusing `backend="cuda"` for the CPU-only FKM.
fn parse_options(construction: &str, backend: &str) -> PyResult<(Construction, Exec)> {
    let construction = parse_construction(construction)?;
    let exec = parse_backend(backend)?;
    if construction == Construction::Fkm && exec == Exec::Cuda {
        return Err(PyValueError::new_err(
            "the 'fkm' construction runs on the CPU only; backend=\"cuda\" needs construction=\"euler\"",
        ));
    }
    Ok((construction, exec))
}

/// Native half of `warpath.de_bruijn_sequence` for an alphabet size: the De Bruijn sequence
/// `B(k, n)` over symbols `0..k` as a uint8 array of `k^n` symbols (`+ n - 1` when `linear`),
/// built by `"fkm"` (Lyndon words, the lexicographically smallest) or `"euler"` (an Euler
/// circuit of the De Bruijn graph, where `backend` applies).
#[pyfunction]
#[pyo3(signature = (k, n, construction, linear, backend))]
fn de_bruijn_sequence<'py>(
    py: Python<'py>,
    k: usize,
    n: usize,
    construction: &str,
    linear: bool,
    backend: &str,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let (construction, exec) = parse_options(construction, backend)?;
    let seq = py
        .detach(|| symbols(k, n, construction, linear, exec))
        .map_err(py_err)?;
    Ok(seq.into_pyarray(py))
}

/// Native half of `warpath.de_bruijn_sequence` for an alphabet string: the sequence spelled
/// with its characters.
#[pyfunction]
#[pyo3(signature = (alphabet, n, construction, linear, backend))]
fn de_bruijn_text(
    py: Python<'_>,
    alphabet: &str,
    n: usize,
    construction: &str,
    linear: bool,
    backend: &str,
) -> PyResult<String> {
    let (construction, exec) = parse_options(construction, backend)?;
    let chars = alphabet_chars(alphabet).map_err(py_err)?;
    let seq = py
        .detach(|| symbols(chars.len(), n, construction, linear, exec))
        .map_err(py_err)?;
    Ok(seq.iter().map(|&s| chars[s as usize]).collect())
}
