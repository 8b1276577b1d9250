//! `linear_sum_assignment` (scipy's contract) and `linear_sum_assignment_batch`.

use assignment::{Assignment, Cost, Sense, Solver, solve, solve_batch};
use gpu_runtime::Exec;
use ndarray::{Array2, Ix1, Ix2, Ix3};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::arrays::{IndexPair, dispatch};
use crate::backend::parse_backend;
use crate::errors::{ToPyErr, py_err};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(linear_sum_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(linear_sum_assignment_batch, m)?)?;
    Ok(())
}

/// The solver called `name` (the CLI's spelling).
fn parse_solver(name: &str) -> PyResult<Solver> {
    match name.to_ascii_lowercase().as_str() {
        "jv" | "jonker-volgenant" | "lapjv" => Ok(Solver::JonkerVolgenant),
        "hungarian" => Ok(Solver::Hungarian),
        "auction" => Ok(Solver::Auction),
        "brute" | "brute-force" => Ok(Solver::BruteForce),
        "greedy" => Ok(Solver::Greedy),
        _ => Err(PyValueError::new_err(format!(
            "solver must be 'jv', 'hungarian', 'auction', 'brute' or 'greedy', not {name:?}"
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

fn index_array(py: Python<'_>, v: Vec<usize>) -> Bound<'_, PyArray1<i64>> {
    v.into_iter()
        .map(|x| x as i64)
        .collect::<Vec<_>>()
        .into_pyarray(py)
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
    let shape = (b, pairs);
    let rows = Array2::from_shape_vec(shape, rows).expect("every problem has min(r, c) pairs");
    let cols = Array2::from_shape_vec(shape, cols).expect("every problem has min(r, c) pairs");
    Ok((rows.into_pyarray(py), cols.into_pyarray(py)))
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
