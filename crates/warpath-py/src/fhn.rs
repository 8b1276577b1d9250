//! FitzHugh–Nagumo simulations (pde's `simulate`).

use ndarray::Array2;
use numpy::IntoPyArray;
use pde::{FhnParams, NewtonOptions, Scenario, Scheme, TridiagSolver, simulate};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, [fhn_simulate]);
    Ok(())
}

fn parse_scenario(s: &str) -> PyResult<Scenario> {
    match s.to_ascii_lowercase().replace('_', "-").as_str() {
        "gaussian" => Ok(Scenario::Gaussian),
        "pulse-train" => Ok(Scenario::PulseTrain),
        "front" => Ok(Scenario::Front),
        _ => Err(PyValueError::new_err(format!(
            "scenario must be 'gaussian', 'pulse-train' or 'front', not {s:?}"
        ))),
    }
}

fn parse_scheme(scheme: &str, solver: &str) -> PyResult<Scheme> {
    let solver = match solver.to_ascii_lowercase().as_str() {
        "thomas" => TridiagSolver::Thomas,
        "cr" => TridiagSolver::CyclicReduction,
        "pcr" => TridiagSolver::Pcr,
        _ => {
            return Err(PyValueError::new_err(format!(
                "solver must be 'thomas', 'cr' or 'pcr', not {solver:?}"
            )));
        }
    };
    match scheme.to_ascii_lowercase().as_str() {
        "explicit" => Ok(Scheme::Explicit),
        "adaptive" => Ok(Scheme::Adaptive(Default::default())),
        "implicit" => Ok(Scheme::Implicit(NewtonOptions {
            solver,
            ..NewtonOptions::default()
        })),
        _ => Err(PyValueError::new_err(format!(
            "scheme must be 'explicit', 'adaptive' or 'implicit', not {scheme:?}"
        ))),
    }
}

/// Rows of equal length as a 2-D array.
fn stack(rows: Vec<Vec<f64>>, n: usize) -> Array2<f64> {
    let r = rows.len();
    Array2::from_shape_vec((r, n), rows.into_iter().flatten().collect())
        .expect("every snapshot has n values")
}

/// Native half of `warpath.fhn.simulate`: runs a scenario and returns a dict with `x`, `t`,
/// `v`, `w` (snapshots x nodes), `speed` (or `None`), `backend`, `steps`, `dx`, `dt` and
/// `seconds` (wall time of the run).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (scenario, scheme, solver, n, dx, dt, t_end, length, a, eps, gamma, snapshots, backend))]
fn fhn_simulate<'py>(
    py: Python<'py>,
    scenario: &str,
    scheme: &str,
    solver: &str,
    n: usize,
    dx: Option<f64>,
    dt: f64,
    t_end: f64,
    length: f64,
    a: f64,
    eps: f64,
    gamma: f64,
    snapshots: usize,
    backend: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let scenario = parse_scenario(scenario)?;
    let scheme = parse_scheme(scheme, solver)?;
    let exec = parse_backend(backend)?;
    let mut p = FhnParams {
        a,
        eps,
        gamma,
        length,
        n,
        dt,
        t_end,
        ..FhnParams::default()
    };
    if let Some(dx) = dx {
        if !(dx > 0.0 && dx.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "dx must be positive and finite, not {dx}"
            )));
        }
        p = p.with_dx(dx);
    }
    let started = std::time::Instant::now();
    let sim = py
        .detach(|| simulate(scenario, p, scheme, exec, snapshots, &mut |_, _| {}))
        .map_err(py_err)?;
    let seconds = started.elapsed().as_secs_f64();
    let nodes = sim.x.len();
    let out = PyDict::new(py);
    out.set_item("dx", sim.params.dx())?;
    out.set_item("dt", sim.params.dt)?;
    out.set_item("x", sim.x.into_pyarray(py))?;
    out.set_item("t", sim.times.into_pyarray(py))?;
    out.set_item("v", stack(sim.v, nodes).into_pyarray(py))?;
    out.set_item("w", stack(sim.w, nodes).into_pyarray(py))?;
    out.set_item("speed", sim.speed)?;
    out.set_item("backend", sim.backend.to_string())?;
    out.set_item("steps", sim.steps)?;
    out.set_item("seconds", seconds)?;
    Ok(out)
}
