//! Reading graphs (edge lists, `a -> b, c` adjacency lines, SNAP edge lists, Matrix Market
//! coordinate files) and writing them back. Every malformed line is an error with its number.
//! Matrix Market text is parsed by warpath-io (its one grammar of the format); this module
//! builds the graph from the entries.

use std::io::{BufRead, Read, Write};
use std::path::Path;

use warpath_io::matrix_market::{
    MmField, MmFormat, MmHeader, MmSink, MmSymmetry, MmSyntaxError, MmValue, parse_matrix_market,
};

use crate::{Graph, GraphError, VertexNames};

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
        match s.to_ascii_lowercase().as_str() {
            "edges" | "edgelist" | "edge-list" => Ok(GraphFormat::EdgeList),
            "adj" | "adjacency" => Ok(GraphFormat::Adjacency),
            "snap" => Ok(GraphFormat::Snap),
            "mtx" | "mm" | "matrix-market" => Ok(GraphFormat::MatrixMarket),
            _ => Err(format!(
                "format must be edges, adjacency, snap or mtx, not `{s}`"
            )),
        }
    }
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

fn read_pairs<R: BufRead>(mut input: R, snap: bool) -> Result<Graph, GraphError> {
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes)?;
    parse_pairs_text(&bytes, snap)
}

/// [`parse_pairs`] of a whole file's bytes.
fn parse_pairs_text(bytes: &[u8], snap: bool) -> Result<Graph, GraphError> {
    // A UTF-8 byte-order mark starts the file, not its first name.
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    parse_pairs(text, snap)
}

/// First-line headers of edge-list tables (pandas / NetworkX `to_pandas_edgelist` exports).
const HEADERS: [(&str, &str); 6] = [
    ("source", "target"),
    ("from", "to"),
    ("src", "dst"),
    ("source_node", "target_node"),
    ("node1", "node2"),
    ("tail", "head"),
];

/// Inputs at least this large are tokenised on every core.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

/// One edge: the byte ranges (start, length) of its two names.
#[derive(Clone, Copy)]
struct EdgeTokens {
    a: (usize, u32),
    b: (usize, u32),
}

impl EdgeTokens {
    fn name(b: &[u8], (s, l): (usize, u32)) -> &[u8] {
        &b[s..s + l as usize]
    }
}

/// Where a chunk failed: the byte offset of the line and what was expected (`expected` is
/// empty when a name is not an integer on the integer pass: not an error, another pass).
struct PairFail {
    offset: usize,
    expected: &'static str,
}

/// What the tokeniser collects: the names' byte ranges, or their values when every name is a
/// canonical integer.
trait PairSink {
    /// Whether the sink keeps integer values (lines of two canonical integers then take the
    /// tokeniser's fast path, [`PairSink::take_ints`]).
    const INTEGERS: bool = false;
    /// Takes one edge's names `b[a.0..a.1]`, `b[c.0..c.1]`; `false` stops the pass.
    fn take(&mut self, b: &[u8], a: (usize, usize), c: (usize, usize)) -> bool;
    /// Takes one edge whose names are the canonical integers `x` and `y` (only when
    /// `INTEGERS`); `false` stops the pass (a value the sink cannot hold).
    fn take_ints(&mut self, _x: u64, _y: u64) -> bool {
        unreachable!("only integer sinks take integers")
    }
    /// Makes room for about `lines` more edges (a hint).
    fn reserve(&mut self, _lines: usize) {}
}

impl PairSink for Vec<EdgeTokens> {
    fn take(&mut self, _: &[u8], a: (usize, usize), c: (usize, usize)) -> bool {
        self.push(EdgeTokens {
            a: (a.0, (a.1 - a.0) as u32),
            b: (c.0, (c.1 - c.0) as u32),
        });
        true
    }
}

impl PairSink for Vec<(u64, u64)> {
    const INTEGERS: bool = true;
    #[inline(always)]
    fn take_ints(&mut self, x: u64, y: u64) -> bool {
        self.push((x, y));
        true
    }
    fn take(&mut self, b: &[u8], a: (usize, usize), c: (usize, usize)) -> bool {
        match (canonical_int(&b[a.0..a.1]), canonical_int(&b[c.0..c.1])) {
            (Some(x), Some(y)) => {
                self.push((x, y));
                true
            }
            _ => false,
        }
    }
}

/// The largest integer name that [`U32Edges`] holds: with it the graph has `u32::MAX - 1`
/// vertices, the most a [`Graph`] has.
const MAX_U32_NAME: u64 = u32::MAX as u64 - 2;

/// Edges whose names are canonical integers of at most [`MAX_U32_NAME`] (the common case),
/// as `[source, target]` values, and the largest value: what the CSR build takes directly.
#[derive(Default)]
struct U32Edges {
    edges: Vec<[u32; 2]>,
    max: u32,
}

impl PairSink for U32Edges {
    const INTEGERS: bool = true;
    #[inline(always)]
    fn take_ints(&mut self, x: u64, y: u64) -> bool {
        let top = x.max(y);
        if top > MAX_U32_NAME {
            return false;
        }
        self.max = self.max.max(top as u32);
        self.edges.push([x as u32, y as u32]);
        true
    }
    fn take(&mut self, b: &[u8], a: (usize, usize), c: (usize, usize)) -> bool {
        match (canonical_int(&b[a.0..a.1]), canonical_int(&b[c.0..c.1])) {
            (Some(x), Some(y)) => self.take_ints(x, y),
            _ => false,
        }
    }
    fn reserve(&mut self, lines: usize) {
        self.edges.reserve(lines);
    }
}

/// About how many lines `b` holds: its newlines in the first 64 KiB, scaled to its length
/// (plus a little, so that a uniform file needs no second allocation).
fn estimate_lines(b: &[u8]) -> usize {
    let sample = &b[..b.len().min(1 << 16)];
    if sample.is_empty() {
        return 0;
    }
    let lines = sample.iter().filter(|&&c| c == b'\n').count() + 1;
    (lines as u128 * b.len() as u128 / sample.len() as u128) as usize * 21 / 20 + 16
}

#[inline(always)]
fn is_sep(c: u8) -> bool {
    c == b' ' || c == b'\t' || c == b',' || c == b'\r'
}

#[inline(always)]
fn hash_bytes(b: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(b);
    h.finish()
}

