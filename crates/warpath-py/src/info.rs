//! `warpath.info()`: the device warpath would use, as `warpath info --json` reports it.

use pyo3::prelude::*;
use pyo3::types::PyDict;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, [info]);
    Ok(())
}

/// A dict: `version`, `cuda` (bool), `device` (a dict, or `None`), `reason` (why there is no
/// device, or `None`), `warpath_backend` (the `WARPATH_BACKEND` override) and `threads` (CPU
/// threads the parallel paths use).
#[pyfunction]
fn info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("version", env!("CARGO_PKG_VERSION"))?;
    let detected = py.detach(gpu_runtime::gpu);
    match detected {
        Ok(gpu) => {
            let i = gpu.info();
            let d = PyDict::new(py);
            d.set_item("ordinal", i.ordinal)?;
            d.set_item("name", &i.name)?;
            d.set_item("compute_capability", i.compute_capability)?;
            d.set_item("multiprocessors", i.multiprocessors)?;
            d.set_item("total_memory", i.total_memory)?;
            d.set_item("free_memory", i.free_memory)?;
            d.set_item("driver_version", i.driver_version)?;
            out.set_item("cuda", true)?;
            out.set_item("device", d)?;
            out.set_item("reason", py.None())?;
        }
        Err(e) => {
            out.set_item("cuda", false)?;
            out.set_item("device", py.None())?;
            out.set_item("reason", e.to_string())?;
        }
    }
    let backend = std::env::var("WARPATH_BACKEND").unwrap_or_else(|_| "auto".into());
    out.set_item("warpath_backend", backend)?;
    out.set_item("threads", rayon::current_num_threads())?;
    Ok(out)
}
