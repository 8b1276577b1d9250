//! Reading graphs (edge lists, `a -> b, c` adjacency lines, SNAP edge lists, Matrix Market
//! coordinate files) and writing them back. Every malformed line is an error with its number.
//! Matrix Market text is parsed by warpath-io (its one grammar of the format); this module
//! builds the graph from the entries.
//!
//! This module holds the formats, their detection and the file reader; each format's parser
//! has a module of its own.

use std::io::{BufRead, Read};
use std::path::Path;

use crate::{Graph, GraphError};

mod adjacency;
mod edge_list;
mod matrix_market;

use adjacency::read_adjacency;
pub use adjacency::write_adjacency;
use edge_list::{parse_pairs_text, read_pairs};
use matrix_market::{graph_of_matrix_market, read_matrix_market};

/// A text format for graphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphFormat {
    /// One edge per line, `a b` (whitespace or a comma between the two names); `#` and `%`
    /// lines are comments. Names are arbitrary tokens, numbered in order of appearance; when
    /// every name is a plain non-negative integer and the largest is below twice the number
    /// of edge ends (or 65,536), vertex `v` is the file's `v` and skipped ids are vertices
    /// without edges (as igraph reads numeric edge lists).
    /// NetworkX's dialects read as NetworkX writes them: extra columns (`a b 3.5`, weights)
    /// and an attribute dict (`a b {}`, `a b {'weight': 2}`) are ignored, and a first line
    /// `source target` (or `source,target,...`, `from to`, `src dst`, `node1 node2`, any
    /// case) is a header, not an edge.
    EdgeList,
    /// One vertex per line, `a -> b, c, d` (its out-neighbours; `a ->` for none).
    Adjacency,
    /// A SNAP edge list: `# comment` lines, then `from<TAB>to` with non-negative integer ids
    /// (extra columns ignored, leading zeros dropped). Ids are numbered as in
    /// [`GraphFormat::EdgeList`]: by value when dense, else in order of appearance, the
    /// original ids as names.
    Snap,
    /// Matrix Market `coordinate` (`pattern`, `integer` or `real` values, which are ignored;
    /// `general` or `symmetric`), read with warpath-io's one Matrix Market grammar
    /// ([`warpath_io::matrix_market`]; a byte-order mark is skipped): entry `(i, j)` is the edge
    /// `i - 1 -> j - 1`; vertex `v` is named `v + 1`, the file's 1-based index.
    MatrixMarket,
}

impl std::str::FromStr for GraphFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_choice(
            s,
            "format",
            &[
                (&["edges", "edgelist", "edge-list"], GraphFormat::EdgeList),
                (&["adjacency", "adj"], GraphFormat::Adjacency),
                (&["snap"], GraphFormat::Snap),
                (&["mtx", "mm", "matrix-market"], GraphFormat::MatrixMarket),
            ],
        )
    }
}

/// The value of the choice that has `s` (in any case) among its names; else the error
/// "`what` must be a, b or c, not `s`", listing each choice's first name.
pub(crate) fn parse_choice<T: Copy>(
    s: &str,
    what: &str,
    choices: &[(&[&str], T)],
) -> Result<T, String> {
    let lower = s.to_ascii_lowercase();
    if let Some(&(_, value)) = choices.iter().find(|(names, _)| names.contains(&&*lower)) {
        return Ok(value);
    }
    let firsts: Vec<&str> = choices.iter().map(|(names, _)| names[0]).collect();
    let (last, others) = firsts.split_last().expect("at least one choice");
    Err(format!(
        "{what} must be {} or {last}, not `{s}`",
        others.join(", ")
    ))
}

fn shorten(s: &str) -> String {
    let t = s.trim_end_matches(['\n', '\r']);
    if t.chars().count() > 60 {
        let cut: String = t.chars().take(57).collect();
        format!("{cut}...")
    } else {
        t.to_owned()
    }
}

fn parse_err(line: usize, expected: &str, found: &str) -> GraphError {
    GraphError::Parse {
        line,
        expected: expected.to_owned(),
        found: shorten(found),
    }
}

/// Reads a graph in `format`.
///
/// # Complexity
/// `O(input size)` (names go through a hash map).
///
/// # Errors
/// [`GraphError::Parse`] with the line number, what was expected and what was found;
/// [`GraphError::Io`]; [`GraphError::TooLarge`].
///
/// # Examples
/// ```
/// use graph_core::{read_graph, GraphFormat};
/// let g = read_graph("a -> b, c\nb -> a\nc ->\n".as_bytes(), GraphFormat::Adjacency)?;
/// assert_eq!(g.edge_count(), 3);
/// assert_eq!(g.vertex_label(2), "c");
/// let e = read_graph("1 2\n3\n".as_bytes(), GraphFormat::EdgeList).unwrap_err();
/// assert!(e.to_string().starts_with("line 2:"));
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn read_graph<R: BufRead>(input: R, format: GraphFormat) -> Result<Graph, GraphError> {
    match format {
        GraphFormat::EdgeList | GraphFormat::Snap => read_pairs(input, format == GraphFormat::Snap),
        GraphFormat::Adjacency => read_adjacency(input),
        GraphFormat::MatrixMarket => read_matrix_market(input),
    }
}

