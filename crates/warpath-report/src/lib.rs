#![doc = include_str!("../README.md")]

use serde_json::{Map, Value, json};

/// How large the experiments run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// Small sizes: every experiment together in a few minutes on 2 cores (CI runs this).
    Quick,
    /// The seed's sizes (hours on 2 cores for some experiments).
    Full,
}

impl Size {
    /// `"quick"` or `"full"`.
    pub fn name(self) -> &'static str {
        match self {
            Size::Quick => "quick",
            Size::Full => "full",
        }
    }
}

/// Whether GPU rows can be made, and whether they may carry timings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuUse {
    /// No usable CUDA device: no GPU rows.
    None,
    /// A real device: GPU rows with timings.
    Hardware,
    /// warpath's simulated driver: GPU rows for their results, marked simulated, no timings.
    Simulated,
}

/// What an experiment is told: the size, the GPU, and where to say how far it has got.
pub struct Context {
    /// Quick or full sizes.
    pub size: Size,
    /// The GPU situation (decided once by the caller).
    pub gpu: GpuUse,
    progress: Box<dyn Fn(&str) + Send + Sync>,
}

impl Context {
    /// A context with no GPU and silent progress.
    pub fn new(size: Size) -> Self {
        Context {
            size,
            gpu: GpuUse::None,
            progress: Box::new(|_| {}),
        }
    }

    /// The same context with GPU rows asked for as `gpu` says.
    pub fn with_gpu(mut self, gpu: GpuUse) -> Self {
        self.gpu = gpu;
        self
    }

    /// The same context reporting progress lines to `f`.
    pub fn with_progress(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.progress = Box::new(f);
        self
    }

    /// `quick` under [`Size::Quick`], `full` under [`Size::Full`].
    pub fn pick<T>(&self, quick: T, full: T) -> T {
        match self.size {
            Size::Quick => quick,
            Size::Full => full,
        }
    }

    /// Whether to make GPU rows (a real or a simulated device).
    pub fn gpu_rows(&self) -> bool {
        self.gpu != GpuUse::None
    }

    /// Says how far a long experiment has got (one short line, e.g. `"n = 300 of 1000"`).
    pub fn progress(&self, line: &str) {
        (self.progress)(line)
    }
}

/// One measurement: a JSON object of named cells, in insertion order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    cells: Vec<(String, Value)>,
    simulated: bool,
}

impl Row {
    /// An empty row.
    pub fn new() -> Self {
        Row::default()
    }

    /// The row with `key` set to `value` (numbers, strings, booleans, `Option`s as null).
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.set(key, value);
        self
    }

    /// Sets `key` to `value` (replacing it where it is set); a non-finite float becomes null
    /// (JSON has no NaN).
    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        let value = value.into();
        match self.cells.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.cells.push((key.to_string(), value)),
        }
    }

    /// The row with `backend` set to `"cuda"` and, when `ctx` runs on the simulated driver,
    /// `"simulated": true` (its [`Row::secs`] cells then stay null).
    pub fn on_gpu(mut self, ctx: &Context) -> Self {
        self.set("backend", "cuda");
        if ctx.gpu == GpuUse::Simulated {
            self.simulated = true;
            self.set("simulated", true);
        }
        self
    }

    /// The row with its backend: [`Row::on_gpu`] when `gpu`, else `"backend": "cpu"`.
    ///
    /// Prefer this method to a closure that takes a `Row` by value: rustc 1.95 miscompiles
    /// such closures in release builds when one is called twice (rust-lang/rust#155241; see
    /// ARCHITECTURE.md, "Toolchain pitfalls").
    pub fn on_backend(self, ctx: &Context, gpu: bool) -> Self {
        if gpu {
            self.on_gpu(ctx)
        } else {
            self.with("backend", "cpu")
        }
    }

    /// The row with a time in seconds under `key`: null on a simulated GPU row.
    pub fn secs(mut self, key: &str, seconds: f64) -> Self {
        let v = if self.simulated || !seconds.is_finite() {
            Value::Null
        } else {
            json!(seconds)
        };
        self.set(key, v);
        self
    }

    /// Whether the row was measured on the simulated driver.
    pub fn is_simulated(&self) -> bool {
        self.simulated
    }

    /// The cell under `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.cells.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The cell under `key` as a number.
    pub fn get_f64(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(Value::as_f64)
    }

    /// The cell under `key` as text: strings as they are, other values as JSON.
    pub fn get_text(&self, key: &str) -> Option<String> {
        self.get(key).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    /// The keys, in insertion order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.cells.iter().map(|(k, _)| k.as_str())
    }

    /// The cells, in insertion order.
    pub fn cells(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.cells.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The row as a JSON object (keys sorted, as serde_json's map keeps them; [`Row::keys`]
    /// keeps the insertion order for tables).
    pub fn to_json(&self) -> Value {
        Value::Object(self.cells.iter().cloned().collect::<Map<String, Value>>())
    }
}

/// Which kind of chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartKind {
    /// Lines through the points of each series, in the order of `x`.
    Lines,
    /// Points only.
    Points,
}

