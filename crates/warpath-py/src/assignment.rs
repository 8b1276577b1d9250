//! `linear_sum_assignment` (scipy's contract) and `linear_sum_assignment_batch`.

use std::cell::RefCell;

use assignment::sparse::{Csr, Index, min_weight_full_matching};
use assignment::{
    AUTO_SPARSE_MIN_ENTRIES, Assignment, AssignmentError, Cost, JvWorkspace, Sense, Solver, solve,
    solve_batch,
};
use gpu_runtime::Exec;
use ndarray::{Array2, ArrayView2, Ix1, Ix2, Ix3};
use numpy::{
    PyArray, PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray,
    PyReadonlyArray1, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::arrays::{IndexPair, dispatch};
use crate::backend::parse_backend;
use crate::errors::{ToPyErr, py_err};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        [
            linear_sum_assignment,
            linear_sum_assignment_batch,
            min_weight_full_bipartite_matching,
        ]
    );
    Ok(())
}

/// The solver called `name` (the CLI's spelling).
fn parse_solver(name: &str) -> PyResult<Solver> {
    match name.to_ascii_lowercase().as_str() {
        "auto" => Ok(Solver::Auto),
        "sparse" => Ok(Solver::Sparse),
        "jv" | "jonker-volgenant" | "lapjv" => Ok(Solver::JonkerVolgenant),
        "hungarian" => Ok(Solver::Hungarian),
        "auction" => Ok(Solver::Auction),
        "brute" | "brute-force" => Ok(Solver::BruteForce),
        "greedy" => Ok(Solver::Greedy),
        _ => Err(PyValueError::new_err(format!(
            "solver must be 'auto', 'jv', 'sparse', 'hungarian', 'auction', 'brute' or 'greedy', not {name:?}"
        ))),
    }
}

/// The solver and backend from their names. Jonker–Volgenant, Hungarian and greedy run on the
/// CPU only, so `backend="cuda"` with them is refused instead of silently running on the CPU.
fn parse_options(solver: &str, backend: &str, maximize: bool) -> PyResult<(Solver, Exec, Sense)> {
    let solver = parse_solver(solver)?;
    let exec = parse_backend(backend)?;
    if exec == Exec::Cuda && !matches!(solver, Solver::Auction | Solver::BruteForce) {
        return Err(PyValueError::new_err(format!(
            "solver {:?} runs on the CPU only; backend=\"cuda\" needs solver=\"auction\" or \"brute\"",
            solver.name()
        )));
    }
    let sense = if maximize {
        Sense::Maximize
    } else {
        Sense::Minimize
    };
    Ok((solver, exec, sense))
}

/// An int64 array owned by numpy (not a view of a Rust buffer: scipy's sparse indexing sets
/// the WRITEABLE flag of index arrays, which numpy refuses for foreign memory).
fn index_array(py: Python<'_>, v: Vec<usize>) -> Bound<'_, PyArray1<i64>> {
    let v: Vec<i64> = v.into_iter().map(|x| x as i64).collect();
    PyArray1::from_slice(py, &v)
}

/// Problems (and batches) with at most this many entries are solved without releasing the
/// GIL: releasing and taking it back costs more than their solve, and they hold it for
/// microseconds.
const KEEP_GIL_ENTRIES: usize = 2048;

thread_local! {
    /// The Jonker–Volgenant working memory of the single-problem calls of one thread, kept
    /// between calls so that a small problem allocates nothing but its two output arrays.
    static WORKSPACE: RefCell<JvWorkspace> = RefCell::new(JvWorkspace::new());
}

/// `warpath._arrays.cost_matrix`, looked up once.
static COST_MATRIX: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `numpy.asarray(obj)`, through numpy's C API (`PyArray_FromAny`): a list of floats becomes
/// float64, of ints int64.
fn as_ndarray<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `PyArray_FromAny` with no descriptor, depths or flags is `numpy.asarray(obj)`;
    // it returns a new reference, or null with a Python exception set.
    unsafe {
        let ptr = numpy::npyffi::PY_ARRAY_API.PyArray_FromAny(
            py,
            obj.as_ptr(),
            std::ptr::null_mut(),
            0,
            0,
            0,
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, ptr)
    }
}

