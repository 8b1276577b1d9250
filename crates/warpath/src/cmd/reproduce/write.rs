//! The report files of `warpath reproduce`: `report.json` (the data), `REPORT.md` (tables for
//! reading in a repository) and `index.html` (one page, no outside files: styles and SVG charts
//! inline).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result};
use serde_json::{Value, json};
use warpath_io::plot::{Chart, Line, svg_string};
use warpath_report::ChartKind;
use warpath_report::{Experiment, FigureSpec, Row, Size};

use super::Outcome;

/// What the report says about the run as a whole.
pub(crate) struct Meta {
    pub(crate) size: Size,
    pub(crate) gpu: Value,
    pub(crate) machine: Value,
    pub(crate) date: String,
    pub(crate) command: String,
    pub(crate) seconds: f64,
    pub(crate) missing: Vec<String>,
}

/// The machine: CPU model, logical cores, rayon's threads, memory, OS.
pub(crate) fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok());
    json!({
        "cpu": model,
        "logical_cores": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "threads": rayon::current_num_threads(),
        "memory_gib": mem_kib.map(|k| (k as f64 / 1048576.0 * 10.0).round() / 10.0),
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "warpath": env!("CARGO_PKG_VERSION"),
    })
}

/// Now, in UTC, as `YYYY-MM-DD HH:MM UTC`.
pub(crate) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        s / 3600,
        s / 60 % 60
    )
}

/// The Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// `report.json`: `{"experiments": [{"id", "seed", "title", "rows", "figure", ...}], ...}`;
/// a failed experiment has `"error"` and no rows.
pub(crate) fn report_json(meta: &Meta, outcomes: &[Outcome]) -> Value {
    let experiments: Vec<Value> = outcomes
        .iter()
        .map(|o| match &o.result {
            Ok(e) => {
                let mut v = e.to_json();
                v["seconds"] = json!(o.seconds);
                v
            }
            Err(msg) => json!({
                "id": o.spec.id, "seed": o.spec.seed, "title": o.spec.title,
                "rows": [], "figure": null, "error": msg, "seconds": o.seconds,
            }),
        })
        .collect();
    json!({
        "warpath": env!("CARGO_PKG_VERSION"),
        "date": meta.date,
        "command": meta.command,
        "size": meta.size.name(),
        "seconds": meta.seconds,
        "machine": meta.machine,
        "gpu": meta.gpu,
        "not_reproduced": meta.missing,
        "experiments": experiments,
    })
}

/// Writes the three files into `dir`.
pub(crate) fn write_all(
    dir: &Path,
    meta: &Meta,
    outcomes: &[Outcome],
    report: &Value,
) -> Result<()> {
    let put = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
    };
    put("report.json", serde_json::to_string_pretty(report)? + "\n")?;
    put("REPORT.md", markdown(meta, outcomes))?;
    put("index.html", html(meta, outcomes)?)?;
    Ok(())
}

/// A cell as text: integers whole, other numbers to 4 significant digits, null as a dash.
pub(crate) fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "—".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) => number(f),
            _ => n.to_string(),
        },
        Some(other) => other.to_string(),
    }
}

fn number(f: f64) -> String {
    let a = f.abs();
    if f == 0.0 {
        "0".into()
    } else if f.fract() == 0.0 && a < 1e15 {
        format!("{f:.0}")
    } else if (1e-3..1e6).contains(&a) {
        let digits = (3 - a.log10().floor() as i32).max(0) as usize;
        format!("{f:.digits$}")
    } else {
        format!("{f:.3e}")
    }
}

/// The columns of `rows`: every key in order of first appearance.
fn columns(rows: &[Row]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for r in rows {
        for k in r.keys() {
            if !cols.iter().any(|c| c == k) {
                cols.push(k.to_string());
            }
        }
    }
    cols
}

