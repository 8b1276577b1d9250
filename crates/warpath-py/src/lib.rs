#![doc = include_str!("../README.md")]
// The native module `warpath._native` of the Python package `warpath`.
//
// Thin bindings: each function converts numpy arrays to slices or `ndarray` views (no copy for
// contiguous input of the right dtype), releases the GIL, calls the library crate, and turns
// its result into numpy arrays and its error into the Python exception the peer (numpy, scipy,
// scikit-learn, NetworkX) raises, with the library's message (`errors.rs`). The Python layer
// (`python/warpath/`) converts array-likes and dtypes and holds the scikit-learn estimator.

use pyo3::prelude::*;

/// Adds each `#[pyfunction]` listed to the module `m` (in a `register` function: errors return).
macro_rules! add_functions {
    ($m:expr, [$($f:ident),* $(,)?]) => {
        $($m.add_function(pyo3::wrap_pyfunction!($f, $m)?)?;)*
    };
}

mod arrays;
mod assembly;
mod assignment;
mod backend;
mod combinatorics;
mod dask;
mod errors;
mod euler;
mod fhn;
mod info;
mod kmeans;
mod primitives;
mod query;

/// The module object: every binding and the exception types.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    assignment::register(m)?;
    assembly::register(m)?;
    query::register(m)?;
    kmeans::register(m)?;
    dask::register(m)?;
    primitives::register(m)?;
    euler::register(m)?;
    combinatorics::register(m)?;
    fhn::register(m)?;
    info::register(m)?;
    Ok(())
}
