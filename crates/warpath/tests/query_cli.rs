//! `warpath query` as a user runs it: JSON lines and Bifrost's TSV from a hand-written colored
//! graph, the `--json` summary, and the errors of bad files and flags.

mod common;

use common::{dir, json_of, ok_json, warpath};

/// A colored graph of k = 5: one unitig of 3 k-mers, ACGTT and CGTTG in set 0 (A and B), GTTGC
/// in set 1 (B); color C holds none. And four queries.
fn graph(d: &std::path::Path) {
    std::fs::write(
        d.join("g.fa"),
        ">0 LN:i:7 KC:i:6 km:f:2.0 C:0:2 C:1:1\nACGTTGC\n",
    )
    .unwrap();
    std::fs::write(
        d.join("g.jsonl"),
        "{\"colors\": [\"A\", \"B\", \"C\"]}\n{\"id\": 0, \"colors\": [\"A\", \"B\"]}\n\
         {\"id\": 1, \"colors\": [\"B\"]}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("q.fa"),
        ">q1 first query\nACGTTGCA\n>q2\nGCAACNGT\n>q3\nAAAAAAA\n>q4\nAC\n",
    )
    .unwrap();
}

/// `warpath query` of the graph and queries of [`graph`], with `extra` flags; a flag of the
/// graph's given in `extra` replaces its default.
fn query(d: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["query", "q.fa"];
    for (flag, default) in [
        ("--unitigs", "g.fa"),
        ("--color-sets", "g.jsonl"),
        ("--k", "5"),
    ] {
        if !extra.contains(&flag) {
            args.extend([flag, default]);
        }
    }
    warpath()
        .args(args)
        .args(extra)
        .current_dir(d)
        .output()
        .unwrap()
}

#[test]
fn query_writes_json_lines_and_bifrost_tsv() {
    let d = dir("query");
    graph(&d);
    let out = query(&d, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"query\": \"q1\", \"kmers\": 4, \"matches\": {\"A\": 2, \"B\": 3}}\n\
         {\"query\": \"q2\", \"kmers\": 1, \"matches\": {\"B\": 1}}\n\
         {\"query\": \"q3\", \"kmers\": 3, \"matches\": {}}\n\
         {\"query\": \"q4\", \"kmers\": 0, \"matches\": {}}\n"
    );
    // the report went to standard error, with the output on standard output
    assert!(String::from_utf8_lossy(&out.stderr).contains("query: 4 records, 8 5-mers, 4 found"));
    let out = query(&d, &["--format", "tsv", "-o", "hits.tsv"]);
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(d.join("hits.tsv")).unwrap(),
        "query_name\tA\tB\tC\nq1\t0\t0\t0\nq2\t0\t1\t0\nq3\t0\t0\t0\nq4\t0\t0\t0\n"
    );
    let out = query(&d, &["--format", "tsv", "--ratio", "0.5", "-o", "-"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "query_name\tA\tB\tC\nq1\t1\t1\t0\nq2\t0\t1\t0\nq3\t0\t0\t0\nq4\t0\t0\t0\n"
    );
    // --json: the summary on standard output, the lines in the file
    let v = ok_json(&query(
        &d,
        &["-o", "hits.jsonl", "--json", "--threads", "2"],
    ));
    assert_eq!(v["command"], "query");
    assert_eq!(
        (v["records"].as_u64(), v["kmers"].as_u64()),
        (Some(4), Some(8))
    );
    assert_eq!(
        (v["found"].as_u64(), v["colors"].as_u64()),
        (Some(4), Some(3))
    );
    assert_eq!(
        (v["graph_kmers"].as_u64(), v["color_sets"].as_u64()),
        (Some(3), Some(2))
    );
    let lines = std::fs::read_to_string(d.join("hits.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(first["matches"]["B"], 3);
    let v = ok_json(&query(&d, &["--json"]));
    assert_eq!(
        (
            v["records"].as_u64(),
            v["output"].is_null(),
            v["passes"].as_u64()
        ),
        (Some(4), true, Some(1))
    );
    // a bound of a few KB: the same lines, in passes; a bound too small: a clean error
    let out = query(&d, &["--max-memory", "3K", "-o", "small.jsonl"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(d.join("small.jsonl")).unwrap(),
        lines
    );
    let v = json_of(&query(&d, &["--max-memory", "1K", "--json"]));
    assert_eq!(v["kind"], "out_of_memory", "{v}");
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn query_errors_have_kinds() {
    let d = dir("query-errors");
    graph(&d);
    std::fs::write(d.join("bad.jsonl"), "{\"id\": 1, \"colors\": []}\n").unwrap();
    std::fs::write(d.join("short.fa"), ">u7 C:0:3\nACGTTGC\n").unwrap();
    for (args, kind, needle) in [
        (vec!["--ratio", "0.5"], "usage", "--format tsv only"),
        (
            vec!["--format", "tsv", "--ratio", "1.5"],
            "usage",
            "at most 1",
        ),
        (vec!["--threads", "0"], "usage", "at least 1"),
        (vec!["-o", "-"], "usage", "both write to standard output"),
        (
            vec!["--color-sets", "bad.jsonl"],
            "parse",
            "bad.jsonl: line 1: id 1: expected 0",
        ),
        (
            vec!["--unitigs", "short.fa", "--k", "3"],
            "parse",
            "unitig u7",
        ),
        (vec!["--unitigs", "missing.fa"], "io", "missing.fa"),
        (vec!["--k", "4"], "input", "k = 4"),
    ] {
        let out = query(&d, &[args.as_slice(), &["--json"]].concat());
        let v = json_of(&out);
        let code = if kind == "usage" { 2 } else { 1 };
        let got = (out.status.code(), v["kind"].as_str());
        assert_eq!(got, (Some(code), Some(kind)), "{args:?}: {v}");
        let message = v["error"].as_str().unwrap_or_default();
        assert!(message.contains(needle), "{args:?}: {message}");
    }
}
