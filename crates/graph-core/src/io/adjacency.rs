//! The adjacency format, `a -> b, c` lines: its reader, and the writer that gives lines it
//! reads back.

use std::io::{BufRead, Write};

use super::{is_comment, parse_err};
use crate::{Graph, GraphError, VertexNames};

/// Reads lines, calling `f(line_number, line)` for each (without the newline).
fn for_lines<R: BufRead>(
    mut r: R,
    mut f: impl FnMut(usize, &str) -> Result<(), GraphError>,
) -> Result<(), GraphError> {
    let mut buf = String::new();
    let mut no = 0usize;
    loop {
        buf.clear();
        let read = r.read_line(&mut buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                parse_err(no + 1, "UTF-8 text", "invalid UTF-8")
            } else {
                GraphError::Io(e)
            }
        })?;
        if read == 0 {
            return Ok(());
        }
        no += 1;
        let line = buf.trim_end_matches(['\n', '\r']);
        // A UTF-8 byte-order mark starts the file, not its first name.
        let line = if no == 1 {
            line.strip_prefix('\u{feff}').unwrap_or(line)
        } else {
            line
        };
        f(no, line)?;
    }
}

struct Builder {
    names: VertexNames,
    sources: Vec<u32>,
    targets: Vec<u32>,
}

impl Builder {
    fn new() -> Self {
        Builder {
            names: VertexNames::new(),
            sources: Vec::new(),
            targets: Vec::new(),
        }
    }
    fn finish(self) -> Result<Graph, GraphError> {
        Graph::from_sources_targets(self.names.len(), &self.sources, &self.targets)?
            .with_names(self.names)
    }
}

/// Reads [`GraphFormat::Adjacency`](super::GraphFormat::Adjacency) lines.
pub(super) fn read_adjacency<R: BufRead>(input: R) -> Result<Graph, GraphError> {
    let mut b = Builder::new();
    let expected = "`name -> name, name, ...`";
    for_lines(input, |no, line| {
        let t = line.trim();
        if is_comment(t) {
            return Ok(());
        }
        let Some((left, right)) = t.split_once("->") else {
            return Err(parse_err(no, expected, line));
        };
        let left = left.trim();
        if left.is_empty() || left.contains(',') {
            return Err(parse_err(no, "one vertex name before `->`", line));
        }
        let s = b.names.intern(left)?;
        let right = right.trim();
        if right.is_empty() {
            return Ok(());
        }
        for item in right.split(',') {
            let item = item.trim();
            if item.is_empty() || item.contains("->") {
                return Err(parse_err(
                    no,
                    "vertex names separated by commas after `->`",
                    line,
                ));
            }
            let d = b.names.intern(item)?;
            b.sources.push(s);
            b.targets.push(d);
        }
        Ok(())
    })?;
    b.finish()
}

/// Whether [`GraphFormat::Adjacency`](super::GraphFormat::Adjacency) reads `name` back as itself from the lines
/// [`write_adjacency`] writes: not empty, no surrounding whitespace (lines and names are
/// trimmed), no `,` or `->` (they separate names), no line break, no `#` or `%` first (a
/// line starting so is a comment) and no byte-order mark first (one starting the file is
/// skipped).
fn adjacency_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.trim() == name
        && !name.contains([',', '\n'])
        && !name.contains("->")
        && !name.starts_with(['#', '%', '\u{feff}'])
}

/// Writes `g` as `a -> b, c` adjacency lines (names or numbers), one line per vertex, so that
/// [`GraphFormat::Adjacency`](crate::GraphFormat::Adjacency) reads it back (isolated vertices appear as `a ->`): the same
/// vertices, each with its out-edges in the same order.
///
/// # Complexity
/// `O(V + E)`.
///
/// # Errors
/// [`GraphError::InvalidParameter`], before anything is written, for a vertex name the
/// format cannot hold (names from an edge list may have a `->` inside, or start with a
/// form feed or a byte-order mark, which adjacency lines would read as another name);
/// [`GraphError::Io`].
///
/// # Examples
/// ```
/// let g = graph_core::Graph::from_edges(2, &[(0, 1), (0, 0)])?;
/// let mut out = Vec::new();
/// graph_core::write_adjacency(&g, &mut out)?;
/// assert_eq!(String::from_utf8(out).unwrap(), "0 -> 1, 0\n1 ->\n");
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn write_adjacency<W: Write>(g: &Graph, mut out: W) -> Result<(), GraphError> {
    if let Some(bad) = (0..g.vertex_count() as u32)
        .map(|v| g.vertex_label(v))
        .find(|name| !adjacency_name_ok(name))
    {
        return Err(GraphError::InvalidParameter(format!(
            "vertex name {bad:?} cannot be written as an adjacency line (a name there has no \
             surrounding whitespace, no `,`, `->` or line break, and no `#` or `%` first)"
        )));
    }
    for v in 0..g.vertex_count() as u32 {
        write!(out, "{} ->", g.vertex_label(v))?;
        for (i, &t) in g.successors(v).iter().enumerate() {
            write!(
                out,
                "{}{}",
                if i == 0 { " " } else { ", " },
                g.vertex_label(t)
            )?;
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(())
}
