//! `warpath euler`, `warpath graph` and `warpath debruijn-graph` (graph-core).

use std::io::Write;
use std::path::{Path, PathBuf};

use warpath_io::{Element, Format, Output};

use crate::cli_io::{check_backend, guard_terminal, is_dash, output, report, written};
use crate::fail::{unverified, usage};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use gpu_runtime::{Backend, Exec};
use gpu_runtime::{GpuError, Target};
use graph_core::{
    DotOptions, EulerError, EulerStyle, EulerTrail, Graph, GraphFormat, MAX_EULER_EDGES,
    euler_circuit, euler_circuit_cuda_timed, euler_circuit_hierholzer, euler_circuit_parallel,
    euler_path, is_euler_circuit, is_euler_path, random_euler_graph, read_graph_file,
};

use crate::cmd::demo::DemoSize;
use crate::report::{DemoRow, Rows, format_seconds, progress};

/// The inputs of a single run, which the sweep's options conflict with (clap's `requires` does
/// not work with a flag like `--sweep`, whose default counts as present).
const SINGLE_RUN: [&str; 2] = ["file", "generate"];

/// The graph formats and conventions, for `--help` (a macro, so `concat!` can use it).
macro_rules! graph_formats {
    () => {
        "\
Graph files (format detected, or --format): edge lists `a b` (whitespace or commas; NetworkX's
write_edgelist dialects: extra columns such as weights and attribute dicts `a b {...}` are
ignored; a first line `source target` is a header), `a -> b, c` adjacency lines, SNAP edge
lists, Matrix Market .mtx (vertices named by their 1-based indices). # and % start comments.
Vertices are reported as the file names them.

Graphs are directed multigraphs (NetworkX's MultiDiGraph) unless --undirected (euler: a
MultiGraph): parallel edges and self loops count. Vertices without edges are ignored by the
Euler conditions (NetworkX's is_eulerian is False when there are any); a graph without edges
has the empty circuit."
    };
}

/// Arguments of `warpath euler`.
#[derive(clap::Args)]
#[command(after_help = concat!("\
Examples:
  warpath euler edges.txt -o circuit.txt          # one vertex name per line
  warpath euler --generate 1e6 --discard --json   # time a generated circuit
Timing sweep (the seed's chart: time against edges, CPU and GPU, deep and shallow graphs):
  warpath euler --sweep --csv euler.csv --plot euler.svg
  warpath euler --sweep --sweep-edges 1M,3M,10M --reps 1 --backend cpu --json

", graph_formats!()))]
pub(crate) struct EulerArgs {
    /// Graph file (- for standard input): edge list, `a -> b, c` adjacency lines, SNAP,
    /// Matrix Market .mtx (see below).
    #[arg(
        conflicts_with_all = ["generate", "sweep"],
        required_unless_present_any = ["generate", "sweep"]
    )]
    file: Option<PathBuf>,
    /// Input format instead of detecting it: edges, adjacency, snap or mtx.
    #[arg(long)]
    format: Option<GraphFormat>,
    /// Generate a random connected Eulerian digraph with this many edges instead of reading
    /// (1e6, 10M).
    #[arg(long, conflicts_with = "sweep", value_parser = crate::cli_io::count64)]
    generate: Option<u64>,
    /// Style of the generated graph: deep (few long cycles) or shallow (many 2-cycles).
    #[arg(long, default_value = "deep")]
    style: EulerStyle,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to run: auto, cpu or cuda. With --sweep: the CPU methods always run, the GPU
    /// under auto when there is one, and cuda makes a missing GPU an error.
    #[arg(long, default_value = "auto")]
    backend: Exec,
    /// Find an Euler path (the ±1 degree rule) instead of a circuit.
    #[arg(long, conflicts_with = "sweep")]
    path: bool,
    /// Read (or generate) the graph as undirected (NetworkX's MultiGraph): every line is an
    /// edge that can be walked either way; circuits need even degrees, paths run between the
    /// two odd-degree vertices (from the smaller one, as NetworkX).
    #[arg(long, conflicts_with = "sweep")]
    undirected: bool,
    /// Write the vertex sequence here, one vertex name per line (.txt), or - for standard
    /// output (the default, except under --json; a terminal gets at most 10,000 lines unless
    /// -o - is given).
    #[arg(long, short, conflicts_with = "sweep", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Find and verify the circuit without writing it (for timing).
    #[arg(long, conflicts_with_all = ["output", "sweep"])]
    discard: bool,
    /// Time Euler circuits against edge count on deep and shallow generated graphs (the
    /// seed's chart): Hierholzer, the parallel algorithm and, with a GPU, the CUDA pipeline
    /// (device compute and transfers reported apart). Sizes that would not fit in memory are
    /// skipped with a message.
    #[arg(long)]
    sweep: bool,
    /// Edge counts of the sweep, comma-separated, with optional k, M or G suffix
    /// [default: 1M,3M,10M,30M,100M].
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = parse_edge_count,
        conflicts_with_all = SINGLE_RUN
    )]
    sweep_edges: Option<Vec<u64>>,
    /// A quick sweep: 100k,300k,1M edges.
    #[arg(long, conflicts_with_all = SINGLE_RUN, conflicts_with = "sweep_edges")]
    quick: bool,
    /// Runs per method and graph in the sweep; the best time is reported [default: 3].
    #[arg(long, conflicts_with_all = SINGLE_RUN, value_parser = clap::value_parser!(u32).range(1..))]
    reps: Option<u32>,
    /// Write the sweep's rows here as CSV (style, edges, method, seconds, M edges/s).
    #[arg(long, conflicts_with_all = SINGLE_RUN, requires = "sweep")]
    csv: Option<PathBuf>,
    /// Draw the sweep here (.svg or .png): log-log time against edges, one line per method
    /// and style.
    #[arg(long, conflicts_with_all = SINGLE_RUN, requires = "sweep")]
    plot: Option<PathBuf>,
}