/// `warpath._arrays.cost_matrix(a, ndim)`: scipy's dtype rules for what the native paths do
/// not take (float16, other byte orders, ...), and its errors (dimensions, strings, complex).
fn by_python_rules<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    ndim: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let cost_matrix = COST_MATRIX.get_or_try_init(py, || {
        py.import("warpath._arrays")?
            .getattr("cost_matrix")
            .map(Bound::unbind)
    })?;
    cost_matrix.bind(py).call1((a, ndim))
}

/// The solver, backend and sense of a call, with the common one ("auto", "auto") parsed
/// without allocating; `maximize` by its truth value, as scipy takes it.
fn call_options(
    maximize: Option<&Bound<'_, PyAny>>,
    solver: &str,
    backend: &str,
) -> PyResult<(Solver, Exec, Sense)> {
    let maximize = match maximize {
        Some(m) => m.is_truthy()?,
        None => false,
    };
    if solver == "auto" && backend == "auto" {
        let sense = if maximize {
            Sense::Maximize
        } else {
            Sense::Minimize
        };
        return Ok((Solver::Auto, Exec::Auto, sense));
    }
    parse_options(solver, backend, maximize)
}

/// Whether `solver` runs Jonker–Volgenant on a matrix of `entries` entries (Auto does below
/// the sparse solver's size, [`assignment::choose`]).
fn runs_jv(solver: Solver, entries: usize) -> bool {
    solver == Solver::JonkerVolgenant
        || (solver == Solver::Auto && entries < AUTO_SPARSE_MIN_ENTRIES)
}

// `warpath.linear_sum_assignment` itself (the package exports this function, with no Python
// wrapper, whose call would cost as much as a 3 x 3 solve); its docstring is the text file.
// `cost_matrix` is any 2-D array-like: float64, float32, int64 and int32 arrays are read as
// they are, narrower integers and bool are widened in Rust, other inputs are converted first
// (`as_ndarray`, then `by_python_rules`). The common call (solver and backend "auto", or
// solver "jv") solves in the thread's reusable Jonker–Volgenant workspace, without releasing
// the GIL for small problems, and writes the pairs straight into the two new numpy arrays.
#[doc = include_str!("linear_sum_assignment.txt")]
#[allow(
    clippy::doc_lazy_continuation,
    reason = "the docstring is numpydoc for Python's help(), not Markdown"
)]
#[pyfunction]
#[pyo3(
    signature = (cost_matrix, maximize=None, *, solver="auto", backend="auto"),
    text_signature = "(cost_matrix, maximize=False, *, solver='auto', backend='auto')"
)]
fn linear_sum_assignment<'py>(
    py: Python<'py>,
    cost_matrix: &Bound<'py, PyAny>,
    maximize: Option<&Bound<'py, PyAny>>,
    solver: &str,
    backend: &str,
) -> PyResult<IndexPair<'py, Ix1>> {
    let (solver, exec, sense) = call_options(maximize, solver, backend)?;
    if let Some(result) = lsa_native(py, cost_matrix, solver, sense, exec) {
        return result;
    }
    let a = as_ndarray(py, cost_matrix)?;
    if let Some(result) = lsa_native(py, &a, solver, sense, exec) {
        return result;
    }
    let a = by_python_rules(py, &a, 2)?;
    lsa_native(py, &a, solver, sense, exec).unwrap_or_else(|| {
        Err(crate::arrays::dtype_error(
            &a,
            &["float64", "float32", "int64", "int32"],
        ))
    })
}

/// The element types the native paths read, from a dtype's type number and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CostType {
    F64,
    F32,
    I64,
    I32,
    /// Narrower integers and bool, widened exactly.
    Bool,
    U8,
    I8,
    U16,
    I16,
    U32,
}

