//! [`Chart`]: a general chart of named [`Line`]s on linear or logarithmic axes, with a legend
//! beside the plot.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, log_tick};

/// One named line of a [`Chart`].
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The legend entry.
    pub name: String,
    /// `(x, y)` points, drawn in this order; non-finite values (and, on a log axis, values
    /// that are not positive) are left out.
    pub points: Vec<(f64, f64)>,
    /// Dashed (e.g. the seed's published figures beside ours) rather than solid.
    pub dashed: bool,
}

/// A general chart: named lines (or points), linear or logarithmic axes, a legend. Log axes
/// are labelled at 1 and 3 times powers of ten (k, M, G); linear axes with short numbers.
pub struct Chart<'a> {
    /// The lines, one colour each (a dashed line takes the colour of the solid line of the
    /// same name without its `seed: ` prefix, where there is one).
    pub lines: &'a [Line],
    /// The title.
    pub title: &'a str,
    /// The x axis label.
    pub x_label: &'a str,
    /// The y axis label.
    pub y_label: &'a str,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Points only, no connecting lines.
    pub points_only: bool,
}

/// A number in few characters: `1.5M`, `300k`, `0.25`, `2e-5`.
pub(super) fn short_number(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if a >= 1e9 {
        format!("{}G", trim_float(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", trim_float(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim_float(v / 1e3))
    } else if a >= 1e-2 {
        trim_float(v)
    } else {
        format!("{v:.0e}")
    }
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

impl Chart<'_> {
    fn kept(&self, (x, y): (f64, f64)) -> bool {
        x.is_finite() && y.is_finite() && (!self.log_x || x > 0.0) && (!self.log_y || y > 0.0)
    }

    /// The axis span of the kept points, widened a little (and never empty).
    fn span(&self, pick: impl Fn((f64, f64)) -> f64, log: bool) -> (f64, f64) {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for l in self.lines {
            for &p in l.points.iter().filter(|&&p| self.kept(p)) {
                lo = lo.min(pick(p));
                hi = hi.max(pick(p));
            }
        }
        if !lo.is_finite() {
            return if log { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        if log {
            (lo / 1.5, hi * 1.5)
        } else {
            let pad = if hi > lo {
                0.05 * (hi - lo)
            } else {
                lo.abs().max(1.0) * 0.5
            };
            (lo - pad, hi + pad)
        }
    }

    /// The colour of the line `name`: one per name in order of first appearance, a `seed: `
    /// line sharing the colour of the line it is the seed's version of.
    pub(super) fn colour_of(&self, name: &str) -> RGBAColor {
        let base = name.strip_prefix("seed: ").unwrap_or(name);
        let mut names: Vec<&str> = Vec::new();
        for l in self.lines {
            let n = l.name.strip_prefix("seed: ").unwrap_or(&l.name);
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let i = names.iter().position(|n| *n == base).unwrap_or(0);
        let (r, g, b) = TABLEAU[i % TABLEAU.len()];
        RGBColor(r, g, b).to_rgba()
    }

    fn draw_on<DB, X, Y>(
        &self,
        plot: &DrawingArea<DB, Shift>,
        legend: &DrawingArea<DB, Shift>,
        xs: X,
        ys: Y,
    ) -> Result<(), String>
    where
        DB: DrawingBackend,
        X: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
        Y: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
        X::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
        Y::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
    {
        use plotters::element::DashedPathElement;
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let mut chart = ChartBuilder::on(plot)
            .caption(self.title, ("sans-serif", 22))
            .margin(14)
            .x_label_area_size(50)
            .y_label_area_size(76)
            .build_cartesian_2d(xs, ys)
            .map_err(err)?;
        let sizes = [
            (1e9, "G"),
            (1e6, "M"),
            (1e3, "k"),
            (1.0, ""),
            (1e-3, "m"),
            (1e-6, "µ"),
        ];
        let (log_x, log_y) = (self.log_x, self.log_y);
        let fx = move |v: &f64| {
            if log_x {
                log_tick(*v, &sizes)
            } else {
                short_number(*v)
            }
        };
        let fy = move |v: &f64| {
            if log_y {
                log_tick(*v, &sizes)
            } else {
                short_number(*v)
            }
        };
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(225, 225, 225))
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .draw()
            .map_err(err)?;
        for l in self.lines {
            let pts: Vec<(f64, f64)> = l.points.iter().copied().filter(|&p| self.kept(p)).collect();
            if pts.is_empty() {
                continue;
            }
            let colour = self.colour_of(&l.name);
            let line = colour.stroke_width(2);
            if self.points_only {
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                    .map_err(err)?;
            } else if l.dashed {
                chart
                    .draw_series(DashedLineSeries::new(pts.clone(), 8, 5, line))
                    .map_err(err)?;
                chart
                    .draw_series(
                        pts.iter()
                            .map(|&p| Cross::new(p, 4, colour.stroke_width(1))),
                    )
                    .map_err(err)?;
            } else {
                chart
                    .draw_series(LineSeries::new(pts.clone(), line))
                    .map_err(err)?;
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                    .map_err(err)?;
            }
        }
        // The legend beside the plot, never over the data: one entry per line, with a sample
        // of its stroke (solid, dashed or a dot), names cut to fit.
        let (w, _) = legend.dim_in_pixel();
        let chars = ((w as i32 - 44) / 8).max(8) as usize;
        let font = ("sans-serif", 14).into_font().color(&BLACK);
        let mut y = 40i32;
        for l in self
            .lines
            .iter()
            .filter(|l| l.points.iter().any(|&p| self.kept(p)))
        {
            let colour = self.colour_of(&l.name);
            let line = colour.stroke_width(2);
            if self.points_only {
                legend
                    .draw(&Circle::new((14, y), 4, colour.filled()))
                    .map_err(err)?;
            } else if l.dashed {
                legend
                    .draw(&DashedPathElement::new([(2, y), (30, y)], 6, 4, line))
                    .map_err(err)?;
            } else {
                legend
                    .draw(&PathElement::new([(2, y), (30, y)], line))
                    .map_err(err)?;
            }
            let name: String = if l.name.chars().count() > chars {
                l.name
                    .chars()
                    .take(chars - 1)
                    .chain(std::iter::once('…'))
                    .collect()
            } else {
                l.name.clone()
            };
            legend
                .draw(&Text::new(name, (38, y - 8), font.clone()))
                .map_err(err)?;
            y += 22;
        }
        Ok(())
    }
}

/// Tableau's ten colours (matplotlib's default cycle): distinct, and readable on white.
const TABLEAU: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

impl Figure for Chart<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (x0, x1) = self.span(|p| p.0, self.log_x);
        let (y0, y1) = self.span(|p| p.1, self.log_y);
        let (w, _) = root.dim_in_pixel();
        let (plot, legend) = root.split_horizontally((w as f64 * 0.70) as u32);
        let (p, l) = (&plot, &legend);
        match (self.log_x, self.log_y) {
            (false, false) => self.draw_on(p, l, x0..x1, y0..y1),
            (true, false) => self.draw_on(p, l, (x0..x1).log_scale(), y0..y1),
            (false, true) => self.draw_on(p, l, x0..x1, (y0..y1).log_scale()),
            (true, true) => self.draw_on(p, l, (x0..x1).log_scale(), (y0..y1).log_scale()),
        }
    }
}