fn md_table(out: &mut String, rows: &[Row]) {
    let cols = columns(rows);
    if cols.is_empty() {
        return;
    }
    let _ = writeln!(out, "| {} |", cols.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(cols.len()));
    for r in rows.iter().take(LONG_TABLE) {
        let cells: Vec<String> = cols.iter().map(|c| cell(r.get(c))).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if rows.len() > LONG_TABLE {
        let _ = writeln!(
            out,
            "\n({} more rows in report.json)",
            rows.len() - LONG_TABLE
        );
    }
    out.push('\n');
}

fn header_lines(meta: &Meta) -> Vec<(String, String)> {
    let m = &meta.machine;
    let gpu = match meta.gpu.get("name").and_then(Value::as_str) {
        Some(name) if meta.gpu["simulated"] == json!(true) => {
            format!("{name} (simulated driver: GPU rows marked simulated, no timings)")
        }
        Some(name) => name.to_string(),
        None => format!(
            "none ({})",
            meta.gpu["why_none"].as_str().unwrap_or("no device")
        ),
    };
    vec![
        ("date".into(), meta.date.clone()),
        ("command".into(), meta.command.clone()),
        ("size".into(), meta.size.name().into()),
        (
            "machine".into(),
            format!(
                "{}, {} logical cores ({} threads used), {} GiB, {} {}",
                m["cpu"].as_str().unwrap_or("unknown CPU"),
                cell(m.get("logical_cores")),
                cell(m.get("threads")),
                cell(m.get("memory_gib")),
                cell(m.get("os")),
                cell(m.get("arch")),
            ),
        ),
        ("GPU".into(), gpu),
        ("total time".into(), format!("{:.1} s", meta.seconds)),
    ]
}

/// `REPORT.md`.
pub(crate) fn markdown(meta: &Meta, outcomes: &[Outcome]) -> String {
    let mut s = String::from("# warpath reproduce: the seeds' experiments, rerun\n\n");
    for (k, v) in header_lines(meta) {
        let _ = writeln!(s, "- **{k}**: {v}");
    }
    if !meta.missing.is_empty() {
        let _ = writeln!(s, "- **not reproduced yet**: {}", meta.missing.join(", "));
    }
    s.push_str("\nThe charts are in `index.html` beside this file.\n\n");
    for o in outcomes {
        let _ = writeln!(
            s,
            "## `{}`: {} (seed {})\n",
            o.spec.id, o.spec.title, o.spec.seed
        );
        match &o.result {
            Err(msg) => {
                let _ = writeln!(s, "**Failed** after {:.1} s: {msg}\n", o.seconds);
            }
            Ok(e) => {
                if !e.seed_says.is_empty() {
                    let _ = writeln!(s, "**The seed:** {}\n", e.seed_says);
                }
                if !e.seed_rows.is_empty() {
                    s.push_str("The seed's numbers:\n\n");
                    md_table(&mut s, &e.seed_rows);
                }
                let _ = writeln!(s, "Ours ({:.1} s):\n", o.seconds);
                md_table(&mut s, &e.rows);
                for n in &e.notes {
                    let _ = writeln!(s, "- {n}");
                }
                if !e.notes.is_empty() {
                    s.push('\n');
                }
            }
        }
    }
    s
}

fn esc(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Tables longer than this are folded (HTML) or cut (Markdown, which points to report.json).
const LONG_TABLE: usize = 40;

/// The seed's tables fold sooner, so that the chart stays near the top of its section.
const SEED_TABLE: usize = 12;

fn html_table(out: &mut String, rows: &[Row], class: &str, fold_above: usize) {
    let cols = columns(rows);
    if cols.is_empty() {
        return;
    }
    let fold = rows.len() > fold_above;
    if fold {
        let _ = write!(out, "<details><summary>{} rows</summary>", rows.len());
    }
    let _ = write!(out, "<table class=\"{class}\"><thead><tr>");
    for c in &cols {
        let _ = write!(out, "<th>{}</th>", esc(c));
    }
    out.push_str("</tr></thead><tbody>");
    for r in rows {
        let sim = if r.is_simulated() || r.get("simulated") == Some(&json!(true)) {
            " class=\"sim\""
        } else {
            ""
        };
        let _ = write!(out, "<tr{sim}>");
        for c in &cols {
            let v = cell(r.get(c));
            let num = matches!(r.get(c), Some(Value::Number(_)));
            let _ = write!(
                out,
                "<td{}>{}</td>",
                if num { " class=\"n\"" } else { "" },
                esc(&v)
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>\n");
    if fold {
        out.push_str("</details>\n");
    }
}

/// The series name of a row: the values of the spec's series keys, joined.
fn series_name(spec: &FigureSpec, r: &Row) -> String {
    spec.series
        .iter()
        .filter_map(|k| r.get(k).map(|v| cell(Some(v))))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// The lines a figure spec draws from our rows (solid) and the seed's (dashed).
pub(crate) fn lines_of(e: &Experiment, spec: &FigureSpec) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    for (rows, seed) in [(&e.rows, false), (&e.seed_rows, true)] {
        for r in rows.iter() {
            let Some(x) = r.get_f64(&spec.x) else {
                continue;
            };
            for y in &spec.y {
                let Some(v) = r.get_f64(y) else { continue };
                let series = series_name(spec, r);
                let mut name = match (series.is_empty(), spec.y.len() > 1) {
                    (true, _) => y.clone(),
                    (false, true) => format!("{series}: {y}"),
                    (false, false) => series,
                };
                if seed {
                    name = format!("seed: {name}");
                }
                match lines.iter_mut().find(|l| l.name == name) {
                    Some(l) => l.points.push((x, v)),
                    None => lines.push(Line {
                        name,
                        points: vec![(x, v)],
                        dashed: seed,
                    }),
                }
            }
        }
    }
    if spec.kind == ChartKind::Lines {
        for l in &mut lines {
            l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    lines
}

/// The chart of an experiment as inline SVG, or `None` when it has no figure or nothing to
/// draw.
pub(crate) fn chart_svg(e: &Experiment) -> Result<Option<String>> {
    let Some(spec) = &e.figure else {
        return Ok(None);
    };
    let lines = lines_of(e, spec);
    if lines.iter().all(|l| l.points.is_empty()) {
        return Ok(None);
    }
    let title = if spec.title.is_empty() {
        e.title.as_str()
    } else {
        spec.title.as_str()
    };
    let chart = Chart {
        lines: &lines,
        title,
        x_label: &spec.x_label,
        y_label: &spec.y_label,
        log_x: spec.log_x,
        log_y: spec.log_y,
        points_only: spec.kind == ChartKind::Points,
    };
    let svg = svg_string((1040, 500), &chart)
        .with_context(|| format!("drawing the chart of {}", e.id))?;
    Ok(Some(svg))
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1100px;\
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}h1{font-size:1.7em}h2{margin-top:2.2em;\
border-bottom:1px solid #ddd;padding-bottom:.2em}code{background:#f3f3f3;padding:0 .25em}\
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.9em}th,td{border:1px solid #ccc;\
padding:.25em .6em}th{background:#f5f5f5}td.n{text-align:right;font-variant-numeric:tabular-nums}\
tr.sim td{color:#777;font-style:italic}.seed{background:#fffbe8;border-left:4px solid #e0c050;\
padding:.5em 1em}.fail{background:#fdecec;border-left:4px solid #d33;padding:.5em 1em}\
.notes li{color:#555}.meta td:first-child{font-weight:600}nav ol{columns:3;font-size:.9em}\
svg{max-width:100%;height:auto}";

/// `index.html`.
pub(crate) fn html(meta: &Meta, outcomes: &[Outcome]) -> Result<String> {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>warpath reproduce</title><style>",
    );
    s.push_str(STYLE);
    s.push_str("</style></head><body>\n<h1>warpath reproduce: the seeds' experiments, rerun</h1>\n<table class=\"meta\">");
    for (k, v) in header_lines(meta) {
        let _ = write!(s, "<tr><td>{}</td><td>{}</td></tr>", esc(&k), esc(&v));
    }
    if !meta.missing.is_empty() {
        let _ = write!(
            s,
            "<tr><td>not reproduced yet</td><td>{}</td></tr>",
            esc(&meta.missing.join(", "))
        );
    }
    s.push_str("</table>\n<p>Solid lines and plain tables are ours; dashed lines and yellow boxes are the seed's published figures. Rows in grey italics ran on warpath's simulated CUDA driver: their results are checked, their times are not measured.</p>\n<nav><ol>");
    for o in outcomes {
        let _ = write!(
            s,
            "<li><a href=\"#{0}\">{0}</a>{1}</li>",
            esc(o.spec.id),
            if o.result.is_err() { " (failed)" } else { "" }
        );
    }
    s.push_str("</ol></nav>\n");
    for o in outcomes {
        let _ = writeln!(
            s,
            "<section id=\"{}\"><h2><code>{}</code> {} <small>(seed {})</small></h2>",
            esc(o.spec.id),
            esc(o.spec.id),
            esc(o.spec.title),
            esc(o.spec.seed)
        );
        match &o.result {
            Err(msg) => {
                let _ = writeln!(
                    s,
                    "<div class=\"fail\">Failed after {:.1} s: {}</div>",
                    o.seconds,
                    esc(msg)
                );
            }
            Ok(e) => {
                if !e.seed_says.is_empty() || !e.seed_rows.is_empty() {
                    let _ = write!(
                        s,
                        "<div class=\"seed\"><p><b>The seed:</b> {}</p>",
                        esc(&e.seed_says)
                    );
                    html_table(&mut s, &e.seed_rows, "seedrows", SEED_TABLE);
                    s.push_str("</div>\n");
                }
                if let Some(svg) = chart_svg(e)? {
                    s.push_str("<figure>");
                    s.push_str(
                        svg.trim_start_matches("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"),
                    );
                    s.push_str("</figure>\n");
                }
                let _ = writeln!(s, "<p><b>Ours</b> ({:.1} s):</p>", o.seconds);
                html_table(&mut s, &e.rows, "ours", LONG_TABLE);
                if !e.notes.is_empty() {
                    s.push_str("<ul class=\"notes\">");
                    for n in &e.notes {
                        let _ = write!(s, "<li>{}</li>", esc(n));
                    }
                    s.push_str("</ul>\n");
                }
            }
        }
        s.push_str("</section>\n");
    }
    s.push_str("</body></html>\n");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpath_report::{Context, GpuUse, Spec};

    fn demo(ctx: &Context) -> std::result::Result<Experiment, warpath_report::ExperimentError> {
        let mut e = Experiment::new("demo", "000", "t <against> n");
        e.seed_says = "seed & numbers".into();
        for n in [1, 10, 100] {
            e.rows.push(
                Row::new()
                    .with("backend", "cpu")
                    .with("n", n)
                    .secs("seconds", n as f64 * 1e-3),
            );
            e.rows
                .push(Row::new().with("n", n).on_gpu(ctx).secs("seconds", 1e-4));
        }
        e.seed_rows.push(
            Row::new()
                .with("backend", "cpu")
                .with("n", 100)
                .with("seconds", 0.5),
        );
        e.figure = Some(
            FigureSpec::lines("n", &["seconds"])
                .series(&["backend"])
                .log(true, true),
        );
        e.notes.push("a note".into());
        Ok(e)
    }

    fn bad(_: &Context) -> std::result::Result<Experiment, warpath_report::ExperimentError> {
        Err(warpath_report::ExperimentError("broke".into()))
    }

    #[test]
    fn the_three_files_hold_rows_seed_figures_charts_and_failures() {
        let ctx = Context::new(Size::Quick).with_gpu(GpuUse::Simulated);
        let spec = |id, run| Spec {
            id,
            seed: "000",
            title: "t",
            run,
        };
        let outcomes = vec![
            Outcome {
                spec: spec("demo", demo),
                result: demo(&ctx).map_err(|e| e.to_string()),
                seconds: 0.1,
            },
            Outcome {
                spec: spec("bad", bad),
                result: Err("broke".into()),
                seconds: 0.0,
            },
        ];
        let meta = Meta {
            size: Size::Quick,
            gpu: json!({"name": "sim", "simulated": true}),
            machine: machine(),
            date: utc_now(),
            command: "warpath reproduce".into(),
            seconds: 0.1,
            missing: vec!["perm-11".into()],
        };
        let j = report_json(&meta, &outcomes);
        assert_eq!(j["experiments"][0]["id"], "demo");
        assert_eq!(j["experiments"][0]["rows"][1]["simulated"], true);
        assert_eq!(j["experiments"][0]["rows"][1]["seconds"], Value::Null);
        assert_eq!(j["experiments"][0]["rows"][0]["backend"], "cpu");
        assert_eq!(j["experiments"][1]["error"], "broke");
        assert_eq!(j["not_reproduced"][0], "perm-11");
        let md = markdown(&meta, &outcomes);
        assert!(
            md.contains("## `demo`") && md.contains("| backend | n | seconds |"),
            "{md}"
        );
        assert!(md.contains("**Failed**") && md.contains("seed & numbers"));
        let page = html(&meta, &outcomes).unwrap();
        assert!(
            page.contains("<svg") && page.contains("seed: cpu"),
            "chart with the seed's line"
        );
        assert!(
            page.contains("t &lt;against&gt; n") || page.contains("t &lt;against&gt;"),
            "escaped title"
        );
        assert!(page.contains("class=\"sim\""), "simulated rows marked");
        assert!(page.contains("class=\"fail\""));
        assert!(!page.contains("<script"), "self-contained, no scripts");
        // long tables fold in the page and are cut in the Markdown
        let mut long = Experiment::new("long", "002", "t");
        long.rows = (0..100).map(|i| Row::new().with("n", i)).collect();
        let o = vec![Outcome {
            spec: spec("long", demo),
            result: Ok(long),
            seconds: 0.0,
        }];
        assert!(
            html(&meta, &o)
                .unwrap()
                .contains("<details><summary>100 rows</summary>")
        );
        assert!(markdown(&meta, &o).contains("(60 more rows in report.json)"));
        let dir = std::env::temp_dir().join(format!("wp-repro-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write_all(&dir, &meta, &outcomes, &j).unwrap();
        for f in ["report.json", "REPORT.md", "index.html"] {
            assert!(dir.join(f).metadata().unwrap().len() > 100, "{f}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cells_and_dates_read_well() {
        assert_eq!(cell(Some(&json!(3))), "3");
        assert_eq!(cell(Some(&json!(2.0))), "2");
        assert_eq!(cell(Some(&json!(0.012345))), "0.01235");
        assert_eq!(cell(Some(&json!(1234.5678))), "1235");
        assert_eq!(cell(Some(&json!(2.5e7 + 0.5))), "2.500e7");
        assert_eq!(cell(Some(&Value::Null)), "—");
        assert_eq!(cell(None), "—");
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_417), (2025, 11, 25));
        assert!(utc_now().ends_with("UTC"));
    }
}