/// The [`CostType`] of an array's elements when it is an `ndim`-D array of one of them in
/// native byte order (one read of its descriptor instead of a type check per candidate).
fn cost_type(a: &Bound<'_, PyAny>, ndim: usize) -> Option<CostType> {
    use numpy::npyffi::NPY_TYPES as T;
    let u = a.cast::<PyUntypedArray>().ok()?;
    if u.ndim() != ndim {
        return None;
    }
    let dt = u.dtype();
    if dt.is_native_byteorder() == Some(false) {
        return None;
    }
    let num = dt.num();
    let is = |t: T| num == t as std::ffi::c_int;
    // C `int`, `long` and `long long` are int32 or int64 by their size (`long` differs
    // between platforms)
    let signed = is(T::NPY_INT) || is(T::NPY_LONG) || is(T::NPY_LONGLONG);
    let unsigned = is(T::NPY_UINT) || is(T::NPY_ULONG);
    Some(match dt.itemsize() {
        _ if is(T::NPY_DOUBLE) => CostType::F64,
        _ if is(T::NPY_FLOAT) => CostType::F32,
        8 if signed => CostType::I64,
        4 if signed => CostType::I32,
        4 if unsigned => CostType::U32,
        _ if is(T::NPY_BOOL) => CostType::Bool,
        _ if is(T::NPY_UBYTE) => CostType::U8,
        _ if is(T::NPY_BYTE) => CostType::I8,
        _ if is(T::NPY_USHORT) => CostType::U16,
        _ if is(T::NPY_SHORT) => CostType::I16,
        _ => return None,
    })
}

/// Solves `a` when it is a 2-D array of a type the native paths read; `None` otherwise.
fn lsa_native<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    solver: Solver,
    sense: Sense,
    exec: Exec,
) -> Option<PyResult<IndexPair<'py, Ix1>>> {
    let ty = cost_type(a, 2)?;
    macro_rules! native {
        ($t:ty) => {{
            // SAFETY: `cost_type` read the array's dimension, type number and byte order: a
            // 2-D array of `$t`.
            let a = unsafe { a.cast_unchecked::<PyArray<$t, Ix2>>() };
            let entries = a.len();
            let jv = runs_jv(solver, entries);
            if jv && entries <= KEEP_GIL_ENTRIES {
                // SAFETY: `as_array` needs that no exclusive reference to the data exists
                // while the view lives. The view lives inside this call, which holds the
                // GIL throughout (a small problem is solved without releasing it) and runs
                // no Python code, so neither Python code nor a C extension can write the
                // array meanwhile; warpath takes exclusive references only to arrays it has
                // just created. (rust-numpy's borrow flags, which also guard against an
                // extension that writes through a `PyReadwriteArray` after releasing the
                // GIL, cost more than this whole solve; the calls that release the GIL take
                // them.)
                let view = unsafe { a.as_array() };
                return Some(solve_jv(py, view, sense, false));
            }
            Some(crate::arrays::readonly(a).and_then(|r| {
                if jv {
                    solve_jv(py, r.as_array(), sense, true)
                } else {
                    solve_other(py, r.as_array(), solver, sense, exec)
                }
            }))
        }};
    }
    // Narrower integers and bool, widened exactly (as `_arrays.cost_matrix` does, without
    // its Python calls): solved in integer arithmetic.
    macro_rules! widened {
        ($from:ty => $to:ty) => {{
            // SAFETY: as in `native!`.
            let a = unsafe { a.cast_unchecked::<PyArray<$from, Ix2>>() };
            Some(crate::arrays::readonly(a).and_then(|r| {
                let wide = r.as_array().mapv(<$to>::from);
                if runs_jv(solver, wide.len()) {
                    solve_jv(py, wide.view(), sense, wide.len() > KEEP_GIL_ENTRIES)
                } else {
                    solve_other(py, wide.view(), solver, sense, exec)
                }
            }))
        }};
    }
    match ty {
        CostType::F64 => native!(f64),
        CostType::I64 => native!(i64),
        CostType::F32 => native!(f32),
        CostType::I32 => native!(i32),
        CostType::Bool => widened!(bool => i32),
        CostType::U8 => widened!(u8 => i32),
        CostType::I8 => widened!(i8 => i32),
        CostType::U16 => widened!(u16 => i32),
        CostType::I16 => widened!(i16 => i32),
        CostType::U32 => widened!(u32 => i64),
    }
}

