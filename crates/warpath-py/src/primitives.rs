//! `sort`, `argsort` and `unique` over numpy arrays (gpu-primitives' sorts and distinct).

use std::mem::MaybeUninit;
use std::sync::OnceLock;

use gpu_primitives::{
    DistinctOptions, Exec, PrimitiveError, SortKey, argsort, argsort_into, distinct_with,
    radix_sort, sort_into,
};
use ndarray::{Array2, Ix2};
use numpy::{
    Element, IntoPyArray, PyArray1, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray,
    PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rayon::prelude::*;

use crate::arrays::dispatch;
use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Start rayon's global pool at import, so that the first sort does not pay for spawning
    // its threads.
    rayon::current_num_threads();
    let py = m.py();
    // The type numbers of the key dtypes in this numpy (int64 is NPY_LONG on Linux,
    // NPY_LONGLONG on Windows), for the 1-D entry points' one-comparison dtype check.
    let _ = TYPENUMS.set([
        u32::get_dtype(py).num(),
        u64::get_dtype(py).num(),
        i32::get_dtype(py).num(),
        i64::get_dtype(py).num(),
        f32::get_dtype(py).num(),
        f64::get_dtype(py).num(),
    ]);
    add_functions!(m, [sort_rows, sort_1d, unique_1d]);
    Ok(())
}

/// numpy's type numbers of u32, u64, i32, i64, f32 and f64, in [`Key`]'s order.
static TYPENUMS: OnceLock<[std::ffi::c_int; 6]> = OnceLock::new();

/// The key type of an array the 1-D entry points take.
#[derive(Clone, Copy)]
enum Key {
    U32,
    U64,
    I32,
    I64,
    F32,
    F64,
}

/// Below this many keys the 1-D entry points keep the GIL: releasing and retaking it costs
/// more than a sort of this size lets other threads gain.
const DETACH_MIN: usize = 1 << 14;

/// `f()`, with the GIL released when the input has at least [`DETACH_MIN`] keys.
fn run<T: pyo3::marker::Ungil>(
    py: Python<'_>,
    n: usize,
    f: impl pyo3::marker::Ungil + FnOnce() -> T,
) -> T {
    if n >= DETACH_MIN { py.detach(f) } else { f() }
}

/// `a` and its key type when it is exactly a `numpy.ndarray`, 1-D, of dtype u32, u64, i32,
/// i64, f32 or f64 in native byte order (any stride); `None` otherwise (subclasses,
/// other dimensions and dtypes, which the Python layer handles).
fn key_array<'a, 'py>(a: &'a Bound<'py, PyAny>) -> Option<(&'a Bound<'py, PyUntypedArray>, Key)> {
    // SAFETY: `a` is a live object; the check compares its type pointer only.
    if unsafe { numpy::npyffi::array::PyArray_CheckExact(a.py(), a.as_ptr()) } == 0 {
        return None;
    }
    // SAFETY: an exact numpy.ndarray (checked above).
    let arr = unsafe { a.cast_unchecked::<PyUntypedArray>() };
    if arr.ndim() != 1 {
        return None;
    }
    let dt = arr.dtype();
    if dt.is_native_byteorder() == Some(false) {
        return None;
    }
    let num = dt.num();
    let key = match TYPENUMS.get()?.iter().position(|&t| t == num)? {
        0 => Key::U32,
        1 => Key::U64,
        2 => Key::I32,
        3 => Key::I64,
        4 => Key::F32,
        _ => Key::F64,
    };
    Some((arr, key))
}

/// Evaluates `body` with `a` bound to the array as `PyArray1` of its key type.
macro_rules! typed {
    ($key:expr, $arr:expr, |$a:ident| $body:expr) => {
        typed!(@each $key, $arr, |$a| $body, [U32 u32, U64 u64, I32 i32, I64 i64, F32 f32, F64 f64])
    };
    (@each $key:expr, $arr:expr, |$a:ident| $body:expr, [$($k:ident $t:ty),*]) => {
        match $key {
            $(Key::$k => {
                // SAFETY: `key_array` matched the dtype's type number to this element type's,
                // in native byte order, and the array is 1-D.
                let $a = unsafe { $arr.cast_unchecked::<PyArray1<$t>>() };
                $body
            })*
        }
    };
}