fn is_comment(t: &str) -> bool {
    t.is_empty() || t.starts_with('#') || t.starts_with('%')
}

/// Guesses a file's format: `.mtx` or a `%%MatrixMarket` first line is Matrix Market; a first
/// data line with `->` is the adjacency format; otherwise an edge list (which also reads SNAP).
///
/// # Errors
/// [`GraphError::Io`] when the file cannot be read.
pub fn detect_format(path: &Path) -> Result<GraphFormat, GraphError> {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("mtx"))
    {
        return Ok(GraphFormat::MatrixMarket);
    }
    let f = std::io::BufReader::new(std::fs::File::open(path)?);
    for line in f.lines().take(1000) {
        let Ok(line) = line else { break };
        let t = line.trim_start_matches('\u{feff}').trim();
        if t.to_ascii_lowercase().starts_with("%%matrixmarket") {
            return Ok(GraphFormat::MatrixMarket);
        }
        if is_comment(t) {
            continue;
        }
        return Ok(if t.contains("->") {
            GraphFormat::Adjacency
        } else {
            GraphFormat::EdgeList
        });
    }
    Ok(GraphFormat::EdgeList)
}

/// A large regular file mapped into memory, read-only (Linux). Reading the file into a
/// buffer instead copies every byte and faults in as many fresh pages (BENCHMARKS.md,
/// "Edge-list loading").
///
/// The file is taken not to change while it is read: a writer truncating it then would end
/// the process with `SIGBUS`, as in other tools that map their inputs.
#[cfg(target_os = "linux")]
struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

#[cfg(target_os = "linux")]
impl Mapped {
    /// The mapping of `f`, or `None` when it is not a regular file of at least
    /// [`PARALLEL_MIN_BYTES`](edge_list::PARALLEL_MIN_BYTES) (smaller files are read) or the kernel refuses.
    fn new(f: &std::fs::File) -> Option<Mapped> {
        use std::os::unix::io::AsRawFd;
        let meta = f.metadata().ok()?;
        let len = usize::try_from(meta.len()).ok()?;
        if !meta.is_file() || len < edge_list::PARALLEL_MIN_BYTES {
            return None;
        }
        // SAFETY: a fresh read-only private mapping of `len` bytes of an open file; nothing
        // else refers to the address range, which `Drop` unmaps.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_POPULATE,
                f.as_raw_fd(),
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(Mapped { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes at `ptr` for as long as the mapping lives (the file is
        // taken not to change meanwhile, see the type's docs).
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

#[cfg(target_os = "linux")]
impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the range mapped in `new`, no longer borrowed (`bytes` borrows `self`).
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}

/// Reads a graph file; `format = None` detects it with [`detect_format`]. On Linux an edge
/// list or SNAP file of 1 MiB or more is mapped into memory rather than copied: it must not
/// be truncated while it is read.
///
/// # Complexity
/// `O(file size)`.
///
/// # Errors
/// As [`read_graph`].
///
/// # Examples
/// ```no_run
/// let g = graph_core::read_graph_file("web-Google.txt".as_ref(), None)?;
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn read_graph_file(path: &Path, format: Option<GraphFormat>) -> Result<Graph, GraphError> {
    let format = match format {
        Some(f) => f,
        None => detect_format(path)?,
    };
    let mut f = std::fs::File::open(path)?;
    let parse = |bytes: &[u8]| match format {
        GraphFormat::MatrixMarket => graph_of_matrix_market(bytes),
        _ => parse_pairs_text(bytes, format == GraphFormat::Snap),
    };
    if let GraphFormat::EdgeList | GraphFormat::Snap | GraphFormat::MatrixMarket = format {
        #[cfg(target_os = "linux")]
        if let Some(map) = Mapped::new(&f) {
            return parse(map.bytes());
        }
        // The whole file is parsed from memory: read it into a buffer of its size (growing
        // one by doubling copied it about twice over).
        let size = f.metadata().map_or(0, |m| m.len() as usize);
        let mut bytes = Vec::with_capacity(size + 1);
        f.read_to_end(&mut bytes)?;
        return parse(&bytes);
    }
    read_graph(std::io::BufReader::with_capacity(1 << 20, f), format)
}

#[cfg(test)]
mod tests;
