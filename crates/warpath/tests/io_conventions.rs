//! The command line as a user meets it (issue 17): one I/O layer, no silent surprises, ids as
//! the file spells them. Every test runs the binary.

use std::io::Read;
use std::path::Path;
use std::process::{Output, Stdio};

mod common;

use common::{dir, json_of as json, run_in, warpath};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `warpath ARGS` in `cwd` (split at white space), which must succeed; returns its output.
fn ok(cwd: &Path, args: &str) -> Output {
    let out = run_in(cwd, args);
    assert!(out.status.success(), "{args}: {}", stderr(&out));
    out
}

/// A failed `--json` run: non-zero exit, `{"error", "kind"}` on stdout; returns the message.
fn json_error(cwd: &Path, args: &str, kind: &str) -> String {
    let out = run_in(cwd, &format!("{args} --json"));
    assert!(!out.status.success(), "{args:?} succeeded");
    let v = json(&out);
    assert_eq!(v["kind"], kind, "{args:?}: {v}");
    v["error"].as_str().unwrap().to_owned()
}

/// Asserts that the error message `e` of `args` holds every one of `needles`.
fn assert_holds(e: &str, args: &str, needles: &[&str]) {
    for n in needles {
        assert!(e.contains(n), "{args:?}: `{n}` not in {e}");
    }
}

/// A failed `--json` run with an error of `kind` whose message holds every one of `needles`.
fn fails_with(cwd: &Path, args: &str, kind: &str, needles: &[&str]) {
    assert_holds(&json_error(cwd, args, kind), args, needles);
}

/// Writes each `(name, text)` file into `d`, then runs `check` with its name.
fn each_file(d: &Path, files: &[(&str, &str)], mut check: impl FnMut(&str)) {
    for (name, text) in files {
        std::fs::write(d.join(name), text).unwrap();
        check(name);
    }
}

fn npy<T: warpath_io::Element>(path: &Path, data: &[T], shape: &[usize]) {
    let mut f = Vec::new();
    warpath_io::npy::write_npy(&mut f, data, shape).unwrap();
    std::fs::write(path, f).unwrap();
}

#[test]
fn npy_keys_are_read_by_dtype_and_binary_refuses_them() {
    let d = dir("npy-keys");
    npy(&d.join("k.npy"), &[5u16, 3, 9, 3, 0], &[5]);
    let out = ok(&d, "sort k.npy -o s.npy --json");
    assert_eq!(json(&out)["type"], "u32");
    let s = warpath_io::read_array::<u32>(&d.join("s.npy")).unwrap();
    assert_eq!(s.data, vec![0, 3, 3, 5, 9]);
    // --binary would sort the header's bytes in as keys: refused by name
    fails_with(&d, "sort k.npy --binary", "usage", &["--binary", ".npy"]);
    // floats: distinct of an f64 array, written as .npy
    npy(&d.join("f.npy"), &[2.5f64, -1.0, 2.5], &[3]);
    ok(&d, "distinct f.npy -o u.npy");
    assert_eq!(
        warpath_io::read_array::<f64>(&d.join("u.npy"))
            .unwrap()
            .data,
        vec![-1.0, 2.5]
    );
    // a float array is not read as integers silently
    fails_with(&d, "sort f.npy --type u32", "npy", &["float64"]);
    // text input without a file extension, read as numbers with a header
    std::fs::write(d.join("keys"), "key\n3\n1\n2\n").unwrap();
    let out = run_in(&d, "sort keys");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n2\n3\n");
}

#[test]
fn integer_npy_for_kmeans_and_bool_npy_for_lap() {
    let d = dir("npy-dtypes");
    let pts: Vec<i64> = (0..40)
        .map(|i| if i % 4 < 2 { i % 2 } else { 100 + i % 2 })
        .collect();
    npy(&d.join("p.npy"), &pts, &[20, 2]);
    let out = ok(&d, "kmeans p.npy --k 2 --json");
    assert_eq!(json(&out)["verified"], true);
    // a 0/1 cost matrix: the optimum avoids every 1
    npy(
        &d.join("c.npy"),
        &[true, false, false, false, true, false, false, false, true],
        &[3, 3],
    );
    let out = ok(&d, "lap c.npy --json");
    assert_eq!(json(&out)["cost"], 0.0);
}