/// Arguments of `warpath graph`.
#[derive(clap::Args)]
#[command(after_help = graph_formats!())]
pub(crate) struct GraphArgs {
    /// Graph file (- for standard input): edge list, `a -> b, c` adjacency lines, SNAP,
    /// Matrix Market .mtx (see below).
    file: PathBuf,
    /// Input format instead of detecting it: edges, adjacency, snap or mtx.
    #[arg(long)]
    format: Option<GraphFormat>,
    /// Write GraphViz DOT here (.dot or .gv), or - for standard output.
    #[arg(long)]
    dot: Option<PathBuf>,
    /// Render the DOT file with GraphViz `dot` (format from the extension: .svg, .png, .pdf);
    /// warns above 5,000 edges, which dot lays out slowly and unreadably.
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
    /// Read the graph as undirected (NetworkX's MultiGraph): components are connected
    /// components, the Euler conditions are NetworkX's for MultiGraphs, DOT is `graph { a -- b }`.
    #[arg(long)]
    undirected: bool,
}

/// Arguments of `warpath debruijn-graph`.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  warpath debruijn-graph --reads reads.fa --k 21 --path-out contig.fa --graph-out graph.adj")]
pub(crate) struct DebruijnArgs {
    /// FASTA or FASTQ reads (DNA; gzip allowed).
    #[arg(long)]
    reads: PathBuf,
    /// k-mer length (2..=32): edges are the distinct k-mers, vertices their (k-1)-mers.
    #[arg(long)]
    k: u32,
    /// Write the graph here as `a -> b, c` adjacency lines (.adj or .txt), or -.
    #[arg(long)]
    graph_out: Option<PathBuf>,
    /// Write the sequence spelled by an Euler path here (.fa/.fasta), when one exists, or -
    /// (the default prints the sequence, except under --json).
    #[arg(long)]
    path_out: Option<PathBuf>,
    /// Where to run the Euler path: auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Exec,
}

fn load(file: &Path, format: Option<GraphFormat>) -> Result<Graph> {
    let g = if file.as_os_str() == "-" {
        let f = format.unwrap_or(GraphFormat::EdgeList);
        graph_core::read_graph(std::io::stdin().lock(), f)
    } else {
        read_graph_file(file, format)
    };
    g.with_context(|| format!("reading {}", file.display()))
}

/// A graph of either kind, as `euler` reads or generates it.
enum AnyGraph {
    Directed(Graph),
    Undirected(graph_core::UndirectedGraph),
}

impl AnyGraph {
    fn vertex_label(&self, v: u32) -> String {
        match self {
            AnyGraph::Directed(g) => g.vertex_label(v),
            AnyGraph::Undirected(g) => g.vertex_label(v),
        }
    }
    fn names(&self) -> Option<&graph_core::VertexNames> {
        match self {
            AnyGraph::Directed(g) => g.names(),
            AnyGraph::Undirected(g) => g.names(),
        }
    }
    fn vertex_count(&self) -> usize {
        match self {
            AnyGraph::Directed(g) => g.vertex_count(),
            AnyGraph::Undirected(g) => g.vertex_count(),
        }
    }
    fn edge_count(&self) -> u64 {
        match self {
            AnyGraph::Directed(g) => g.edge_count(),
            AnyGraph::Undirected(g) => g.edge_count(),
        }
    }
    /// An Euler path or circuit where `exec` says.
    fn trail(&self, path: bool, exec: Exec) -> Result<(EulerTrail, Backend), EulerError> {
        match (self, path) {
            (AnyGraph::Directed(g), true) => euler_path(g, exec),
            (AnyGraph::Directed(g), false) => euler_circuit(g, exec),
            (AnyGraph::Undirected(g), true) => graph_core::undirected_euler_path(g, None, exec),
            (AnyGraph::Undirected(g), false) => graph_core::undirected_euler_circuit(g, None, exec),
        }
    }
    /// The independent check of a trail.
    fn verify(&self, path: bool, t: &EulerTrail) -> bool {
        match (self, path) {
            (AnyGraph::Directed(g), true) => is_euler_path(g, t),
            (AnyGraph::Directed(g), false) => is_euler_circuit(g, t),
            (AnyGraph::Undirected(g), true) => graph_core::is_undirected_euler_path(g, t),
            (AnyGraph::Undirected(g), false) => graph_core::is_undirected_euler_circuit(g, t),
        }
    }
}

