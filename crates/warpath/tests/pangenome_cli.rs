//! `warpath assemble` building colored graphs as a pangenome user runs it: the three ways to
//! name colors agree, the files are the same for any threads and memory bound, and bad
//! inputs are clean errors.

mod common;

use common::{assert_errors, dir, ok_json, run_in, run_json};

/// `n` related genomes: one base with a few SNPs each.
fn genomes(n: usize, len: usize) -> Vec<Vec<u8>> {
    let base = assembly::random_genome(len, 17);
    (0..n)
        .map(|i| {
            let mut g = base.clone();
            for j in 0..20 {
                let at = (j * 7919 + i * 104_729) % len;
                g[at] = if g[at] == b'A' { b'C' } else { b'A' };
            }
            g
        })
        .collect()
}

/// Writes each genome as `g<i>.fa` in `d`; returns `assemble --colors g0.fa g1.fa ...`.
fn colors_args(d: &std::path::Path, gs: &[Vec<u8>]) -> Vec<String> {
    let mut args = vec!["assemble".to_string(), "--colors".into()];
    for (i, g) in gs.iter().enumerate() {
        std::fs::write(
            d.join(format!("g{i}.fa")),
            [b">g\n", &g[..], b"\n"].concat(),
        )
        .unwrap();
        args.push(format!("g{i}.fa"));
    }
    args
}

fn run(d: &std::path::Path, args: &[&str]) -> serde_json::Value {
    ok_json(&run_json(d, args))
}

fn read(d: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(d.join(name)).unwrap()
}

#[test]
fn three_ways_to_name_colors_give_one_graph() {
    let d = dir("pangenome");
    let gs = genomes(4, 20_000);
    let mut multi = Vec::new();
    let mut list = String::new();
    for (i, g) in gs.iter().enumerate() {
        let rec = [format!(">g{i}.fa\n").as_bytes(), g, b"\n"].concat();
        std::fs::write(d.join(format!("g{i}.fa")), &rec).unwrap();
        multi.extend_from_slice(&rec);
        list.push_str(&format!("g{i}.fa\tg{i}.fa\n"));
    }
    std::fs::write(d.join("all.fa"), &multi).unwrap();
    std::fs::write(d.join("list.tsv"), format!("# name\tpath\n\n{list}")).unwrap();
    let v = run(
        &d,
        &[
            "assemble",
            "--colors",
            "g0.fa",
            "g1.fa",
            "g2.fa",
            "g3.fa",
            "--k",
            "31",
            "--unitigs",
            "a.fa",
            "--gfa",
            "a.gfa",
            "--color-sets",
            "a.jsonl",
        ],
    );
    assert_eq!(v["colors"]["colors"], 4, "{v}");
    assert_eq!(v["min_count"], 1, "{v}");
    assert_eq!(v["verified"], true);
    run(
        &d,
        &[
            "assemble",
            "--colored-inputs",
            "list.tsv",
            "--k",
            "31",
            "--unitigs",
            "b.fa",
            "--color-sets",
            "b.jsonl",
            "--threads",
            "1",
            "--max-memory",
            "64M",
        ],
    );
    run(
        &d,
        &[
            "assemble",
            "all.fa",
            "--color-per-record",
            "--k",
            "31",
            "--unitigs",
            "c.fa",
            "--color-sets",
            "c.jsonl",
            "--buckets",
            "8",
        ],
    );
    let (fa, sets) = (read(&d, "a.fa"), read(&d, "a.jsonl"));
    assert!(fa.contains(" C:0:"), "{fa}");
    assert!(read(&d, "a.gfa").contains("\tCR:Z:0:"));
    for (f, s) in [("b.fa", "b.jsonl"), ("c.fa", "c.jsonl")] {
        assert_eq!(read(&d, f), fa, "{f}");
        assert_eq!(read(&d, s), sets, "{s}");
    }
    let first = sets.lines().next().unwrap();
    assert_eq!(first, r#"{"colors": ["g0.fa", "g1.fa", "g2.fa", "g3.fa"]}"#);
    // the set every genome holds is the first one met
    assert!(sets.lines().any(
        |l| l.contains(r#""colors": ["g0.fa", "g1.fa", "g2.fa", "g3.fa"]"#)
            && l.starts_with(r#"{"id": "#)
    ));
}

#[test]
fn colored_inputs_errors_are_clean() {
    let d = dir("pangenome-errors");
    std::fs::write(d.join("a.fa"), ">a\nACGTACGTTTGACCA\n").unwrap();
    std::fs::write(d.join("bad.tsv"), "a.fa\n").unwrap();
    std::fs::write(d.join("missing.tsv"), "x\tnope.fa\n").unwrap();
    assert_errors(
        &d,
        &[
            (
                vec!["assemble", "a.fa", "--colors", "a.fa", "--k", "5"],
                "usage",
                "either as READS",
            ),
            (
                vec!["assemble", "a.fa", "--k", "5", "--color-sets", "s.jsonl"],
                "usage",
                "needs a colored graph",
            ),
            (
                vec!["assemble", "--colored-inputs", "bad.tsv", "--k", "5"],
                "parse",
                "line 1, column 1: expected NAME<TAB>PATH",
            ),
            (
                vec!["assemble", "--colored-inputs", "missing.tsv", "--k", "5"],
                "io",
                "nope.fa",
            ),
            (
                vec![
                    "assemble",
                    "--colors",
                    "a.fa",
                    "--k",
                    "5",
                    "--color-sets",
                    "s.csv",
                ],
                "usage",
                ".csv",
            ),
            (vec!["assemble", "--k", "5"], "usage", "at least one READS"),
        ],
    );
    assert!(!d.join("s.jsonl").exists());
}

/// Canonical k-mers of `s`.
fn canonical_kmers(s: &[u8], k: usize) -> Vec<u64> {
    s.windows(k)
        .filter_map(|w| assembly::pack::<u64>(w, k))
        .map(|x| assembly::canonical(x, k))
        .collect()
}

#[test]
fn query_counts_what_the_colored_build_holds() {
    let d = dir("pangenome-query");
    let k = 25;
    let gs = genomes(3, 8_000);
    let mut args = colors_args(&d, &gs);
    args.extend(["--k", "25", "--unitigs", "u.fa", "--color-sets", "u.jsonl"].map(String::from));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&d, &a);
    // queries: pieces of each genome and a random one
    let mut q = String::new();
    let mut pieces = Vec::new();
    for (i, g) in gs.iter().enumerate() {
        for s in [0, 3_000, 7_000] {
            let p = &g[s..s + 150];
            q.push_str(&format!(">g{i}_{s}\n{}\n", String::from_utf8_lossy(p)));
            pieces.push(p.to_vec());
        }
    }
    let other = assembly::random_genome(150, 99);
    q.push_str(&format!(">other\n{}\n", String::from_utf8_lossy(&other)));
    pieces.push(other);
    std::fs::write(d.join("q.fa"), q).unwrap();
    let out = run_in(&d, "query --unitigs u.fa --color-sets u.jsonl --k 25 q.fa");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // the sets by number: a smaller file, the same answers
    args.extend(["--color-sets-format", "numbers"].map(String::from));
    for a in args.iter_mut() {
        if a.as_str() == "u.jsonl" {
            *a = "n.jsonl".into();
        }
    }
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&d, &a);
    let named = std::fs::read(d.join("u.jsonl")).unwrap();
    let numbered = std::fs::read(d.join("n.jsonl")).unwrap();
    assert!(
        numbered.len() < named.len(),
        "{}",
        String::from_utf8_lossy(&numbered)
    );
    let by_number = run_in(&d, "query --unitigs u.fa --color-sets n.jsonl --k 25 q.fa");
    assert_eq!(by_number.stdout, out.stdout);
    let held: Vec<std::collections::HashSet<u64>> = gs
        .iter()
        .map(|g| canonical_kmers(g, k).into_iter().collect())
        .collect();
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), pieces.len());
    for (v, p) in lines.iter().zip(&pieces) {
        let kmers = canonical_kmers(p, k);
        assert_eq!(v["kmers"], kmers.len(), "{v}");
        for (i, h) in held.iter().enumerate() {
            let want = kmers.iter().filter(|x| h.contains(x)).count();
            let got = v["matches"][format!("g{i}.fa")].as_u64().unwrap_or(0) as usize;
            assert_eq!(got, want, "{v}");
        }
    }
}

