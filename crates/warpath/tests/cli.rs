//! End-to-end tests of the `warpath` binary.

mod common;

use common::{json_of, ok_json, warpath};

#[test]
fn info_exits_zero_and_names_device_or_reason() {
    let out = warpath().arg("info").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    match gpu_runtime::gpu() {
        Ok(gpu) => assert!(text.contains(&gpu.info().name), "{text}"),
        Err(e) => assert!(text.starts_with(&format!("no CUDA device: {e}")), "{text}"),
    }
}

#[test]
fn info_json_is_one_object() {
    let out = warpath().args(["info", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v = json_of(&out);
    assert_eq!(v["cuda"].as_bool(), Some(gpu_runtime::gpu().is_ok()));
    if v["cuda"] == false {
        assert!(v["reason"].as_str().is_some_and(|r| !r.is_empty()));
    }
}

#[test]
fn demo_json_reports_verified_rows() {
    let out = warpath().args(["demo", "--json"]).output().unwrap();
    let v = json_of(&out);
    assert!(out.status.success(), "{v}");
    assert_eq!(v["verified"], true);
    let rows = v["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        for key in ["algorithm", "n", "backend", "seconds", "verified"] {
            assert!(row.get(key).is_some(), "row without `{key}`: {row}");
        }
        assert_eq!(row["verified"], true, "{row}");
    }
}

#[test]
fn bad_backend_variable_fails_demo_clearly() {
    let out = warpath()
        .args(["demo", "--json"])
        .env("WARPATH_BACKEND", "tpu")
        .output()
        .unwrap();
    let v = json_of(&out);
    assert!(!out.status.success());
    assert!(v.to_string().contains("WARPATH_BACKEND must be"), "{v}");
}

/// A tiny `euler --sweep`: the CSV, the SVG and the JSON agree row by row, the ratios are
/// recomputed from the rows, and a size that cannot fit in memory is skipped with a message.
#[test]
fn euler_json_reports_the_parallel_stages_when_they_run() {
    // `warpath euler --generate N --discard --json --backend cpu`, run by `c`
    let euler = |c: &mut std::process::Command, n: &str| {
        let words = ["euler", "--generate", n, "--discard", "--json"];
        c.args(words).args(["--backend", "cpu"]).output().unwrap()
    };
    // 2^21 edges on 2 threads: the parallel algorithm (EULER_PARALLEL_THRESHOLD).
    let out = euler(warpath().env("RAYON_NUM_THREADS", "2"), "2^21");
    let j = ok_json(&out);
    let st = &j["stages"];
    assert_eq!(st["algorithm"], "parallel", "{j}");
    let cycles = st["cycles_after_pairing"].as_u64().unwrap();
    assert!(cycles >= 1);
    assert_eq!(st["forest_links"].as_u64(), Some(cycles - 1));
    let parts: f64 = ["pairing", "labelling", "linking", "splicing", "ranking"]
        .iter()
        .map(|k| st[format!("{k}_seconds")].as_f64().unwrap())
        .sum();
    assert!(parts > 0.0 && parts <= j["seconds"].as_f64().unwrap() + 1e-3);
    // A small graph takes Hierholzer: no stages.
    let out = euler(&mut warpath(), "1000");
    assert!(json_of(&out)["stages"].is_null());
}

#[test]
fn euler_sweep_writes_csv_svg_and_json() {
    let dir = std::env::temp_dir().join(format!("warpath-euler-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, svg) = (dir.join("euler.csv"), dir.join("euler.svg"));
    // 4 x 10^9 edges need hundreds of GiB: the sweep skips them where /proc/meminfo says
    // there is less (tried only where far less is available, so that it cannot start).
    let available_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map(|kib| kib >> 20);
    let sizes = match available_gib {
        Some(g) if g < 150 => "20000,10k,4G",
        _ => "20000,10k",
    };
    let out = warpath()
        .args([
            "euler",
            "--sweep",
            "--sweep-edges",
            sizes,
            "--reps",
            "1",
            "--json",
        ])
        .arg("--csv")
        .arg(&csv)
        .arg("--plot")
        .arg(&svg)
        .output()
        .unwrap();
    let v = json_of(&out);
    assert!(out.status.success(), "{v}");
    assert_eq!(v["verified"], true);
    let mut methods = vec!["hierholzer", "parallel"];
    if gpu_runtime::gpu().is_ok() {
        methods.extend(["cuda_compute", "cuda_transfers"]);
    }
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * 2 * methods.len(), "{v}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("style,edges,method,seconds,m_edges_per_second")
    );
    let csv_rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(csv_rows.len(), rows.len());
    for (c, r) in csv_rows.iter().zip(rows) {
        assert_eq!(c[0], r["style"].as_str().unwrap());
        assert_eq!(c[1], r["edges"].to_string());
        assert_eq!(c[2], r["method"].as_str().unwrap());
        let (edges, seconds): (f64, f64) = (c[1].parse().unwrap(), c[3].parse().unwrap());
        assert!(seconds > 0.0, "{c:?}");
        let rate: f64 = c[4].parse().unwrap();
        assert!(
            (rate - edges / seconds / 1e6).abs() <= 1e-3 * rate.max(1.0),
            "{c:?}"
        );
    }
    for edges in ["10000", "20000"] {
        for style in ["deep", "shallow"] {
            for m in &methods {
                assert!(
                    csv_rows.iter().any(|c| c[..3] == [style, edges, *m]),
                    "no row {style},{edges},{m}"
                );
            }
        }
    }
    // shallow / deep cost per edge, recomputed from the rows.
    let secs = |style: &str, edges: u64, m: &str| {
        rows.iter()
            .find(|r| r["style"] == style && r["edges"] == edges && r["method"] == m)
            .and_then(|r| r["seconds"].as_f64())
            .unwrap()
    };
    let ratios = v["shallow_over_deep"].as_array().unwrap();
    assert_eq!(ratios.len(), 2 * methods.len());
    for r in ratios {
        let (edges, m) = (r["edges"].as_u64().unwrap(), r["method"].as_str().unwrap());
        let want = secs("shallow", edges, m) / secs("deep", edges, m);
        let got = r["shallow_over_deep"].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-9 * want, "{r}");
    }
    assert_eq!(v["largest_edges"], 20000);
    let within = ratios
        .iter()
        .filter(|r| r["edges"] == 20000)
        .all(|r| r["shallow_over_deep"].as_f64().unwrap() <= 2.0);
    assert_eq!(v["shallow_within_2x"], within);
    let skipped = v["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), usize::from(sizes.ends_with("4G")), "{v}");
    if let Some(s) = skipped.first() {
        assert!(
            s.as_str()
                .unwrap()
                .contains("4000000000 edges: needs about"),
            "{s}"
        );
    }
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg"));
    for m in &methods {
        for style in ["deep", "shallow"] {
            assert!(
                chart.contains(&format!("{m} ({style})")),
                "no line {m} ({style})"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn euler_sweep_rejects_bad_input_clearly() {
    for (args, expect) in [
        (
            &["--sweep", "--sweep-edges", "0,abc"][..],
            "0 edges: an edge count must be",
        ),
        (
            &["--sweep", "--sweep-edges", "10k,abc"],
            "`abc` is not a count",
        ),
        (&["--sweep", "--reps", "0"], "--reps"),
        (
            &["--generate", "100", "--csv", "x.csv"],
            "cannot be used with",
        ),
    ] {
        let out = warpath().arg("euler").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}
