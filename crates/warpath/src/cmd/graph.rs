//! `warpath euler`, `warpath graph` and `warpath debruijn-graph` (graph-core).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use gpu_runtime::{Backend, Exec};
use graph_core::{
    DotOptions, EulerStyle, EulerTrail, Graph, GraphFormat, euler_circuit, euler_path,
    is_euler_circuit, is_euler_path, random_euler_graph, read_graph_file,
};

use crate::cmd::demo::DemoSize;
use crate::report::{DemoRow, progress};

/// Arguments of `warpath euler`.
#[derive(clap::Args)]
pub(crate) struct EulerArgs {
    /// Graph file (edge list, `a -> b, c` adjacency lines, SNAP, Matrix Market .mtx).
    #[arg(conflicts_with = "generate", required_unless_present = "generate")]
    file: Option<PathBuf>,
    /// Input format instead of detecting it: edges, adjacency, snap or mtx.
    #[arg(long)]
    format: Option<GraphFormat>,
    /// Generate a random connected Eulerian digraph with this many edges instead of reading.
    #[arg(long)]
    generate: Option<u64>,
    /// Style of the generated graph: deep (few long cycles) or shallow (many 2-cycles).
    #[arg(long, default_value = "deep")]
    style: EulerStyle,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to run: auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Exec,
    /// Find an Euler path (the ±1 degree rule) instead of a circuit.
    #[arg(long)]
    path: bool,
    /// Write the vertex sequence here, one vertex name per line.
    #[arg(long)]
    output: Option<PathBuf>,
}

/// Arguments of `warpath graph`.
#[derive(clap::Args)]
pub(crate) struct GraphArgs {
    /// Graph file (edge list, `a -> b, c` adjacency lines, SNAP, Matrix Market .mtx).
    file: PathBuf,
    /// Input format instead of detecting it: edges, adjacency, snap or mtx.
    #[arg(long)]
    format: Option<GraphFormat>,
    /// Write GraphViz DOT here.
    #[arg(long)]
    dot: Option<PathBuf>,
    /// Render the DOT file with GraphViz `dot` (format from the extension: svg, png, pdf).
    #[arg(long, requires = "dot")]
    render: Option<PathBuf>,
    /// Number the edges in the order of an Euler circuit (or path) when there is one.
    #[arg(long)]
    euler: bool,
    /// Colour the weakly connected components.
    #[arg(long)]
    components: bool,
    /// Mark vertices with in- or out-degree above this.
    #[arg(long)]
    degree_threshold: Option<u64>,
    /// Draw a spanning forest in bold.
    #[arg(long)]
    spanning_tree: bool,
}

/// Arguments of `warpath debruijn-graph`.
#[derive(clap::Args)]
pub(crate) struct DebruijnArgs {
    /// FASTA or FASTQ reads (DNA).
    #[arg(long)]
    reads: PathBuf,
    /// k-mer length (2..=32): edges are the distinct k-mers, vertices their (k-1)-mers.
    #[arg(long)]
    k: u32,
    /// Write the graph here as `a -> b, c` adjacency lines.
    #[arg(long)]
    graph_out: Option<PathBuf>,
    /// Write the sequence spelled by an Euler path here (FASTA), when one exists.
    #[arg(long)]
    path_out: Option<PathBuf>,
    /// Where to run the Euler path: auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Exec,
}

fn load(file: &Path, format: Option<GraphFormat>) -> Result<Graph> {
    read_graph_file(file, format).with_context(|| format!("reading {}", file.display()))
}

/// The error with the vertex's name added when the graph has names.
fn named(g: &Graph, e: graph_core::EulerError) -> anyhow::Error {
    use graph_core::EulerError::{PathDegrees, Unbalanced};
    let v = match &e {
        Unbalanced { vertex, .. } | PathDegrees { vertex, .. } => Some(*vertex),
        _ => None,
    };
    match (v, g.names()) {
        (Some(v), Some(names)) => {
            let name = names.name(v).unwrap_or("?").to_owned();
            anyhow::Error::new(e).context(format!("vertex {v} is `{name}` in the input"))
        }
        _ => anyhow::Error::new(e),
    }
}

fn write_vertices(g: &Graph, t: &EulerTrail, path: &Path) -> Result<()> {
    let f = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = std::io::BufWriter::new(f);
    for &v in &t.vertices {
        match g.names().and_then(|n| n.name(v)) {
            Some(name) => writeln!(w, "{name}")?,
            None => writeln!(w, "{v}")?,
        }
    }
    w.flush()?;
    Ok(())
}