/// `f` on the keys of `a`. Below [`DETACH_MIN`] keys (read with the GIL held throughout) the
/// array is read without rust-numpy's borrow bookkeeping (a lock and a hash map entry, about a
/// tenth of a whole small call); larger arrays, read with the GIL released, are borrowed.
fn with_keys<'py, K: Element, T>(
    a: &Bound<'py, PyArray1<K>>,
    f: impl FnOnce(ndarray::ArrayView1<'_, K>) -> PyResult<T>,
) -> PyResult<T> {
    if a.len() < DETACH_MIN {
        // SAFETY: the GIL is held until `f` returns and `f` runs no Python code, so nothing
        // in Python writes the array meanwhile; warpath's bindings never hold a writable
        // borrow of an array, so no Rust reference to it can be mutable either. (What could
        // still write it is native code of another extension working without the GIL, which
        // would race numpy's own functions the same way.)
        f(unsafe { a.as_array() })
    } else {
        let keys = crate::arrays::readonly(a)?;
        f(keys.as_array())
    }
}

/// A new uninitialised 1-D array of `n` elements and its slots, for the caller to fill.
fn fresh<'py, T: Element>(
    py: Python<'py>,
    n: usize,
) -> (Bound<'py, PyArray1<T>>, &'py mut [MaybeUninit<T>]) {
    // SAFETY: the array is new and referenced only here; its slots are handed out as
    // uninitialised (MaybeUninit) and the caller writes them all before Python sees the array
    // (numeric element types: an unwritten slot would be garbage, never unsound to drop).
    unsafe {
        let out = PyArray1::<T>::new(py, n, false);
        let slots = if n == 0 {
            &mut []
        } else {
            std::slice::from_raw_parts_mut(out.data().cast::<MaybeUninit<T>>(), n)
        };
        (out, slots)
    }
}

/// Native half of `warpath.sort` (`indices=False`: a sorted copy, NaNs last) and
/// `warpath.argsort` (`indices=True`: the stable sorting permutation, int64) for the common
/// call: a 1-D array of a key dtype (see [`key_array`]); `None` for any other input.
#[pyfunction]
#[pyo3(signature = (a, indices, backend))]
fn sort_1d<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    indices: bool,
    backend: &str,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some((arr, key)) = key_array(a) else {
        return Ok(None);
    };
    let exec = parse_backend(backend)?;
    typed!(key, arr, |a| if indices {
        argsorted_1d(py, a, exec)
    } else {
        sorted_1d(py, a, exec)
    })
    .map(Some)
}

/// A new 1-D array of `a.len()` elements of `T`, every one written by `fill` from the keys of
/// `a` (not called for an empty array).
fn filled_1d<'py, K: Element, T: Element + 'py, R>(
    py: Python<'py>,
    a: &Bound<'py, PyArray1<K>>,
    fill: impl FnOnce(ndarray::ArrayView1<'_, K>, &mut [MaybeUninit<T>]) -> Result<R, PrimitiveError>,
) -> PyResult<Bound<'py, PyAny>> {
    let n = a.len();
    let (out, dst) = fresh::<T>(py, n);
    if n > 0 {
        with_keys(a, |keys| fill(keys, dst).map_err(py_err))?;
    }
    Ok(out.into_any())
}

/// A sorted copy of `a` (NaNs last).
fn sorted_1d<'py, K: SortKey + Element>(
    py: Python<'py>,
    a: &Bound<'py, PyArray1<K>>,
    exec: Exec,
) -> PyResult<Bound<'py, PyAny>> {
    filled_1d(py, a, |keys, dst| {
        let n = keys.len();
        match keys.as_slice() {
            Some(src) => run(py, n, || sort_into(src, dst, exec)),
            None => {
                // strided: gathered into the output, then sorted there
                for (d, &k) in dst.iter_mut().zip(keys.iter()) {
                    d.write(k);
                }
                // SAFETY: every slot was written just above.
                let dst = unsafe { &mut *(dst as *mut [MaybeUninit<K>] as *mut [K]) };
                run(py, n, || radix_sort(dst, exec))
            }
        }
    })
}

