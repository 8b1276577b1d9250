//! Helpers shared by the tests that run the `warpath` binary.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test: `WARPATH_BIN` when set (the GPU bundle sets it, since the build-time
/// path does not exist on the machine the bundle runs on), else the one cargo built. A
/// `WARPATH_BACKEND` of the calling environment is not passed on.
pub fn warpath() -> Command {
    let mut c = Command::new(
        std::env::var_os("WARPATH_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_warpath").into()),
    );
    c.env_remove("WARPATH_BACKEND");
    c
}

/// A test's own folder under the system's temporary folder: removed when the test ends, kept
/// when it fails (to look into). Derefs to its path.
pub struct Folder(PathBuf);

impl std::ops::Deref for Folder {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Folder {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Folder {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A fresh folder for one test, named after it and the process.
pub fn dir(name: &str) -> Folder {
    let d = std::env::temp_dir().join(format!("warpath-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Folder(d)
}

/// The one JSON object a successful `--json` run printed; a failed run fails the test with
/// its standard error.
pub fn ok_json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(out)
}

/// Runs `c` and returns the one JSON object it printed; a failed run fails the test with
/// `what`, then its standard output and error.
pub fn ok_json_or_output(c: &mut Command, what: &str) -> serde_json::Value {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{what}{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out)
}

/// The one JSON object a `--json` run printed.
pub fn json_of(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {text}"))
}

/// Runs `warpath` in `d` with the words of `args` (split at white space).
pub fn run_in(d: &std::path::Path, args: &str) -> Output {
    warpath()
        .args(args.split_whitespace())
        .current_dir(d)
        .output()
        .unwrap()
}

/// Runs `warpath ARGS --json` in `d`.
pub fn run_json(d: &std::path::Path, args: &[&str]) -> Output {
    warpath()
        .args(args)
        .arg("--json")
        .current_dir(d)
        .output()
        .unwrap()
}

/// Runs each `(arguments, kind, needle)` case with `--json` in `d`: each must fail with an
/// error of that kind whose message holds the needle.
pub fn assert_errors(d: &std::path::Path, cases: &[(Vec<&str>, &str, &str)]) {
    for (args, kind, needle) in cases {
        let out = run_json(d, args);
        assert!(!out.status.success(), "{args:?}");
        let v = json_of(&out);
        assert_eq!(v["kind"], *kind, "{args:?}: {v}");
        assert!(
            v["error"].as_str().unwrap().contains(needle),
            "{args:?}: {v}"
        );
    }
}
