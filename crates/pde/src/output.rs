//! Snapshots (CSV and `.npy`) of a [`Simulation`]. (Pictures of them are drawn by
//! `warpath_io::plot`, e.g. by `warpath fhn --plot`.)

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::{FhnParams, PdeError, Simulation, SnapshotSink};

fn out_err(e: impl std::fmt::Display) -> PdeError {
    PdeError::Output(e.to_string())
}

/// Writes the snapshots into `dir` (created if missing): `snapshots.csv` (columns
/// `t,x,v,w`), and `x.npy`, `t.npy`, `v.npy`, `w.npy` (`v` and `w` are
/// `[snapshots, nodes]` arrays of `f64`). Returns the files written. The same files as
/// [`SnapshotWriter`] writes while the simulation runs.
///
/// # Complexity
/// `O(snapshots * n)` time, `O(1)` auxiliary space (buffered writes).
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
    let mut out = SnapshotWriter::new(dir);
    out.begin(&sim.params, sim.times.len())?;
    for (k, &t) in sim.times.iter().enumerate() {
        out.snapshot(t, &sim.v[k], &sim.w[k])?;
    }
    out.finish()
}

/// A [`SnapshotSink`] that writes each snapshot to files as it is taken and keeps none in
/// memory: the files of [`write_snapshots`] (`snapshots.csv`, `x.npy`, `t.npy`, `v.npy`,
/// `w.npy` in a directory, created if missing). Pass it to [`crate::simulate_streamed`], then
/// call [`SnapshotWriter::finish`].
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::{FhnParams, Scenario, Scheme, SnapshotWriter, simulate_streamed};
/// let p = FhnParams { n: 41, length: 20.0, t_end: 1.0, ..FhnParams::default() };
/// let dir = std::env::temp_dir().join(format!("pde-doc-writer-{}", std::process::id()));
/// let mut out = SnapshotWriter::new(&dir);
/// simulate_streamed(Scenario::Gaussian, p, None, Scheme::Explicit, Exec::Cpu, 4, &mut out,
///                   &mut |_, _| {})?;
/// let files = out.finish()?;
/// assert_eq!(files.len(), 5);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), pde::PdeError>(())
/// ```
#[derive(Debug)]
pub struct SnapshotWriter {
    dir: PathBuf,
    open: Option<OpenFiles>,
}

#[derive(Debug)]
struct OpenFiles {
    dx: f64,
    expected: usize,
    times: Vec<f64>,
    csv: BufWriter<File>,
    v: BufWriter<File>,
    w: BufWriter<File>,
}

impl SnapshotWriter {
    /// A writer into `dir`; nothing is created before the simulation starts.
    pub fn new(dir: &Path) -> Self {
        SnapshotWriter {
            dir: dir.to_path_buf(),
            open: None,
        }
    }

    /// Flushes the files, writes `t.npy` and returns the files written (`snapshots.csv`,
    /// `x.npy`, `t.npy`, `v.npy`, `w.npy`).
    ///
    /// # Complexity
    /// `O(snapshots)`.
    ///
    /// # Errors
    /// [`PdeError::Output`] when a file cannot be written, when no simulation ran into the
    /// writer, or when it received fewer snapshots than announced (a simulation that failed).
    pub fn finish(self) -> Result<Vec<PathBuf>, PdeError> {
        let mut f = self
            .open
            .ok_or_else(|| out_err("no simulation was written into the snapshot writer"))?;
        if f.times.len() != f.expected {
            return Err(out_err(format!(
                "{} snapshots announced, {} written",
                f.expected,
                f.times.len()
            )));
        }
        for b in [&mut f.csv, &mut f.v, &mut f.w] {
            b.flush().map_err(out_err)?;
        }
        let t = self.dir.join("t.npy");
        let mut tf = create(&t)?;
        npy_header(&mut tf, &[f.times.len()])?;
        write_f64s(&mut tf, &f.times)?;
        tf.flush().map_err(out_err)?;
        Ok(["snapshots.csv", "x.npy", "t.npy", "v.npy", "w.npy"]
            .iter()
            .map(|name| self.dir.join(name))
            .collect())
    }
}

impl SnapshotSink for SnapshotWriter {
    fn begin(&mut self, params: &FhnParams, count: usize) -> Result<(), PdeError> {
        std::fs::create_dir_all(&self.dir).map_err(out_err)?;
        let n = params.n;
        let dx = params.dx();
        let mut x = create(&self.dir.join("x.npy"))?;
        npy_header(&mut x, &[n])?;
        for i in 0..n {
            x.write_all(&(i as f64 * dx).to_le_bytes())
                .map_err(out_err)?;
        }
        x.flush().map_err(out_err)?;
        let mut csv = create(&self.dir.join("snapshots.csv"))?;
        writeln!(csv, "t,x,v,w").map_err(out_err)?;
        let mut v = create(&self.dir.join("v.npy"))?;
        npy_header(&mut v, &[count, n])?;
        let mut w = create(&self.dir.join("w.npy"))?;
        npy_header(&mut w, &[count, n])?;
        self.open = Some(OpenFiles {
            dx,
            expected: count,
            times: Vec::with_capacity(count),
            csv,
            v,
            w,
        });
        Ok(())
    }