/// One problem solved by Jonker–Volgenant in the thread's reusable workspace (releasing the
/// GIL when `detach`), its pairs written into two new numpy arrays.
fn solve_jv<'py, T: Cost>(
    py: Python<'py>,
    view: ArrayView2<'_, T>,
    sense: Sense,
    detach: bool,
) -> PyResult<IndexPair<'py, Ix1>> {
    let pairs = view.nrows().min(view.ncols());
    // SAFETY: the arrays are new (nothing else refers to them until they are returned), and
    // every element is written by the solve before they are; on an error they are dropped
    // unread.
    let (rows, cols) = unsafe {
        (
            PyArray1::<i64>::new(py, pairs, false),
            PyArray1::<i64>::new(py, pairs, false),
        )
    };
    if view.is_empty() {
        return Ok((rows, cols)); // no entry to check, no pair to find
    }
    // SAFETY: as above, these are the only references to the new arrays' data.
    let (r, c) = unsafe {
        (
            rows.as_slice_mut().expect("a new array is contiguous"),
            cols.as_slice_mut().expect("a new array is contiguous"),
        )
    };
    WORKSPACE
        .with_borrow_mut(|ws| {
            // A total beyond f64 is no error here: scipy returns the pairs of such a matrix.
            if detach {
                py.detach(|| ws.solve_into(view, sense, r, c))
            } else {
                ws.solve_into(view, sense, r, c)
            }
        })
        .map_err(py_err)?;
    Ok((rows, cols))
}

/// One problem solved by another solver than Jonker–Volgenant (the GIL released).
fn solve_other<'py, T: Cost>(
    py: Python<'py>,
    view: ArrayView2<'_, T>,
    solver: Solver,
    sense: Sense,
    exec: Exec,
) -> PyResult<IndexPair<'py, Ix1>> {
    let a = py
        .detach(|| solve(view, solver, sense, exec))
        .map_err(py_err)?;
    let (rows, cols) = a.pairs();
    Ok((index_array(py, rows), index_array(py, cols)))
}

