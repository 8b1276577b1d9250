//! numpy arrays in: dtype dispatch and read-only borrows.

use numpy::{Element, PyArray, PyArrayMethods, PyReadonlyArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// Evaluates `body` with `a` bound to a read-only borrow of the array as the first listed
/// dtype `T` it has (generic callees infer `T` from `a`), or
/// raises `TypeError` naming the dtypes accepted. The Python layer converts other dtypes
/// before it calls in, so the error is for direct callers of `warpath._native`.
macro_rules! dispatch {
    ($obj:expr, $dim:ty, [$($t:ty),+ $(,)?], |$a:ident| $body:expr) => {{
        let obj = $obj;
        'found: {
            $(
                if let Ok(a) = obj.cast::<numpy::PyArray<$t, $dim>>() {
                    let $a = crate::arrays::readonly(a)?;
                    break 'found ($body);
                }
            )+
            Err(crate::arrays::dtype_error(obj, &[$(stringify!($t)),+]))
        }
    }};
}
pub(crate) use dispatch;

/// A read-only borrow of `a` (a `ValueError` when Rust code holds it mutably, which the
/// bindings never do across calls).
pub(crate) fn readonly<'py, T: Element, D: ndarray::Dimension>(
    a: &Bound<'py, PyArray<T, D>>,
) -> PyResult<PyReadonlyArray<'py, T, D>> {
    a.try_readonly()
        .map_err(|e| PyValueError::new_err(format!("cannot read the array: {e}")))
}

/// `TypeError`: the object is not an array of one of `accepted` with the expected dimension.
pub(crate) fn dtype_error(obj: &Bound<'_, PyAny>, accepted: &[&str]) -> PyErr {
    let what = match obj.cast::<numpy::PyUntypedArray>() {
        Ok(a) => format!(
            "a {}-D array of dtype {}",
            a.ndim(),
            a.dtype()
                .str()
                .map(|s| s.to_string())
                .unwrap_or_else(|_| "?".into())
        ),
        Err(_) => format!(
            "an object of type {}",
            obj.get_type()
                .name()
                .map(|s| s.to_string())
                .unwrap_or_else(|_| "?".into())
        ),
    };
    PyTypeError::new_err(format!(
        "expected a numpy array of dtype {} with the expected number of dimensions, got {what}",
        accepted.join(", ")
    ))
}

/// Two int64 arrays of the same dimension, e.g. scipy's `(row_ind, col_ind)`.
pub(crate) type IndexPair<'py, D> = (Bound<'py, PyArray<i64, D>>, Bound<'py, PyArray<i64, D>>);
