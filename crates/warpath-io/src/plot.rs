//! Figures as SVG or real PNG (plotters' bitmap backend), chosen by the file's extension; a
//! perceptual colour map (viridis) with a colour bar for heat maps; curves at snapshot times;
//! scatter plots that say when they show a subsample; log-log charts of time against size.
//! Every figure warpath draws is here (the libraries write data, the `warpath` command line and
//! the benches draw it).

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::{Format, IoError};

/// Something that draws itself on a plotters drawing area of any backend.
pub trait Figure {
    /// Draws the figure on `root` (already filled white).
    ///
    /// # Errors
    /// The backend's error, as text.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

static FONTS: Once = Once::new();

/// Registers the embedded DejaVu Sans as plotters' `sans-serif` (and `serif`, `monospace`)
/// font: PNG text is rendered from it, so no system fonts are needed. Called by [`render`].
pub fn register_fonts() {
    FONTS.call_once(|| {
        static DEJAVU: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
        for family in ["sans-serif", "serif", "monospace"] {
            for style in [
                FontStyle::Normal,
                FontStyle::Bold,
                FontStyle::Italic,
                FontStyle::Oblique,
            ] {
                // The font is valid (tested); a failure would leave text undrawn, not crash.
                let _ = plotters::style::register_font(family, style, DEJAVU);
            }
        }
    });
}

/// Draws `figure` into `path`: SVG for `.svg`, PNG for `.png`.
///
/// # Errors
/// [`IoError::Format`] for another extension or a drawing failure; [`IoError::Io`] when the
/// file cannot be written.
///
/// # Examples
/// ```
/// use warpath_io::plot::{render, Heatmap};
/// let x = [0.0, 1.0, 2.0];
/// let t = [0.0, 1.0];
/// let v = vec![vec![0.0, 0.5, 1.0], vec![1.0, 0.5, 0.0]];
/// let map = Heatmap { x: &x, y: &t, values: &v, title: "v(x, t)", x_label: "x", y_label: "t", value_label: "v" };
/// let p = std::env::temp_dir().join(format!("wio-doc-heat-{}.png", std::process::id()));
/// render(&p, (400, 300), &map)?;
/// assert!(std::fs::read(&p)?.starts_with(b"\x89PNG"));
/// # std::fs::remove_file(&p)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn render(path: &Path, size: (u32, u32), figure: &impl Figure) -> Result<(), IoError> {
    register_fonts();
    let fail = |e: String| IoError::Format(format!("drawing {}: {e}", path.display()));
    match Format::of_path(path) {
        Some(Format::Svg) => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
            figure.draw(&root).map_err(fail)?;
            root.present().map_err(|e| fail(e.to_string()))
        }
        Some(Format::Png) => {
            crate::check_writable(path)?;
            let root = BitMapBackend::new(path, size).into_drawing_area();
            root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
            figure.draw(&root).map_err(fail)?;
            root.present().map_err(|e| fail(e.to_string()))
        }
        _ => Err(IoError::Format(format!(
            "{}: plots are written as .svg or .png",
            path.display()
        ))),
    }
}

/// Whether `path` names a plot format ([`render`] accepts it).
pub fn is_plot_path(path: &Path) -> bool {
    matches!(Format::of_path(path), Some(Format::Svg | Format::Png))
}

/// Viridis (matplotlib's default colour map: perceptually uniform, readable in grey and by
/// colour-blind readers) at `t` in `[0, 1]` (clamped; NaN is grey).
///
/// ```
/// let c = warpath_io::plot::viridis(0.0);
/// assert_eq!((c.0, c.1, c.2), (68, 1, 84));
/// ```
pub fn viridis(t: f64) -> RGBColor {
    // matplotlib's viridis at 0, 1/8, ..., 1.
    const STOPS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ];
    if t.is_nan() {
        return RGBColor(128, 128, 128);
    }
    let s = t.clamp(0.0, 1.0) * 8.0;
    let i = (s.floor() as usize).min(7);
    let f = s - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A chart over `x` and `y` ranges with the shared caption, margins and axis styles.
fn axes<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    (x_label, y_label): (&str, &str),
    mesh: bool,
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    let mut m = chart.configure_mesh();
    m.x_desc(x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 15));
    if !mesh {
        m.disable_mesh();
    }
    m.draw().map_err(err)?;
    Ok(chart)
}

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

/// The finite range of `values` (`(0, 1)` when there is none; widened when flat).
fn value_range<'a>(values: impl Iterator<Item = &'a f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    if lo
        .partial_cmp(&hi)
        .is_none_or(|o| o == std::cmp::Ordering::Greater)
    {
        (0.0, 1.0)
    } else if lo == hi {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    }
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

