//! [`Profiles`]: solid and dashed curves against x at snapshot times.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::Figure;

/// Pairs of curves against `x` at up to `curves` snapshot times spread over the run (the first
/// and the last included): `solid[k]` as a solid line and `dashed[k]` as a dashed line of the
/// same colour, one colour and legend entry (`t = 1.5`) per snapshot. The y range covers every
/// finite value of every snapshot, padded by 0.05 (`[-0.5, 1.5]` when there is none).
///
/// # Examples
/// ```
/// use warpath_io::plot::{render, Profiles};
/// let x = [0.0, 1.0, 2.0];
/// let t = [0.0, 1.0];
/// let v = vec![vec![0.0, 0.5, 1.0], vec![1.0, 0.5, 0.0]];
/// let w = vec![vec![0.0; 3], vec![0.1; 3]];
/// let fig = Profiles {
///     x: &x, times: &t, solid: &v, dashed: &w, curves: 2,
///     title: "v (solid) and w (dashed)", x_label: "x", y_label: "v, w",
/// };
/// let p = std::env::temp_dir().join(format!("wio-doc-profiles-{}.svg", std::process::id()));
/// render(&p, (600, 400), &fig)?;
/// assert!(std::fs::read_to_string(&p)?.contains("t = 1.0"));
/// # std::fs::remove_file(&p)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Profiles<'a> {
    /// The positions, shared by every curve.
    pub x: &'a [f64],
    /// The time of each snapshot.
    pub times: &'a [f64],
    /// One row per snapshot, each as long as `x`, drawn solid.
    pub solid: &'a [Vec<f64>],
    /// One row per snapshot, each as long as `x`, drawn dashed.
    pub dashed: &'a [Vec<f64>],
    /// The most snapshots drawn (at least one).
    pub curves: usize,
    /// The title.
    pub title: &'a str,
    /// The x axis label.
    pub x_label: &'a str,
    /// The y axis label.
    pub y_label: &'a str,
}

impl Figure for Profiles<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let (lo, hi) = self
            .solid
            .iter()
            .chain(self.dashed)
            .flatten()
            .filter(|x| x.is_finite())
            .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        let (lo, hi) = if lo < hi {
            (lo - 0.05, hi + 0.05)
        } else {
            (-0.5, 1.5)
        };
        let xmax = self.x.last().copied().unwrap_or(1.0).max(1e-12);
        let mut chart = ChartBuilder::on(root)
            .caption(self.title, ("sans-serif", 20))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(45)
            .build_cartesian_2d(0.0..xmax, lo..hi)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .draw()
            .map_err(e)?;
        let k = self.times.len();
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
                    self.x.iter().copied().zip(self.solid[idx].iter().copied()),
                    color.stroke_width(2),
                ))
                .map_err(e)?
                .label(format!("t = {:.1}", self.times[idx]))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            let pts: Vec<(f64, f64)> = self
                .x
                .iter()
                .copied()
                .zip(self.dashed[idx].iter().copied())
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
