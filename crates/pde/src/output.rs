//! Snapshots (CSV and `.npy`) and plots (SVG via plotters) of a [`Simulation`].

use std::io::Write;
use std::path::{Path, PathBuf};

use ndarray::{Array1, Array2};
use plotters::coord::Shift;
use plotters::prelude::*;
use warpath_io::plot::Figure;

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

/// `v` (solid) and `w` (dashed) against `x` at up to `curves` snapshot times.
struct Profiles<'a> {
    sim: &'a Simulation,
    curves: usize,
}

impl Figure for Profiles<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let sim = self.sim;
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let (lo, hi) = sim
            .v
            .iter()
            .chain(&sim.w)
            .flatten()
            .filter(|x| x.is_finite())
            .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        let (lo, hi) = if lo < hi {
            (lo - 0.05, hi + 0.05)
        } else {
            (-0.5, 1.5)
        };
        let xmax = sim.x.last().copied().unwrap_or(1.0).max(1e-12);
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!(
                    "FitzHugh-Nagumo: v (solid) and w (dashed), {} nodes",
                    sim.x.len()
                ),
                ("sans-serif", 20),
            )
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(45)
            .build_cartesian_2d(0.0..xmax, lo..hi)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("x")
            .y_desc("v, w")
            .draw()
            .map_err(e)?;
        let k = sim.times.len();
        let curves = self.curves.clamp(1, k.max(1));
        for c in 0..curves {
            let idx = if curves == 1 {
                k - 1
            } else {
                c * (k - 1) / (curves - 1)
            };
            let color = Palette99::pick(c).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    sim.x.iter().copied().zip(sim.v[idx].iter().copied()),
                    color.stroke_width(2),
                ))
                .map_err(e)?
                .label(format!("t = {:.1}", sim.times[idx]))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            let pts: Vec<(f64, f64)> = sim
                .x
                .iter()
                .copied()
                .zip(sim.w[idx].iter().copied())
                .collect();
            chart
                .draw_series(DashedLineSeries::new(pts, 6, 4, color.stroke_width(1)))
                .map_err(e)?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(e)?;
        Ok(())
    }
}

/// Plots `v` (solid) and `w` (dashed) against `x` at up to `curves` snapshot times spread
/// over the run; `.svg` or `.png` by the extension (warpath-io's renderer).
///
/// # Complexity
/// `O(curves * n)`.
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::{FhnParams, Scenario, Scheme, plot_heatmap, plot_profiles, simulate};
/// let p = FhnParams { n: 81, length: 40.0, t_end: 2.0, ..FhnParams::default() };
/// let sim = simulate(Scenario::Gaussian, p, Scheme::Explicit, Exec::Cpu, 4, &mut |_, _| {})?;
/// let dir = std::env::temp_dir();
/// plot_profiles(&sim, &dir.join("pde-doc-profiles.svg"), 3)?;
/// plot_heatmap(&sim, &dir.join("pde-doc-heatmap.png"))?;
/// # Ok::<(), pde::PdeError>(())
/// ```
///
/// # Errors
/// [`PdeError::Output`] when drawing or writing fails or the extension is not `.svg`/`.png`.
pub fn plot_profiles(sim: &Simulation, path: &Path, curves: usize) -> Result<(), PdeError> {
    warpath_io::plot::render(path, (900, 500), &Profiles { sim, curves }).map_err(out_err)
}

/// Plots a space–time heat map of `v` (x across, t upwards) in viridis with a colour bar;
/// `.svg` or `.png` by the extension. Large runs are drawn at most about 400 cells across and
/// up, so files stay small.
///
/// # Complexity
/// `O(min(snapshots, 400) * min(n, 400))` rectangles.
///
/// # Examples
/// See [`plot_profiles`].
///
/// # Errors
/// [`PdeError::Output`] when drawing or writing fails or the extension is not `.svg`/`.png`.
pub fn plot_heatmap(sim: &Simulation, path: &Path) -> Result<(), PdeError> {
    let map = warpath_io::plot::Heatmap {
        x: &sim.x,
        y: &sim.times,
        values: &sim.v,
        title: "v(x, t)",
        x_label: "x",
        y_label: "t",
        value_label: "v",
    };
    warpath_io::plot::render(path, (900, 600), &map).map_err(out_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FhnParams, Scenario, Scheme, simulate};
    use gpu_runtime::Exec;

    #[test]
    fn snapshots_round_trip_and_plots_are_svg() {
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
        let prof = dir.join("p.svg");
        let heat = dir.join("h.svg");
        plot_profiles(&sim, &prof, 3).unwrap();
        plot_heatmap(&sim, &heat).unwrap();
        for f in [prof, heat] {
            let s = std::fs::read_to_string(&f).unwrap();
            assert!(s.starts_with("<svg") && s.len() > 1000, "{}", f.display());
        }
        plot_heatmap(&sim, &dir.join("h.png")).unwrap();
        assert!(
            std::fs::read(dir.join("h.png"))
                .unwrap()
                .starts_with(b"\x89PNG")
        );
        assert!(plot_heatmap(&sim, &dir.join("h.jpg")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
        assert!(matches!(
            write_snapshots(&sim, Path::new("/proc/no-such-dir/x")),
            Err(PdeError::Output(_))
        ));
    }
}