fn ordinal(k: usize) -> String {
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

/// One measured time of a [`Timings`] chart: `seconds` at size `x` for `series`, in `variant`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing<'a> {
    /// The method measured (one colour per series).
    pub series: &'a str,
    /// The kind of input (one of the chart's two variants: solid or dashed lines).
    pub variant: &'a str,
    /// The size (e.g. edges), positive.
    pub x: f64,
    /// The time in seconds (drawn at least 1 ns, so a log axis can show it).
    pub seconds: f64,
}

/// A log-log chart of time against size: one colour per series (in order of first
/// appearance), a solid line for the points of `variants[0]` and a dashed one for
/// `variants[1]` (points of other variants are not drawn), every point marked, a legend entry
/// `series (variant)` per line. Ticks at 1 and 3 times powers of ten, labelled with k, M, G
/// (sizes) and s, ms, µs, ns (times).
///
/// # Examples
/// ```
/// use warpath_io::plot::{Timing, Timings, render};
/// let t = |series, variant, x, seconds| Timing { series, variant, x, seconds };
/// let points = [
///     t("cpu", "deep", 1e5, 0.01),
///     t("cpu", "deep", 1e6, 0.1),
///     t("cpu", "shallow", 1e6, 0.2),
/// ];
/// let chart = Timings {
///     points: &points, variants: ["deep", "shallow"],
///     title: "time against edges", x_label: "edges",
/// };
/// let p = std::env::temp_dir().join(format!("wio-doc-timings-{}.svg", std::process::id()));
/// render(&p, (900, 650), &chart)?;
/// assert!(std::fs::read_to_string(&p)?.contains("cpu (shallow)"));
/// # std::fs::remove_file(&p)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Timings<'a> {
    /// The measurements.
    pub points: &'a [Timing<'a>],
    /// The variant drawn solid and the variant drawn dashed.
    pub variants: [&'a str; 2],
    /// The title.
    pub title: &'a str,
    /// The x axis label (the y axis is `seconds`).
    pub x_label: &'a str,
}

/// A log axis label at 1 and 3 times a power of ten, in the largest unit of `units`
/// (`(scale, suffix)`, largest first) that it reaches: `3e6` -> `3M` (`1e-7` below them all);
/// other ticks stay blank.
fn log_tick(v: f64, units: &[(f64, &str)]) -> String {
    let e = v.log10();
    let mantissa = 10f64.powf(e - e.floor());
    let near = |x: f64| (mantissa - x).abs() < 1e-6 * x;
    if !(near(1.0) || near(3.0) || near(10.0)) {
        return String::new();
    }
    match units.iter().find(|(scale, _)| v >= scale * (1.0 - 1e-9)) {
        Some((scale, suffix)) => format!("{:.0}{suffix}", v / scale),
        None => format!("{v:.0e}"),
    }
}