    fn snapshot(&mut self, t: f64, v: &[f64], w: &[f64]) -> Result<(), PdeError> {
        let f = self
            .open
            .as_mut()
            .ok_or_else(|| out_err("snapshot before the simulation began"))?;
        if f.times.len() == f.expected {
            return Err(out_err(format!(
                "more than the {} snapshots announced",
                f.expected
            )));
        }
        for (i, (a, b)) in v.iter().zip(w).enumerate() {
            writeln!(f.csv, "{t},{},{a},{b}", i as f64 * f.dx).map_err(out_err)?;
        }
        write_f64s(&mut f.v, v)?;
        write_f64s(&mut f.w, w)?;
        f.times.push(t);
        Ok(())
    }
}

fn create(path: &Path) -> Result<BufWriter<File>, PdeError> {
    let f = File::create(path).map_err(|e| out_err(format!("{}: {e}", path.display())))?;
    Ok(BufWriter::with_capacity(1 << 20, f))
}

/// The header of a C-order little-endian `f64` `.npy` file of `shape` (format 1.0, padded to
/// 64 bytes as numpy writes it).
fn npy_header(f: &mut impl Write, shape: &[usize]) -> Result<(), PdeError> {
    let dims = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {dims}, }}");
    // magic (6) + version (2) + length (2) + dict + '\n', a multiple of 64
    let total = (10 + dict.len() + 1).next_multiple_of(64);
    dict.push_str(&" ".repeat(total - 10 - dict.len() - 1));
    dict.push('\n');
    let len = u16::try_from(dict.len()).map_err(out_err)?;
    f.write_all(b"\x93NUMPY\x01\x00").map_err(out_err)?;
    f.write_all(&len.to_le_bytes()).map_err(out_err)?;
    f.write_all(dict.as_bytes()).map_err(out_err)
}

fn write_f64s(f: &mut impl Write, values: &[f64]) -> Result<(), PdeError> {
    let mut buf = [0u8; 8 * 512];
    for block in values.chunks(512) {
        for (b, x) in buf.chunks_exact_mut(8).zip(block) {
            b.copy_from_slice(&x.to_le_bytes());
        }
        f.write_all(&buf[..8 * block.len()]).map_err(out_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{on_grid, simulate_explicit};
    use crate::{Scenario, Scheme};
    use gpu_runtime::Exec;
    use ndarray::{Array1, Array2};

    #[test]
    fn snapshots_round_trip() {
        let p = on_grid(81, 40.0, 5.0);
        let sim = simulate_explicit(Scenario::Gaussian, p, 5);
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

    /// The writer that streams snapshots during the run writes the same bytes as
    /// `write_snapshots` of the kept snapshots, and refuses a run cut short.
    #[test]
    fn streamed_files_equal_written_files() {
        let p = on_grid(61, 30.0, 4.0);
        let base = std::env::temp_dir().join(format!("pde-stream-test-{}", std::process::id()));
        let (a, b) = (base.join("kept"), base.join("streamed"));
        let sim = simulate_explicit(Scenario::PulseTrain, p, 7);
        let kept = write_snapshots(&sim, &a).unwrap();
        let mut out = SnapshotWriter::new(&b);
        crate::simulate_streamed(
            Scenario::PulseTrain,
            p,
            Scenario::PulseTrain.stimulus(),
            Scheme::Explicit,
            Exec::Cpu,
            7,
            &mut out,
            &mut |_, _| {},
        )
        .unwrap();
        let streamed = out.finish().unwrap();
        assert_eq!(kept.len(), 5);
        for (x, y) in kept.iter().zip(&streamed) {
            assert_eq!(x.file_name(), y.file_name());
            assert_eq!(
                std::fs::read(x).unwrap(),
                std::fs::read(y).unwrap(),
                "{x:?}"
            );
        }
        let xs: Array1<f64> = ndarray_npy::read_npy(b.join("x.npy")).unwrap();
        assert_eq!(xs.to_vec(), sim.x);
        let w: Array2<f64> = ndarray_npy::read_npy(b.join("w.npy")).unwrap();
        assert_eq!(w.row(3).to_vec(), sim.w[3]);
        // announced 3, given 1: the files are incomplete and finish says so
        let mut short = SnapshotWriter::new(&base.join("short"));
        short.begin(&p, 3).unwrap();
        short.snapshot(0.0, &sim.v[0], &sim.w[0]).unwrap();
        let e = short.finish().unwrap_err();
        assert!(
            e.to_string().contains("3 snapshots announced, 1 written"),
            "{e}"
        );
        assert!(SnapshotWriter::new(&base).finish().is_err());
        let _ = std::fs::remove_dir_all(&base);
    }
}