/// A float32 `.npy` file is clustered in float32 (centroids written as float32, as
/// scikit-learn keeps `X`'s dtype), and every `--algorithm` gives the same result.
#[test]
fn float32_npy_stays_float32_and_algorithms_agree() {
    let d = dir("npy-f32-kmeans");
    let pts: Vec<f32> = (0..3000)
        .map(|i| ((i * 7919) % 1000) as f32 * 0.01 + if i % 3 == 0 { 50.0 } else { 0.0 })
        .collect();
    npy(&d.join("p.npy"), &pts, &[1000, 3]);
    let mut inertia = Vec::new();
    for a in ["lloyd", "hamerly", "yinyang", "elkan", "auto"] {
        let c = format!("c-{a}.npy");
        let out = ok(
            &d,
            &format!("kmeans p.npy --k 40 --algorithm {a} --centroids {c} --json"),
        );
        let v = json(&out);
        assert_eq!(
            (v["dtype"].as_str(), v["verified"].as_bool()),
            (Some("f32"), Some(true))
        );
        assert_eq!(v["algorithm"], a);
        inertia.push(v["inertia"].as_f64().unwrap().to_bits());
        let c = warpath_io::read_array::<f32>(&d.join(&c)).unwrap();
        assert_eq!(c.data.len(), 40 * 3);
    }
    assert!(inertia.iter().all(|&b| b == inertia[0]), "{inertia:?}");
    fails_with(&d, "kmeans p.npy --algorithm fast", "usage", &["algorithm"]);
}

#[test]
fn outputs_follow_their_extension_and_dash_is_standard_output() {
    let d = dir("outputs");
    ok(
        &d,
        "kmeans --generate 2000 --k 3 --labels l.npy --plot p.png --centroids c.csv",
    );
    let labels = warpath_io::read_array::<i64>(&d.join("l.npy")).unwrap();
    assert_eq!(labels.shape, vec![2000]);
    assert!(labels.data.iter().all(|&l| (0..3).contains(&l)));
    assert!(
        std::fs::read(d.join("p.png"))
            .unwrap()
            .starts_with(b"\x89PNG\r\n\x1a\n")
    );
    let c = warpath_io::read_array::<f64>(&d.join("c.csv")).unwrap();
    assert_eq!(c.shape, vec![3, 2]);
    // perm: .txt is text, .npy is a (count, n) uint8 array, .bin raw bytes
    ok(&d, "perm --n 3 -o p.txt");
    assert_eq!(
        std::fs::read_to_string(d.join("p.txt"))
            .unwrap()
            .lines()
            .next(),
        Some("0 1 2")
    );
    ok(&d, "perm --n 3 -o p.npy");
    let p = warpath_io::read_array::<u8>(&d.join("p.npy")).unwrap();
    assert_eq!(
        (p.shape.clone(), &p.data[15..]),
        (vec![6, 3], &[2u8, 1, 0][..])
    );
    ok(&d, "perm --n 3 -o p.bin");
    assert_eq!(std::fs::read(d.join("p.bin")).unwrap().len(), 18);
    // - is standard output, not a file named "-"; the report then goes to stderr
    let out = run_in(&d, "perm --n 3 --output -");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 6);
    assert!(stderr(&out).contains("verified: yes"));
    assert!(!d.join("-").exists());
    let out = run_in(&d, "sort --generate 5 -o -");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 5);
    // an unknown extension is refused before any work, naming the allowed ones
    fails_with(
        &d,
        "sort --generate 5 -o x.xlsx",
        "usage",
        &[".txt, .csv, .npy, .bin"],
    );
    fails_with(
        &d,
        "kmeans --generate 100 --plot p.jpg",
        "usage",
        &[".svg or .png"],
    );
    // --output - and --json would both write to standard output
    fails_with(&d, "sort --generate 5 -o -", "usage", &["--json"]);
    // distinct --counts goes to standard output by default
    let out = run_in(&d, "distinct --generate 100 --range 3 --counts");
    let text = String::from_utf8_lossy(&out.stdout);
    let total: u64 = text
        .lines()
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, 100, "{text}");
    fails_with(
        &d,
        "distinct --generate 9 --counts -o c.npy",
        "usage",
        &["--counts"],
    );
}

