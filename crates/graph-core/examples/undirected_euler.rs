//! Answers NetworkX's Euler questions on undirected multigraphs with graph-core, one graph per
//! JSON line: the other half of `crates/graph-core/scripts/compare_networkx.py`, which
//! generates the graphs, asks NetworkX the same questions and checks both sets of answers.
//!
//! Input, one line per graph: `{"name": "...", "n": 5, "edges": [[0, 1], ...], "source": 3}`
//! (`source` may be `null`). Output, one line per graph: the name, NetworkX's predicates
//! (`is_eulerian`, `has_euler_path`, `has_euler_path_source`) and the trails (`circuit`,
//! `circuit_source`, `path`, `path_source`, and `circuit_oriented`: the CPU fast path forced),
//! each `{"edges": [...], "vertices": [...]}` or `{"error": "...", "kind": "OddDegree"}`.
//!
//! `cargo run --release -p graph-core --example undirected_euler -- graphs.jsonl > ours.jsonl`
//! (no file: standard input).

use std::io::{BufRead, Write};

use graph_core::{
    EulerError, EulerTrail, Exec, UndirectedGraph, undirected_euler_circuit,
    undirected_euler_circuit_oriented, undirected_euler_path,
};
use serde_json::{Value, json};

/// A trail or the error, as JSON.
fn trail_json(r: Result<EulerTrail, EulerError>) -> Value {
    match r {
        Ok(t) => json!({ "edges": t.edges, "vertices": t.vertices }),
        Err(e) => {
            let debug = format!("{e:?}");
            let kind = debug.split([' ', '(', '{']).next().unwrap_or_default();
            json!({ "error": e.to_string(), "kind": kind })
        }
    }
}

/// The answers for one input line.
///
/// # Errors
/// A message when the line is not a graph.
pub(crate) fn answer(line: &str) -> Result<String, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let n = v["n"].as_u64().ok_or("no vertex count `n`")? as usize;
    let edges: Vec<(u32, u32)> = v["edges"]
        .as_array()
        .ok_or("no `edges` array")?
        .iter()
        .map(|p| match (p[0].as_u64(), p[1].as_u64()) {
            (Some(a), Some(b)) => Ok((a as u32, b as u32)),
            _ => Err(format!("bad edge {p}")),
        })
        .collect::<Result<_, _>>()?;
    let source = v["source"].as_u64().map(|s| s as u32);
    let g = UndirectedGraph::from_edges(n, &edges).map_err(|e| e.to_string())?;
    let circuit = |s| undirected_euler_circuit(&g, s, Exec::Cpu).map(|x| x.0);
    let path = |s| undirected_euler_path(&g, s, Exec::Cpu).map(|x| x.0);
    let mut out = json!({
        "name": v["name"],
        "is_eulerian": g.is_eulerian(),
        "has_euler_path": g.has_euler_path(None),
        "circuit": trail_json(circuit(None)),
        "path": trail_json(path(None)),
        "circuit_oriented": trail_json(undirected_euler_circuit_oriented(&g, None)),
    });
    if source.is_some() {
        out["has_euler_path_source"] = json!(g.has_euler_path(source));
        out["circuit_source"] = trail_json(circuit(source));
        out["path_source"] = trail_json(path(source));
    }
    Ok(out.to_string())
}

fn main() {
    let input: Box<dyn BufRead> = match std::env::args().nth(1) {
        Some(f) => Box::new(std::io::BufReader::new(
            std::fs::File::open(&f).unwrap_or_else(|e| panic!("cannot open {f}: {e}")),
        )),
        None => Box::new(std::io::stdin().lock()),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (i, line) in input.lines().enumerate() {
        let line = line.expect("reading the input");
        if line.trim().is_empty() {
            continue;
        }
        match answer(&line) {
            Ok(a) => writeln!(out, "{a}").expect("writing the output"),
            Err(e) => {
                eprintln!("line {}: {e}", i + 1);
                std::process::exit(2);
            }
        }
    }
}
