//! GraphViz DOT export (directed `digraph` and undirected `graph`) and rendering with the `dot`
//! program.
//!
//! The writer is hand-written: DOT for a multigraph with per-edge attributes is a few lines, and
//! the DOT crates on crates.io are either unmaintained or pull a parser we do not need. Every
//! identifier is quoted and escaped.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use crate::{
    Components, EulerTrail, Graph, GraphError, UndirectedGraph, connected_components,
    spanning_forest, undirected_spanning_forest, weakly_connected_components,
};

/// What [`write_dot`] draws besides the vertices and edges.
#[derive(Debug, Clone, Copy, Default)]
pub struct DotOptions<'a> {
    /// Label every edge with its position in this Euler circuit or path (1-based).
    pub euler: Option<&'a EulerTrail>,
    /// Fill vertices with a colour per weakly connected component (connected component for
    /// undirected graphs).
    pub color_components: bool,
    /// Draw vertices whose in-degree or out-degree (degree for undirected graphs) is above
    /// this as double circles.
    pub degree_threshold: Option<u64>,
    /// Draw the edges of a spanning forest bold and blue.
    pub spanning_tree: bool,
}

const PALETTE: [&str; 12] = [
    "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
    "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f",
];

/// `s` as a quoted DOT identifier.
///
/// # Examples
/// ```
/// assert_eq!(graph_core::dot_quote("a \"b\"\\"), r#""a \"b\"\\""#);
/// ```
pub fn dot_quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\r' => {}
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// Writes `g` in GraphViz DOT (a `digraph`; vertices by name or number).
///
/// # Complexity
/// `O(V + E)` (plus `O(E)` for the options).
///
/// # Errors
/// [`GraphError::Io`]; [`GraphError::InvalidParameter`] when `options.euler` has a different
/// number of edges than `g`.
///
/// # Examples
/// ```
/// use graph_core::{Graph, DotOptions, write_dot};
/// let g = Graph::from_edges(2, &[(0, 1), (1, 0)])?;
/// let mut out = Vec::new();
/// write_dot(&g, &DotOptions { spanning_tree: true, ..Default::default() }, &mut out)?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.starts_with("digraph G {"));
/// assert!(text.contains("\"0\" -> \"1\""));
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn write_dot<W: Write>(g: &Graph, options: &DotOptions<'_>, out: W) -> Result<(), GraphError> {
    let degrees = options
        .degree_threshold
        .map(|_| (g.in_degrees(), g.out_degrees()));
    let drawing = Drawing {
        directed: true,
        vertices: g.vertex_count(),
        edges: g.edge_count() as usize,
        label: &|v| g.vertex_label(v),
        components: &|| weakly_connected_components(g),
        forest: &|| spanning_forest(g),
        degree_note: &|v, th| {
            let (ind, outd) = degrees.as_ref()?;
            (ind[v] > th || outd[v] > th).then(|| format!("in {} / out {}", ind[v], outd[v]))
        },
    };
    drawing.write(g.edges(), options, out)
}

/// Writes the undirected graph `g` in GraphViz DOT: a `graph` whose edges are `a -- b` (one per
/// edge, so parallel edges and self-loops are all drawn), with the options of [`write_dot`]
/// (components are connected components; the degree threshold applies to the degree).
///
/// # Complexity
/// `O(V + E)` (plus `O(E α(V))` for the components and the spanning forest).
///
/// # Errors
/// [`GraphError::Io`]; [`GraphError::InvalidParameter`] when `options.euler` has a different
/// number of edges than `g`.
///
/// # Examples
/// ```
/// use graph_core::{DotOptions, Exec, UndirectedGraph, undirected_euler_circuit, write_dot_undirected};
/// let g = UndirectedGraph::from_edges(2, &[(0, 1), (1, 0), (1, 1)])?;
/// let (t, _) = undirected_euler_circuit(&g, None, Exec::Cpu)?;
/// let mut out = Vec::new();
/// write_dot_undirected(&g, &DotOptions { euler: Some(&t), ..Default::default() }, &mut out)?;
/// let text = String::from_utf8(out)?;
/// assert!(text.starts_with("graph G {"));
/// assert!(text.contains("\"1\" -- \"1\" [label=")); // the self-loop, with its position
/// assert_eq!(text.matches(" -- ").count(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_dot_undirected<W: Write>(
    g: &UndirectedGraph,
    options: &DotOptions<'_>,
    out: W,
) -> Result<(), GraphError> {
    let drawing = Drawing {
        directed: false,
        vertices: g.vertex_count(),
        edges: g.edge_count() as usize,
        label: &|v| g.vertex_label(v),
        components: &|| connected_components(g),
        forest: &|| undirected_spanning_forest(g),
        degree_note: &|v, th| {
            let d = g.degree(v as u32);
            (d > th).then(|| format!("degree {d}"))
        },
    };
    drawing.write(g.edges(), options, out)
}

