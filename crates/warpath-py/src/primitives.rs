//! `sort`, `argsort` and `unique` over numpy arrays (gpu-primitives' radix sort and distinct).

use gpu_primitives::{
    DistinctOptions, Exec, PrimitiveError, SortKey, argsort, distinct_with, radix_sort,
};
use ndarray::{Array2, Ix1, Ix2};
use numpy::{IntoPyArray, PyReadonlyArray};
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::arrays::dispatch;
use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sort_rows, m)?)?;
    m.add_function(wrap_pyfunction!(argsort_rows, m)?)?;
    m.add_function(wrap_pyfunction!(unique, m)?)?;
    Ok(())
}

/// Runs `f` on every row of a row-major `rows x len` buffer: the whole buffer at once when it
/// is one row (the primitive parallelises inside), else rows in parallel.
fn for_each_row<T: Send, R: Send>(
    flat: &mut [T],
    len: usize,
    f: impl Fn(&mut [T]) -> Result<R, PrimitiveError> + Sync + Send,
) -> Result<Vec<R>, PrimitiveError> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if flat.len() == len {
        return Ok(vec![f(flat)?]);
    }
    flat.par_chunks_mut(len).map(f).collect()
}

/// Native half of `warpath.sort`: a sorted copy of every row of a 2-D array of dtype
/// u32, u64, i32, i64, f32 or f64 (NaNs last).
#[pyfunction]
#[pyo3(signature = (a, backend))]
fn sort_rows<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    backend: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let exec = parse_backend(backend)?;
    dispatch!(a, Ix2, [f64, f32, i64, i32, u64, u32], |a| sorted_rows(
        a, py, exec
    ))
}

fn sorted_rows<'py, K: SortKey + numpy::Element>(
    a: PyReadonlyArray<'py, K, Ix2>,
    py: Python<'py>,
    exec: Exec,
) -> PyResult<Bound<'py, PyAny>> {
    let view = a.as_array();
    let out = py
        .detach(|| {
            let mut out = view.as_standard_layout().into_owned();
            let len = out.ncols();
            let flat = out.as_slice_mut().expect("standard layout");
            for_each_row(flat, len, |row| radix_sort(row, exec)).map(|_| out)
        })
        .map_err(py_err)?;
    Ok(out.into_pyarray(py).into_any())
}

/// Native half of `warpath.argsort`: the stable sorting permutation (int64) of every row of a
/// 2-D array of dtype u32, u64, i32, i64, f32 or f64.
#[pyfunction]
#[pyo3(signature = (a, backend))]
fn argsort_rows<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    backend: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let exec = parse_backend(backend)?;
    dispatch!(a, Ix2, [f64, f32, i64, i32, u64, u32], |a| argsorted_rows(
        a, py, exec
    ))
}

fn argsorted_rows<'py, K: SortKey + numpy::Element>(
    a: PyReadonlyArray<'py, K, Ix2>,
    py: Python<'py>,
    exec: Exec,
) -> PyResult<Bound<'py, PyAny>> {
    let view = a.as_array();
    let out = py
        .detach(|| {
            let keys = view.as_standard_layout();
            let (rows, len) = keys.dim();
            let mut out = Array2::<i64>::zeros((rows, len));
            if len > 0 {
                let keys = keys.as_slice().expect("standard layout");
                let dst = out.as_slice_mut().expect("standard layout");
                let one = |(src, dst): (&[K], &mut [i64])| {
                    let perm = argsort(src, exec)?;
                    dst.iter_mut()
                        .zip(perm)
                        .for_each(|(d, p)| *d = i64::from(p));
                    Ok::<(), PrimitiveError>(())
                };
                if rows == 1 {
                    one((keys, dst))?;
                } else {
                    keys.par_chunks(len)
                        .zip(dst.par_chunks_mut(len))
                        .try_for_each(one)?;
                }
            }
            Ok::<_, PrimitiveError>(out)
        })
        .map_err(py_err)?;
    Ok(out.into_pyarray(py).into_any())
}

/// What `unique` returns: values, then first indices, inverse and counts when asked for.
type UniqueOutput<'py> = (
    Bound<'py, PyAny>,
    Option<Bound<'py, PyAny>>,
    Option<Bound<'py, PyAny>>,
    Option<Bound<'py, PyAny>>,
);

/// Native half of `warpath.unique`: the distinct values of a 1-D array of dtype u32, u64,
/// i32, i64, f32 or f64, ascending, with (as int64 arrays) the index of each value's first
/// occurrence, the inverse and the counts when asked for.
#[pyfunction]
#[pyo3(signature = (a, return_index, return_inverse, return_counts, backend))]
fn unique<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    return_index: bool,
    return_inverse: bool,
    return_counts: bool,
    backend: &str,
) -> PyResult<UniqueOutput<'py>> {
    let exec = parse_backend(backend)?;
    let want = (return_index, return_inverse, return_counts);
    dispatch!(a, Ix1, [f64, f32, i64, i32, u64, u32], |a| distinct_values(
        a, py, want, exec
    ))
}

fn distinct_values<'py, K: SortKey + numpy::Element>(
    a: PyReadonlyArray<'py, K, Ix1>,
    py: Python<'py>,
    (return_index, return_inverse, return_counts): (bool, bool, bool),
    exec: Exec,
) -> PyResult<UniqueOutput<'py>> {
    let view = a.as_array();
    let options = DistinctOptions {
        counts: return_counts,
        inverse: return_inverse || return_index,
    };
    let (d, index, inverse, counts) = py
        .detach(|| {
            let keys = view.as_standard_layout();
            let d = distinct_with(keys.as_slice().expect("standard layout"), options, exec)?;
            let inv = d.inverse.as_deref().unwrap_or_default();
            // first occurrence of each value: the smallest position mapped to it
            let index = return_index.then(|| {
                let mut first = vec![0i64; d.values.len()];
                for (i, &j) in inv.iter().enumerate().rev() {
                    first[j as usize] = i as i64;
                }
                first
            });
            let inverse = return_inverse.then(|| to_i64(inv, |&j| i64::from(j)));
            let counts = d.counts.as_deref().map(|c| to_i64(c, |&c| c as i64));
            Ok::<_, PrimitiveError>((d.values, index, inverse, counts))
        })
        .map_err(py_err)?;
    let arr = |v: Option<Vec<i64>>| v.map(|v| v.into_pyarray(py).into_any());
    Ok((
        d.into_pyarray(py).into_any(),
        arr(index),
        arr(inverse),
        arr(counts),
    ))
}

/// `src` mapped to int64 (in parallel for large inputs).
fn to_i64<T: Sync>(src: &[T], f: impl Fn(&T) -> i64 + Sync + Send) -> Vec<i64> {
    if src.len() < gpu_primitives::PARALLEL_THRESHOLD {
        src.iter().map(f).collect()
    } else {
        src.par_iter().map(f).collect()
    }
}
