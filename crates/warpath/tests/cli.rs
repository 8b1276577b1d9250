//! End-to-end tests of the `warpath` binary.

use std::process::Command;

/// The binary under test: `WARPATH_BIN` when set (the GPU bundle sets it, since the build-time
/// path does not exist on the machine the bundle runs on), else the one cargo built.
fn warpath() -> Command {
    Command::new(
        std::env::var_os("WARPATH_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_warpath").into()),
    )
}

fn json_of(out: &std::process::Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {text}"))
}

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