/// Which row keys a chart draws: `y` keys against `x`, one line per y key and per distinct
/// value of the `series` keys (e.g. per backend), the seed's rows drawn dashed beside ours.
#[derive(Clone, Debug, PartialEq)]
pub struct FigureSpec {
    /// Lines or points.
    pub kind: ChartKind,
    /// The chart's title.
    pub title: String,
    /// The key of the x values.
    pub x: String,
    /// The keys of the y values (one line each).
    pub y: Vec<String>,
    /// Keys whose values, joined, name a series (e.g. `["backend", "style"]`).
    pub series: Vec<String>,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// The x axis label (default: the x key).
    pub x_label: String,
    /// The y axis label (default: the y keys).
    pub y_label: String,
}

impl FigureSpec {
    /// Lines of `y` keys against `x`, linear axes.
    pub fn lines(x: &str, y: &[&str]) -> Self {
        FigureSpec {
            kind: ChartKind::Lines,
            title: String::new(),
            x: x.into(),
            y: y.iter().map(|s| s.to_string()).collect(),
            series: Vec::new(),
            log_x: false,
            log_y: false,
            x_label: x.into(),
            y_label: y.join(", "),
        }
    }

    /// Points (no lines) of `y` keys against `x`.
    pub fn points(x: &str, y: &[&str]) -> Self {
        FigureSpec {
            kind: ChartKind::Points,
            ..FigureSpec::lines(x, y)
        }
    }

    /// Lines of `y` keys against `x` on logarithmic axes (times and errors across decades).
    pub fn log_lines(x: &str, y: &[&str]) -> Self {
        FigureSpec::lines(x, y).log(true, true)
    }

    /// Points (no lines) of `y` keys against `x` on logarithmic axes.
    pub fn log_points(x: &str, y: &[&str]) -> Self {
        FigureSpec::points(x, y).log(true, true)
    }

    /// With a title.
    pub fn title(mut self, t: &str) -> Self {
        self.title = t.into();
        self
    }

    /// With series split by the values of `keys`.
    pub fn series(mut self, keys: &[&str]) -> Self {
        self.series = keys.iter().map(|s| s.to_string()).collect();
        self
    }

    /// With logarithmic axes.
    pub fn log(mut self, x: bool, y: bool) -> Self {
        self.log_x = x;
        self.log_y = y;
        self
    }

    /// With axis labels.
    pub fn labels(mut self, x: &str, y: &str) -> Self {
        self.x_label = x.into();
        self.y_label = y.into();
        self
    }

    /// The spec as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "kind": match self.kind { ChartKind::Lines => "lines", ChartKind::Points => "points" },
            "title": self.title, "x": self.x, "y": self.y, "series": self.series,
            "log_x": self.log_x, "log_y": self.log_y,
            "x_label": self.x_label, "y_label": self.y_label,
        })
    }
}

/// One reproduced experiment: what the seed reported and what we measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Experiment {
    /// The id, as the issue lists it (`euler-chart`, `lap-fig1`, ...).
    pub id: String,
    /// The seed document: `"000"`, `"001"`, `"002"`.
    pub seed: String,
    /// What the experiment shows.
    pub title: String,
    /// The seed's figure or numbers in words (its sizes, its machine, its result).
    pub seed_says: String,
    /// The seed's own numbers as rows, keyed like ours where they compare.
    pub seed_rows: Vec<Row>,
    /// Our measurements.
    pub rows: Vec<Row>,
    /// What to draw, if a chart fits.
    pub figure: Option<FigureSpec>,
    /// Where our definitions differ from the seed's, what was skipped and why.
    pub notes: Vec<String>,
}

impl Experiment {
    /// An experiment with no rows yet.
    pub fn new(id: &str, seed: &str, title: &str) -> Self {
        Experiment {
            id: id.into(),
            seed: seed.into(),
            title: title.into(),
            seed_says: String::new(),
            seed_rows: Vec::new(),
            rows: Vec::new(),
            figure: None,
            notes: Vec::new(),
        }
    }

    /// The experiment as JSON: `{"id", "seed", "title", "seed_says", "seed_rows", "rows",
    /// "figure", "notes"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "seed": self.seed,
            "title": self.title,
            "seed_says": self.seed_says,
            "seed_rows": self.seed_rows.iter().map(Row::to_json).collect::<Vec<_>>(),
            "rows": self.rows.iter().map(Row::to_json).collect::<Vec<_>>(),
            "figure": self.figure.as_ref().map(FigureSpec::to_json),
            "notes": self.notes,
        })
    }
}

/// Why an experiment could not run: a message naming what failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExperimentError(pub String);

impl std::fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ExperimentError {}

impl ExperimentError {
    /// An error from anything displayable, prefixed with what was being done.
    pub fn from_display(context: &str, e: impl std::fmt::Display) -> Self {
        ExperimentError(format!("{context}: {e}"))
    }
}

