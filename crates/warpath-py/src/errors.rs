//! Library errors as Python exceptions: each error type maps to the exception its Python peer
//! raises (`ValueError` for bad values, `MemoryError`, `OSError`, ...), with the library's
//! message unchanged.

use pyo3::create_exception;
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    warpath,
    GpuError,
    PyRuntimeError,
    "The GPU path failed, or ``backend=\"cuda\"`` was asked for on a machine without a usable \
     CUDA device (the message says why)."
);
create_exception!(
    warpath,
    NotEulerianError,
    PyValueError,
    "The graph has no Euler circuit (or path): a vertex is unbalanced or the edges are not \
     connected (the message names the vertex or the number of components)."
);

/// Adds the exception types to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("GpuError", py.get_type::<GpuError>())?;
    m.add("NotEulerianError", py.get_type::<NotEulerianError>())?;
    Ok(())
}

/// A library error that knows which Python exception it is.
pub(crate) trait ToPyErr: std::fmt::Display {
    /// The Python exception, carrying `self.to_string()`.
    fn to_py_err(&self) -> PyErr;
}

/// `map_err` adaptor: `.map_err(py_err)`.
pub(crate) fn py_err<E: ToPyErr>(e: E) -> PyErr {
    e.to_py_err()
}

fn value(e: &impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

impl ToPyErr for gpu_runtime::GpuError {
    fn to_py_err(&self) -> PyErr {
        match self {
            // a malformed WARPATH_BACKEND is a usage error (the CLI's kind "usage")
            gpu_runtime::GpuError::BadBackendVariable(_) => value(self),
            _ => GpuError::new_err(self.to_string()),
        }
    }
}

impl ToPyErr for assignment::AssignmentError {
    fn to_py_err(&self) -> PyErr {
        match self {
            assignment::AssignmentError::Gpu(g) => g.to_py_err(),
            // scipy's words first (its tests match them), then which entry and why
            assignment::AssignmentError::InvalidCost {
                row,
                col,
                value,
                reason,
            } => PyValueError::new_err(format!(
                "matrix contains invalid numeric entries: {value} at ({row}, {col}): {reason}"
            )),
            assignment::AssignmentError::OutOfMemory { .. } => {
                PyMemoryError::new_err(self.to_string())
            }
            // scipy raises ValueError for invalid entries and infeasible matrices; every
            // other assignment error is a property of the matrix or the solver asked for
            _ => value(self),
        }
    }
}

impl ToPyErr for gpu_primitives::PrimitiveError {
    fn to_py_err(&self) -> PyErr {
        match self {
            gpu_primitives::PrimitiveError::Gpu(g) => g.to_py_err(),
            _ => value(self),
        }
    }
}

impl ToPyErr for graph_core::EulerError {
    fn to_py_err(&self) -> PyErr {
        use graph_core::EulerError as E;
        match self {
            E::Gpu(g) => g.to_py_err(),
            E::TooManyEdges { .. } => value(self),
            // unbalanced or odd vertices, disconnected edges, a start vertex that cannot
            // start the trail: the graph has no Euler circuit (path) as asked for
            _ => NotEulerianError::new_err(self.to_string()),
        }
    }
}

/// `impl ToPyErr` for each error type `$ty` (named `E` in the arms, the error itself `$e`):
/// the `match` arms given, then a `ValueError` for every other variant.
macro_rules! to_py_err {
    ($($ty:path => |$e:ident| { $($arms:tt)* })*) => {$(
        impl ToPyErr for $ty {
            fn to_py_err(&self) -> PyErr {
                type E = $ty;
                let $e = self;
                match $e {
                    $($arms)*
                    _ => value($e),
                }
            }
        }
    )*};
}

to_py_err! {
    clustering::KMeansError => |e| {
        E::Gpu(g) => g.to_py_err(),
        E::Io { .. } => PyOSError::new_err(e.to_string()),
        E::Distributed(_) => PyRuntimeError::new_err(e.to_string()),
        E::OutOfMemory { .. } => PyMemoryError::new_err(e.to_string()),
    }
    graph_core::GraphError => |e| {
        E::Gpu(g) => g.to_py_err(),
        E::OutOfMemory { .. } => PyMemoryError::new_err(e.to_string()),
        E::Io(_) => PyOSError::new_err(e.to_string()),
        E::Primitive(_) | E::DotFailed { .. } | E::DotNotInstalled => {
            PyRuntimeError::new_err(e.to_string())
        }
    }
    combinatorics::PermError => |e| {
        E::Gpu(g) => g.to_py_err(),
        E::HostOutOfMemory { .. } => PyMemoryError::new_err(e.to_string()),
        E::Io(_) => PyOSError::new_err(e.to_string()),
    }
    combinatorics::DeBruijnError => |e| {
        E::Gpu(g) => g.to_py_err(),
        E::OutOfMemory { .. } | E::NotEnoughMemory { .. } => {
            PyMemoryError::new_err(e.to_string())
        }
        E::Graph(_) => PyRuntimeError::new_err(e.to_string()),
    }
    pde::PdeError => |e| {
        E::Gpu(g) => g.to_py_err(),
        E::Tridiagonal(t) => match t {
            pde::TridiagError::Gpu(g) => g.to_py_err(),
            _ => PyRuntimeError::new_err(e.to_string()),
        },
        // a run that diverged or whose Newton iteration failed: the parameters are fine,
        // the computation is not (numpy/scipy raise RuntimeError-like errors there)
        E::NewtonNotConverged { .. } | E::NonFinite { .. } => {
            PyRuntimeError::new_err(e.to_string())
        }
        E::Output(_) => PyOSError::new_err(e.to_string()),
    }
    assembly::AssemblyError => |e| {
        E::Gpu(g) => g.to_py_err(),
        E::Primitive(p) => p.to_py_err(),
        // a missing or unreadable file, as open() raises; a malformed file is a bad value
        E::Io { error, .. } if error.kind() == std::io::ErrorKind::NotFound => {
            pyo3::exceptions::PyFileNotFoundError::new_err(e.to_string())
        }
        E::Io { .. } => PyOSError::new_err(e.to_string()),
        // a full disk or a read-only folder, as a failed write raises
        E::Disk { .. } | E::DiskSpace { .. } => PyOSError::new_err(e.to_string()),
        // the memory bound cannot hold the run (the message says how much it needs)
        E::Memory(_) => pyo3::exceptions::PyMemoryError::new_err(e.to_string()),
        E::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(e.to_string()),
        E::Internal(_) => pyo3::exceptions::PyRuntimeError::new_err(e.to_string()),
    }
}
