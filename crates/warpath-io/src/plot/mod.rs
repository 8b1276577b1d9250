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

mod chart;
mod heatmap;
mod profiles;
mod scatter;
#[cfg(test)]
mod tests;
mod timings;

pub use chart::{Chart, Line};
pub use heatmap::Heatmap;
pub use profiles::Profiles;
pub use scatter::Scatter;
pub use timings::{Timing, Timings};

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
        static DEJAVU: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
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
