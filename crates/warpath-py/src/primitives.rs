//! `sort`, `argsort` and `unique` over numpy arrays (gpu-primitives' radix sort and distinct).

use gpu_primitives::{
    DistinctOptions, Exec, PrimitiveError, SortKey, argsort, distinct_with, sort_into,
};
use ndarray::{Array2, Ix1, Ix2};
use numpy::{IntoPyArray, PyReadonlyArray};
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::arrays::dispatch;
use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Start rayon's global pool at import, so that the first sort does not pay for spawning
    // its threads.
    rayon::current_num_threads();
    m.add_function(wrap_pyfunction!(sort_rows, m)?)?;
    m.add_function(wrap_pyfunction!(unique, m)?)?;
    Ok(())
}

/// Native half of `warpath.sort` (`indices=False`: a sorted copy of every row, NaNs last) and
/// `warpath.argsort` (`indices=True`: the stable sorting permutation of every row, int64) of
/// a 2-D array of dtype u32, u64, i32, i64, f32 or f64.
#[pyfunction]
#[pyo3(signature = (a, indices, backend))]
fn sort_rows<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    indices: bool,
    backend: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let exec = parse_backend(backend)?;
    dispatch!(a, Ix2, [f64, f32, i64, i32, u64, u32], |a| {
        sorted_rows(a, py, indices, exec)
    })
}

fn sorted_rows<'py, K: SortKey + numpy::Element>(
    a: PyReadonlyArray<'py, K, Ix2>,
    py: Python<'py>,
    indices: bool,
    exec: Exec,
) -> PyResult<Bound<'py, PyAny>> {
    let view = a.as_array();
    let out = if indices {
        let perm = py.detach(|| {
            each_row(view, |keys, dst: &mut [i64]| {
                let perm = argsort(keys, exec)?;
                let widen = |(d, p): (&mut i64, &u32)| *d = i64::from(*p);
                if perm.len() < gpu_primitives::PARALLEL_THRESHOLD {
                    dst.iter_mut().zip(&perm).for_each(widen);
                } else {
                    dst.par_iter_mut().zip(&perm).for_each(widen);
                }
                Ok(())
            })
        });
        perm.map_err(py_err)?.into_pyarray(py).into_any()
    } else {
        let sorted = py.detach(|| sorted_copy(view, exec));
        sorted.map_err(py_err)?.into_pyarray(py).into_any()
    };
    Ok(out)
}

/// A new `rows x len` array whose row `i` is written by `f(row i of keys, row i of out)`:
/// the whole array at once when it is one row (the primitive parallelises inside), else rows
/// in parallel.
fn each_row<K: SortKey, D: Copy + Default + Send>(
    keys: ndarray::ArrayView2<'_, K>,
    f: impl Fn(&[K], &mut [D]) -> Result<(), PrimitiveError> + Sync + Send,
) -> Result<Array2<D>, PrimitiveError> {
    let keys = keys.as_standard_layout();
    let (rows, len) = keys.dim();
    let mut out = Array2::<D>::from_elem((rows, len), D::default());
    if len == 0 {
        return Ok(out);
    }
    let src = keys.as_slice().expect("standard layout");
    let dst = out.as_slice_mut().expect("standard layout");
    if rows == 1 {
        f(src, dst)?;
    } else {
        src.par_chunks(len)
            .zip(dst.par_chunks_mut(len))
            .try_for_each(|(s, d)| f(s, d))?;
    }
    Ok(out)
}

/// Every row of `keys` sorted into a new array: written once by `sort_into` (the copy fused
/// with the float/signed key transform), never zero-filled first; rows in parallel when there
/// are several (each row's sort parallelises inside otherwise).
fn sorted_copy<K: SortKey>(
    keys: ndarray::ArrayView2<'_, K>,
    exec: Exec,
) -> Result<Array2<K>, PrimitiveError> {
    let keys = keys.as_standard_layout();
    let (rows, len) = keys.dim();
    let mut out = Array2::<K>::uninit((rows, len));
    if len > 0 {
        let src = keys.as_slice().expect("standard layout");
        let dst = out.as_slice_mut().expect("standard layout");
        if rows == 1 {
            sort_into(src, dst, exec)?;
        } else {
            src.par_chunks(len)
                .zip(dst.par_chunks_mut(len))
                .try_for_each(|(s, d)| sort_into(s, d, exec).map(|_| ()))?;
        }
    }
    // SAFETY: sort_into wrote every slot of every row (or there are none).
    Ok(unsafe { out.assume_init() })
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
    // further options (the float equality being added to gpu-primitives) keep their
    // defaults, which are numpy's
    #[allow(clippy::needless_update)]
    let options = DistinctOptions {
        counts: return_counts,
        inverse: return_inverse || return_index,
        ..DistinctOptions::default()
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