#[test]
fn a_colored_build_stays_within_max_memory_with_the_same_files() {
    let d = dir("pangenome-bound");
    let gs = genomes(6, 200_000);
    let mut args = colors_args(&d, &gs);
    args.extend(["--k", "31", "--color-sets"].map(String::from));
    let build = |bound: &str, out: &str, compress: bool| {
        let mut a = args.clone();
        a.extend([
            format!("{out}.jsonl"),
            "--unitigs".into(),
            format!("{out}.fa"),
        ]);
        a.extend(["--max-memory".into(), bound.into()]);
        if compress {
            a.push("--compress-temp".into());
        }
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        run(&d, &a)
    };
    let small = build("48M", "a", false);
    let peak = small["peak_memory_bytes"].as_u64().unwrap();
    assert!(
        peak <= 48_000_000,
        "peak {peak} bytes over --max-memory 48M"
    );
    assert!(
        small["temp_disk_bytes"].as_u64().unwrap() > 1_000_000,
        "{small}"
    );
    build("2G", "b", false);
    assert_eq!(read(&d, "a.fa"), read(&d, "b.fa"));
    assert_eq!(read(&d, "a.jsonl"), read(&d, "b.jsonl"));
    // the temporary files as LZ4 blocks: smaller, within the bound, the same files
    let packed = build("48M", "c", true);
    assert!(
        packed["peak_memory_bytes"].as_u64().unwrap() <= 48_000_000,
        "{packed}"
    );
    assert!(
        packed["temp_disk_bytes"].as_u64().unwrap() < small["temp_disk_bytes"].as_u64().unwrap(),
        "{packed} against {small}"
    );
    assert_eq!(read(&d, "a.fa"), read(&d, "c.fa"));
    assert_eq!(read(&d, "a.jsonl"), read(&d, "c.jsonl"));
}
