//! `warpath reproduce` run as a user runs it: the three report files, their agreement, the
//! GPU rows under the simulated driver. (CI runs the whole `--quick` report in its own step;
//! these tests run one cheap experiment.)

mod common;

use common::{dir, json_of, ok_json_or_output, warpath};

fn reproduce(out: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    ok_json_or_output(
        warpath()
            .args(["reproduce", "--quick", "--json", "--out"])
            .arg(out)
            .args(extra),
        "",
    )
}

#[test]
fn reproduce_writes_json_markdown_and_a_page_with_the_same_rows() {
    let d = dir("reproduce");
    let summary = reproduce(&d, &["--only", "debruijn-pin"]);
    assert_eq!(summary["experiments"], 1);
    assert_eq!(summary["failed"], serde_json::json!([]));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("report.json")).unwrap()).unwrap();
    let e = &report["experiments"][0];
    assert_eq!(e["id"], "debruijn-pin");
    assert_eq!(e["seed"], "000");
    let rows = e["rows"].as_array().unwrap();
    assert!(rows.len() >= 2);
    for r in rows {
        assert_eq!(r["presses"], 10_003, "{r}");
        assert_eq!(r["verified"], true, "{r}");
        assert!(r.get("backend").is_some());
    }
    assert!(report["machine"]["logical_cores"].as_u64().unwrap() >= 1);
    assert_eq!(report["size"], "quick");
    let md = std::fs::read_to_string(d.join("REPORT.md")).unwrap();
    assert!(
        md.contains("## `debruijn-pin`") && md.contains("10003"),
        "{md}"
    );
    let page = std::fs::read_to_string(d.join("index.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("id=\"debruijn-pin\""));
    assert!(!page.contains("src=\"http"), "self-contained");
    // the listing names it too, and an unknown id is a usage error (exit 2)
    let list = warpath()
        .args(["reproduce", "--list", "--json"])
        .output()
        .unwrap();
    assert!(
        json_of(&list)["experiments"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["id"] == "debruijn-pin")
    );
    let bad = warpath()
        .args(["reproduce", "--out"])
        .arg(&d)
        .args(["--only", "no-such"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no experiment `no-such`"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn gpu_reproduce_rows_are_marked_simulated_without_timings() {
    let Some(gpu) = gpu_runtime::testing::gpu_for_test("gpu_reproduce_rows") else {
        return;
    };
    let d = dir("reproduce-gpu");
    reproduce(&d, &["--only", "debruijn-pin"]);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("report.json")).unwrap()).unwrap();
    let rows = report["experiments"][0]["rows"].as_array().unwrap().clone();
    let gpu_rows: Vec<_> = rows.iter().filter(|r| r["backend"] == "cuda").collect();
    assert_eq!(gpu_rows.len(), 1, "{rows:?}");
    assert_eq!(gpu_rows[0]["verified"], true);
    if gpu.info().simulated {
        assert_eq!(gpu_rows[0]["simulated"], true);
        assert!(
            gpu_rows[0]["seconds"].is_null(),
            "no timing from the simulator"
        );
        assert_eq!(report["gpu"]["simulated"], true);
        let page = std::fs::read_to_string(d.join("index.html")).unwrap();
        assert!(page.contains("class=\"sim\""));
    } else {
        assert!(gpu_rows[0]["seconds"].as_f64().is_some());
    }
    std::fs::remove_dir_all(&d).unwrap();
}