// `warpath.linear_sum_assignment_batch` itself, as `linear_sum_assignment` (its docstring is
// the text file): `costs` is a 3-D array-like of `b` problems; returns `(row_ind, col_ind)`,
// each `(b, min(r, c))`. Jonker–Volgenant (solver "auto" or "jv") writes the pairs straight
// into the two new numpy arrays, on the rayon pool (or this thread for a small batch).
#[doc = include_str!("linear_sum_assignment_batch.txt")]
#[allow(
    clippy::doc_lazy_continuation,
    reason = "the docstring is numpydoc for Python's help(), not Markdown"
)]
#[pyfunction]
#[pyo3(
    signature = (costs, maximize=None, *, solver="auto", backend="auto"),
    text_signature = "(costs, maximize=False, *, solver='auto', backend='auto')"
)]
fn linear_sum_assignment_batch<'py>(
    py: Python<'py>,
    costs: &Bound<'py, PyAny>,
    maximize: Option<&Bound<'py, PyAny>>,
    solver: &str,
    backend: &str,
) -> PyResult<IndexPair<'py, Ix2>> {
    let (solver, exec, sense) = call_options(maximize, solver, backend)?;
    let is_native = |a: &Bound<'py, PyAny>| {
        matches!(
            cost_type(a, 3),
            Some(CostType::F64 | CostType::F32 | CostType::I64 | CostType::I32)
        )
    };
    let mut a = costs.clone();
    if !is_native(&a) {
        a = as_ndarray(py, &a)?;
        if !is_native(&a) {
            a = by_python_rules(py, &a, 3)?;
        }
    }
    if matches!(solver, Solver::JonkerVolgenant | Solver::Auto) {
        macro_rules! native {
            ($t:ty) => {{
                // SAFETY: `is_native` read the stack's dimension, type number and byte order.
                let a = unsafe { a.cast_unchecked::<PyArray<$t, Ix3>>() };
                if a.len() <= KEEP_GIL_ENTRIES {
                    // SAFETY: as in `lsa_native`: the view lives inside this call, which holds
                    // the GIL throughout and runs no Python code.
                    return batch_jv(py, unsafe { a.as_array() }, sense, false);
                }
                let r = crate::arrays::readonly(a)?;
                return batch_jv(py, r.as_array(), sense, true);
            }};
        }
        match cost_type(&a, 3) {
            Some(CostType::F64) => native!(f64),
            Some(CostType::F32) => native!(f32),
            Some(CostType::I64) => native!(i64),
            Some(CostType::I32) => native!(i32),
            _ => unreachable!("converted to a native type above"),
        }
    }
    let (pairs, solved) = dispatch!(&a, Ix3, [f64, f32, i64, i32], |r| solve_many(
        r, py, solver, sense, exec
    ))?;
    let b = solved.len();
    let mut rows = Vec::with_capacity(b * pairs);
    let mut cols = Vec::with_capacity(b * pairs);
    for a in &solved {
        let (r, c) = a.pairs();
        rows.extend(r.into_iter().map(|x| x as i64));
        cols.extend(c.into_iter().map(|x| x as i64));
    }
    let shape = (b, pairs);
    let rows = Array2::from_shape_vec(shape, rows).expect("every problem has min(r, c) pairs");
    let cols = Array2::from_shape_vec(shape, cols).expect("every problem has min(r, c) pairs");
    // numpy-owned, as `index_array`
    Ok((
        PyArray::from_array(py, &rows),
        PyArray::from_array(py, &cols),
    ))
}

/// A stack solved by the Jonker–Volgenant batch, its pairs written into two new numpy arrays
/// (the GIL released unless the whole stack is small).
fn batch_jv<'py, T: Cost>(
    py: Python<'py>,
    view: ndarray::ArrayView3<'_, T>,
    sense: Sense,
    detach: bool,
) -> PyResult<IndexPair<'py, Ix2>> {
    let (b, r, c) = view.dim();
    let shape = [b, r.min(c)];
    // SAFETY: as in `solve_jv`: new arrays, every element written before they are returned,
    // dropped unread on an error.
    let (rows, cols) = unsafe {
        (
            PyArray2::<i64>::new(py, shape, false),
            PyArray2::<i64>::new(py, shape, false),
        )
    };
    // SAFETY: the only references to the new arrays' data.
    let (rs, cs) = unsafe {
        (
            rows.as_slice_mut().expect("a new array is contiguous"),
            cols.as_slice_mut().expect("a new array is contiguous"),
        )
    };
    if detach {
        let mut totals = vec![0.0; b];
        py.detach(|| {
            assignment::linear_sum_assignment_batch_into(view, sense, rs, cs, &mut totals)
        })
        .map_err(batch_err)?;
    } else {
        // A small stack: one problem after another in this thread's workspace, as single
        // calls are solved (no thread pool, no allocation).
        let pairs = r.min(c);
        WORKSPACE
            .with_borrow_mut(|ws| {
                for (k, (problem, (rk, ck))) in view
                    .outer_iter()
                    .zip(rs.chunks_mut(pairs.max(1)).zip(cs.chunks_mut(pairs.max(1))))
                    .enumerate()
                {
                    ws.solve_into(problem, sense, rk, ck).map_err(|e| {
                        AssignmentError::InProblem {
                            index: k,
                            source: Box::new(e),
                        }
                    })?;
                }
                Ok(())
            })
            .map_err(batch_err)?;
    }
    Ok((rows, cols))
}

/// A batch error as the exception of the problem's own error, its message naming the problem.
fn batch_err(e: AssignmentError) -> PyErr {
    match &e {
        AssignmentError::InProblem { source, .. } => {
            let inner = source.to_py_err();
            Python::attach(|py| PyErr::from_type(inner.get_type(py), e.to_string()))
        }
        _ => py_err(e),
    }
}