impl Figure for Timings<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        use plotters::element::DashedPathElement;
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let points = self.points;
        let span = |v: Vec<f64>| {
            v.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
                (lo.min(x), hi.max(x))
            })
        };
        let (x0, x1) = span(points.iter().map(|p| p.x).collect());
        let (y0, y1) = span(points.iter().map(|p| p.seconds.max(1e-9)).collect());
        let mut chart = ChartBuilder::on(root)
            .caption(self.title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(
                (x0 / 1.5..x1 * 1.5).log_scale(),
                (y0 / 2.0..y1 * 2.0).log_scale(),
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .x_desc(self.x_label)
            .y_desc("seconds")
            .x_label_formatter(&|&x| log_tick(x, &[(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]))
            .y_label_formatter(&|&y| {
                log_tick(
                    y,
                    &[(1.0, " s"), (1e-3, " ms"), (1e-6, " µs"), (1e-9, " ns")],
                )
            })
            .draw()
            .map_err(err)?;
        let mut series: Vec<&str> = Vec::new();
        for p in points {
            if !series.contains(&p.series) {
                series.push(p.series);
            }
        }
        for (i, name) in series.iter().enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            for (k, variant) in self.variants.into_iter().enumerate() {
                let pts: Vec<(f64, f64)> = points
                    .iter()
                    .filter(|p| p.series == *name && p.variant == variant)
                    .map(|p| (p.x, p.seconds.max(1e-9)))
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                let (line, label) = (colour.stroke_width(2), format!("{name} ({variant})"));
                if k == 0 {
                    chart
                        .draw_series(LineSeries::new(pts.clone(), line))
                        .map_err(err)?
                        .label(label)
                        .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], line));
                } else {
                    chart
                        .draw_series(DashedLineSeries::new(pts.clone(), 8, 5, line))
                        .map_err(err)?
                        .label(label)
                        .legend(move |(x, y)| {
                            DashedPathElement::new([(x, y), (x + 24, y)], 6, 4, line)
                        });
                }
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                    .map_err(err)?;
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

/// Draws `figure` as an SVG document in memory (for pages that inline their charts).
///
/// # Errors
/// [`IoError::Format`] when drawing fails.
///
/// # Examples
/// ```
/// use warpath_io::plot::{Chart, Line, svg_string};
/// let lines = [Line { name: "ours".into(), points: vec![(1.0, 2.0), (2.0, 3.0)], dashed: false }];
/// let chart = Chart { lines: &lines, title: "t", x_label: "n", y_label: "s", log_x: false, log_y: false, points_only: false };
/// let svg = svg_string((400, 300), &chart)?;
/// assert!(svg.starts_with("<svg") && svg.contains("ours"));
/// # Ok::<(), warpath_io::IoError>(())
/// ```
pub fn svg_string(size: (u32, u32), figure: &impl Figure) -> Result<String, IoError> {
    register_fonts();
    let fail = |e: String| IoError::Format(format!("drawing a chart: {e}"));
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        figure.draw(&root).map_err(fail)?;
        root.present().map_err(|e| fail(e.to_string()))?;
    }
    Ok(out)
}

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
fn short_number(v: f64) -> String {
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

    fn colour_of(&self, name: &str) -> RGBAColor {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_ends_and_is_monotone_in_lightness() {
        assert_eq!(viridis(1.0), RGBColor(253, 231, 37));
        assert_eq!(viridis(-3.0), viridis(0.0));
        assert_eq!(viridis(f64::NAN), RGBColor(128, 128, 128));
        // perceptual: luminance rises steadily from one end to the other
        let lum = |c: RGBColor| 0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64;
        let l: Vec<f64> = (0..=64).map(|i| lum(viridis(i as f64 / 64.0))).collect();
        assert!(l.windows(2).all(|w| w[1] >= w[0] - 0.5), "{l:?}");
    }

    #[test]
    fn svg_and_png_by_extension_with_labels() {
        let d = std::env::temp_dir().join(format!("wio-plot-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let pts: Vec<(f64, f64)> = (0..50_000)
            .map(|i| ((i % 100) as f64, (i / 100) as f64))
            .collect();
        let groups: Vec<u32> = (0..50_000).map(|i| (i % 3) as u32).collect();
        let s = Scatter {
            points: &pts,
            groups: &groups,
            marks: &[(1.0, 1.0)],
            title: "k-means",
            x_label: "height",
            y_label: "weight",
            max_points: 20_000,
        };
        assert_eq!(s.stride(), 3);
        assert_eq!(
            s.caption(),
            "k-means (16667 of 50000 points shown, every 3rd)"
        );
        render(&d.join("s.svg"), (600, 400), &s).unwrap();
        let svg = std::fs::read_to_string(d.join("s.svg")).unwrap();
        for want in ["height", "weight", "16667 of 50000 points shown"] {
            assert!(svg.contains(want), "{want}");
        }
        render(&d.join("s.png"), (600, 400), &s).unwrap();
        let png = std::fs::read(d.join("s.png")).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        let e = render(&d.join("s.jpg"), (600, 400), &s).unwrap_err();
        assert!(e.to_string().contains(".svg or .png"));
        let x: Vec<f64> = (0..1000).map(f64::from).collect();
        let y: Vec<f64> = (0..3).map(f64::from).collect();
        let v = vec![x.clone(), x.clone(), vec![f64::NAN; 1000]];
        let h = Heatmap {
            x: &x,
            y: &y,
            values: &v,
            title: "t",
            x_label: "x",
            y_label: "t",
            value_label: "v",
        };
        render(&d.join("h.svg"), (600, 400), &h).unwrap();
        let svg = std::fs::read_to_string(d.join("h.svg")).unwrap();
        // the colour bar's ends: viridis' first and last colours
        assert!(
            svg.contains("#440154") && svg.contains("#FDE725"),
            "no colour bar"
        );
        // curves at snapshot times: the first and the last of six, as SVG and PNG
        let times: Vec<f64> = (0..6).map(|k| k as f64 * 0.5).collect();
        let solid: Vec<Vec<f64>> = (0..6).map(|k| vec![k as f64 * 0.1; 1000]).collect();
        let dashed = vec![vec![f64::NAN; 1000]; 6];
        let p = Profiles {
            x: &x,
            times: &times,
            solid: &solid,
            dashed: &dashed,
            curves: 2,
            title: "profiles",
            x_label: "x",
            y_label: "v, w",
        };
        render(&d.join("p.svg"), (600, 400), &p).unwrap();
        let svg = std::fs::read_to_string(d.join("p.svg")).unwrap();
        for want in ["profiles", "t = 0.0", "t = 2.5", "v, w"] {
            assert!(svg.contains(want), "{want}");
        }
        assert!(!svg.contains("t = 0.5"), "only 2 curves asked");
        render(&d.join("p.png"), (600, 400), &p).unwrap();
        assert!(
            std::fs::read(d.join("p.png"))
                .unwrap()
                .starts_with(b"\x89PNG")
        );
        std::fs::remove_dir_all(&d).unwrap();
        assert_eq!(ordinal(11), "11th");
        assert_eq!(ordinal(22), "22nd");
    }

    #[test]
    fn charts_draw_every_axis_kind_and_skip_what_a_log_axis_cannot_show() {
        let lines = [
            Line {
                name: "cpu".into(),
                points: vec![(1e3, 0.5), (1e4, 2.0), (1e5, f64::NAN), (0.0, 1.0)],
                dashed: false,
            },
            Line {
                name: "seed: cpu".into(),
                points: vec![(1e3, 1.0), (1e5, 9.0)],
                dashed: true,
            },
            Line {
                name: "empty".into(),
                points: vec![],
                dashed: false,
            },
        ];
        for (log_x, log_y) in [(false, false), (true, false), (false, true), (true, true)] {
            for points_only in [false, true] {
                let c = Chart {
                    lines: &lines,
                    title: "time against n",
                    x_label: "n",
                    y_label: "seconds",
                    log_x,
                    log_y,
                    points_only,
                };
                let svg = svg_string((500, 350), &c).unwrap();
                for want in ["time against n", "seconds", "seed: cpu", "<svg"] {
                    assert!(svg.contains(want), "{want} ({log_x} {log_y})");
                }
                assert_eq!(c.colour_of("seed: cpu"), c.colour_of("cpu"));
            }
        }
        // nothing drawable still gives a chart
        let none = [Line {
            name: "x".into(),
            points: vec![(f64::NAN, 1.0)],
            dashed: false,
        }];
        let c = Chart {
            lines: &none,
            title: "t",
            x_label: "a",
            y_label: "b",
            log_x: true,
            log_y: true,
            points_only: false,
        };
        assert!(svg_string((300, 200), &c).unwrap().contains("<svg"));
        assert_eq!(short_number(1_500_000.0), "1.5M");
        assert_eq!(short_number(300_000.0), "300k");
        assert_eq!(short_number(0.25), "0.25");
        assert_eq!(short_number(2e-5), "2e-5");
    }

    #[test]
    fn log_ticks_label_one_and_three_times_powers_of_ten() {
        let edges = [(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")];
        let secs = [(1.0, " s"), (1e-3, " ms"), (1e-6, " µs")];
        assert_eq!(log_tick(3e6, &edges), "3M");
        assert_eq!(log_tick(1e8, &edges), "100M");
        assert_eq!(log_tick(30.0, &edges), "30");
        assert_eq!(log_tick(2e6, &edges), "");
        assert_eq!(log_tick(0.003, &secs), "3 ms");
        assert_eq!(log_tick(1e-4, &secs), "100 µs");
        assert_eq!(log_tick(1e-7, &secs), "1e-7");
    }

    #[test]
    fn timings_are_written_as_svg_and_png_of_the_asked_size() {
        let d = std::env::temp_dir().join(format!("wio-timings-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let mut points = Vec::new();
        for (i, x) in [1e5, 3e5, 1e6].into_iter().enumerate() {
            for variant in ["deep", "shallow", "other"] {
                for (j, series) in ["hierholzer", "parallel"].into_iter().enumerate() {
                    let seconds = 1e-4 * (i + 1) as f64 * (j + 1) as f64;
                    points.push(Timing {
                        series,
                        variant,
                        x,
                        seconds,
                    });
                }
            }
        }
        let chart = Timings {
            points: &points,
            variants: ["deep", "shallow"],
            title: "Euler circuit: time against edges",
            x_label: "edges",
        };
        render(&d.join("t.svg"), (900, 650), &chart).unwrap();
        let svg = std::fs::read_to_string(d.join("t.svg")).unwrap();
        assert!(svg.contains(r#"width="900" height="650""#), "size");
        for want in [
            "Euler circuit: time against edges",
            "edges",
            "seconds",
            "hierholzer (deep)",
            "parallel (shallow)",
            "300k",
            "1M",
            "ms",
        ] {
            assert!(svg.contains(want), "{want}");
        }
        assert!(!svg.contains("(other)"), "only the two variants are drawn");
        render(&d.join("t.png"), (900, 650), &chart).unwrap();
        let png = std::fs::read(d.join("t.png")).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        // the IHDR chunk: width and height, big-endian
        assert_eq!(png[16..24], [0, 0, 3, 132, 0, 0, 2, 138]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
