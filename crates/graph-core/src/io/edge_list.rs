//! The edge-list and SNAP readers: the whole text tokenised in parallel pieces of lines, with
//! a fast path for integer names, then the names numbered.

use std::io::BufRead;

use super::parse_err;
use crate::{Graph, GraphError, VertexNames};

/// Reads an edge list (`snap`: a SNAP file) from `input`: [`parse_pairs_text`] of its bytes.
pub(super) fn read_pairs<R: BufRead>(mut input: R, snap: bool) -> Result<Graph, GraphError> {
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes)?;
    parse_pairs_text(&bytes, snap)
}

/// [`parse_pairs`] of a whole file's bytes.
pub(super) fn parse_pairs_text(bytes: &[u8], snap: bool) -> Result<Graph, GraphError> {
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
pub(super) const PARALLEL_MIN_BYTES: usize = 1 << 20;

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

#[cfg(test)]
mod tests;
