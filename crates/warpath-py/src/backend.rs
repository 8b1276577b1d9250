//! The `backend=` argument every function takes, as the library's [`Exec`].

use gpu_runtime::Exec;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// `"auto"`, `"cpu"` or `"cuda"` (also `"gpu"`, any case) as an [`Exec`].
pub(crate) fn parse_backend(backend: &str) -> PyResult<Exec> {
    backend.parse::<Exec>().map_err(PyValueError::new_err)
}