/// The directed graph `g` with its edges undirected (names kept).
fn undirected(g: Graph) -> Result<graph_core::UndirectedGraph> {
    let sources = g.edge_sources();
    let u = graph_core::UndirectedGraph::from_endpoints(g.vertex_count(), &sources, g.targets())?;
    Ok(match g.names() {
        Some(n) => u.with_names(n.clone())?,
        None => u,
    })
}

/// The error with the vertex as the input names it (its name, or its number when the graph
/// has no names), never the internal 0-based id next to a name.
fn named(label: &dyn Fn(u32) -> String, e: EulerError) -> anyhow::Error {
    let message = match &e {
        EulerError::Unbalanced {
            vertex,
            in_degree,
            out_degree,
        } => format!(
            "no Euler circuit: vertex `{}` has in-degree {in_degree} but out-degree {out_degree}",
            label(*vertex)
        ),
        EulerError::PathDegrees {
            vertex,
            in_degree,
            out_degree,
            reason,
        } => format!(
            "no Euler path: vertex `{}` has in-degree {in_degree} and out-degree {out_degree} ({reason})",
            label(*vertex)
        ),
        EulerError::OddDegree { vertex, degree } => format!(
            "no Euler circuit: vertex `{}` has odd degree {degree}",
            label(*vertex)
        ),
        EulerError::TooManyOddVertices {
            count,
            vertex,
            degree,
        } => format!(
            "no Euler path: {count} vertices have odd degree, at most 2 may; the third, vertex \
             `{}`, has degree {degree}",
            label(*vertex)
        ),
        _ => return anyhow::Error::new(e),
    };
    crate::fail::Fail {
        kind: "no_solution",
        message,
    }
    .into()
}

fn write_vertices(
    names: Option<&graph_core::VertexNames>,
    t: &EulerTrail,
    out: &Output,
) -> Result<()> {
    let mut w = out.open()?;
    let mut buf = Vec::with_capacity(1 << 16);
    for &v in &t.vertices {
        match names.and_then(|n| n.name(v)) {
            Some(name) => buf.extend_from_slice(name.as_bytes()),
            None => v.write_text(&mut buf),
        }
        buf.push(b'\n');
        if buf.len() >= 1 << 16 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    w.finish()?;
    Ok(())
}

pub(crate) fn run_euler(args: EulerArgs, json: bool) -> Result<()> {
    check_backend(args.backend, "euler", true)?;
    if args.sweep {
        return run_sweep(&args, json);
    }
    let out = if args.discard {
        None
    } else {
        output(
            "--output",
            args.output.as_deref(),
            &[Format::Text],
            json,
            true,
        )?
    };
    let bar = progress(4, "euler", json);
    let started = Instant::now();
    let g = match (&args.file, args.generate) {
        (Some(f), _) if args.undirected => AnyGraph::Undirected(undirected(load(f, args.format)?)?),
        (Some(f), _) => AnyGraph::Directed(load(f, args.format)?),
        (None, Some(m)) => {
            warpath_io::check_memory(
                &format!("--generate {m}"),
                m,
                SWEEP_BYTES_PER_EDGE as f64 * if args.undirected { 2.0 } else { 1.0 },
                0,
                "edges",
            )?;
            if args.undirected {
                AnyGraph::Undirected(graph_core::random_undirected_euler_graph(
                    m, args.style, args.seed,
                )?)
            } else {
                AnyGraph::Directed(random_euler_graph(m, args.style, args.seed)?)
            }
        }
        (None, None) => return Err(usage("give a graph FILE or --generate EDGES")),
    };
    let load_s = started.elapsed().as_secs_f64();
    bar.inc(1);
    let t = Instant::now();
    let (trail, backend) = g
        .trail(args.path, args.backend)
        .map_err(|e| named(&|v| g.vertex_label(v), e))?;
    let seconds = t.elapsed().as_secs_f64();
    bar.inc(1);
    let verified = g.verify(args.path, &trail);
    bar.inc(1);
    if let Some(o) = &out {
        guard_terminal(
            o,
            trail.vertices.len() as u64,
            is_dash(args.output.as_deref()),
            "--output",
        )?;
        write_vertices(g.names(), &trail, o)?;
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
                "undirected": args.undirected,
                "backend": backend,
                "seconds": seconds,
                "load_seconds": load_s,
                "edges_per_second": g.edge_count() as f64 / seconds.max(1e-12),
                "verified": verified,
                "start": start,
                "end": end,
                "output": out.as_ref().map(Output::describe),
            })
        );
    } else {
        let mut text = format!(
            "Euler {kind}: {} edges, {} vertices, on {backend} in {:.3} s ({:.1} M edges/s; loading {:.3} s), verified: {}",
            g.edge_count(),
            g.vertex_count(),
            seconds,
            g.edge_count() as f64 / seconds.max(1e-12) / 1e6,
            load_s,
            if verified { "yes" } else { "NO" }
        );
        if let (Some(s), Some(e)) = (start, end) {
            text.push_str(&format!("\n  from {s} to {e}"));
        }
        text.push_str(&written(out.as_ref()));
        report(&text, out.as_ref());
    }
    if !verified {
        return Err(unverified(format!("the Euler {kind} failed verification")));
    }
    Ok(())
}

