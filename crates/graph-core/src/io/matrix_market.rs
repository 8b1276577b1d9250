//! The Matrix Market reader: warpath-io's grammar of the format, and the graph built from
//! the entries.

use std::io::BufRead;

use warpath_io::matrix_market::{
    MmField, MmFormat, MmHeader, MmSink, MmSymmetry, MmSyntaxError, MmValue, parse_matrix_market,
};

use crate::{Graph, GraphError, VertexNames};

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
pub(super) fn read_matrix_market<R: BufRead>(mut input: R) -> Result<Graph, GraphError> {
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes)?;
    graph_of_matrix_market(&bytes)
}

/// [`read_matrix_market`] of a whole file's bytes.
pub(super) fn graph_of_matrix_market(bytes: &[u8]) -> Result<Graph, GraphError> {
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