/// The name token `b[s..e]` of a SNAP id: digits only, leading zeros dropped (`007` is `7`).
fn snap_id(b: &[u8], s: usize, e: usize) -> Option<(usize, usize)> {
    if s == e || !b[s..e].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut s = s;
    while s + 1 < e && b[s] == b'0' {
        s += 1;
    }
    Some((s, e))
}

/// Tokenises the lines of `b[start..end]` (whole lines; offsets are into `b`).
fn tokenize_pairs<S: PairSink>(
    b: &[u8],
    start: usize,
    end: usize,
    snap: bool,
    header_allowed: bool,
    out: &mut S,
) -> Result<(), PairFail> {
    let expected = if snap {
        "two non-negative integer vertex ids `from to`"
    } else {
        "two vertex names `a b`"
    };
    let mut i = start;
    let mut first = header_allowed;
    while i < end {
        if S::INTEGERS {
            // A line of two canonical integers (the common case) in one pass over its bytes;
            // any other line (and any line this does not take) goes the general way below,
            // which reads such a line to the same two values.
            if let Some((x, y, next)) = int_line(b, i, end) {
                if !out.take_ints(x, y) {
                    return Err(PairFail {
                        offset: i,
                        expected: "",
                    });
                }
                first = false; // a header is never two integers
                i = next;
                continue;
            }
        }
        let line_start = i;
        let line_end = b[i..end]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(end, |p| i + p);
        i = line_end + 1;
        let mut p = line_start;
        while p < line_end && is_sep(b[p]) {
            p += 1;
        }
        if p == line_end || b[p] == b'#' || b[p] == b'%' {
            continue;
        }
        let token = |p: &mut usize| {
            let s = *p;
            while *p < line_end && !is_sep(b[*p]) {
                *p += 1;
            }
            let e = *p;
            while *p < line_end && is_sep(b[*p]) {
                *p += 1;
            }
            (s, e)
        };
        let (sa, ea) = token(&mut p);
        if p == line_end || b[p] == b'{' {
            return Err(PairFail {
                offset: line_start,
                expected,
            });
        }
        let (sb, eb) = token(&mut p);
        // The rest of the line: extra columns or an attribute dict, ignored.
        if first {
            first = false;
            let (x, y) = (&b[sa..ea], &b[sb..eb]);
            if HEADERS.iter().any(|(h, t)| {
                x.eq_ignore_ascii_case(h.as_bytes()) && y.eq_ignore_ascii_case(t.as_bytes())
            }) {
                continue;
            }
        }
        let ((sa, ea), (sb, eb)) = if snap {
            match (snap_id(b, sa, ea), snap_id(b, sb, eb)) {
                (Some(x), Some(y)) => (x, y),
                _ => {
                    return Err(PairFail {
                        offset: line_start,
                        expected,
                    });
                }
            }
        } else {
            ((sa, ea), (sb, eb))
        };
        let long = |len: usize| u32::try_from(len).is_err();
        if long(ea - sa) || long(eb - sb) {
            return Err(PairFail {
                offset: line_start,
                expected: "vertex names shorter than 4 GiB",
            });
        }
        if !out.take(b, (sa, ea), (sb, eb)) {
            return Err(PairFail {
                offset: line_start,
                expected: "",
            });
        }
    }
    Ok(())
}

/// The canonical integer (as [`canonical_int`]) starting at `b[p]` and ending before `end`
/// or the first byte that is not a digit: its value and the position after it; `None` when
/// there is none, it has a leading zero or more than 19 digits.
#[inline(always)]
fn int_at(b: &[u8], mut p: usize, end: usize) -> Option<(u64, usize)> {
    let s = p;
    let mut v = 0u64;
    while p < end && b[p].is_ascii_digit() {
        v = v.wrapping_mul(10).wrapping_add((b[p] - b'0') as u64);
        p += 1;
    }
    let len = p - s;
    if len == 0 || len > 19 || (b[s] == b'0' && len > 1) {
        return None;
    }
    Some((v, p))
}

/// The tokeniser's fast path: the line at `b[i..]` (a piece ending at `end`) when it starts
/// with a canonical integer, then separators, then a canonical integer ended by a separator,
/// the line's end or the piece's end: the two values and where the next line starts. Every
/// other line is `None` (the general path reads it, errors included). Whatever follows the
/// second name on its line is ignored, as the general path ignores extra columns.
#[inline(always)]
fn int_line(b: &[u8], i: usize, end: usize) -> Option<(u64, u64, usize)> {
    let (x, mut p) = int_at(b, i, end)?;
    if p == end || !is_sep(b[p]) {
        return None;
    }
    while p < end && is_sep(b[p]) {
        p += 1;
    }
    let (y, p) = int_at(b, p, end)?;
    if p == end {
        return Some((x, y, end));
    }
    match b[p] {
        b'\n' => Some((x, y, p + 1)),
        c if is_sep(c) => {
            let next = b[p..end]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(end, |q| p + q + 1);
            Some((x, y, next))
        }
        _ => None,
    }
}

