//! Hierholzer's algorithm on an undirected multigraph: the plain, iterative reference (the test
//! oracle of the fast paths, and the CPU path for small graphs).

use crate::UndirectedGraph;

/// Walks an Euler trail of `g` from `start` and returns the edge ids in trail order and the
/// vertex sequence; fewer than `E` edges when some are not reachable from `start` (the caller
/// reports the disconnection). `start` must be a vertex with an edge (or any vertex when the
/// degrees allow a trail from it: all even, or `start` one of two odd vertices).
///
/// Per-vertex cursors into the incidence array skip the edges already taken (marked in a
/// flag per edge, so a self-loop, seen from both of its half-edges, is taken once). The stack
/// of the walk holds `(edge, vertex reached)`; finished edges are written from the back of
/// the output, so the trail comes out in forward order with no reversal.
///
/// `O(V + E)` time; `O(V + E)` memory (cursors, flags, stack, output).
pub(crate) fn hierholzer_trail(g: &UndirectedGraph, start: u32) -> (Vec<u32>, Vec<u32>) {
    let (ends, halves, offsets) = (g.ends(), g.half_edges(), g.offsets());
    let m = g.edge_count() as usize;
    let mut cursor: Vec<u64> = offsets[..g.vertex_count()].to_vec();
    let mut used = vec![false; m];
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut edges = vec![0u32; m];
    let mut verts = vec![0u32; m + 1];
    let mut out = m;
    let mut v = start;
    loop {
        let (c, end) = (&mut cursor[v as usize], offsets[v as usize + 1]);
        while *c < end && used[(halves[*c as usize] >> 1) as usize] {
            *c += 1;
        }
        if *c < end {
            let h = halves[*c as usize];
            *c += 1;
            used[(h >> 1) as usize] = true;
            let w = ends[(h ^ 1) as usize];
            stack.push((h >> 1, w));
            v = w;
        } else {
            let Some((e, _)) = stack.pop() else { break };
            out -= 1;
            edges[out] = e;
            // We stand at the end of e: the vertex after e in the trail.
            verts[out + 1] = v;
            v = stack.last().map_or(start, |&(_, w)| w);
        }
    }
    verts[out] = start;
    if out > 0 {
        edges.drain(..out);
        verts.drain(..out);
    }
    (edges, verts)
}