pub(crate) fn run_euler(args: EulerArgs, json: bool) -> Result<()> {
    let bar = progress(4, "euler", json);
    let started = Instant::now();
    let g = match (&args.file, args.generate) {
        (Some(f), _) => load(f, args.format)?,
        (None, Some(m)) => random_euler_graph(m, args.style, args.seed)?,
        (None, None) => bail!("give a graph FILE or --generate EDGES"),
    };
    let load_s = started.elapsed().as_secs_f64();
    bar.inc(1);
    let t = Instant::now();
    let (trail, backend) = if args.path {
        euler_path(&g, args.backend)
    } else {
        euler_circuit(&g, args.backend)
    }
    .map_err(|e| named(&g, e))?;
    let seconds = t.elapsed().as_secs_f64();
    bar.inc(1);
    let verified = if args.path {
        is_euler_path(&g, &trail)
    } else {
        is_euler_circuit(&g, &trail)
    };
    bar.inc(1);
    if let Some(out) = &args.output {
        write_vertices(&g, &trail, out)?;
    }
    bar.finish_and_clear();
    let kind = if args.path { "path" } else { "circuit" };
    let (start, end) = (
        trail.vertices.first().map(|&v| g.vertex_label(v)),
        trail.vertices.last().map(|&v| g.vertex_label(v)),
    );
    if json {
        println!(
            "{}",
            serde_json::json!({
                "n": g.edge_count(),
                "vertices": g.vertex_count(),
                "kind": kind,
                "backend": backend,
                "seconds": seconds,
                "load_seconds": load_s,
                "edges_per_second": g.edge_count() as f64 / seconds.max(1e-12),
                "verified": verified,
                "start": start,
                "end": end,
                "output": args.output,
            })
        );
    } else {
        println!(
            "Euler {kind}: {} edges, {} vertices, on {backend} in {:.3} s ({:.1} M edges/s), verified: {}",
            g.edge_count(),
            g.vertex_count(),
            seconds,
            g.edge_count() as f64 / seconds.max(1e-12) / 1e6,
            if verified { "yes" } else { "NO" }
        );
        if let (Some(s), Some(e)) = (start, end) {
            println!("  from {s} to {e}");
        }
        if let Some(out) = &args.output {
            println!("  vertex sequence written to {}", out.display());
        }
    }
    if !verified {
        bail!("the Euler {kind} failed verification");
    }
    Ok(())
}

pub(crate) fn run_graph(args: GraphArgs, json: bool) -> Result<()> {
    let started = Instant::now();
    let g = load(&args.file, args.format)?;
    let weak = graph_core::edge_component_count(&g);
    let strong = graph_core::strongly_connected_components(&g).count;
    let circuit = graph_core::check_euler_circuit_conditions(&g);
    let path = graph_core::euler_path_endpoints(&g);
    let trail = if args.euler && g.edge_count() > 0 {
        if circuit.is_ok() {
            Some(euler_circuit(&g, Exec::Auto)?.0)
        } else if path.is_ok() {
            Some(euler_path(&g, Exec::Auto)?.0)
        } else {
            None
        }
    } else {
        None
    };
    if let Some(dot) = &args.dot {
        let opts = DotOptions {
            euler: trail.as_ref(),
            color_components: args.components,
            degree_threshold: args.degree_threshold,
            spanning_tree: args.spanning_tree,
        };
        let f =
            std::fs::File::create(dot).with_context(|| format!("creating {}", dot.display()))?;
        graph_core::write_dot(&g, &opts, std::io::BufWriter::new(f))?;
    }
    let rendered = match (&args.dot, &args.render) {
        (Some(dot), Some(out)) => Some(graph_core::render_dot(dot, out)),
        _ => None,
    };
    let seconds = started.elapsed().as_secs_f64();
    let why = |r: &Result<_, graph_core::EulerError>| match r {
        Ok(_) => "yes".to_owned(),
        Err(e) => format!("no ({e})"),
    };
    if json {
        println!(
            "{}",
            serde_json::json!({
                "n": g.edge_count(),
                "vertices": g.vertex_count(),
                "weak_components": weak,
                "strong_components": strong,
                "euler_circuit": circuit.is_ok(),
                "euler_path": path.is_ok(),
                "euler_numbered": trail.is_some(),
                "dot": args.dot,
                "render": args.render,
                "rendered": matches!(rendered, Some(Ok(()))),
                "backend": Backend::Cpu,
                "seconds": seconds,
            })
        );
    } else {
        println!(
            "{}: {} vertices, {} edges",
            args.file.display(),
            g.vertex_count(),
            g.edge_count()
        );
        println!("  weakly connected components (with edges): {weak}");
        println!("  strongly connected components: {strong}");
        println!("  Euler circuit: {}", why(&circuit.map(|_| ())));
        println!("  Euler path: {}", why(&path.map(|_| ())));
        if let Some(dot) = &args.dot {
            println!("  DOT written to {}", dot.display());
        }
        if let (Some(r), Some(Ok(()))) = (&args.render, &rendered) {
            println!("  rendered to {}", r.display());
        }
        if args.euler && trail.is_none() {
            println!("  (no Euler circuit or path, edges not numbered)");
        }
    }
    if let Some(Err(e)) = rendered {
        return Err(anyhow::Error::new(e).context("rendering the DOT file"));
    }
    Ok(())
}