/// Edges above which `graph --render` warns before calling `dot`.
const RENDER_WARN_EDGES: u64 = 5_000;

pub(crate) fn run_graph(args: GraphArgs, json: bool) -> Result<()> {
    let dot_out = output("--dot", args.dot.as_deref(), &[Format::Dot], json, false)?;
    if let Some(r) = &args.render {
        if dot_out.as_ref().is_some_and(Output::is_stdout) {
            return Err(usage(
                "--render needs --dot FILE (dot reads the file), not --dot -",
            ));
        }
        let ok = r
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| ["svg", "png", "pdf"].contains(&e.to_ascii_lowercase().as_str()));
        if !ok {
            return Err(usage(format!(
                "--render {}: dot renders .svg, .png or .pdf",
                r.display()
            )));
        }
        warpath_io::check_writable(r)?;
    }
    let started = Instant::now();
    let g = load(&args.file, args.format)?;
    let mut warnings = Vec::new();
    if args.render.is_some() && g.edge_count() > RENDER_WARN_EDGES {
        let w = format!(
            "rendering {} edges: dot may take minutes and draw an unreadable picture (it \
             suits a few thousand edges at most)",
            g.edge_count()
        );
        if !json {
            eprintln!("warning: {w}");
        }
        warnings.push(w);
    }
    let u = if args.undirected {
        Some(undirected(g.clone())?)
    } else {
        None
    };
    // Whether there is an Euler circuit / path, or why not (vertices named as in the file).
    let reason =
        |r: Result<(), EulerError>| r.map_err(|e| named(&|v| g.vertex_label(v), e).to_string());
    let (weak, strong, circuit, path) = match &u {
        None => (
            graph_core::edge_component_count(&g),
            Some(graph_core::strongly_connected_components(&g).count),
            reason(graph_core::check_euler_circuit_conditions(&g).map(|_| ())),
            reason(graph_core::euler_path_endpoints(&g).map(|_| ())),
        ),
        Some(u) => {
            // Components with at least one edge, as for directed graphs.
            let c = graph_core::connected_components(u);
            let mut with_edges = vec![false; c.count as usize];
            for (a, _) in u.edges() {
                with_edges[c.labels[a as usize] as usize] = true;
            }
            (
                with_edges.iter().filter(|&&x| x).count() as u64,
                None,
                reason(graph_core::undirected_euler_circuit(u, None, Exec::Cpu).map(|_| ())),
                reason(graph_core::undirected_euler_path(u, None, Exec::Cpu).map(|_| ())),
            )
        }
    };
    let trail = if args.euler && g.edge_count() > 0 {
        let any = match u.clone() {
            Some(u) => AnyGraph::Undirected(u),
            None => AnyGraph::Directed(g.clone()),
        };
        if circuit.is_ok() {
            Some(any.trail(false, Exec::Auto)?.0)
        } else if path.is_ok() {
            Some(any.trail(true, Exec::Auto)?.0)
        } else {
            None
        }
    } else {
        None
    };
    if let Some(o) = &dot_out {
        let opts = DotOptions {
            euler: trail.as_ref(),
            color_components: args.components,
            degree_threshold: args.degree_threshold,
            spanning_tree: args.spanning_tree,
        };
        let mut w = o.open()?;
        match &u {
            Some(u) => graph_core::write_dot_undirected(u, &opts, &mut w)?,
            None => graph_core::write_dot(&g, &opts, &mut w)?,
        }
        w.finish()?;
    }
    let rendered = match (&args.dot, &args.render) {
        (Some(dot), Some(out)) => Some(graph_core::render_dot(dot, out)),
        _ => None,
    };
    let seconds = started.elapsed().as_secs_f64();
    let why = |r: &Result<(), String>| match r {
        Ok(()) => "yes".to_owned(),
        Err(e) => format!("no ({e})"),
    };
    if json {
        println!(
            "{}",
            serde_json::json!({
                "n": g.edge_count(),
                "vertices": g.vertex_count(),
                "undirected": args.undirected,
                "weak_components": weak,
                "strong_components": strong,
                "euler_circuit": circuit.is_ok(),
                "euler_path": path.is_ok(),
                "euler_numbered": trail.is_some(),
                "dot": args.dot,
                "render": args.render,
                "rendered": matches!(rendered, Some(Ok(()))),
                "warnings": warnings,
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
        match strong {
            Some(strong) => {
                println!("  weakly connected components (with edges): {weak}");
                println!("  strongly connected components: {strong}");
            }
            None => println!("  connected components (with edges): {weak}"),
        }
        println!("  Euler circuit: {}", why(&circuit));
        println!("  Euler path: {}", why(&path));
        if let Some(p) = dot_out.as_ref().and_then(Output::path) {
            println!("  DOT written to {}", p.display());
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
    check_backend(args.backend, "debruijn-graph", true)?;
    let graph_out = output(
        "--graph-out",
        args.graph_out.as_deref(),
        &[Format::Adjacency, Format::Text],
        json,
        false,
    )?;
    let path_out = output(
        "--path-out",
        args.path_out.as_deref(),
        &[Format::Fasta],
        json,
        false,
    )?;
    if graph_out.as_ref().is_some_and(Output::is_stdout)
        && path_out.as_ref().is_some_and(Output::is_stdout)
    {
        return Err(usage(
            "--graph-out - and --path-out - both write to standard output",
        ));
    }
    let bar = progress(3, "debruijn-graph", json);
    let started = Instant::now();
    let kg = graph_core::kmer_graph_from_file(&args.reads, args.k)
        .with_context(|| format!("reading {}", args.reads.display()))?;
    let g = &kg.graph;
    bar.inc(1);
    if let Some(o) = &graph_out {
        let mut w = o.open()?;
        graph_core::write_adjacency(g, &mut w)?;
        w.finish()?;
    }
    bar.inc(1);
    let (path, backend, reason) = match euler_path(g, args.backend) {
        Ok((p, b)) if g.edge_count() > 0 => (Some(p), b, None),
        Ok((_, b)) => (None, b, Some("the reads have no k-mers".to_owned())),
        // A GPU that fails is an error, not "no path".
        Err(EulerError::Gpu(e)) => return Err(e.into()),
        Err(e) => (
            None,
            Backend::Cpu,
            Some(named(&|v| g.vertex_label(v), e).to_string()),
        ),
    };
    let verified = path.as_ref().is_none_or(|p| is_euler_path(g, p));
    let spelled = path.as_ref().map(|p| graph_core::spell_walk(g, p));
    if let (Some(o), Some(seq)) = (&path_out, &spelled) {
        let mut f = o.open()?;
        f.write_all(format!(">euler_path k={} length={}\n", args.k, seq.len()).as_bytes())?;
        for chunk in seq.as_bytes().chunks(80) {
            f.write_all(chunk)?;
            f.write_all(b"\n")?;
        }
        f.finish()?;
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
        if let Some(p) = graph_out.as_ref().and_then(Output::path) {
            println!("graph written to {}", p.display());
        }
        if let (Some(p), Some(_)) = (path_out.as_ref().and_then(Output::path), &spelled) {
            println!("sequence written to {}", p.display());
        }
    }
    if !verified {
        return Err(unverified("the Euler path failed verification"));
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
pub(crate) fn demo(size: DemoSize, rows: &mut Rows) {
    let m = match size {
        DemoSize::Small => 1 << 20,
        DemoSize::Large => 1 << 25,
    };
    for style in [EulerStyle::Deep, EulerStyle::Shallow] {
        let label = style_name(style);
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
}

fn style_name(style: EulerStyle) -> &'static str {
    match style {
        EulerStyle::Deep => "deep",
        EulerStyle::Shallow => "shallow",
    }
}

/// Edge counts of `warpath euler --sweep` by default: the seed's chart.
const SWEEP_EDGES: [u64; 5] = [1_000_000, 3_000_000, 10_000_000, 30_000_000, 100_000_000];

/// Edge counts of `--sweep --quick`.
const QUICK_SWEEP_EDGES: [u64; 3] = [100_000, 300_000, 1_000_000];

/// Host memory one sweep point needs per edge: the graph, the working set of the hungriest
/// method, its circuit and the verification. The peak resident size of a CPU sweep (release
/// build) was 44 bytes per edge at 10^7 edges and 31 at 3 x 10^7: this leaves room.
const SWEEP_BYTES_PER_EDGE: u64 = 64;

/// An edge count of `--sweep-edges`: a whole number with an optional k, M or G suffix
/// (10^3, 10^6, 10^9), from 1 to [`MAX_EULER_EDGES`].
fn parse_edge_count(s: &str) -> Result<u64, String> {
    let m = warpath_io::parse_count(s)?;
    if m == 0 || m > MAX_EULER_EDGES {
        return Err(format!(
            "{m} edges: an edge count must be from 1 to {MAX_EULER_EDGES}"
        ));
    }
    Ok(m)
}

/// The timed parts of one run, `(name, seconds)`.
type TimedParts = Vec<(&'static str, f64)>;

/// What the sweep times.
#[derive(Clone, Copy)]
enum SweepMethod {
    Hierholzer,
    Parallel,
    Cuda,
}

impl SweepMethod {
    fn name(self) -> &'static str {
        match self {
            SweepMethod::Hierholzer => "hierholzer",
            SweepMethod::Parallel => "parallel",
            SweepMethod::Cuda => "cuda",
        }
    }

    /// One run: the circuit and the timed parts as `(name, seconds)`. The CPU methods report
    /// wall-clock time; the GPU reports its device compute time and its transfers (upload and
    /// download), both measured with CUDA events.
    fn run(self, g: &Graph) -> Result<(EulerTrail, TimedParts), EulerError> {
        let wall = |name, f: fn(&Graph) -> Result<EulerTrail, EulerError>| {
            let t = Instant::now();
            f(g).map(|trail| (trail, vec![(name, t.elapsed().as_secs_f64())]))
        };
        match self {
            SweepMethod::Hierholzer => wall("hierholzer", euler_circuit_hierholzer),
            SweepMethod::Parallel => wall("parallel", euler_circuit_parallel),
            SweepMethod::Cuda => euler_circuit_cuda_timed(g).map(|(trail, t)| {
                let parts = vec![
                    ("cuda_compute", t.compute),
                    ("cuda_transfers", t.upload + t.download),
                ];
                (trail, parts)
            }),
        }
    }
}

/// One measurement of the sweep: the best time of `--reps` runs.
#[derive(serde::Serialize)]
struct SweepRow {
    style: &'static str,
    edges: u64,
    method: &'static str,
    seconds: f64,
    m_edges_per_second: f64,
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// `warpath euler --sweep`: times every method on deep and shallow graphs of each size, verifies
/// every circuit (untimed), and writes a table, CSV, an SVG chart or one JSON object.
fn run_sweep(args: &EulerArgs, json: bool) -> Result<()> {
    let started = Instant::now();
    let mut sizes = match (&args.sweep_edges, args.quick) {
        (_, true) => QUICK_SWEEP_EDGES.to_vec(),
        (Some(list), false) => list.clone(),
        (None, false) => SWEEP_EDGES.to_vec(),
    };
    sizes.sort_unstable();
    sizes.dedup();
    let gpu = match args.backend.resolve(1, 0) {
        Ok(target) => matches!(target, Target::Cuda(_)),
        Err(e) => return Err(anyhow::Error::new(e).context("choosing where the sweep runs")),
    };
    let mut methods = vec![SweepMethod::Hierholzer, SweepMethod::Parallel];
    if gpu {
        methods.push(SweepMethod::Cuda);
        // Load (JIT-compile) the kernels before the clock runs.
        euler_circuit_cuda_timed(&random_euler_graph(1000, EulerStyle::Shallow, 1)?)
            .context("warming up the GPU")?;
    }
    let mut skipped = Vec::new();
    if let Some(avail) = gpu_runtime::host_available_memory() {
        sizes.retain(|&m| {
            let need = m.saturating_mul(SWEEP_BYTES_PER_EDGE);
            let fits = need <= avail;
            if !fits {
                let msg = format!(
                    "{m} edges: needs about {:.1} GiB of memory, {:.1} GiB available",
                    gib(need),
                    gib(avail)
                );
                eprintln!("skipped {msg}");
                skipped.push(msg);
            }
            fits
        });
    }
    if sizes.is_empty() {
        bail!("no sweep size fits in memory ({})", skipped.join("; "));
    }
    // Create the outputs now, so that a bad path fails before the long part.
    let create =
        |p: &Path| std::fs::File::create(p).with_context(|| format!("creating {}", p.display()));
    let mut csv = args.csv.as_deref().map(create).transpose()?;
    if let (Some(f), Some(p)) = (csv.as_mut(), &args.csv) {
        write_sweep_csv_header(f).with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(p) = &args.plot {
        create(p)?;
    }
    let reps = args.reps.unwrap_or(3) as usize;
    let styles = [EulerStyle::Deep, EulerStyle::Shallow];
    let bar = progress(
        (sizes.len() * styles.len() * methods.len() * reps) as u64,
        "euler sweep",
        json,
    );
    let mut rows: Vec<SweepRow> = Vec::new();
    for &m in &sizes {
        for style in styles {
            let label = style_name(style);
            bar.set_message(format!("{label} {m}: generating"));
            let g = random_euler_graph(m, style, args.seed)?;
            for &method in &methods {
                bar.set_message(format!("{label} {m}: {}", method.name()));
                let mut best = TimedParts::new();
                for _ in 0..reps {
                    let (trail, parts) = match method.run(&g) {
                        Ok(r) => r,
                        Err(EulerError::Gpu(e @ GpuError::OutOfMemory { .. })) => {
                            let msg = format!("{} on {label} {m} edges: {e}", method.name());
                            bar.suspend(|| eprintln!("skipped {msg}"));
                            skipped.push(msg);
                            break;
                        }
                        Err(e) => {
                            return Err(anyhow::Error::new(e)
                                .context(format!("{} on {label} {m} edges", method.name())));
                        }
                    };
                    if !is_euler_circuit(&g, &trail) {
                        bail!(
                            "{} on {label} {m} edges: the circuit failed verification",
                            method.name()
                        );
                    }
                    best = if best.is_empty() {
                        parts
                    } else {
                        best.iter()
                            .zip(parts)
                            .map(|(&(n, a), (_, b))| (n, a.min(b)))
                            .collect()
                    };
                    bar.inc(1);
                }
                let measured: Vec<SweepRow> = best
                    .into_iter()
                    .map(|(name, seconds)| SweepRow {
                        style: label,
                        edges: g.edge_count(),
                        method: name,
                        seconds,
                        m_edges_per_second: g.edge_count() as f64 / seconds.max(1e-12) / 1e6,
                    })
                    .collect();
                if let (Some(f), Some(p)) = (csv.as_mut(), &args.csv) {
                    append_sweep_csv(f, &measured)
                        .with_context(|| format!("writing {}", p.display()))?;
                }
                rows.extend(measured);
            }
        }
    }
    bar.finish_and_clear();
    let ratios = shallow_over_deep(&rows);
    let largest = ratios.iter().map(|r| r.edges).max();
    let within_2x = ratios
        .iter()
        .filter(|r| Some(r.edges) == largest)
        .all(|r| r.shallow_over_deep <= 2.0);
    let threads = rayon::current_num_threads();
    if let Some(p) = &args.plot {
        let caption =
            format!("Euler circuit: time against edges (best of {reps}, {threads} threads)");
        plot_sweep(p, &rows, &caption)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "n": sizes.last(),
                "backend": if gpu { "cuda" } else { "cpu" },
                "reps": reps,
                "seed": args.seed,
                "threads": threads,
                "rows": rows,
                "shallow_over_deep": ratios,
                "largest_edges": largest,
                "shallow_within_2x": within_2x,
                "skipped": skipped,
                "verified": true,
                "csv": args.csv,
                "plot": args.plot,
                "seconds": seconds,
            })
        );
        return Ok(());
    }
    println!(
        "Euler circuit sweep, best of {reps} (seed {}, {} rayon threads{}), every circuit verified",
        args.seed,
        threads,
        if gpu {
            ", GPU: compute and transfers apart"
        } else {
            ", no GPU"
        }
    );
    println!(
        "{:>11}  {:<7}  {:<14}  {:>10}  {:>10}",
        "edges", "style", "method", "time", "M edges/s"
    );
    for r in &rows {
        println!(
            "{:>11}  {:<7}  {:<14}  {:>10}  {:>10.2}",
            r.edges,
            r.style,
            r.method,
            format_seconds(r.seconds),
            r.m_edges_per_second
        );
    }
    println!("shallow / deep cost per edge:");
    for r in &ratios {
        println!(
            "{:>11}  {:<14}  {:.2}x",
            r.edges, r.method, r.shallow_over_deep
        );
    }
    if let Some(m) = largest {
        println!(
            "at {m} edges shallow graphs cost {} 2x per edge of deep ones",
            if within_2x { "at most" } else { "MORE than" }
        );
    }
    for s in &skipped {
        println!("skipped {s}");
    }
    if let Some(p) = &args.csv {
        println!("CSV written to {}", p.display());
    }
    if let Some(p) = &args.plot {
        println!("chart written to {}", p.display());
    }
    println!("euler sweep: {seconds:.1} s");
    Ok(())
}

/// Shallow over deep cost per edge of one method at one size.
#[derive(serde::Serialize)]
struct StyleRatio {
    edges: u64,
    method: &'static str,
    shallow_over_deep: f64,
}

/// The ratio for every (size, method) measured on both styles.
fn shallow_over_deep(rows: &[SweepRow]) -> Vec<StyleRatio> {
    let per_edge = |r: &SweepRow| r.seconds / r.edges as f64;
    rows.iter()
        .filter(|d| d.style == "deep")
        .filter_map(|d| {
            let s = rows
                .iter()
                .find(|s| s.style == "shallow" && s.edges == d.edges && s.method == d.method)?;
            Some(StyleRatio {
                edges: d.edges,
                method: d.method,
                shallow_over_deep: per_edge(s) / per_edge(d).max(1e-300),
            })
        })
        .collect()
}

/// The sweep's CSV header.
fn write_sweep_csv_header(w: &mut impl Write) -> std::io::Result<()> {
    writeln!(w, "style,edges,method,seconds,m_edges_per_second")?;
    w.flush()
}

/// Appends rows to the sweep's CSV and flushes, so that a sweep cut short (a time limit, a
/// crash at a large size) keeps every row measured so far.
fn append_sweep_csv(w: &mut impl Write, rows: &[SweepRow]) -> std::io::Result<()> {
    for r in rows {
        writeln!(
            w,
            "{},{},{},{:.9},{:.4}",
            r.style, r.edges, r.method, r.seconds, r.m_edges_per_second
        )?;
    }
    w.flush()
}

/// A log axis label at 1 and 3 times a power of ten, in the largest unit of `units`
/// (`(scale, suffix)`, largest first) that it reaches: `3e6` -> `3M` (`1e-7` below them all);
/// other ticks stay blank.
fn log_tick(v: f64, units: &[(f64, &str)]) -> String {
    let e = v.log10();
    let mantissa = 10f64.powf(e - e.floor());
    let near = |x: f64| (mantissa - x).abs() < 1e-6 * x;
    if !(near(1.0) || near(3.0) || near(10.0)) {
        return String::new();
    }
    match units.iter().find(|(scale, _)| v >= scale * (1.0 - 1e-9)) {
        Some((scale, suffix)) => format!("{:.0}{suffix}", v / scale),
        None => format!("{v:.0e}"),
    }
}

/// Log-log chart of time against edges, one line per method and style (deep solid, shallow
/// dashed, one colour per method), like the seed's chart.
struct SweepChart<'a> {
    rows: &'a [SweepRow],
    caption: &'a str,
}

impl warpath_io::plot::Figure for SweepChart<'_> {
    fn draw<DB: plotters::prelude::DrawingBackend>(
        &self,
        root: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    ) -> Result<(), String> {
        use plotters::element::DashedPathElement;
        use plotters::prelude::*;
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let rows = self.rows;
        let span = |v: Vec<f64>| {
            v.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
                (lo.min(x), hi.max(x))
            })
        };
        let (x0, x1) = span(rows.iter().map(|r| r.edges as f64).collect());
        let (y0, y1) = span(rows.iter().map(|r| r.seconds.max(1e-9)).collect());
        let mut chart = ChartBuilder::on(root)
            .caption(self.caption, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(
                (x0 / 1.5..x1 * 1.5).log_scale(),
                (y0 / 2.0..y1 * 2.0).log_scale(),
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .x_desc("edges")
            .y_desc("seconds")
            .x_label_formatter(&|&x| log_tick(x, &[(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]))
            .y_label_formatter(&|&y| {
                log_tick(
                    y,
                    &[(1.0, " s"), (1e-3, " ms"), (1e-6, " µs"), (1e-9, " ns")],
                )
            })
            .draw()
            .map_err(err)?;
        let mut methods: Vec<&str> = Vec::new();
        for r in rows {
            if !methods.contains(&r.method) {
                methods.push(r.method);
            }
        }
        for (i, method) in methods.iter().enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            for style in ["deep", "shallow"] {
                let pts: Vec<(f64, f64)> = rows
                    .iter()
                    .filter(|r| r.method == *method && r.style == style)
                    .map(|r| (r.edges as f64, r.seconds.max(1e-9)))
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                let (line, label) = (colour.stroke_width(2), format!("{method} ({style})"));
                if style == "deep" {
                    chart
                        .draw_series(LineSeries::new(pts.clone(), line))
                        .map_err(err)?
                        .label(label)
                        .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], line));
                } else {
                    chart
                        .draw_series(DashedLineSeries::new(pts.clone(), 8, 5, line))
                        .map_err(err)?
                        .label(label)
                        .legend(move |(x, y)| {
                            DashedPathElement::new([(x, y), (x + 24, y)], 6, 4, line)
                        });
                }
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                    .map_err(err)?;
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

/// Draws the sweep chart (`.svg` or `.png` by the extension).
fn plot_sweep(path: &Path, rows: &[SweepRow], caption: &str) -> Result<()> {
    warpath_io::plot::render(path, (900, 650), &SweepChart { rows, caption })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_counts_parse_with_suffixes_and_bounds() {
        for (s, want) in [
            ("1", 1),
            ("10k", 10_000),
            (" 3M", 3_000_000),
            ("100m", 100_000_000),
            ("4G", 4_000_000_000),
            ("1.5M", 1_500_000),
            ("2^20", 1 << 20),
        ] {
            assert_eq!(parse_edge_count(s), Ok(want), "{s}");
        }
        for s in ["0", "0k", "", "abc", "1.5", "-1", "5G", "k"] {
            assert!(parse_edge_count(s).is_err(), "{s} accepted");
        }
        assert_eq!(parse_edge_count("4294967294"), Ok(MAX_EULER_EDGES));
    }

    #[test]
    fn log_ticks_label_one_and_three_times_powers_of_ten() {
        let edges = [(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")];
        let secs = [(1.0, " s"), (1e-3, " ms"), (1e-6, " µs")];
        assert_eq!(log_tick(3e6, &edges), "3M");
        assert_eq!(log_tick(1e8, &edges), "100M");
        assert_eq!(log_tick(30.0, &edges), "30");
        assert_eq!(log_tick(2e6, &edges), "");
        assert_eq!(log_tick(0.003, &secs), "3 ms");
        assert_eq!(log_tick(1e-4, &secs), "100 µs");
        assert_eq!(log_tick(1e-7, &secs), "1e-7");
    }
}