/// The stable sorting permutation of `a` (int64).
fn argsorted_1d<'py, K: SortKey + Element>(
    py: Python<'py>,
    a: &Bound<'py, PyArray1<K>>,
    exec: Exec,
) -> PyResult<Bound<'py, PyAny>> {
    filled_1d(py, a, |keys, dst| {
        let strided;
        let src = match keys.as_slice() {
            Some(src) => src,
            None => {
                strided = keys.to_vec();
                &strided[..]
            }
        };
        run(py, keys.len(), || argsort_into(src, dst, exec))
    })
}

/// Native half of `warpath.unique` (`axis=None`, `equal_nan=True`) of a 1-D array of a key
/// dtype (the caller's array, or the flattened keys the Python layer made of any other): the
/// values alone, or the tuple `(values[, index][, inverse][, counts])` numpy returns when any
/// is asked for; `None` for any other input.
#[pyfunction]
#[pyo3(signature = (a, return_index, return_inverse, return_counts, backend))]
fn unique_1d<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    return_index: bool,
    return_inverse: bool,
    return_counts: bool,
    backend: &str,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some((arr, key)) = key_array(a) else {
        return Ok(None);
    };
    let exec = parse_backend(backend)?;
    let want = (return_index, return_inverse, return_counts);
    typed!(key, arr, |a| {
        let (values, index, inverse, counts) =
            with_keys(a, |keys| distinct_values(keys, py, want, exec))?;
        if !(return_index || return_inverse || return_counts) {
            return Ok(Some(values));
        }
        let parts = [Some(values), index, inverse, counts];
        let parts: Vec<_> = parts.into_iter().flatten().collect();
        Ok(Some(PyTuple::new(py, parts)?.into_any()))
    })
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
    by_rows(src, dst, rows, len, f)?;
    Ok(out)
}

/// `f(row i of src, row i of dst)` for the `rows` rows of `len` elements: at once when there
/// is one row (the primitive parallelises inside), else rows in parallel.
fn by_rows<S: Sync, D: Send>(
    src: &[S],
    dst: &mut [D],
    rows: usize,
    len: usize,
    f: impl Fn(&[S], &mut [D]) -> Result<(), PrimitiveError> + Sync + Send,
) -> Result<(), PrimitiveError> {
    if rows == 1 {
        f(src, dst)
    } else {
        src.par_chunks(len)
            .zip(dst.par_chunks_mut(len))
            .try_for_each(|(s, d)| f(s, d))
    }
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
        by_rows(src, dst, rows, len, |s, d| {
            sort_into(s, d, exec).map(|_| ())
        })?;
    }
    // SAFETY: sort_into wrote every slot of every row (or there are none).
    Ok(unsafe { out.assume_init() })
}

/// What [`distinct_values`] returns: values, then first indices, inverse and counts when asked
/// for.
type UniqueOutput<'py> = (
    Bound<'py, PyAny>,
    Option<Bound<'py, PyAny>>,
    Option<Bound<'py, PyAny>>,
    Option<Bound<'py, PyAny>>,
);

fn distinct_values<'py, K: SortKey + numpy::Element>(
    view: ndarray::ArrayView1<'_, K>,
    py: Python<'py>,
    (return_index, return_inverse, return_counts): (bool, bool, bool),
    exec: Exec,
) -> PyResult<UniqueOutput<'py>> {
    // further options (the float equality being added to gpu-primitives) keep their
    // defaults, which are numpy's
    #[allow(clippy::needless_update)]
    let options = DistinctOptions {
        counts: return_counts,
        inverse: return_inverse || return_index,
        ..DistinctOptions::default()
    };
    let (d, index, inverse, counts) = run(py, view.len(), || {
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