#[test]
fn one_table_reader_for_every_matrix() {
    let d = dir("tables");
    each_file(
        &d,
        &[
            ("commas.csv", "1,2\n2,1\n"),
            ("spaces.txt", "1 2\n2 1\n"),
            ("tabs.tsv", "1\t2\n2\t1\n"),
            ("header.csv", "a,b\n# a comment\n1, 2\n2, 1\n"),
        ],
        |name| {
            let out = ok(&d, &format!("lap {name} --json"));
            assert_eq!(json(&out)["cost"], 2.0, "{name}");
            let out = ok(
                &d,
                &format!("perm --search assignment --matrix {name} --json"),
            );
            assert_eq!(json(&out)["score"], 2.0, "{name}");
            ok(&d, &format!("kmeans {name} --k 2 --json"));
        },
    );
    // every error says where
    std::fs::write(d.join("bad.csv"), "1,2\n3,x\n").unwrap();
    for cmd in [
        "lap bad.csv",
        "kmeans bad.csv --k 1",
        "perm --search tour --matrix bad.csv",
    ] {
        fails_with(&d, cmd, "parse", &["line 2, column 3"]);
    }
}

#[test]
fn one_size_syntax_for_every_count() {
    let d = dir("counts");
    for args in [
        "sort --generate 1e3 --discard",
        "sort --generate 2^10 --discard",
        "euler --generate 1e3 --discard",
        "kmeans --generate 10_000 --k 2",
        "perm --n 8 --count 1e3 --discard",
        "lap --generate 1k",
        "fhn --n 1k --length 100 --dt 0.004 --t-end 0.1",
    ] {
        ok(&d, args);
    }
    fails_with(&d, "sort --generate 1.5", "usage", &["whole number"]);
}

#[test]
fn flags_that_conflict_or_do_not_apply_are_errors_naming_both() {
    let d = dir("conflicts");
    for (args, names) in [
        ("fhn --n 201 --dx 0.25", &["--n", "--dx"][..]),
        ("fhn --solver pcr", &["--solver", "--scheme implicit"]),
        (
            "fhn --scenario front --eps 0.05",
            &["--eps", "--scenario front"],
        ),
        ("fhn --dx 0", &["--dx"]),
        ("fhn --dx 1000", &["--dx", "--length"]),
        ("fhn --dx 0.3", &["--dx", "--length"]),
        (
            "lap --generate 4 --solver jv --backend cuda",
            &["--backend cuda", "--solver jv"],
        ),
        ("debruijn --k 3 --n 2", &["--n", "--k", "--alphabet"]),
        ("kmeans points.csv --sigma 0.1", &["--sigma", "--generate"]),
        ("perm --n 3 --seed 2", &["--seed", "--search"]),
        ("perm --search tour --start 3", &["--search", "--start"]),
    ] {
        let out = run_in(&d, &format!("{args} --json"));
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_holds(json(&out)["error"].as_str().unwrap(), args, names);
    }
}

#[test]
fn cuda_without_a_gpu_is_an_error_everywhere() {
    if gpu_runtime::gpu().is_ok() {
        println!("skipped: this machine has a GPU");
        return;
    }
    let d = dir("cuda");
    std::fs::write(d.join("r.fa"), ">r\nACGTACGT\n").unwrap();
    for args in [
        "debruijn-graph --reads r.fa --k 3 --backend cuda",
        "sort --generate 10 --backend cuda",
        "euler --generate 10 --backend cuda",
        "kmeans --generate 10 --k 2 --backend cuda",
        "fhn --backend cuda --t-end 1",
    ] {
        fails_with(&d, args, "no_gpu", &["--backend cuda"]);
    }
    // the environment variable too, and `info` says what it will do
    let out = warpath()
        .args(["sort", "--generate", "10", "--json"])
        .env("WARPATH_BACKEND", "cuda")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(json(&out)["kind"], "no_gpu");
    let out = warpath()
        .arg("info")
        .env("WARPATH_BACKEND", "cuda")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("fails with an error"), "{text}");
    assert!(!text.contains("runs every algorithm on the CPU"), "{text}");
}