/// What [`write_dot`] and [`write_dot_undirected`] need to know of a graph.
struct Drawing<'a> {
    directed: bool,
    vertices: usize,
    edges: usize,
    label: &'a dyn Fn(u32) -> String,
    components: &'a dyn Fn() -> Components,
    forest: &'a dyn Fn() -> Vec<u64>,
    /// The tooltip of a vertex whose degree is above the threshold, `None` below it.
    degree_note: &'a dyn Fn(usize, u64) -> Option<String>,
}

impl Drawing<'_> {
    fn write<W: Write>(
        &self,
        edges: impl Iterator<Item = (u32, u32)>,
        options: &DotOptions<'_>,
        mut out: W,
    ) -> Result<(), GraphError> {
        let m = self.edges;
        let mut position = Vec::new();
        if let Some(t) = options.euler {
            if t.edges.len() != m {
                return Err(GraphError::InvalidParameter(format!(
                    "the Euler trail has {} edges, the graph {m}",
                    t.edges.len()
                )));
            }
            position = vec![0usize; m];
            for (i, &e) in t.edges.iter().enumerate() {
                if let Some(p) = position.get_mut(e as usize) {
                    *p = i + 1;
                }
            }
        }
        let comps = options.color_components.then(|| (self.components)());
        let mut tree = Vec::new();
        if options.spanning_tree {
            tree = vec![false; m];
            for e in (self.forest)() {
                tree[e as usize] = true;
            }
        }
        let (keyword, arrow) = if self.directed {
            ("digraph", "->")
        } else {
            ("graph", "--")
        };
        writeln!(out, "{keyword} G {{")?;
        writeln!(out, "  node [shape=circle, style=filled, fillcolor=white];")?;
        for v in 0..self.vertices {
            let mut attrs = Vec::new();
            if let Some(c) = &comps {
                attrs.push(format!(
                    "fillcolor={}",
                    dot_quote(PALETTE[c.labels[v] as usize % PALETTE.len()])
                ));
            }
            if let Some(note) = options
                .degree_threshold
                .and_then(|th| (self.degree_note)(v, th))
            {
                attrs.push("shape=doublecircle".into());
                attrs.push(format!("tooltip={}", dot_quote(&note)));
            }
            let name = dot_quote(&(self.label)(v as u32));
            if attrs.is_empty() {
                writeln!(out, "  {name};")?;
            } else {
                writeln!(out, "  {name} [{}];", attrs.join(", "))?;
            }
        }
        for (e, (s, t)) in edges.enumerate() {
            let mut attrs = Vec::new();
            if !position.is_empty() {
                attrs.push(format!("label={}", dot_quote(&position[e].to_string())));
            }
            if !tree.is_empty() && tree[e] {
                attrs.push("color=\"blue\", penwidth=2.5".into());
            }
            let (s, t) = (dot_quote(&(self.label)(s)), dot_quote(&(self.label)(t)));
            if attrs.is_empty() {
                writeln!(out, "  {s} {arrow} {t};")?;
            } else {
                writeln!(out, "  {s} {arrow} {t} [{}];", attrs.join(", "))?;
            }
        }
        writeln!(out, "}}")?;
        out.flush()?;
        Ok(())
    }
}

