//! [`Scatter`]: points coloured by group, subsampled past a bound that the caption states.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, axes, err, value_range};

/// A scatter plot of points coloured by group, with marks (e.g. centroids) as black crosses.
/// At most `max_points` points are drawn (every k-th, evenly); the caption then says how many
/// of how many are shown.
pub struct Scatter<'a> {
    /// The points.
    pub points: &'a [(f64, f64)],
    /// A group per point (its colour), or empty for one colour.
    pub groups: &'a [u32],
    /// Points drawn as crosses on top.
    pub marks: &'a [(f64, f64)],
    /// The title.
    pub title: &'a str,
    /// The x axis label.
    pub x_label: &'a str,
    /// The y axis label.
    pub y_label: &'a str,
    /// The most points drawn.
    pub max_points: usize,
}

impl Scatter<'_> {
    /// The stride of the subsample (1 when every point is drawn).
    pub fn stride(&self) -> usize {
        self.points.len().div_ceil(self.max_points.max(1)).max(1)
    }

    /// How many points are drawn.
    pub fn shown(&self) -> usize {
        self.points.len().div_ceil(self.stride())
    }

    /// The caption: the title, and `(N of M points shown)` when subsampled.
    pub fn caption(&self) -> String {
        if self.shown() < self.points.len() {
            format!(
                "{} ({} of {} points shown, every {})",
                self.title,
                self.shown(),
                self.points.len(),
                ordinal(self.stride())
            )
        } else {
            self.title.to_owned()
        }
    }
}

/// `k` as an English ordinal: `1st`, `2nd`, `3rd`, `11th`, `22nd`.
pub(super) fn ordinal(k: usize) -> String {
    let suffix = match (k % 10, k % 100) {
        (1, r) if r != 11 => "st",
        (2, r) if r != 12 => "nd",
        (3, r) if r != 13 => "rd",
        _ => "th",
    };
    format!("{k}{suffix}")
}

impl Figure for Scatter<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let all = self.points.iter().chain(self.marks);
        let (x0, x1) = value_range(all.clone().map(|p| &p.0));
        let (y0, y1) = value_range(all.map(|p| &p.1));
        let pad = |a: f64, b: f64| (b - a) * 0.05;
        let (px, py) = (pad(x0, x1), pad(y0, y1));
        let mut chart = axes(
            root,
            &self.caption(),
            x0 - px..x1 + px,
            y0 - py..y1 + py,
            (self.x_label, self.y_label),
            true,
        )?;
        let stride = self.stride();
        chart
            .draw_series(
                self.points
                    .iter()
                    .enumerate()
                    .step_by(stride)
                    .filter(|(_, p)| p.0.is_finite() && p.1.is_finite())
                    .map(|(i, &p)| {
                        let g = self.groups.get(i).copied().unwrap_or(0);
                        Circle::new(p, 2, Palette99::pick(g as usize).mix(0.8).filled())
                    }),
            )
            .map_err(err)?;
        chart
            .draw_series(
                self.marks
                    .iter()
                    .map(|&m| Cross::new(m, 6, BLACK.stroke_width(2))),
            )
            .map_err(err)?;
        Ok(())
    }
}