#[test]
fn sizes_that_cannot_fit_or_finish_are_refused_up_front() {
    let d = dir("sizes");
    let Some(avail) = gpu_runtime::host_available_memory() else {
        println!("skipped: available memory unknown");
        return;
    };
    assert!(
        avail < 1 << 40,
        "the test assumes less than 1 TiB available"
    );
    for args in [
        "sort --generate 1e12",
        "lap --generate 1e6",
        "fhn --n 1e11 --scheme implicit",
        "euler --generate 1e11",
    ] {
        let t = std::time::Instant::now();
        fails_with(&d, args, "out_of_memory", &["available", "at most"]);
        assert!(t.elapsed().as_secs() < 5, "{args:?} took {:?}", t.elapsed());
    }
    fails_with(&d, "perm --n 20", "too_long", &["years", "--force"]);
    fails_with(&d, "perm --n 16 --search tour", "too_long", &["--force"]);
    // an output folder that does not exist fails before the work
    let t = std::time::Instant::now();
    fails_with(
        &d,
        "sort --generate 1e8 --output /nonexistent/x.txt",
        "io",
        &["/nonexistent/x.txt"],
    );
    assert!(
        t.elapsed().as_secs() < 2,
        "checked after the work: {:?}",
        t.elapsed()
    );
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let mut child = warpath()
        .args(["debruijn", "--k", "22"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(&first, b"0000000000");
    assert!(status.success(), "{status:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn argument_errors_are_json_under_json() {
    let out = warpath()
        .args(["sort", "--bogus", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v = json(&out);
    assert_eq!(v["kind"], "usage");
    assert!(v["error"].as_str().unwrap().contains("--bogus"), "{v}");
    let out = warpath().args(["--json", "frobnicate"]).output().unwrap();
    assert_eq!(json(&out)["kind"], "usage");
    // without --json, clap's own text
    let out = warpath().args(["sort", "--bogus"]).output().unwrap();
    assert!(stderr(&out).contains("unexpected argument"));
}

#[test]
fn vertices_are_named_as_the_file_spells_them() {
    let d = dir("ids");
    std::fs::write(d.join("g.txt"), "4 5\n5 4\n4 7\n").unwrap();
    let e = json_error(&d, "euler g.txt", "no_solution");
    assert!(e.contains("vertex `4`"), "{e}");
    assert!(!e.contains("vertex 0"), "{e}");
    // Matrix Market ids are 1-based, as in the file
    std::fs::write(
        d.join("g.mtx"),
        "%%MatrixMarket matrix coordinate pattern general\n5 5 3\n4 5\n5 4\n4 2\n",
    )
    .unwrap();
    fails_with(&d, "euler g.mtx", "no_solution", &["vertex `2`"]);
    ok(&d, "euler g.mtx --path -o p.txt");
    assert_eq!(
        std::fs::read_to_string(d.join("p.txt")).unwrap(),
        "4\n5\n4\n2\n"
    );
}

#[test]
fn networkx_edge_lists_read_as_networkx_writes_them() {
    let d = dir("networkx");
    each_file(
        &d,
        &[
            ("dict.txt", "a b {}\nb c {'weight': 2}\nc a {}\n"),
            ("weighted.txt", "a b 1.5\nb c 2\nc a 3\n"),
            ("header.csv", "source,target,weight\na,b,1\nb,c,1\nc,a,1\n"),
        ],
        |name| {
            ok(&d, &format!("euler {name} -o c.txt"));
            assert_eq!(
                std::fs::read_to_string(d.join("c.txt")).unwrap(),
                "a\nb\nc\na\n",
                "{name}"
            );
        },
    );
    let help = String::from_utf8_lossy(&run_in(&d, "euler --help").stdout).into_owned();
    assert!(
        help.contains("directed") && help.contains("is_eulerian"),
        "{help}"
    );
}

#[test]
fn debruijn_alphabet_and_k_as_the_word_length() {
    let d = dir("debruijn");
    let out = ok(&d, "debruijn --alphabet 10 --k 4 --linear --json");
    let v = json(&out);
    assert_eq!(
        (v["length"].clone(), v["alphabet_size"].clone()),
        (10_003.into(), 10.into())
    );
    let out = run_in(&d, "debruijn --alphabet ACGT --k 2");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "AACAGATCCGCTGGTT"
    );
}

#[test]
fn render_warns_before_calling_dot_on_big_graphs() {
    let d = dir("render");
    let text: String = (0..6000)
        .map(|i| format!("{i} {}\n", (i + 1) % 6000))
        .collect();
    std::fs::write(d.join("big.txt"), text).unwrap();
    let out = run_in(&d, "graph big.txt --dot g.dot --render g.svg");
    let err = stderr(&out);
    assert!(err.contains("warning: rendering 6000 edges"), "{err}");
    fails_with(
        &d,
        "graph big.txt --dot g.dot --render g.jpg",
        "usage",
        &[".svg, .png or .pdf"],
    );
}

#[test]
fn fhn_plots_are_real_png_with_a_heat_map_beside() {
    let d = dir("fhn-plot");
    ok(&d, "fhn --t-end 5 --plot v.png --json");
    for f in ["v.png", "v.heatmap.png"] {
        assert!(
            std::fs::read(d.join(f)).unwrap().starts_with(b"\x89PNG"),
            "{f}"
        );
    }
    let out = run_in(&d, "kmeans --generate 50000 --k 2 --plot k.svg --json");
    let note = json(&out)["plot"].as_str().unwrap().to_owned();
    assert!(note.contains("16667 of 50000 points shown"), "{note}");
    let svg = std::fs::read_to_string(d.join("k.svg")).unwrap();
    assert!(svg.contains("16667 of 50000 points shown"));
    // axis labels come from the data's header
    std::fs::write(
        d.join("hw.csv"),
        "height,weight\n170,65\n181,80\n160,50\n175,70\n",
    )
    .unwrap();
    ok(&d, "kmeans hw.csv --k 2 --plot hw.svg");
    let svg = std::fs::read_to_string(d.join("hw.svg")).unwrap();
    assert!(
        svg.contains("\nheight\n") && svg.contains("\nweight\n"),
        "no axis labels"
    );
    assert!(!svg.contains("points shown"), "4 points are not subsampled");
}

#[test]
fn every_help_states_formats_and_defaults() {
    let d = dir("help");
    for (cmd, wants) in [
        ("sort", &[".npy", ".csv", "default", "standard output"][..]),
        ("distinct", &[".npy", "--counts", "default"]),
        ("euler", &["edge list", ".mtx", "standard output"]),
        ("graph", &[".svg, .png", "NetworkX"]),
        ("debruijn-graph", &["FASTA", ".fa"]),
        ("perm", &[".npy", ".bin", "default"]),
        ("debruijn", &["--k", "alphabet", "default"]),
        ("lap", &[".npy", "header", "default"]),
        ("kmeans", &[".npy", ".png", "default"]),
        ("fhn", &["default", ".png"]),
    ] {
        let out = run_in(&d, &format!("{cmd} --help"));
        let text = String::from_utf8_lossy(&out.stdout);
        for w in wants {
            assert!(text.contains(w), "warpath {cmd} --help lacks `{w}`");
        }
    }
    let top = String::from_utf8_lossy(&run_in(&d, "--help").stdout).into_owned();
    assert!(top.contains("Input and output"), "{top}");
}

#[test]
fn undirected_euler_circuits_and_paths_as_networkx() {
    let d = dir("undirected");
    // a triangle with a tail c - d: no circuit; the path runs between the odd vertices c, d
    std::fs::write(d.join("g.txt"), "a b {}\nb c {}\nc a {}\nc d {}\n").unwrap();
    fails_with(
        &d,
        "euler g.txt --undirected",
        "no_solution",
        &["vertex `c` has odd degree 3"],
    );
    ok(&d, "euler g.txt --undirected --path -o p.txt");
    let walk: Vec<String> = std::fs::read_to_string(d.join("p.txt"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(walk.len(), 5);
    assert_eq!((walk[0].as_str(), walk[4].as_str()), ("c", "d"));
    // every edge once, in either direction
    let mut used: Vec<(String, String)> = walk
        .windows(2)
        .map(|w| {
            let (x, y) = (w[0].clone(), w[1].clone());
            if x < y { (x, y) } else { (y, x) }
        })
        .collect();
    used.sort();
    let want: Vec<(String, String)> = [("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")]
        .iter()
        .map(|(x, y)| (x.to_string(), y.to_string()))
        .collect();
    assert_eq!(used, want);
    // read as directed, the degrees are in and out
    fails_with(
        &d,
        "euler g.txt",
        "no_solution",
        &["vertex `c` has in-degree 1 but out-degree 2"],
    );
    // graph --undirected: NetworkX's conditions, an undirected DOT with the path numbered
    let out = run_in(&d, "graph g.txt --undirected --euler --dot g.dot --json");
    let v = json(&out);
    assert_eq!(v["euler_circuit"], false, "{v}");
    assert_eq!(
        (v["euler_path"].clone(), v["weak_components"].clone()),
        (true.into(), 1.into())
    );
    let dot = std::fs::read_to_string(d.join("g.dot")).unwrap();
    assert!(
        dot.starts_with("graph ") && dot.matches(" -- ").count() == 4,
        "{dot}"
    );
    // generated undirected graphs have circuits, verified
    let out = run_in(&d, "euler --generate 1e4 --undirected --discard --json");
    let v = json(&out);
    assert_eq!(
        (v["verified"].clone(), v["undirected"].clone()),
        (true.into(), true.into())
    );
}

#[test]
fn distinct_uses_numpy_float_equality_unless_bitwise() {
    let d = dir("distinct-eq");
    let nan2 = f64::from_bits(f64::NAN.to_bits() | 1);
    npy(
        &d.join("x.npy"),
        &[0.0, -0.0, f64::NAN, 1.0, nan2, -f64::NAN, 1.0],
        &[7],
    );
    // numpy: np.unique([0.0, -0.0, nan, 1.0, nan, -nan, 1.0]) has 3 values: 0, 1, nan
    let out = ok(&d, "distinct x.npy --counts --json");
    let v = json(&out);
    assert_eq!(
        (v["distinct"].as_u64(), v["verified"].as_bool()),
        (Some(3), Some(true))
    );
    assert_eq!(v["equality"], "numeric");
    ok(&d, "distinct x.npy --counts -o c.csv");
    let text = std::fs::read_to_string(d.join("c.csv")).unwrap();
    assert_eq!(
        text.lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap())
            .collect::<Vec<_>>(),
        ["2", "2", "3"],
        "{text}"
    );
    // bit for bit: -0.0, 0.0, 1.0 and three NaN patterns
    let out = ok(&d, "distinct x.npy --bitwise --json");
    let v = json(&out);
    assert_eq!(
        (v["distinct"].as_u64(), v["verified"].as_bool()),
        (Some(6), Some(true))
    );
}

#[test]
fn lap_infinities_follow_scipy_in_both_senses() {
    let d = dir("lap-inf");
    std::fs::write(d.join("neg.csv"), "1,-inf\n3,4\n").unwrap();
    std::fs::write(d.join("pos.csv"), "1,inf\n3,4\n").unwrap();
    // Minimising: +inf forbids a pair, -inf is invalid.
    let out = ok(&d, "lap pos.csv --json");
    assert_eq!(json(&out)["cost"], 5.0);
    json_error(&d, "lap neg.csv", "input");
    // Maximising: -inf forbids a pair, +inf is invalid.
    let out = ok(&d, "lap neg.csv --maximize --json");
    assert_eq!(json(&out)["cost"], 5.0);
    json_error(&d, "lap pos.csv --maximize", "input");
    // Huge finite costs whose optimum is representable are solved, and verified.
    std::fs::write(d.join("huge.csv"), "1e308,-5e307\n-5e307,1e308\n").unwrap();
    let out = ok(&d, "lap huge.csv --json");
    let v = json(&out);
    assert_eq!(
        (v["cost"].as_f64(), v["verified"].as_bool()),
        (Some(-1e308), Some(true))
    );
}

#[test]
fn kmeans_unit_weights_give_the_unweighted_result() {
    let d = dir("kmeans-weights");
    let points: String = (0..300)
        .map(|i| {
            format!(
                "{},{}\n",
                (i * 37 % 101) as f64 / 7.0,
                (i * 53 % 89) as f64 / 3.0
            )
        })
        .collect();
    std::fs::write(d.join("p.csv"), points).unwrap();
    std::fs::write(d.join("w.txt"), "1\n".repeat(300)).unwrap();
    let plain = run_in(&d, "kmeans p.csv --k 4 --seed 7 --json");
    let weighted = run_in(&d, "kmeans p.csv --k 4 --seed 7 --weights w.txt --json");
    assert!(
        plain.status.success() && weighted.status.success(),
        "{}",
        stderr(&weighted)
    );
    let (a, b) = (json(&plain), json(&weighted));
    for key in ["centroids", "inertia", "iterations"] {
        assert_eq!(a[key], b[key], "{key}");
    }
}

/// Issue 24: a first line that is not all names is an error naming file, line and column, never
/// a header dropped in silence; a header that is skipped is reported, in text and under --json.
#[test]
fn no_first_line_is_dropped_in_silence() {
    let d = dir("header-rule");
    std::fs::write(d.join("p.csv"), "1,2\n3,4\n5,6\n").unwrap();
    // a parse error in line 1 names the file, never a header: (file, text, command, needles)
    for (file, text, command, needles) in [
        // `0x10` is not a u32 number
        (
            "hex.txt",
            "0x10\n5\n3\n",
            "sort",
            &["line 1, column 1", "0x10"][..],
        ),
        // a typo in the first row of a cost matrix: not a 2 x 3 matrix
        (
            "typo.csv",
            "1,x,3\n4,5,6\n7,8,9\n",
            "lap",
            &["line 1, column 3"],
        ),
        // a typo in the first row of points or weights: the same
        (
            "w.txt",
            "1O\n1\n1\n",
            "kmeans p.csv --k 2 --weights",
            &["line 1"],
        ),
    ] {
        std::fs::write(d.join(file), text).unwrap();
        let needles = [&[file][..], needles].concat();
        fails_with(&d, &format!("{command} {file}"), "parse", &needles);
    }
    let out = run_in(&d, "lap typo.csv");
    assert!(!out.status.success());
    // a real header is skipped and reported
    std::fs::write(d.join("named.txt"), "value\n3\n1\n2\n").unwrap();
    let out = ok(&d, "sort named.txt --json");
    let v = json(&out);
    assert_eq!(
        (v["n"].as_u64(), &v["header"]),
        (Some(3), &serde_json::json!(["value"]))
    );
    let out = run_in(&d, "sort named.txt -o s.txt");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &stderr(&out);
    assert!(text.contains("header line skipped: \"value\""), "{text}");
    let out = run_in(&d, "distinct named.txt --json");
    assert_eq!(json(&out)["header"], serde_json::json!(["value"]));
    std::fs::write(d.join("c.csv"), "a,b\n1,2\n3,1\n").unwrap();
    let out = run_in(&d, "lap c.csv --json");
    assert_eq!(json(&out)["header"], serde_json::json!(["a", "b"]));
    let out = run_in(&d, "lap c.csv");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("header line skipped: \"a\", \"b\""),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::write(d.join("pts.csv"), "x,y\n0,0\n0,1\n9,9\n9,8\n").unwrap();
    let out = run_in(&d, "kmeans pts.csv --k 2 --json");
    assert_eq!(json(&out)["header"], serde_json::json!(["x", "y"]));
    // without a header the key is there and null
    std::fs::write(d.join("plain.txt"), "3\n1\n").unwrap();
    let out = run_in(&d, "sort plain.txt --json");
    assert!(json(&out)["header"].is_null());
}

/// Issue 24: empty inputs give empty results where numpy/scipy do; a 1-D array is no matrix.
#[test]
fn empty_inputs_are_empty_results_and_a_vector_is_no_matrix() {
    let d = dir("empty-inputs");
    each_file(
        &d,
        &[
            ("e.txt", ""),
            ("blank.txt", "\n\n"),
            ("c.txt", "# only a comment\n"),
        ],
        |name| {
            for cmd in ["sort", "distinct"] {
                let out = ok(&d, &format!("{cmd} {name} --json"));
                let v = json(&out);
                assert_eq!(
                    (v["n"].as_u64(), &v["verified"]),
                    (Some(0), &serde_json::json!(true))
                );
            }
            let out = run_in(&d, &format!("sort {name} -o out.npy"));
            assert!(out.status.success());
            assert!(
                warpath_io::read_array::<u32>(&d.join("out.npy"))
                    .unwrap()
                    .data
                    .is_empty()
            );
        },
    );
    // scipy: a 0 x 0 cost matrix has no pairs
    let out = ok(&d, "lap e.txt --json");
    assert_eq!(json(&out)["rows"], serde_json::json!([]));
    // a 1-D .npy is not a cost matrix (scipy: "expected a matrix (2-D array)")
    npy(&d.join("v.npy"), &[1.0f64, 2.0, 3.0], &[3]);
    fails_with(
        &d,
        "lap v.npy",
        "format",
        &["v.npy", "expected a matrix (2-D array)"],
    );
    fails_with(
        &d,
        "kmeans v.npy --k 1",
        "format",
        &["expected a matrix (2-D array)"],
    );
}