/// Solves every problem of the stack; the first failure is raised with its problem index.
fn solve_many<T: Cost + numpy::Element>(
    costs: PyReadonlyArray<'_, T, Ix3>,
    py: Python<'_>,
    solver: Solver,
    sense: Sense,
    exec: Exec,
) -> PyResult<(usize, Vec<Assignment>)> {
    let view = costs.as_array();
    let (_, r, c) = view.dim();
    let results = py.detach(|| {
        let problems: Vec<_> = view.outer_iter().collect();
        solve_batch(&problems, solver, sense, exec)
    });
    let solved = results
        .into_iter()
        .enumerate()
        .map(|(i, res)| {
            res.map_err(|e| {
                let err = e.to_py_err();
                PyErr::from_type(err.get_type(py), format!("problem {i}: {e}"))
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok((r.min(c), solved))
}

/// Native half of `warpath.min_weight_full_bipartite_matching`: a `rows x cols` sparse matrix
/// as CSR arrays (CSC when `csc`), `indptr` and `indices` both int32 or both int64, `data`
/// float64, float32, int64 or int32; returns `(row_ind, col_ind)` of the matched pairs,
/// sorted by row. No full matching: `ValueError("no full matching exists: ...")`, scipy's
/// words.
#[pyfunction]
#[pyo3(signature = (rows, cols, indptr, indices, data, csc, maximize))]
#[allow(clippy::too_many_arguments)]
fn min_weight_full_bipartite_matching<'py>(
    py: Python<'py>,
    rows: usize,
    cols: usize,
    indptr: &Bound<'py, PyAny>,
    indices: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    csc: bool,
    maximize: bool,
) -> PyResult<IndexPair<'py, Ix1>> {
    let sense = if maximize {
        Sense::Maximize
    } else {
        Sense::Minimize
    };
    let shape = (rows, cols, csc, sense);
    let a = if let (Ok(p), Ok(i)) = (
        indptr.extract::<PyReadonlyArray1<'py, i32>>(),
        indices.extract::<PyReadonlyArray1<'py, i32>>(),
    ) {
        dispatch!(data, Ix1, [f64, f32, i64, i32], |d| sparse_solve(
            py, shape, &p, &i, d
        ))?
    } else if let (Ok(p), Ok(i)) = (
        indptr.extract::<PyReadonlyArray1<'py, i64>>(),
        indices.extract::<PyReadonlyArray1<'py, i64>>(),
    ) {
        dispatch!(data, Ix1, [f64, f32, i64, i32], |d| sparse_solve(
            py, shape, &p, &i, d
        ))?
    } else {
        return Err(PyValueError::new_err(
            "indptr and indices must be 1-D int32 arrays or both int64 arrays",
        ));
    };
    let (r, c) = a.pairs();
    Ok((index_array(py, r), index_array(py, c)))
}

/// Builds the sparse matrix over the borrowed arrays and solves it without the GIL.
fn sparse_solve<I: Index + numpy::Element, T: Cost + numpy::Element>(
    py: Python<'_>,
    (rows, cols, csc, sense): (usize, usize, bool, Sense),
    indptr: &PyReadonlyArray1<'_, I>,
    indices: &PyReadonlyArray1<'_, I>,
    data: PyReadonlyArray<'_, T, Ix1>,
) -> PyResult<Assignment> {
    let (p, i, d) = (indptr.as_slice()?, indices.as_slice()?, data.as_slice()?);
    let m = if csc {
        Csr::from_csc(rows, cols, p, i, d)
    } else {
        Csr::new(rows, cols, p, i, d)
    }
    .map_err(py_err)?;
    py.detach(|| min_weight_full_matching(&m, sense))
        .map_err(|e| match e {
            AssignmentError::Infeasible => PyValueError::new_err(
                "no full matching exists: no matching of the entries covers every row (every column when there are more rows than columns)",
            ),
            e => py_err(e),
        })
}