/// 1-based line of byte `offset`.
fn line_of(b: &[u8], offset: usize) -> usize {
    b[..offset.min(b.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

fn line_text(b: &[u8], offset: usize) -> String {
    let end = b[offset..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| offset + p);
    String::from_utf8_lossy(&b[offset..end]).into_owned()
}

/// The value of a name that is a canonical decimal integer (no sign, no leading zero, at most
/// 19 digits), so that equal values are equal names.
#[inline]
fn canonical_int(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 19 || (t[0] == b'0' && t.len() > 1) {
        return None;
    }
    let mut v = 0u64;
    for &c in t {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u64;
    }
    Some(v)
}

/// Reads an edge list (or SNAP file) from memory. Lines are tokenised in parallel (pieces of
/// whole lines). When every name is a canonical integer that a `u32` holds (the common case),
/// the pieces' values go straight to the CSR build. Names are numbered in order of
/// appearance: when every name is a canonical integer, by their values (a first-occurrence pass over a dense table, or a hash map of
/// integers when the values are sparse); otherwise by hashing the names (in parallel) and
/// one pass over a hash table of the precomputed hashes.
fn parse_pairs(b: &[u8], snap: bool) -> Result<Graph, GraphError> {
    let threads = rayon::current_num_threads();
    let mut starts = vec![0usize];
    if b.len() >= PARALLEL_MIN_BYTES && threads > 1 {
        let step = b.len() / (threads * 4);
        let mut at = step;
        while at < b.len() {
            match b[at..].iter().position(|&c| c == b'\n') {
                Some(p) if at + p + 1 < b.len() => {
                    starts.push(at + p + 1);
                    at += p + 1 + step;
                }
                _ => break,
            }
        }
    }
    // A header can only be the first data line: the first piece's. First pass: every name a
    // canonical integer (the common case, no hashing of text); else a pass over byte ranges.
    fn pass<S: PairSink + Default + Send>(
        b: &[u8],
        starts: &[usize],
        snap: bool,
    ) -> Result<Vec<S>, PairFail> {
        use rayon::prelude::*;
        starts
            .par_iter()
            .enumerate()
            .map(|(k, &s)| {
                let e = starts.get(k + 1).copied().unwrap_or(b.len());
                let mut out = S::default();
                out.reserve(estimate_lines(&b[s..e]));
                tokenize_pairs(b, s, e, snap, k == 0, &mut out).map(|()| out)
            })
            .collect()
    }
    let fail = |f: PairFail| parse_err(line_of(b, f.offset), f.expected, &line_text(b, f.offset));
    // First pass: names that are integers a `u32` holds, straight into the CSR build. A line
    // it refuses has a name that is not such an integer: too large (the pass over `u64`
    // values reads it) or not an integer at all (the pass over byte ranges).
    let refused = match pass::<U32Edges>(b, &starts, snap) {
        Ok(pieces) => return graph_of_u32_pieces(&pieces),
        Err(f) if !f.expected.is_empty() => return Err(fail(f)),
        Err(f) => f.offset,
    };
    let mut one_line = Vec::<(u64, u64)>::new();
    let line_end = b[refused..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| refused + p);
    let wide = tokenize_pairs(b, refused, line_end, snap, false, &mut one_line).is_ok();
    let integers = if wide {
        pass::<Vec<(u64, u64)>>(b, &starts, snap)
    } else {
        Err(PairFail {
            offset: refused,
            expected: "",
        })
    };
    let (sources, targets, names) = match integers {
        Ok(pieces) => intern_integers(&pieces)?,
        Err(f) if !f.expected.is_empty() => return Err(fail(f)),
        Err(_) => {
            let pieces = pass::<Vec<EdgeTokens>>(b, &starts, snap).map_err(fail)?;
            intern_names(b, &pieces.concat())?
        }
    };
    match names {
        Names::Identity(n) => Graph::from_sources_targets(n, &sources, &targets),
        Names::Given(names) => Graph::from_sources_targets(names.len(), &sources, &targets)?
            .with_names(VertexNames::from_names(names)?),
    }
}

/// The graph of the edges the [`U32Edges`] pass read, numbered as [`intern_integers`] numbers
/// them: by value when dense (the CSR built from the pieces as they are), else in order of
/// appearance.
fn graph_of_u32_pieces(pieces: &[U32Edges]) -> Result<Graph, GraphError> {
    let m: usize = pieces.iter().map(|p| p.edges.len()).sum();
    if m == 0 {
        return Graph::from_sources_targets(0, &[], &[]);
    }
    let max = pieces.iter().map(|p| p.max).max().unwrap_or(0) as u64;
    if dense(max, m) {
        let slices: Vec<&[[u32; 2]]> = pieces.iter().map(|p| &p.edges[..]).collect();
        return Graph::from_edge_pieces_trusted(max as usize + 1, &slices);
    }
    let pairs = pieces
        .iter()
        .flat_map(|p| &p.edges)
        .map(|&[a, c]| (a as u64, c as u64));
    let (sources, targets, names) = intern_sparse(pairs, m)?;
    Graph::from_sources_targets(names.len(), &sources, &targets)?
        .with_names(VertexNames::from_names(names)?)
}

/// Whether integer names up to `max` on `m` edges are numbered by value: the largest below
/// twice the number of endpoints (or 65,536), and the vertex count below `u32::MAX`.
fn dense(max: u64, m: usize) -> bool {
    let tokens = m as u64 * 2;
    max < tokens.saturating_mul(2).max(1 << 16) && max < u32::MAX as u64 - 1
}

/// The vertices' names: their numbers themselves (integer names `0..n`, all present), or
/// names by vertex number.
enum Names {
    Identity(usize),
    Given(Vec<String>),
}

/// Edge endpoints by vertex number, and the names of the vertices.
type Interned = (Vec<u32>, Vec<u32>, Names);

fn too_many_vertices(count: usize) -> GraphError {
    GraphError::TooLarge {
        what: "vertices",
        count: count as u128,
        max: u32::MAX as u128 - 1,
    }
}

/// Numbers integer names: by their values when they are dense (the largest below twice the
/// number of endpoints, or 65,536): vertex `v` is the file's `v`, ids the file skips are
/// vertices without edges (as igraph reads numeric edge lists); sparse values are numbered in
/// order of appearance through a hash map of integers.
///
/// `pieces` are the edges of consecutive pieces of the file, in order (not concatenated: that
/// copy cost as much as numbering).
fn intern_integers(pieces: &[Vec<(u64, u64)>]) -> Result<Interned, GraphError> {
    use rayon::prelude::*;
    let max = pieces
        .par_iter()
        .map(|p| p.iter().map(|&(a, c)| a.max(c)).max().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let m: usize = pieces.iter().map(Vec::len).sum();
    if m == 0 {
        return Ok((Vec::new(), Vec::new(), Names::Identity(0)));
    }
    if dense(max, m) {
        let mut sources = vec![0u32; m];
        let mut targets = vec![0u32; m];
        // each piece writes its own stretch of both arrays
        let mut parts = Vec::with_capacity(pieces.len());
        let (mut s, mut t) = (&mut sources[..], &mut targets[..]);
        for p in pieces {
            let (s0, s1) = std::mem::take(&mut s).split_at_mut(p.len());
            let (t0, t1) = std::mem::take(&mut t).split_at_mut(p.len());
            parts.push((p, s0, t0));
            (s, t) = (s1, t1);
        }
        parts.into_par_iter().for_each(|(p, s, t)| {
            for ((&(a, c), s), t) in p.iter().zip(s).zip(t) {
                (*s, *t) = (a as u32, c as u32);
            }
        });
        return Ok((sources, targets, Names::Identity(max as usize + 1)));
    }
    let (sources, targets, names) = intern_sparse(pieces.iter().flatten().copied(), m)?;
    Ok((sources, targets, Names::Given(names)))
}

/// Edge endpoints by vertex number and the vertices' names.
type Numbered = (Vec<u32>, Vec<u32>, Vec<String>);

/// Numbers the integer names of `m` edges in order of appearance (a hash map of integers):
/// the edges' endpoints and the vertices' names.
fn intern_sparse(
    pairs: impl Iterator<Item = (u64, u64)>,
    m: usize,
) -> Result<Numbered, GraphError> {
    use rayon::prelude::*;
    let mut map: rustc_hash::FxHashMap<u64, u32> = rustc_hash::FxHashMap::default();
    let mut order = Vec::new();
    let mut sources = Vec::with_capacity(m);
    let mut targets = Vec::with_capacity(m);
    for (a, c) in pairs {
        for (v, out) in [(a, &mut sources), (c, &mut targets)] {
            let next = order.len();
            let id = *map.entry(v).or_insert_with(|| next as u32);
            if id as usize == next {
                if next >= u32::MAX as usize - 1 {
                    return Err(too_many_vertices(next + 1));
                }
                order.push(v);
            }
            out.push(id);
        }
    }
    let names = order.par_iter().map(u64::to_string).collect();
    Ok((sources, targets, names))
}

/// Numbers arbitrary names in order of appearance: hashes computed in parallel, then one pass
/// over a hash table of them.
fn intern_names(b: &[u8], tokens: &[EdgeTokens]) -> Result<Interned, GraphError> {
    use rayon::prelude::*;
    let hashes: Vec<(u64, u64)> = tokens
        .par_iter()
        .map(|t| {
            (
                hash_bytes(EdgeTokens::name(b, t.a)),
                hash_bytes(EdgeTokens::name(b, t.b)),
            )
        })
        .collect();
    let m = tokens.len();
    let mut table: hashbrown::HashTable<u32> = hashbrown::HashTable::new();
    let mut spans: Vec<(usize, u32)> = Vec::new();
    let mut name_hashes: Vec<u64> = Vec::new();
    let mut sources = Vec::with_capacity(m);
    let mut targets = Vec::with_capacity(m);
    let mut intern = |span: (usize, u32), h: u64| -> Result<u32, GraphError> {
        let name = EdgeTokens::name(b, span);
        if let Some(&id) = table.find(h, |&id| EdgeTokens::name(b, spans[id as usize]) == name) {
            return Ok(id);
        }
        if std::str::from_utf8(name).is_err() {
            let off = span.0;
            let ls = b[..off]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |p| p + 1);
            return Err(parse_err(line_of(b, off), "UTF-8 text", &line_text(b, ls)));
        }
        if spans.len() >= u32::MAX as usize - 1 {
            return Err(too_many_vertices(spans.len() + 1));
        }
        let id = spans.len() as u32;
        spans.push(span);
        name_hashes.push(h);
        table.insert_unique(h, id, |&id| name_hashes[id as usize]);
        Ok(id)
    };
    for (t, &(ha, hb)) in tokens.iter().zip(&hashes) {
        sources.push(intern(t.a, ha)?);
        targets.push(intern(t.b, hb)?);
    }
    // Checked above: every name is UTF-8.
    let names = spans
        .par_iter()
        .map(|&span| String::from_utf8_lossy(EdgeTokens::name(b, span)).into_owned())
        .collect();
    Ok((sources, targets, Names::Given(names)))
}

fn read_adjacency<R: BufRead>(input: R) -> Result<Graph, GraphError> {
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

/// A Matrix Market syntax error (warpath-io's one grammar) as a graph parse error.
impl From<MmSyntaxError> for GraphError {
    fn from(e: MmSyntaxError) -> Self {
        GraphError::Parse {
            line: e.line,
            expected: e.expected,
            found: e.found,
        }
    }
}

/// The edges of a Matrix Market graph as they are read: entry `(i, j)` is the edge
/// `i -> j` (0-based), a symmetric matrix's mirror `j -> i` beside it.
#[derive(Default)]
struct MmEdges {
    n: u64,
    src: Vec<u32>,
    dst: Vec<u32>,
}

impl MmSink for MmEdges {
    type Error = GraphError;

    fn accepts(&self, format: MmFormat, _: MmField, symmetry: MmSymmetry) -> Result<(), String> {
        if format != MmFormat::Coordinate {
            return Err("the `coordinate` format (not `array`)".into());
        }
        if symmetry == MmSymmetry::SkewSymmetric {
            return Err("symmetry `general` or `symmetric`".into());
        }
        Ok(())
    }

    fn header(&mut self, h: &MmHeader) -> Result<(), GraphError> {
        let n = h.rows.max(h.cols);
        if n >= u32::MAX as u64 {
            return Err(GraphError::TooLarge {
                what: "vertices",
                count: n as u128,
                max: u32::MAX as u128 - 1,
            });
        }
        check_mm_memory(n)?;
        self.n = n;
        // The size line is a claim, not data: reserve no more than a small file holds.
        self.src.reserve(h.entries.min(1 << 16) as usize);
        self.dst.reserve(h.entries.min(1 << 16) as usize);
        Ok(())
    }

    fn entry(&mut self, h: &MmHeader, i: u64, j: u64, v: MmValue) -> Result<(), GraphError> {
        // Below u32::MAX: the header refused larger sizes.
        self.src.push(i as u32);
        self.dst.push(j as u32);
        if let Some((a, b, _)) = h.mirror(i, j, v) {
            self.src.push(a as u32);
            self.dst.push(b as u32);
        }
        Ok(())
    }
}

/// A Matrix Market graph: warpath-io's grammar ([`warpath_io::matrix_market`]), `coordinate`
/// matrices whose symmetry is `general` or `symmetric`, values ignored.
fn read_matrix_market<R: BufRead>(mut input: R) -> Result<Graph, GraphError> {
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes)?;
    graph_of_matrix_market(&bytes)
}

/// [`read_matrix_market`] of a whole file's bytes.
fn graph_of_matrix_market(bytes: &[u8]) -> Result<Graph, GraphError> {
    let mut edges = MmEdges::default();
    parse_matrix_market(bytes, &mut edges)?;
    let n = edges.n;
    let g = Graph::from_sources_targets(n as usize, &edges.src, &edges.dst)?;
    // Vertices are named as the file numbers them (1-based), so messages and outputs use the
    // file's ids.
    let names = (1..=n).map(|i| i.to_string()).collect();
    g.with_names(VertexNames::from_names(names)?)
}

/// Bytes a Matrix Market graph needs per vertex: the CSR build (offsets and the counting
/// sort's cursors) and the vertex's name (`v + 1` as a `String`, held by the names and again
/// as a key of their index, with the index's slot).
const MM_BYTES_PER_VERTEX: u64 = 128;

/// Refuses a size line that declares more vertices than the memory available holds, before
/// anything is allocated for them (a one-line file can declare billions). Under the fuzzer
/// (`cfg(fuzzing)`) the memory available is taken to be 1 MiB, so that this check, not
/// libFuzzer's memory limit, is what a large declaration meets.
fn check_mm_memory(n: u64) -> Result<(), GraphError> {
    let needed = n.saturating_add(1).saturating_mul(MM_BYTES_PER_VERTEX);
    #[cfg(fuzzing)]
    let available = Some(1u64 << 20);
    #[cfg(not(fuzzing))]
    let available = (needed >= 1 << 30)
        .then(gpu_runtime::host_available_memory)
        .flatten();
    match available {
        Some(available) if needed > available => Err(GraphError::OutOfMemory {
            vertices: n,
            needed,
            available,
        }),
        _ => Ok(()),
    }
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
    /// [`PARALLEL_MIN_BYTES`] (smaller files are read) or the kernel refuses.
    fn new(f: &std::fs::File) -> Option<Mapped> {
        use std::os::unix::io::AsRawFd;
        let meta = f.metadata().ok()?;
        let len = usize::try_from(meta.len()).ok()?;
        if !meta.is_file() || len < PARALLEL_MIN_BYTES {
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

/// Whether [`GraphFormat::Adjacency`] reads `name` back as itself from the lines
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
/// [`GraphFormat::Adjacency`] reads it back (isolated vertices appear as `a ->`): the same
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rd(s: &str, f: GraphFormat) -> Result<Graph, GraphError> {
        read_graph(s.as_bytes(), f)
    }

    fn line_of(e: GraphError) -> usize {
        match e {
            GraphError::Parse { line, .. } => line,
            other => panic!("expected a parse error, got {other}"),
        }
    }

    /// A UTF-8 byte-order mark (as Windows editors write) is not part of the first name, in
    /// any format, nor does it hide a Matrix Market banner.
    #[test]
    fn a_byte_order_mark_is_not_a_name() {
        let bom = "\u{feff}";
        for (text, f) in [
            ("0 1\r\n1 2\r\n2 0\r\n", GraphFormat::EdgeList),
            ("0\t1\n1\t2\n2\t0\n", GraphFormat::Snap),
            ("0 -> 1\n1 -> 2\n2 -> 0\n", GraphFormat::Adjacency),
        ] {
            let plain = rd(text, f).unwrap();
            let marked = rd(&format!("{bom}{text}"), f).unwrap();
            assert_eq!(marked.vertex_count(), 3, "{f:?}");
            for v in 0..3 {
                assert_eq!(marked.vertex_label(v), plain.vertex_label(v), "{f:?}");
                assert_eq!(marked.successors(v), plain.successors(v), "{f:?}");
            }
        }
        let mm = "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n3 1\n";
        let g = rd(&format!("{bom}{mm}"), GraphFormat::MatrixMarket).unwrap();
        assert_eq!(g.edge_count(), 3);
        let p = std::env::temp_dir().join(format!("gc-bom-{}.txt", std::process::id()));
        std::fs::write(&p, format!("{bom}{mm}")).unwrap();
        assert_eq!(detect_format(&p).unwrap(), GraphFormat::MatrixMarket);
        assert_eq!(read_graph_file(&p, None).unwrap().edge_count(), 3);
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn edge_list_and_snap() {
        let g = rd("# c\nx y\n\ny,z\nz x\n", GraphFormat::EdgeList).unwrap();
        assert_eq!(g.edge_count(), 3);
        assert_eq!(g.vertex_label(0), "x");
        assert_eq!(g.successors(0), &[1]);
        assert_eq!(
            line_of(rd("a b\na\n", GraphFormat::EdgeList).unwrap_err()),
            2
        );
        let g = rd(
            "# Directed graph\n# FromNodeId\tToNodeId\n0\t1\n1\t007\n7\t0\t0.5\n",
            GraphFormat::Snap,
        )
        .unwrap();
        // dense integer ids: vertex v is the file's v (ids 2..6 have no edges)
        assert_eq!(g.vertex_count(), 8);
        assert_eq!(g.edge_count(), 3);
        assert_eq!(g.vertex_label(7), "7");
        assert_eq!(g.edges().collect::<Vec<_>>(), vec![(0, 1), (1, 7), (7, 0)]);
        // sparse ids: numbered in order of appearance, named by the file's ids
        let g = rd("5000000000 7\n7 5000000000\n", GraphFormat::Snap).unwrap();
        assert_eq!(g.vertex_count(), 2);
        assert_eq!(
            (g.vertex_label(0), g.vertex_label(1)),
            ("5000000000".into(), "7".into())
        );
        assert_eq!(
            line_of(rd("0\t1\n1\tx\n", GraphFormat::Snap).unwrap_err()),
            2
        );
        assert_eq!(line_of(rd("0\t-1\n", GraphFormat::Snap).unwrap_err()), 1);
    }

    /// NetworkX's `write_edgelist` (data=True, data=False, data=["weight"]) and pandas
    /// exports read as NetworkX reads them.
    #[test]
    fn networkx_dialects() {
        let want = vec![(0, 1), (1, 2), (2, 0)];
        for text in [
            "a b {}\nb c {}\nc a {}\n",
            "a b {'weight': 3}\nb c {'weight': 1.5, 'color': 'red'}\nc a {}\n",
            "a b 3\nb c 1.5\nc a 0\n",
            "a b 3 red\nb c 1 blue\nc a 0 x\n",
            "source,target\na,b\nb,c\nc,a\n",
            "Source\tTarget\tweight\na\tb\t1\nb\tc\t2\nc\ta\t3\n",
            "from to\na b\nb c\nc a\n",
            "# made by NetworkX\nsource target\na b\r\nb c\r\nc a\r\n",
        ] {
            let g = rd(text, GraphFormat::EdgeList).unwrap();
            assert_eq!(g.edges().collect::<Vec<_>>(), want, "{text:?}");
            assert_eq!(
                (g.vertex_label(0), g.vertex_label(2)),
                ("a".into(), "c".into())
            );
        }
        // a header only on the first data line; elsewhere `source target` is an edge
        let g = rd("a b\nsource target\n", GraphFormat::EdgeList).unwrap();
        assert_eq!(g.vertex_count(), 4);
        // one name, or a dict where the second name should be, is an error with its line
        assert_eq!(
            line_of(rd("a b\nc {}\n", GraphFormat::EdgeList).unwrap_err()),
            2
        );
        assert_eq!(
            line_of(rd("a b {}\n\nc\n", GraphFormat::EdgeList).unwrap_err()),
            3
        );
        // empty and comment-only inputs are edgeless graphs
        assert_eq!(rd("", GraphFormat::EdgeList).unwrap().vertex_count(), 0);
        assert_eq!(
            rd("# x\n% y\n\n", GraphFormat::EdgeList)
                .unwrap()
                .edge_count(),
            0
        );
        let g = rd("source target\n", GraphFormat::EdgeList).unwrap();
        assert_eq!(g.vertex_count(), 0);
    }

    /// Large inputs are tokenised in pieces on every core: the same graph, the same names in
    /// the same order, errors at their own line.
    #[test]
    fn parallel_reading_matches_order_of_appearance() {
        let m = 120_000u64;
        let mut text = String::from("source,target,weight\n");
        for i in 0..m {
            // names appear in a scrambled order; ids differ from positions
            let a = (i * 7919) % m;
            let b = (i * 104_729 + 1) % m;
            text.push_str(&format!("v{a},v{b},{i}\n"));
        }
        assert!(text.len() > PARALLEL_MIN_BYTES);
        let g = rd(&text, GraphFormat::EdgeList).unwrap();
        assert_eq!(g.edge_count(), m);
        // the reference: interning line by line
        let mut names = VertexNames::new();
        let mut edges = Vec::new();
        for line in text.lines().skip(1) {
            let mut it = line.split(',');
            let a = names.intern(it.next().unwrap()).unwrap();
            let b = names.intern(it.next().unwrap()).unwrap();
            edges.push((a, b));
        }
        let want = Graph::from_edges(names.len(), &edges).unwrap();
        assert_eq!(g.offsets(), want.offsets());
        assert_eq!(g.targets(), want.targets());
        for v in [0u32, 1, 1000, names.len() as u32 - 1] {
            assert_eq!(g.vertex_label(v), names.name(v).unwrap());
        }
        let bad = text
            .replacen("v0,", "v0 ", 1)
            .replacen(",5\n", "\nlonely\n", 1);
        let e = rd(&bad, GraphFormat::EdgeList).unwrap_err();
        let want_line = bad.lines().position(|l| l == "lonely").unwrap() + 1;
        assert_eq!(line_of(e), want_line);
    }

    #[test]
    fn adjacency_round_trip_and_errors() {
        let g = rd(
            "0 -> 1, 2\n1 -> 0\n2 -> 0, 2\n3 ->\n",
            GraphFormat::Adjacency,
        )
        .unwrap();
        assert_eq!(g.edge_count(), 5);
        assert_eq!(g.vertex_count(), 4);
        let mut out = Vec::new();
        write_adjacency(&g, &mut out).unwrap();
        let h = read_graph(&out[..], GraphFormat::Adjacency).unwrap();
        assert_eq!(g.offsets(), h.offsets());
        assert_eq!(g.targets(), h.targets());
        assert_eq!(
            line_of(rd("a -> b\nc d\n", GraphFormat::Adjacency).unwrap_err()),
            2
        );
        assert_eq!(
            line_of(rd("a -> b,,c\n", GraphFormat::Adjacency).unwrap_err()),
            1
        );
        assert_eq!(
            line_of(rd(" -> b\n", GraphFormat::Adjacency).unwrap_err()),
            1
        );
        assert_eq!(
            line_of(rd("a -> b -> c\n", GraphFormat::Adjacency).unwrap_err()),
            1
        );
    }

    #[test]
    fn matrix_market() {
        let s =
            "%%MatrixMarket matrix coordinate pattern general\n% comment\n3 3 3\n1 2\n2 3\n3 1\n";
        let g = rd(s, GraphFormat::MatrixMarket).unwrap();
        assert_eq!(g.edges().collect::<Vec<_>>(), vec![(0, 1), (1, 2), (2, 0)]);
        // vertices carry the file's 1-based ids as names
        assert_eq!(
            (g.vertex_label(0), g.vertex_label(2)),
            ("1".into(), "3".into())
        );
        let s = "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 2 0.5\n2 2 1\n";
        let g = rd(s, GraphFormat::MatrixMarket).unwrap();
        assert_eq!(g.edge_count(), 3);
        let bad = [
            ("%%MatrixMarket matrix array real general\n2 2\n", 1),
            ("hello\n", 1),
            ("%%MatrixMarket matrix coordinate pattern general\n2 2\n", 2),
            (
                "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n",
                3,
            ),
            (
                "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n2 2\n",
                4,
            ),
            (
                "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 1\n",
                4,
            ),
            ("%%MatrixMarket matrix coordinate pattern general\n", 2),
            ("", 1),
        ];
        for (s, line) in bad {
            assert_eq!(
                line_of(rd(s, GraphFormat::MatrixMarket).unwrap_err()),
                line,
                "{s:?}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Arbitrary text never panics any reader: it is a graph or an error.
        #[test]
        fn prop_readers_never_panic(text in "[ab0-9 ,%#>\\-\n\t.]{0,200}", mm in proptest::bool::ANY) {
            let text = if mm {
                format!("%%MatrixMarket matrix coordinate pattern general\n4 4 3\n{text}")
            } else {
                text
            };
            for f in [GraphFormat::EdgeList, GraphFormat::Adjacency, GraphFormat::Snap, GraphFormat::MatrixMarket] {
                match read_graph(text.as_bytes(), f) {
                    Ok(g) => proptest::prop_assert!(g.targets().iter().all(|&t| (t as usize) < g.vertex_count())),
                    Err(GraphError::Parse { line, .. }) => proptest::prop_assert!(line >= 1),
                    Err(GraphError::TooLarge { .. }) => {}
                    Err(e) => proptest::prop_assert!(false, "unexpected error kind: {e}"),
                }
            }
        }
    }

    #[test]
    fn invalid_utf8_is_a_parse_error() {
        let bytes = b"a b\n\xff\xfe c\n";
        assert_eq!(
            line_of(read_graph(&bytes[..], GraphFormat::EdgeList).unwrap_err()),
            2
        );
    }

    #[test]
    fn absurd_vertex_count_is_an_error_not_a_crash() {
        // 4e9 vertices need about 64 GB to build: refused cleanly wherever that much memory is
        // not available (every machine this project runs on).
        let text =
            "%%MatrixMarket matrix coordinate pattern general\n4000000000 4000000000 1\n1 2\n";
        let needed = 4_000_000_001u64 * 16;
        match gpu_runtime::host_available_memory() {
            Some(available) if available < needed => {
                let err = read_graph(text.as_bytes(), GraphFormat::MatrixMarket).unwrap_err();
                assert!(
                    matches!(
                        err,
                        GraphError::OutOfMemory {
                            vertices: 4_000_000_000,
                            ..
                        }
                    ),
                    "{err}"
                );
            }
            _ => println!("skipped: this machine has {needed} bytes available"),
        }
    }

    /// Found by the `edge_list` fuzz target: an edge-list name the adjacency format cannot
    /// hold (here a leading form feed, which adjacency lines trim away) was written anyway,
    /// and read back as another vertex; `write_adjacency` refuses it before writing.
    #[test]
    fn regression_adjacency_writer_refuses_names_it_cannot_hold() {
        for bad in ["\u{c}b", "a->b", "#x", "%x", "x\u{a0}", "\u{feff}x"] {
            let text = format!("ok {bad}\n");
            let g = read_graph(text.as_bytes(), GraphFormat::EdgeList).unwrap();
            let mut out = Vec::new();
            let e = write_adjacency(&g, &mut out).unwrap_err();
            assert!(matches!(e, GraphError::InvalidParameter(_)), "{bad:?}: {e}");
            assert!(out.is_empty(), "nothing written for {bad:?}");
        }
        let g = read_graph(&b"new york -> la, x#y\n"[..], GraphFormat::Adjacency).unwrap();
        let mut out = Vec::new();
        write_adjacency(&g, &mut out).unwrap();
        let back = read_graph(&out[..], GraphFormat::Adjacency).unwrap();
        assert_eq!(back, g);
    }

    /// A UTF-8 byte-order mark (as Windows editors write) was read as part of the first
    /// name: `\u{feff}1` and `1` were two vertices of an integer edge list, and a Matrix
    /// Market header after one was refused.
    #[test]
    fn regression_byte_order_mark_is_not_part_of_a_name() {
        for (text, format) in [
            ("\u{feff}1 2\n2 1\n", GraphFormat::EdgeList),
            ("\u{feff}1\t2\n2\t1\n", GraphFormat::Snap),
            ("\u{feff}1 -> 2\n2 -> 1\n", GraphFormat::Adjacency),
            (
                "\u{feff}%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n",
                GraphFormat::MatrixMarket,
            ),
        ] {
            let g = read_graph(text.as_bytes(), format).unwrap();
            let plain = read_graph(&text.as_bytes()[3..], format).unwrap();
            assert_eq!(g, plain, "{format:?}");
            assert_eq!(g.edge_count(), 2, "{format:?}");
            let dir = std::env::temp_dir().join(format!("gc-bom-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let p = dir.join("g.txt");
            std::fs::write(&p, text).unwrap();
            assert_eq!(detect_format(&p).unwrap(), format_detected(format));
            std::fs::remove_dir_all(&dir).unwrap();
        }
        fn format_detected(f: GraphFormat) -> GraphFormat {
            match f {
                GraphFormat::Snap => GraphFormat::EdgeList,
                f => f,
            }
        }
    }

    /// Found while writing the `matrix_market` fuzz target: a size line whose vertices fit the CSR
    /// arrays in memory, but not with their names, was accepted and its names allocated
    /// (an abort); it is refused before anything is allocated for the vertices.
    #[test]
    fn regression_vertex_names_count_against_memory() {
        let Some(available) = gpu_runtime::host_available_memory() else {
            return println!("skipped: no MemAvailable");
        };
        let n = available / 64;
        if n >= u32::MAX as u64 - 1 || n * 16 >= available {
            return println!("skipped: {available} bytes available");
        }
        let text = format!("%%MatrixMarket matrix coordinate pattern general\n{n} {n} 1\n1 2\n");
        let err = read_graph(text.as_bytes(), GraphFormat::MatrixMarket).unwrap_err();
        assert!(
            matches!(err, GraphError::OutOfMemory { vertices, .. } if vertices == n),
            "{err}"
        );
        // Entries announced but absent: an error, after reserving room for a few only.
        let text = "%%MatrixMarket matrix coordinate pattern general\n3 3 4000000000\n1 2\n";
        let err = read_graph(text.as_bytes(), GraphFormat::MatrixMarket).unwrap_err();
        assert!(err.to_string().contains("only 1 given"), "{err}");
    }
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;
    use proptest::prelude::*;

    /// The integer sink without the fast path: every line goes the general way.
    #[derive(Default, PartialEq, Debug)]
    struct General(Vec<(u64, u64)>);

    impl PairSink for General {
        fn take(&mut self, b: &[u8], a: (usize, usize), c: (usize, usize)) -> bool {
            self.0.take(b, a, c)
        }
    }

    /// The `u32` sink without the fast path.
    #[derive(Default)]
    struct General32(U32Edges);

    impl PairSink for General32 {
        fn take(&mut self, b: &[u8], a: (usize, usize), c: (usize, usize)) -> bool {
            self.0.take(b, a, c)
        }
    }

    type Outcome = Result<Vec<(u64, u64)>, (usize, &'static str)>;

    fn both(b: &[u8], snap: bool) -> (Outcome, Outcome) {
        let mut fast = Vec::new();
        let f = tokenize_pairs(b, 0, b.len(), snap, true, &mut fast)
            .map(|()| fast)
            .map_err(|e| (e.offset, e.expected));
        let mut general = General::default();
        let g = tokenize_pairs(b, 0, b.len(), snap, true, &mut general)
            .map(|()| general.0)
            .map_err(|e| (e.offset, e.expected));
        (f, g)
    }

    type Outcome32 = Result<(Vec<[u32; 2]>, u32), (usize, &'static str)>;

    /// The `u32` sink with and without its fast path.
    fn both32(b: &[u8], snap: bool) -> (Outcome32, Outcome32) {
        let mut fast = U32Edges::default();
        let f = tokenize_pairs(b, 0, b.len(), snap, true, &mut fast)
            .map(|()| (fast.edges, fast.max))
            .map_err(|e| (e.offset, e.expected));
        let mut general = General32::default();
        let g = tokenize_pairs(b, 0, b.len(), snap, true, &mut general)
            .map(|()| (general.0.edges, general.0.max))
            .map_err(|e| (e.offset, e.expected));
        (f, g)
    }

    fn text() -> impl Strategy<Value = Vec<u8>> {
        let token = prop::sample::select(vec![
            "0",
            "7",
            "007",
            "00",
            "123",
            "1234567890123456789",
            "12345678901234567890",
            "18446744073709551615",
            "4294967293",
            "4294967294",
            "4294967296",
            "a",
            "1a",
            "#c",
            "%",
            "{}",
            "{'w': 1}",
            "-1",
            "+3",
            "source",
            "target",
            " ",
            "\t",
            ",",
            "\r",
            " , ",
            "\n",
            "\r\n",
        ]);
        prop::collection::vec(token, 0..40).prop_map(|t| t.concat().into_bytes())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The integer fast path reads every text exactly as the general path does: the same
        /// edges, or the same error at the same line.
        #[test]
        fn integer_fast_path_matches_the_general_path(b in text(), snap in any::<bool>()) {
            let (f, g) = both(&b, snap);
            prop_assert_eq!(f, g);
        }

        /// So does the `u32` sink's (which refuses a name above `u32::MAX - 2` at the same
        /// line both ways), and what it keeps is what the `u64` sink reads.
        #[test]
        fn u32_fast_path_matches_the_general_path(b in text(), snap in any::<bool>()) {
            let (f, g) = both32(&b, snap);
            prop_assert_eq!(&f, &g);
            if let Ok((edges, max)) = f {
                let wide = both(&b, snap).0.unwrap();
                let narrow: Vec<(u64, u64)> =
                    edges.iter().map(|&[a, c]| (a as u64, c as u64)).collect();
                prop_assert_eq!(&narrow, &wide);
                prop_assert_eq!(max as u64, wide.iter().map(|&(a, c)| a.max(c)).max().unwrap_or(0));
            }
        }

        /// A whole read (pieces on three threads, the `u32` pass and whichever pass follows
        /// a refusal) gives the graph that numbering the `u64` values in one piece gives.
        #[test]
        fn reads_match_numbering_the_values(
            lines in prop::collection::vec(
                (prop::sample::select(vec![0u64, 1, 2, 5, 70_000, 4_294_967_293, 4_294_967_294, u64::MAX]),
                 prop::sample::select(vec![0u64, 1, 3, 9, 4_294_967_295])),
                1..40),
        ) {
            let text: String = lines.iter().map(|(a, c)| format!("{a} {c}\n")).collect();
            let pieces = vec![lines.clone()];
            let (sources, targets, names) = intern_integers(&pieces).unwrap();
            let want = match names {
                Names::Identity(n) => Graph::from_sources_targets(n, &sources, &targets).unwrap(),
                Names::Given(names) => Graph::from_sources_targets(names.len(), &sources, &targets)
                    .unwrap()
                    .with_names(VertexNames::from_names(names).unwrap())
                    .unwrap(),
            };
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            let got = pool.install(|| parse_pairs(text.as_bytes(), false)).unwrap();
            prop_assert_eq!(got.vertex_count(), want.vertex_count());
            prop_assert_eq!(got.edges().collect::<Vec<_>>(), want.edges().collect::<Vec<_>>());
            for v in 0..want.vertex_count() as u32 {
                prop_assert_eq!(got.vertex_label(v), want.vertex_label(v));
            }
        }
    }

    /// Files large enough to be mapped and tokenised in pieces read as their bytes do through
    /// [`read_graph`] (one thread and three), errors included with their line numbers.
    #[test]
    fn mapped_files_read_as_their_bytes() {
        let mut text = String::new();
        let mut x = 12345u64;
        while text.len() < 3 * PARALLEL_MIN_BYTES {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (a, c) = ((x >> 33) % 50_000, (x >> 13) % 50_000);
            text.push_str(&format!("{a} {c}\n"));
        }
        let lines = text.lines().count();
        let dir = std::env::temp_dir();
        let path = dir.join(format!("gc-mapped-{}.txt", std::process::id()));
        for (tail, bad_line) in [
            ("", None),
            ("1 2 extra\n# c\n", None),
            ("1 4294967294\n", None),
            ("x y\n", None),
            ("1\n", Some(lines + 1)),
        ] {
            let file = format!("{text}{tail}");
            std::fs::write(&path, &file).unwrap();
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let (mapped, plain) = pool.install(|| {
                    (
                        read_graph_file(&path, None),
                        read_graph(file.as_bytes(), GraphFormat::EdgeList),
                    )
                });
                match (mapped, plain, bad_line) {
                    (Ok(m), Ok(p), None) => {
                        assert_eq!(m.vertex_count(), p.vertex_count(), "{tail:?}");
                        assert_eq!(
                            m.edge_count() as usize,
                            lines + tail.lines().count() - tail.matches('#').count()
                        );
                        assert_eq!(m.edges().collect::<Vec<_>>(), p.edges().collect::<Vec<_>>());
                        assert_eq!(m.names(), p.names());
                    }
                    (Err(m), Err(p), Some(line)) => {
                        assert_eq!(m.to_string(), p.to_string());
                        assert!(m.to_string().starts_with(&format!("line {line}:")), "{m}");
                    }
                    (m, p, _) => panic!("{tail:?}: {:?} / {:?}", m.err(), p.err()),
                }
            }
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn fast_path_cases() {
        for (t, snap) in [
            (&b"1 2\n3\t4\r\n5,6 extra 7\n8 9"[..], false),
            (b"0 0\n10 01\n", false),
            (b"007 1\n", true),
            (b"1 2 {'w': 3}\n# c\n\n  4 5\n", false),
            (b"1\n", false),
            (b"1 \n", false),
            (b"12345678901234567890 1\n", false),
            (b"1 4294967293\n2 4294967294\n", false),
        ] {
            let (f, g) = both(t, snap);
            assert_eq!(f, g, "{:?}", String::from_utf8_lossy(t));
            let (f, g) = both32(t, snap);
            assert_eq!(f, g, "{:?}", String::from_utf8_lossy(t));
        }
        // The u32 sink refuses the line of the first name above u32::MAX - 2.
        assert_eq!(
            both32(b"1 4294967293\n2 4294967294\n", false).0,
            Err((13, ""))
        );
        assert_eq!(
            both(b"1 2\n3\t4\r\n5,6 x\n8 9", false).0,
            Ok(vec![(1, 2), (3, 4), (5, 6), (8, 9)])
        );
    }
}
