//! [`Timings`]: log-log charts of time against size, one colour per method and a solid and a
//! dashed line for two kinds of input.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, log_tick};

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
