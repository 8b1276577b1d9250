//! Snapshots (CSV and `.npy`) of a [`Simulation`]. (Pictures of them are drawn by
//! `warpath_io::plot`, e.g. by `warpath fhn --plot`.)

use std::io::Write;
use std::path::{Path, PathBuf};

use ndarray::{Array1, Array2};

use crate::{PdeError, Simulation};

fn out_err(e: impl std::fmt::Display) -> PdeError {
    PdeError::Output(e.to_string())
}

/// Writes the snapshots into `dir` (created if missing): `snapshots.csv` (columns
/// `t,x,v,w`), and `x.npy`, `t.npy`, `v.npy`, `w.npy` (`v` and `w` are
/// `[snapshots, nodes]` arrays of `f64`). Returns the files written.
///
/// # Complexity
/// `O(snapshots * n)`.
///
/// # Errors
/// [`PdeError::Output`] when a file cannot be written.
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::{FhnParams, Scenario, Scheme, simulate, write_snapshots};
/// let p = FhnParams { n: 41, length: 20.0, t_end: 1.0, ..FhnParams::default() };
/// let sim = simulate(Scenario::Gaussian, p, Scheme::Explicit, Exec::Cpu, 4, &mut |_, _| {})?;
/// let dir = std::env::temp_dir().join("pde-doc-snapshots");
/// let files = write_snapshots(&sim, &dir)?;
/// assert_eq!(files.len(), 5);
/// # Ok::<(), pde::PdeError>(())
/// ```
pub fn write_snapshots(sim: &Simulation, dir: &Path) -> Result<Vec<PathBuf>, PdeError> {
    std::fs::create_dir_all(dir).map_err(out_err)?;
    let csv = dir.join("snapshots.csv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&csv).map_err(out_err)?);
    writeln!(f, "t,x,v,w").map_err(out_err)?;
    for (k, t) in sim.times.iter().enumerate() {
        for (i, x) in sim.x.iter().enumerate() {
            writeln!(f, "{t},{x},{},{}", sim.v[k][i], sim.w[k][i]).map_err(out_err)?;
        }
    }
    f.flush().map_err(out_err)?;
    let rows = sim.times.len();
    let n = sim.x.len();
    let to2 = |data: &[Vec<f64>]| Array2::from_shape_vec((rows, n), data.concat()).map_err(out_err);
    let mut files = vec![csv];
    let write1 = |name: &str, a: Array1<f64>, files: &mut Vec<PathBuf>| {
        let path = dir.join(name);
        ndarray_npy::write_npy(&path, &a).map_err(out_err)?;
        files.push(path);
        Ok::<(), PdeError>(())
    };
    write1("x.npy", Array1::from(sim.x.clone()), &mut files)?;
    write1("t.npy", Array1::from(sim.times.clone()), &mut files)?;
    for (name, data) in [("v.npy", &sim.v), ("w.npy", &sim.w)] {
        let path = dir.join(name);
        ndarray_npy::write_npy(&path, &to2(data)?).map_err(out_err)?;
        files.push(path);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FhnParams, Scenario, Scheme, simulate};
    use gpu_runtime::Exec;

    #[test]
    fn snapshots_round_trip() {
        let p = FhnParams {
            n: 81,
            length: 40.0,
            t_end: 5.0,
            ..FhnParams::default()
        };
        let sim = simulate(
            Scenario::Gaussian,
            p,
            Scheme::Explicit,
            Exec::Cpu,
            5,
            &mut |_, _| {},
        )
        .unwrap();
        let dir = std::env::temp_dir().join(format!("pde-out-test-{}", std::process::id()));
        let files = write_snapshots(&sim, &dir).unwrap();
        assert_eq!(files.len(), 5);
        let v: Array2<f64> = ndarray_npy::read_npy(dir.join("v.npy")).unwrap();
        assert_eq!(v.dim(), (6, 81));
        assert_eq!(v.row(5).to_vec(), sim.v[5]);
        let t: Array1<f64> = ndarray_npy::read_npy(dir.join("t.npy")).unwrap();
        assert_eq!(t.to_vec(), sim.times);
        let csv = std::fs::read_to_string(dir.join("snapshots.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + 6 * 81);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(matches!(
            write_snapshots(&sim, Path::new("/proc/no-such-dir/x")),
            Err(PdeError::Output(_))
        ));
    }
}
