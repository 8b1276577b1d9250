//! `linear_sum_assignment` (scipy's contract) and `linear_sum_assignment_batch`.

use assignment::sparse::{Csr, Index, min_weight_full_matching};
use assignment::{Assignment, AssignmentError, Cost, Sense, Solver, solve, solve_batch};
use gpu_runtime::Exec;
use ndarray::{Array2, Ix1, Ix2, Ix3};
use numpy::{PyArray, PyArray1, PyReadonlyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::arrays::{IndexPair, dispatch};
use crate::backend::parse_backend;
use crate::errors::{ToPyErr, py_err};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(linear_sum_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(linear_sum_assignment_batch, m)?)?;
    m.add_function(wrap_pyfunction!(min_weight_full_bipartite_matching, m)?)?;
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

/// Native half of `warpath.linear_sum_assignment`: `cost_matrix` is a 2-D float64, float32,
/// int64 or int32 array (any strides); returns `(row_ind, col_ind)` sorted by row.
#[pyfunction]
#[pyo3(signature = (cost_matrix, maximize, solver, backend))]
fn linear_sum_assignment<'py>(
    py: Python<'py>,
    cost_matrix: &Bound<'py, PyAny>,
    maximize: bool,
    solver: &str,
    backend: &str,
) -> PyResult<IndexPair<'py, Ix1>> {
    let (solver, exec, sense) = parse_options(solver, backend, maximize)?;
    let a = dispatch!(cost_matrix, Ix2, [f64, f32, i64, i32], |a| solve_one(
        a, py, solver, sense, exec
    ))?;
    let (rows, cols) = a.pairs();
    Ok((index_array(py, rows), index_array(py, cols)))
}

fn solve_one<T: Cost + numpy::Element>(
    costs: PyReadonlyArray<'_, T, Ix2>,
    py: Python<'_>,
    solver: Solver,
    sense: Sense,
    exec: Exec,
) -> PyResult<Assignment> {
    let view = costs.as_array();
    py.detach(|| solve(view, solver, sense, exec))
        .map_err(py_err)
}

/// Native half of `warpath.linear_sum_assignment_batch`: `costs` is a 3-D float64, float32,
/// int64 or int32 array of `b` problems; returns `(row_ind, col_ind)`, each `(b, min(r, c))`.
#[pyfunction]
#[pyo3(signature = (costs, maximize, solver, backend))]
fn linear_sum_assignment_batch<'py>(
    py: Python<'py>,
    costs: &Bound<'py, PyAny>,
    maximize: bool,
    solver: &str,
    backend: &str,
) -> PyResult<IndexPair<'py, Ix2>> {
    let (solver, exec, sense) = parse_options(solver, backend, maximize)?;
    let (b, pairs, rows, cols) = if matches!(solver, Solver::JonkerVolgenant | Solver::Auto) {
        // The batch path: one workspace per thread, pairs written in place.
        let out = dispatch!(costs, Ix3, [f64, f32, i64, i32], |a| {
            let view = a.as_array();
            py.detach(|| assignment::linear_sum_assignment_batch(view, sense))
                .map_err(batch_err)
        })?;
        let to_i64 = |v: Vec<usize>| v.into_iter().map(|x| x as i64).collect::<Vec<_>>();
        (out.problems, out.pairs, to_i64(out.rows), to_i64(out.cols))
    } else {
        let (pairs, solved) = dispatch!(costs, Ix3, [f64, f32, i64, i32], |a| solve_many(
            a, py, solver, sense, exec
        ))?;
        let b = solved.len();
        let mut rows = Vec::with_capacity(b * pairs);
        let mut cols = Vec::with_capacity(b * pairs);
        for a in &solved {
            let (r, c) = a.pairs();
            rows.extend(r.into_iter().map(|x| x as i64));
            cols.extend(c.into_iter().map(|x| x as i64));
        }
        (b, pairs, rows, cols)
    };
    let shape = (b, pairs);
    let rows = Array2::from_shape_vec(shape, rows).expect("every problem has min(r, c) pairs");
    let cols = Array2::from_shape_vec(shape, cols).expect("every problem has min(r, c) pairs");
    // numpy-owned, as `index_array`
    Ok((
        PyArray::from_array(py, &rows),
        PyArray::from_array(py, &cols),
    ))
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