/// A runnable experiment: its id, seed and title (listed without running it) and the function.
#[derive(Clone, Copy)]
pub struct Spec {
    /// The id (`--only` selects by it).
    pub id: &'static str,
    /// The seed document.
    pub seed: &'static str,
    /// What it shows.
    pub title: &'static str,
    /// Runs it.
    pub run: fn(&Context) -> Result<Experiment, ExperimentError>,
}

impl std::fmt::Debug for Spec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Spec({} from seed {})", self.id, self.seed)
    }
}

/// The median of `v` (the mean of the two middle values for an even count; NaN when empty).
///
/// # Examples
/// ```
/// assert_eq!(warpath_report::median(&mut [3.0, 1.0, 2.0]), 2.0);
/// assert_eq!(warpath_report::median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
/// ```
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

/// Runs the experiment `run` at the quick size without a GPU and returns it: where the
/// crates' tests of their experiments start.
///
/// # Panics
/// When `run` fails, with its message.
///
/// # Examples
/// ```
/// use warpath_report::{Context, Experiment, ExperimentError, run_quick};
/// fn demo(_: &Context) -> Result<Experiment, ExperimentError> {
///     Ok(Experiment::new("demo", "000", "a demo"))
/// }
/// assert_eq!(run_quick(demo).id, "demo");
/// ```
pub fn run_quick(run: fn(&Context) -> Result<Experiment, ExperimentError>) -> Experiment {
    run(&Context::new(Size::Quick)).unwrap_or_else(|e| panic!("the quick run failed: {e}"))
}

/// Runs `f` `repeats` times and returns the median wall time in seconds and the last result.
///
/// # Examples
/// ```
/// let (s, v) = warpath_report::time_median(3, || 2 + 2);
/// assert!(s >= 0.0 && v == 4);
/// ```
pub fn time_median<T>(repeats: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::with_capacity(repeats.max(1));
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let t = std::time::Instant::now();
        let v = f();
        times.push(t.elapsed().as_secs_f64());
        last = Some(v);
    }
    (median(&mut times), last.expect("at least one run"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_gpu_rows_keep_results_but_no_timings() {
        let sim = Context::new(Size::Quick).with_gpu(GpuUse::Simulated);
        let r = Row::new().with("n", 10).on_gpu(&sim).secs("seconds", 0.5);
        assert!(r.is_simulated());
        assert_eq!(r.get("simulated"), Some(&json!(true)));
        assert_eq!(r.get("backend"), Some(&json!("cuda")));
        assert_eq!(r.get("seconds"), Some(&Value::Null));
        assert_eq!(r.get_f64("n"), Some(10.0));
        let hw = Context::new(Size::Full).with_gpu(GpuUse::Hardware);
        let r = Row::new().on_gpu(&hw).secs("seconds", 0.5);
        assert_eq!(r.get_f64("seconds"), Some(0.5));
        assert_eq!(r.get("simulated"), None);
        assert!(hw.gpu_rows() && sim.gpu_rows());
        assert!(!Context::new(Size::Quick).gpu_rows());
        let r = Row::new().on_backend(&sim, false);
        assert_eq!(r.get_text("backend").as_deref(), Some("cpu"));
        assert!(Row::new().on_backend(&sim, true).is_simulated());
    }

    #[test]
    fn non_finite_times_are_null_and_rows_keep_their_order() {
        let r = Row::new()
            .with("z", 1)
            .with("a", "x")
            .secs("t", f64::NAN)
            .with("m", Option::<f64>::None);
        assert_eq!(r.keys().collect::<Vec<_>>(), ["z", "a", "t", "m"]);
        assert_eq!(r.get("t"), Some(&Value::Null));
        assert_eq!(r.get_text("a").as_deref(), Some("x"));
        assert_eq!(r.get_text("z").as_deref(), Some("1"));
    }

    #[test]
    fn experiment_json_has_the_report_keys() {
        let mut e = Experiment::new("x", "001", "t");
        e.rows.push(Row::new().with("backend", "cpu"));
        e.figure = Some(FigureSpec::lines("n", &["s"]).log(true, true));
        let j = e.to_json();
        for k in [
            "id",
            "seed",
            "title",
            "seed_says",
            "seed_rows",
            "rows",
            "figure",
            "notes",
        ] {
            assert!(j.get(k).is_some(), "{k}");
        }
        assert_eq!(j["figure"]["log_x"], json!(true));
        assert_eq!(j["rows"][0]["backend"], json!("cpu"));
    }

    #[test]
    fn progress_reaches_the_callback_and_pick_follows_the_size() {
        use std::sync::{Arc, Mutex};
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = seen.clone();
        let ctx =
            Context::new(Size::Full).with_progress(move |l| s2.lock().unwrap().push(l.to_string()));
        ctx.progress("half");
        assert_eq!(*seen.lock().unwrap(), ["half"]);
        assert_eq!(ctx.pick(1, 2), 2);
        assert_eq!(Context::new(Size::Quick).pick(1, 2), 1);
        assert!(median(&mut []).is_nan());
    }
}
