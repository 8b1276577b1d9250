//! The command line as a user meets it (issue 17): one I/O layer, no silent surprises, ids as
//! the file spells them. Every test runs the binary.

use std::io::Read;
use std::path::Path;
use std::process::{Output, Stdio};

mod common;

use common::{dir, json_of as json, warpath};

fn run(args: &[&str], cwd: &Path) -> Output {
    warpath().args(args).current_dir(cwd).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A failed `--json` run: non-zero exit, `{"error", "kind"}` on stdout; returns the message.
fn json_error(args: &[&str], cwd: &Path, kind: &str) -> String {
    let mut a = args.to_vec();
    a.push("--json");
    let out = run(&a, cwd);
    assert!(!out.status.success(), "{args:?} succeeded");
    let v = json(&out);
    assert_eq!(v["kind"], kind, "{args:?}: {v}");
    v["error"].as_str().unwrap().to_owned()
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
    let out = run(&["sort", "k.npy", "-o", "s.npy", "--json"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["type"], "u32");
    let s = warpath_io::read_array::<u32>(&d.join("s.npy")).unwrap();
    assert_eq!(s.data, vec![0, 3, 3, 5, 9]);
    // --binary would sort the header's bytes in as keys: refused by name
    let e = json_error(&["sort", "k.npy", "--binary"], &d, "usage");
    assert!(e.contains("--binary") && e.contains(".npy"), "{e}");
    // floats: distinct of an f64 array, written as .npy
    npy(&d.join("f.npy"), &[2.5f64, -1.0, 2.5], &[3]);
    let out = run(&["distinct", "f.npy", "-o", "u.npy"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        warpath_io::read_array::<f64>(&d.join("u.npy"))
            .unwrap()
            .data,
        vec![-1.0, 2.5]
    );
    // a float array is not read as integers silently
    let e = json_error(&["sort", "f.npy", "--type", "u32"], &d, "npy");
    assert!(e.contains("float64"), "{e}");
    // text input without a file extension, read as numbers with a header
    std::fs::write(d.join("keys"), "key\n3\n1\n2\n").unwrap();
    let out = run(&["sort", "keys"], &d);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n2\n3\n");
}

#[test]
fn integer_npy_for_kmeans_and_bool_npy_for_lap() {
    let d = dir("npy-dtypes");
    let pts: Vec<i64> = (0..40)
        .map(|i| if i % 4 < 2 { i % 2 } else { 100 + i % 2 })
        .collect();
    npy(&d.join("p.npy"), &pts, &[20, 2]);
    let out = run(&["kmeans", "p.npy", "--k", "2", "--json"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["verified"], true);
    // a 0/1 cost matrix: the optimum avoids every 1
    npy(
        &d.join("c.npy"),
        &[true, false, false, false, true, false, false, false, true],
        &[3, 3],
    );
    let out = run(&["lap", "c.npy", "--json"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
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
        let out = run(
            &[
                "kmeans",
                "p.npy",
                "--k",
                "40",
                "--algorithm",
                a,
                "--centroids",
                &c,
                "--json",
            ],
            &d,
        );
        assert!(out.status.success(), "{a}: {}", stderr(&out));
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
    let e = json_error(&["kmeans", "p.npy", "--algorithm", "fast"], &d, "usage");
    assert!(e.contains("algorithm"), "{e}");
}

#[test]
fn outputs_follow_their_extension_and_dash_is_standard_output() {
    let d = dir("outputs");
    let out = run(
        &[
            "kmeans",
            "--generate",
            "2000",
            "--k",
            "3",
            "--labels",
            "l.npy",
            "--plot",
            "p.png",
            "--centroids",
            "c.csv",
        ],
        &d,
    );
    assert!(out.status.success(), "{}", stderr(&out));
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
    assert!(
        run(&["perm", "--n", "3", "-o", "p.txt"], &d)
            .status
            .success()
    );
    assert_eq!(
        std::fs::read_to_string(d.join("p.txt"))
            .unwrap()
            .lines()
            .next(),
        Some("0 1 2")
    );
    assert!(
        run(&["perm", "--n", "3", "-o", "p.npy"], &d)
            .status
            .success()
    );
    let p = warpath_io::read_array::<u8>(&d.join("p.npy")).unwrap();
    assert_eq!(
        (p.shape.clone(), &p.data[15..]),
        (vec![6, 3], &[2u8, 1, 0][..])
    );
    assert!(
        run(&["perm", "--n", "3", "-o", "p.bin"], &d)
            .status
            .success()
    );
    assert_eq!(std::fs::read(d.join("p.bin")).unwrap().len(), 18);
    // - is standard output, not a file named "-"; the report then goes to stderr
    let out = run(&["perm", "--n", "3", "--output", "-"], &d);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 6);
    assert!(stderr(&out).contains("verified: yes"));
    assert!(!d.join("-").exists());
    let out = run(&["sort", "--generate", "5", "-o", "-"], &d);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 5);
    // an unknown extension is refused before any work, naming the allowed ones
    let e = json_error(&["sort", "--generate", "5", "-o", "x.xlsx"], &d, "usage");
    assert!(e.contains(".txt, .csv, .npy, .bin"), "{e}");
    let e = json_error(
        &["kmeans", "--generate", "100", "--plot", "p.jpg"],
        &d,
        "usage",
    );
    assert!(e.contains(".svg or .png"), "{e}");
    // --output - and --json would both write to standard output
    let e = json_error(&["sort", "--generate", "5", "-o", "-"], &d, "usage");
    assert!(e.contains("--json"), "{e}");
    // distinct --counts goes to standard output by default
    let out = run(
        &["distinct", "--generate", "100", "--range", "3", "--counts"],
        &d,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let total: u64 = text
        .lines()
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, 100, "{text}");
    let e = json_error(
        &["distinct", "--generate", "9", "--counts", "-o", "c.npy"],
        &d,
        "usage",
    );
    assert!(e.contains("--counts"), "{e}");
}

#[test]
fn one_table_reader_for_every_matrix() {
    let d = dir("tables");
    for (name, text) in [
        ("commas.csv", "1,2\n2,1\n"),
        ("spaces.txt", "1 2\n2 1\n"),
        ("tabs.tsv", "1\t2\n2\t1\n"),
        ("header.csv", "a,b\n# a comment\n1, 2\n2, 1\n"),
    ] {
        std::fs::write(d.join(name), text).unwrap();
        let out = run(&["lap", name, "--json"], &d);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(json(&out)["cost"], 2.0, "{name}");
        let out = run(
            &["perm", "--search", "assignment", "--matrix", name, "--json"],
            &d,
        );
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(json(&out)["score"], 2.0, "{name}");
        let out = run(&["kmeans", name, "--k", "2", "--json"], &d);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
    }
    // every error says where
    std::fs::write(d.join("bad.csv"), "1,2\n3,x\n").unwrap();
    for cmd in [
        &["lap", "bad.csv"][..],
        &["kmeans", "bad.csv", "--k", "1"],
        &["perm", "--search", "tour", "--matrix", "bad.csv"],
    ] {
        let e = json_error(cmd, &d, "parse");
        assert!(e.contains("line 2, column 3"), "{cmd:?}: {e}");
    }
}

#[test]
fn one_size_syntax_for_every_count() {
    let d = dir("counts");
    for args in [
        &["sort", "--generate", "1e3", "--discard"][..],
        &["sort", "--generate", "2^10", "--discard"],
        &["euler", "--generate", "1e3", "--discard"],
        &["kmeans", "--generate", "10_000", "--k", "2"],
        &["perm", "--n", "8", "--count", "1e3", "--discard"],
        &["lap", "--generate", "1k"],
        &[
            "fhn", "--n", "1k", "--length", "100", "--dt", "0.004", "--t-end", "0.1",
        ],
    ] {
        let out = run(args, &d);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let e = json_error(&["sort", "--generate", "1.5"], &d, "usage");
    assert!(e.contains("whole number"), "{e}");
}

#[test]
fn flags_that_conflict_or_do_not_apply_are_errors_naming_both() {
    let d = dir("conflicts");
    for (args, names) in [
        (
            &["fhn", "--n", "201", "--dx", "0.25"][..],
            &["--n", "--dx"][..],
        ),
        (
            &["fhn", "--solver", "pcr"],
            &["--solver", "--scheme implicit"],
        ),
        (
            &["fhn", "--scenario", "front", "--eps", "0.05"],
            &["--eps", "--scenario front"],
        ),
        (&["fhn", "--dx", "0"], &["--dx"]),
        (&["fhn", "--dx", "1000"], &["--dx", "--length"]),
        (&["fhn", "--dx", "0.3"], &["--dx", "--length"]),
        (
            &[
                "lap",
                "--generate",
                "4",
                "--solver",
                "jv",
                "--backend",
                "cuda",
            ],
            &["--backend cuda", "--solver jv"],
        ),
        (
            &["debruijn", "--k", "3", "--n", "2"],
            &["--n", "--k", "--alphabet"],
        ),
        (
            &["kmeans", "points.csv", "--sigma", "0.1"],
            &["--sigma", "--generate"],
        ),
        (
            &["perm", "--n", "3", "--seed", "2"],
            &["--seed", "--search"],
        ),
        (
            &["perm", "--search", "tour", "--start", "3"],
            &["--search", "--start"],
        ),
    ] {
        let out = run(&[args, &["--json"][..]].concat(), &d);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = json(&out)["error"].as_str().unwrap().to_owned();
        for n in names {
            assert!(e.contains(n), "{args:?}: `{n}` not in {e}");
        }
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
        &[
            "debruijn-graph",
            "--reads",
            "r.fa",
            "--k",
            "3",
            "--backend",
            "cuda",
        ][..],
        &["sort", "--generate", "10", "--backend", "cuda"],
        &["euler", "--generate", "10", "--backend", "cuda"],
        &[
            "kmeans",
            "--generate",
            "10",
            "--k",
            "2",
            "--backend",
            "cuda",
        ],
        &["fhn", "--backend", "cuda", "--t-end", "1"],
    ] {
        let e = json_error(args, &d, "no_gpu");
        assert!(e.contains("--backend cuda"), "{args:?}: {e}");
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
        &["sort", "--generate", "1e12"][..],
        &["lap", "--generate", "1e6"],
        &["fhn", "--n", "1e11", "--scheme", "implicit"],
        &["euler", "--generate", "1e11"],
    ] {
        let t = std::time::Instant::now();
        let e = json_error(args, &d, "out_of_memory");
        assert!(
            e.contains("available") && e.contains("at most"),
            "{args:?}: {e}"
        );
        assert!(t.elapsed().as_secs() < 5, "{args:?} took {:?}", t.elapsed());
    }
    let e = json_error(&["perm", "--n", "20"], &d, "too_long");
    assert!(e.contains("years") && e.contains("--force"), "{e}");
    let e = json_error(&["perm", "--n", "16", "--search", "tour"], &d, "too_long");
    assert!(e.contains("--force"), "{e}");
    // an output folder that does not exist fails before the work
    let t = std::time::Instant::now();
    let e = json_error(
        &[
            "sort",
            "--generate",
            "1e8",
            "--output",
            "/nonexistent/x.txt",
        ],
        &d,
        "io",
    );
    assert!(e.contains("/nonexistent/x.txt"), "{e}");
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
    let e = json_error(&["euler", "g.txt"], &d, "no_solution");
    assert!(e.contains("vertex `4`"), "{e}");
    assert!(!e.contains("vertex 0"), "{e}");
    // Matrix Market ids are 1-based, as in the file
    std::fs::write(
        d.join("g.mtx"),
        "%%MatrixMarket matrix coordinate pattern general\n5 5 3\n4 5\n5 4\n4 2\n",
    )
    .unwrap();
    let e = json_error(&["euler", "g.mtx"], &d, "no_solution");
    assert!(e.contains("vertex `2`"), "{e}");
    let out = run(&["euler", "g.mtx", "--path", "-o", "p.txt"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(d.join("p.txt")).unwrap(),
        "4\n5\n4\n2\n"
    );
}

#[test]
fn networkx_edge_lists_read_as_networkx_writes_them() {
    let d = dir("networkx");
    for (name, text) in [
        ("dict.txt", "a b {}\nb c {'weight': 2}\nc a {}\n"),
        ("weighted.txt", "a b 1.5\nb c 2\nc a 3\n"),
        ("header.csv", "source,target,weight\na,b,1\nb,c,1\nc,a,1\n"),
    ] {
        std::fs::write(d.join(name), text).unwrap();
        let out = run(&["euler", name, "-o", "c.txt"], &d);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(
            std::fs::read_to_string(d.join("c.txt")).unwrap(),
            "a\nb\nc\na\n",
            "{name}"
        );
    }
    let help = String::from_utf8_lossy(&run(&["euler", "--help"], &d).stdout).into_owned();
    assert!(
        help.contains("directed") && help.contains("is_eulerian"),
        "{help}"
    );
}

#[test]
fn debruijn_alphabet_and_k_as_the_word_length() {
    let d = dir("debruijn");
    let out = run(
        &[
            "debruijn",
            "--alphabet",
            "10",
            "--k",
            "4",
            "--linear",
            "--json",
        ],
        &d,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(
        (v["length"].clone(), v["alphabet_size"].clone()),
        (10_003.into(), 10.into())
    );
    let out = run(&["debruijn", "--alphabet", "ACGT", "--k", "2"], &d);
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
    let out = run(
        &["graph", "big.txt", "--dot", "g.dot", "--render", "g.svg"],
        &d,
    );
    let err = stderr(&out);
    assert!(err.contains("warning: rendering 6000 edges"), "{err}");
    let e = json_error(
        &["graph", "big.txt", "--dot", "g.dot", "--render", "g.jpg"],
        &d,
        "usage",
    );
    assert!(e.contains(".svg, .png or .pdf"), "{e}");
}

#[test]
fn fhn_plots_are_real_png_with_a_heat_map_beside() {
    let d = dir("fhn-plot");
    let out = run(&["fhn", "--t-end", "5", "--plot", "v.png", "--json"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
    for f in ["v.png", "v.heatmap.png"] {
        assert!(
            std::fs::read(d.join(f)).unwrap().starts_with(b"\x89PNG"),
            "{f}"
        );
    }
    let out = run(
        &[
            "kmeans",
            "--generate",
            "50000",
            "--k",
            "2",
            "--plot",
            "k.svg",
            "--json",
        ],
        &d,
    );
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
    let out = run(&["kmeans", "hw.csv", "--k", "2", "--plot", "hw.svg"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
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
        let out = run(&[cmd, "--help"], &d);
        let text = String::from_utf8_lossy(&out.stdout);
        for w in wants {
            assert!(text.contains(w), "warpath {cmd} --help lacks `{w}`");
        }
    }
    let top = String::from_utf8_lossy(&run(&["--help"], &d).stdout).into_owned();
    assert!(top.contains("Input and output"), "{top}");
}

#[test]
fn undirected_euler_circuits_and_paths_as_networkx() {
    let d = dir("undirected");
    // a triangle with a tail c - d: no circuit; the path runs between the odd vertices c, d
    std::fs::write(d.join("g.txt"), "a b {}\nb c {}\nc a {}\nc d {}\n").unwrap();
    let e = json_error(&["euler", "g.txt", "--undirected"], &d, "no_solution");
    assert!(e.contains("vertex `c` has odd degree 3"), "{e}");
    let out = run(
        &["euler", "g.txt", "--undirected", "--path", "-o", "p.txt"],
        &d,
    );
    assert!(out.status.success(), "{}", stderr(&out));
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
    let e = json_error(&["euler", "g.txt"], &d, "no_solution");
    assert!(
        e.contains("vertex `c` has in-degree 1 but out-degree 2"),
        "{e}"
    );
    // graph --undirected: NetworkX's conditions, an undirected DOT with the path numbered
    let out = run(
        &[
            "graph",
            "g.txt",
            "--undirected",
            "--euler",
            "--dot",
            "g.dot",
            "--json",
        ],
        &d,
    );
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
    let out = run(
        &[
            "euler",
            "--generate",
            "1e4",
            "--undirected",
            "--discard",
            "--json",
        ],
        &d,
    );
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
    let out = run(&["distinct", "x.npy", "--counts", "--json"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(
        (v["distinct"].as_u64(), v["verified"].as_bool()),
        (Some(3), Some(true))
    );
    assert_eq!(v["equality"], "numeric");
    let out = run(&["distinct", "x.npy", "--counts", "-o", "c.csv"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
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
    let out = run(&["distinct", "x.npy", "--bitwise", "--json"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
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
    let out = run(&["lap", "pos.csv", "--json"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["cost"], 5.0);
    json_error(&["lap", "neg.csv"], &d, "input");
    // Maximising: -inf forbids a pair, +inf is invalid.
    let out = run(&["lap", "neg.csv", "--maximize", "--json"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["cost"], 5.0);
    json_error(&["lap", "pos.csv", "--maximize"], &d, "input");
    // Huge finite costs whose optimum is representable are solved, and verified.
    std::fs::write(d.join("huge.csv"), "1e308,-5e307\n-5e307,1e308\n").unwrap();
    let out = run(&["lap", "huge.csv", "--json"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
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
    let plain = run(
        &["kmeans", "p.csv", "--k", "4", "--seed", "7", "--json"],
        &d,
    );
    let weighted = run(
        &[
            "kmeans",
            "p.csv",
            "--k",
            "4",
            "--seed",
            "7",
            "--weights",
            "w.txt",
            "--json",
        ],
        &d,
    );
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
    // `0x10` is not a u32 number: an error in line 1, not a header
    std::fs::write(d.join("hex.txt"), "0x10\n5\n3\n").unwrap();
    let e = json_error(&["sort", "hex.txt"], &d, "parse");
    assert!(
        e.contains("hex.txt") && e.contains("line 1, column 1") && e.contains("0x10"),
        "{e}"
    );
    // a typo in the first row of a cost matrix: an error, not a 2 x 3 matrix
    std::fs::write(d.join("typo.csv"), "1,x,3\n4,5,6\n7,8,9\n").unwrap();
    let e = json_error(&["lap", "typo.csv"], &d, "parse");
    assert!(
        e.contains("typo.csv") && e.contains("line 1, column 3"),
        "{e}"
    );
    let out = run(&["lap", "typo.csv"], &d);
    assert!(!out.status.success());
    // a typo in the first row of points or weights: the same
    std::fs::write(d.join("p.csv"), "1,2\n3,4\n5,6\n").unwrap();
    std::fs::write(d.join("w.txt"), "1O\n1\n1\n").unwrap();
    let e = json_error(
        &["kmeans", "p.csv", "--k", "2", "--weights", "w.txt"],
        &d,
        "parse",
    );
    assert!(e.contains("w.txt") && e.contains("line 1"), "{e}");
    // a real header is skipped and reported
    std::fs::write(d.join("named.txt"), "value\n3\n1\n2\n").unwrap();
    let out = run(&["sort", "named.txt", "--json"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(
        (v["n"].as_u64(), &v["header"]),
        (Some(3), &serde_json::json!(["value"]))
    );
    let out = run(&["sort", "named.txt", "-o", "s.txt"], &d);
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &stderr(&out);
    assert!(text.contains("header line skipped: \"value\""), "{text}");
    let out = run(&["distinct", "named.txt", "--json"], &d);
    assert_eq!(json(&out)["header"], serde_json::json!(["value"]));
    std::fs::write(d.join("c.csv"), "a,b\n1,2\n3,1\n").unwrap();
    let out = run(&["lap", "c.csv", "--json"], &d);
    assert_eq!(json(&out)["header"], serde_json::json!(["a", "b"]));
    let out = run(&["lap", "c.csv"], &d);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("header line skipped: \"a\", \"b\""),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::write(d.join("pts.csv"), "x,y\n0,0\n0,1\n9,9\n9,8\n").unwrap();
    let out = run(&["kmeans", "pts.csv", "--k", "2", "--json"], &d);
    assert_eq!(json(&out)["header"], serde_json::json!(["x", "y"]));
    // without a header the key is there and null
    std::fs::write(d.join("plain.txt"), "3\n1\n").unwrap();
    let out = run(&["sort", "plain.txt", "--json"], &d);
    assert!(json(&out)["header"].is_null());
}

/// Issue 24: empty inputs give empty results where numpy/scipy do; a 1-D array is no matrix.
#[test]
fn empty_inputs_are_empty_results_and_a_vector_is_no_matrix() {
    let d = dir("empty-inputs");
    for (name, text) in [
        ("e.txt", ""),
        ("blank.txt", "\n\n"),
        ("c.txt", "# only a comment\n"),
    ] {
        std::fs::write(d.join(name), text).unwrap();
        for cmd in ["sort", "distinct"] {
            let out = run(&[cmd, name, "--json"], &d);
            assert!(out.status.success(), "{cmd} {name}: {}", stderr(&out));
            let v = json(&out);
            assert_eq!(
                (v["n"].as_u64(), &v["verified"]),
                (Some(0), &serde_json::json!(true))
            );
        }
        let out = run(&["sort", name, "-o", "out.npy"], &d);
        assert!(out.status.success());
        assert!(
            warpath_io::read_array::<u32>(&d.join("out.npy"))
                .unwrap()
                .data
                .is_empty()
        );
    }
    // scipy: a 0 x 0 cost matrix has no pairs
    let out = run(&["lap", "e.txt", "--json"], &d);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["rows"], serde_json::json!([]));
    // a 1-D .npy is not a cost matrix (scipy: "expected a matrix (2-D array)")
    npy(&d.join("v.npy"), &[1.0f64, 2.0, 3.0], &[3]);
    let e = json_error(&["lap", "v.npy"], &d, "format");
    assert!(
        e.contains("v.npy") && e.contains("expected a matrix (2-D array)"),
        "{e}"
    );
    let e = json_error(&["kmeans", "v.npy", "--k", "1"], &d, "format");
    assert!(e.contains("expected a matrix (2-D array)"), "{e}");
}
