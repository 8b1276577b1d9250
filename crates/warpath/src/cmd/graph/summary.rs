//! `warpath graph`: summarise a graph file, write GraphViz DOT and render it.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use gpu_runtime::{Backend, Exec};
use graph_core::{DotOptions, EulerError, Graph, GraphError, GraphFormat};
use warpath_io::{Format, Output};

use super::input::{AnyGraph, load, named, undirected};
use crate::cli_io::output;
use crate::fail::usage;

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

/// Edges above which `graph --render` warns before calling `dot`.
const RENDER_WARN_EDGES: u64 = 5_000;

/// Checks `--render` before any work: it needs `--dot FILE` (dot reads the file, not
/// standard output), an extension dot renders, and a writable destination.
fn check_render(args: &GraphArgs, dot_out: Option<&Output>) -> Result<()> {
    let Some(r) = &args.render else {
        return Ok(());
    };
    if dot_out.is_some_and(Output::is_stdout) {
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
    Ok(())
}

/// What `warpath graph` found about the graph, for the text report.
struct Facts<'a> {
    /// Weakly (or, undirected, simply) connected components with at least one edge.
    weak: u64,
    /// Strongly connected components; `None` for an undirected graph.
    strong: Option<u32>,
    /// Whether there is an Euler circuit, or why not.
    circuit: &'a Result<(), String>,
    /// Whether there is an Euler path, or why not.
    path: &'a Result<(), String>,
    /// Whether the DOT numbers the edges along an Euler trail.
    numbered: bool,
}

/// Prints the text report of `warpath graph`: sizes, components, the Euler answers (with
/// the reason for a "no") and where the DOT and its rendering went.
fn print_text(
    args: &GraphArgs,
    g: &Graph,
    facts: &Facts<'_>,
    dot_out: Option<&Output>,
    rendered: Option<&Result<(), GraphError>>,
) {
    let why = |r: &Result<(), String>| match r {
        Ok(()) => "yes".to_owned(),
        Err(e) => format!("no ({e})"),
    };
    let weak = facts.weak;
    println!(
        "{}: {} vertices, {} edges",
        args.file.display(),
        g.vertex_count(),
        g.edge_count()
    );
    match facts.strong {
        Some(strong) => {
            println!("  weakly connected components (with edges): {weak}");
            println!("  strongly connected components: {strong}");
        }
        None => println!("  connected components (with edges): {weak}"),
    }
    println!("  Euler circuit: {}", why(facts.circuit));
    println!("  Euler path: {}", why(facts.path));
    if let Some(p) = dot_out.and_then(Output::path) {
        println!("  DOT written to {}", p.display());
    }
    if let (Some(r), Some(Ok(()))) = (&args.render, rendered) {
        println!("  rendered to {}", r.display());
    }
    if args.euler && !facts.numbered {
        println!("  (no Euler circuit or path, edges not numbered)");
    }
}

/// Runs `warpath graph`: checks the arguments, reads the graph, answers the Euler questions,
/// writes (and renders) the DOT, and prints the report.
pub(crate) fn run_graph(args: GraphArgs, json: bool) -> Result<()> {
    let dot_out = output("--dot", args.dot.as_deref(), &[Format::Dot], json, false)?;
    check_render(&args, dot_out.as_ref())?;
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
    if json {
        super::print_graph_json(
            &g,
            Backend::Cpu,
            seconds,
            serde_json::json!({
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
            }),
        );
    } else {
        let facts = Facts {
            weak,
            strong,
            circuit: &circuit,
            path: &path,
            numbered: trail.is_some(),
        };
        print_text(&args, &g, &facts, dot_out.as_ref(), rendered.as_ref());
    }
    if let Some(Err(e)) = rendered {
        return Err(anyhow::Error::new(e).context("rendering the DOT file"));
    }
    Ok(())
}
