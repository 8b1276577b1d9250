//! [`Heatmap`]: a heat map in viridis with a colour bar.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, axes, err, value_range, viridis};

/// A heat map of `values[row][col]` over `x` (columns, across) and `y` (rows, upwards), in
/// viridis with a colour bar labelled `value_label`. Large grids are drawn at most about 400
/// cells across and up (evenly subsampled), so files stay small.
pub struct Heatmap<'a> {
    /// Column positions.
    pub x: &'a [f64],
    /// Row positions (increasing).
    pub y: &'a [f64],
    /// One row of values per `y`, each as long as `x`.
    pub values: &'a [Vec<f64>],
    /// The title.
    pub title: &'a str,
    /// The x axis label.
    pub x_label: &'a str,
    /// The y axis label.
    pub y_label: &'a str,
    /// The colour bar's label.
    pub value_label: &'a str,
}

impl Figure for Heatmap<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (w, _) = root.dim_in_pixel();
        let (main, bar) = root.split_horizontally(w.saturating_sub(110));
        let n = self.x.len();
        let k = self.y.len().min(self.values.len());
        let x0 = self.x.first().copied().unwrap_or(0.0);
        let x1 = self.x.last().copied().unwrap_or(1.0).max(x0 + 1e-12);
        let y0 = self.y.first().copied().unwrap_or(0.0);
        let y1 = self
            .y
            .get(k.saturating_sub(1))
            .copied()
            .unwrap_or(1.0)
            .max(y0 + 1e-12);
        let (lo, hi) = value_range(self.values.iter().take(k).flatten());
        let mut chart = axes(
            &main,
            self.title,
            x0..x1,
            y0..y1,
            (self.x_label, self.y_label),
            false,
        )?;
        let cstep = n.div_ceil(400).max(1);
        let rstep = k.div_ceil(400).max(1);
        let rows: Vec<usize> = (0..k).step_by(rstep).collect();
        let mut cells = Vec::with_capacity(rows.len() * n.div_ceil(cstep));
        for (ri, &r) in rows.iter().enumerate() {
            let t0 = if ri == 0 {
                y0
            } else {
                0.5 * (self.y[rows[ri - 1]] + self.y[r])
            };
            let t1 = match rows.get(ri + 1) {
                Some(&next) => 0.5 * (self.y[r] + self.y[next]),
                None => y1,
            };
            for i in (0..n).step_by(cstep) {
                let xa = self.x[i];
                let xb = self.x[(i + cstep).min(n - 1)].max(xa + 1e-12);
                let v = self.values[r].get(i).copied().unwrap_or(f64::NAN);
                let c = viridis((v - lo) / (hi - lo));
                cells.push(Rectangle::new([(xa, t0), (xb, t1)], c.filled()));
            }
        }
        chart.draw_series(cells).map_err(err)?;
        // The colour bar: the map from lo (bottom) to hi (top), with its own axis.
        let mut cb = ChartBuilder::on(&bar)
            .margin_top(40)
            .margin_bottom(50)
            .margin_right(10)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..1.0, lo..hi)
            .map_err(err)?;
        cb.configure_mesh()
            .disable_x_axis()
            .disable_mesh()
            .y_labels(8)
            .y_label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 15))
            .y_desc(self.value_label)
            .draw()
            .map_err(err)?;
        let steps = 128;
        cb.draw_series((0..steps).map(|s| {
            let a = lo + (hi - lo) * s as f64 / steps as f64;
            let b = lo + (hi - lo) * (s + 1) as f64 / steps as f64;
            Rectangle::new(
                [(0.0, a), (1.0, b)],
                viridis((s as f64 + 0.5) / steps as f64).filled(),
            )
        }))
        .map_err(err)?;
        Ok(())
    }
}