/// Whether the GraphViz `dot` program can be run.
pub fn dot_available() -> bool {
    Command::new("dot")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Renders a DOT file with GraphViz `dot`; the output format comes from the output's extension
/// (`svg`, `png`, `pdf`, ...; default `svg`).
///
/// # Complexity
/// That of GraphViz's layout.
///
/// # Errors
/// [`GraphError::DotNotInstalled`] (with how to install GraphViz) when `dot` is missing;
/// [`GraphError::DotFailed`] with its stderr when it fails.
///
/// # Examples
/// ```no_run
/// graph_core::render_dot("g.dot".as_ref(), "g.svg".as_ref())?;
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn render_dot(dot_file: &Path, output: &Path) -> Result<(), GraphError> {
    let format = output
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("svg")
        .to_ascii_lowercase();
    let result = Command::new("dot")
        .arg(format!("-T{format}"))
        .arg(dot_file)
        .arg("-o")
        .arg(output)
        .output();
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(GraphError::DotNotInstalled),
        Err(e) => Err(GraphError::Io(e)),
        Ok(o) if !o.status.success() => Err(GraphError::DotFailed {
            status: o.status.to_string(),
            stderr: String::from_utf8_lossy(&o.stderr).trim().to_owned(),
        }),
        Ok(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Exec, VertexNames, euler_circuit};

    /// The DOT text `write` gives with every option on (the trail `t`, degrees over
    /// `threshold`), after checking that it refuses a trail of the wrong length.
    fn dot_with_all_options(
        t: &EulerTrail,
        threshold: u64,
        write: impl Fn(&DotOptions, &mut Vec<u8>) -> Result<(), GraphError>,
    ) -> String {
        let short = EulerTrail::default();
        let opts = DotOptions {
            euler: Some(&short),
            ..Default::default()
        };
        assert!(write(&opts, &mut Vec::new()).is_err());
        let opts = DotOptions {
            euler: Some(t),
            color_components: true,
            degree_threshold: Some(threshold),
            spanning_tree: true,
        };
        let mut out = Vec::new();
        write(&opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn dot_with_all_options_and_escaping() {
        let names =
            VertexNames::from_names(vec!["a\"x".into(), "b\\y".into(), "c\nz".into()]).unwrap();
        let g = Graph::from_edges(3, &[(0, 1), (1, 2), (2, 0), (0, 0)])
            .unwrap()
            .with_names(names)
            .unwrap();
        let (t, _) = euler_circuit(&g, Exec::Cpu).unwrap();
        let s = dot_with_all_options(&t, 1, |opts, out| write_dot(&g, opts, out));
        assert!(s.contains(r#""a\"x" -> "b\\y""#), "{s}");
        assert!(s.contains(r#""c\nz""#));
        assert_eq!(s.matches("doublecircle").count(), 1, "{s}");
        assert_eq!(s.matches("penwidth").count(), 2);
        for i in 1..=4 {
            assert!(s.contains(&format!("label=\"{i}\"")));
        }
        assert_eq!(s.matches("fillcolor=\"#8dd3c7\"").count(), 3);
    }

    #[test]
    fn undirected_dot_draws_every_edge_once_with_its_options() {
        use crate::undirected_euler_path;
        let names = VertexNames::from_names(vec!["a".into(), "b".into(), "c\"".into()]).unwrap();
        // A double edge, a self-loop and a triangle; vertex 2 has degree 4, 0 and 1 have 3.
        let g = UndirectedGraph::from_edges(3, &[(0, 1), (1, 0), (2, 2), (1, 2), (2, 0)])
            .unwrap()
            .with_names(names)
            .unwrap();
        let (t, _) = undirected_euler_path(&g, None, Exec::Cpu).unwrap();
        let s = dot_with_all_options(&t, 3, |opts, out| write_dot_undirected(&g, opts, out));
        assert!(s.starts_with("graph G {\n"), "{s}");
        assert!(!s.contains("->"));
        assert_eq!(s.matches(" -- ").count(), 5);
        assert!(s.contains(r#""a" -- "b""#) && s.contains(r#""b" -- "a""#));
        assert!(s.contains(r#""c\"" -- "c\"""#));
        // The positions of the Euler path, one per edge.
        for i in 1..=5 {
            assert_eq!(s.matches(&format!("label=\"{i}\"")).count(), 1, "{s}");
        }
        // Spanning forest: 2 edges for 3 connected vertices; one vertex over degree 3.
        assert_eq!(s.matches("penwidth").count(), 2);
        assert_eq!(s.matches("doublecircle").count(), 1);
        assert!(s.contains("tooltip=\"degree 4\""));
        assert_eq!(s.matches("fillcolor=\"#8dd3c7\"").count(), 3);
        // The DOT parses (when GraphViz is installed).
        if dot_available() {
            let dir = std::env::temp_dir().join(format!("graph-core-udot-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let (dot, svg) = (dir.join("u.dot"), dir.join("u.svg"));
            write_dot_undirected(
                &g,
                &DotOptions::default(),
                std::fs::File::create(&dot).unwrap(),
            )
            .unwrap();
            render_dot(&dot, &svg).unwrap();
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn render_reports_missing_dot_or_renders() {
        let dir = std::env::temp_dir().join(format!("graph-core-dot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dot = dir.join("g.dot");
        std::fs::write(&dot, "digraph G { a -> b; }\n").unwrap();
        let svg = dir.join("g.svg");
        match render_dot(&dot, &svg) {
            Ok(()) => assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg")),
            Err(e) => {
                assert!(!dot_available());
                assert!(matches!(e, GraphError::DotNotInstalled));
                assert!(e.to_string().contains("apt-get install graphviz"));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