pub(crate) fn run_debruijn(args: DebruijnArgs, json: bool) -> Result<()> {
    let bar = progress(3, "debruijn-graph", json);
    let started = Instant::now();
    let kg = graph_core::kmer_graph_from_file(&args.reads, args.k)
        .with_context(|| format!("reading {}", args.reads.display()))?;
    let g = &kg.graph;
    bar.inc(1);
    if let Some(out) = &args.graph_out {
        let f =
            std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?;
        graph_core::write_adjacency(g, std::io::BufWriter::new(f))?;
    }
    bar.inc(1);
    let (path, backend, reason) = match euler_path(g, args.backend) {
        Ok((p, b)) if g.edge_count() > 0 => (Some(p), b, None),
        Ok((_, b)) => (None, b, Some("the reads have no k-mers".to_owned())),
        Err(e) => (None, Backend::Cpu, Some(e.to_string())),
    };
    let verified = path.as_ref().is_none_or(|p| is_euler_path(g, p));
    let spelled = path.as_ref().map(|p| graph_core::spell_walk(g, p));
    if let (Some(out), Some(seq)) = (&args.path_out, &spelled) {
        let mut f =
            std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?;
        writeln!(f, ">euler_path k={} length={}", args.k, seq.len())?;
        for chunk in seq.as_bytes().chunks(80) {
            f.write_all(chunk)?;
            writeln!(f)?;
        }
    }
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "n": g.edge_count(),
                "vertices": g.vertex_count(),
                "k": kg.k,
                "reads": kg.reads,
                "kmer_occurrences": kg.kmer_occurrences,
                "skipped_windows": kg.skipped_windows,
                "euler_path": path.is_some(),
                "no_path_reason": reason,
                "sequence_length": spelled.as_ref().map(String::len),
                "backend": backend,
                "seconds": seconds,
                "verified": verified,
                "graph_out": args.graph_out,
                "path_out": args.path_out,
            })
        );
    } else {
        println!(
            "{} reads, {} k-mer occurrences, {} distinct {}-mers (edges), {} vertices, {} windows skipped",
            kg.reads,
            kg.kmer_occurrences,
            g.edge_count(),
            kg.k,
            g.vertex_count(),
            kg.skipped_windows
        );
        match (&spelled, &reason) {
            (Some(seq), _) => {
                println!(
                    "Euler path on {backend}: spells {} bases (verified: {})",
                    seq.len(),
                    if verified { "yes" } else { "NO" }
                );
                if args.path_out.is_none() {
                    println!("{seq}");
                }
            }
            (None, Some(r)) => println!("no Euler path: {r}"),
            (None, None) => {}
        }
        if let Some(out) = &args.graph_out {
            println!("graph written to {}", out.display());
        }
        if let (Some(out), Some(_)) = (&args.path_out, &spelled) {
            println!("sequence written to {}", out.display());
        }
    }
    if !verified {
        bail!("the Euler path failed verification");
    }
    Ok(())
}

fn euler_row(
    name: &str,
    g: &Graph,
    run: impl FnOnce(&Graph) -> Result<(EulerTrail, Backend), graph_core::EulerError>,
) -> DemoRow {
    let t = Instant::now();
    match run(g) {
        Ok((trail, b)) => {
            let time = t.elapsed();
            DemoRow::new(name, g.edge_count(), b, time, is_euler_circuit(g, &trail))
        }
        Err(e) => DemoRow::failed(name, g.edge_count(), e),
    }
}

/// Euler circuits for `warpath demo`: Hierholzer and the parallel algorithm on a deep and a
/// shallow graph, and the GPU when there is one.
pub(crate) fn demo(size: DemoSize) -> Vec<DemoRow> {
    let m = match size {
        DemoSize::Small => 1 << 20,
        DemoSize::Large => 1 << 25,
    };
    let mut rows = Vec::new();
    for style in [EulerStyle::Deep, EulerStyle::Shallow] {
        let label = match style {
            EulerStyle::Deep => "deep",
            EulerStyle::Shallow => "shallow",
        };
        let g = match random_euler_graph(m, style, 7) {
            Ok(g) => g,
            Err(e) => {
                rows.push(DemoRow::failed("euler circuit", m, e));
                continue;
            }
        };
        rows.push(euler_row(
            &format!("euler circuit, Hierholzer ({label})"),
            &g,
            |g| graph_core::euler_circuit_hierholzer(g).map(|t| (t, Backend::Cpu)),
        ));
        rows.push(euler_row(
            &format!("euler circuit, parallel ({label})"),
            &g,
            |g| graph_core::euler_circuit_parallel(g).map(|t| (t, Backend::Cpu)),
        ));
        if gpu_runtime::gpu().is_ok() {
            rows.push(
                euler_row(&format!("euler circuit ({label})"), &g, |g| {
                    euler_circuit(g, Exec::Cuda)
                })
                .with_note("includes transfers"),
            );
        }
    }
    rows
}
