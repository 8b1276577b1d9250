//! Hierholzer's algorithm, iterative, `O(V + E)`, one buffer of `E` edge ids.

use crate::Graph;

/// Walks an Euler trail from `start` with Hierholzer's algorithm and returns the edge ids in
/// trail order and the vertex sequence. Returns fewer than `E` edges when some edges are not
/// reachable (the caller turns that into an error).
///
/// Per-vertex edge cursors (`[next, end]` pairs, one cache line access per visit) replace any
/// set of used edges; the stack of the walk and the output share one buffer: the stack grows
/// from the front and finished edges are written from the back, so the result comes out in
/// forward order with no reversal and no allocation per step.
///
/// Requires `g.edge_count() < u32::MAX` (checked by callers).
pub(crate) fn hierholzer_edges(g: &Graph, start: u32) -> (Vec<u32>, Vec<u32>) {
    let records = g.targets().len() as u64 + 3 * g.vertex_count() as u64;
    if records < u32::MAX as u64 {
        hierholzer_records(g, start)
    } else {
        hierholzer_plain(g, start)
    }
}

/// Hierholzer on an interleaved copy of the graph: vertex `v`'s record at
/// `r(v) = offsets[v] + 3 v` holds `[cursor slot, end slot, 3 (v + 1), slots...]`, and each slot
/// holds the *record position* of the edge's end. Taking an edge then reads one record (usually
/// one cache line) instead of a cursor array and the targets array: about one dependent cache
/// miss per edge instead of two. The edge id of slot `c` is `c - 3 (v + 1)`. Building the
/// records is one sequential pass with independent gathers.
fn hierholzer_records(g: &Graph, start: u32) -> (Vec<u32>, Vec<u32>) {
    let off = g.offsets();
    let targets = g.targets();
    let n = g.vertex_count();
    let m = targets.len();
    let rp = |v: usize| (off[v] + 3 * v as u64) as u32;
    let mut rec: Vec<u32> = crate::par::zeroed_huge(m + 3 * n);
    for v in 0..n {
        let p = rp(v) as usize;
        let (lo, hi) = (off[v] as usize, off[v + 1] as usize);
        rec[p] = (p + 3) as u32;
        rec[p + 1] = (p + 3 + hi - lo) as u32;
        rec[p + 2] = 3 * (v as u32 + 1);
        for (slot, &t) in rec[p + 3..p + 3 + hi - lo].iter_mut().zip(&targets[lo..hi]) {
            *slot = rp(t as usize);
        }
    }
    // stack: (edge, record of its end); finished edges fill `edges`/`verts` from the back.
    let mut stack: Vec<(u32, u32)> = Vec::with_capacity(m);
    let mut edges = vec![0u32; m];
    let mut verts = vec![0u32; m + 1];
    let mut out = m;
    let home = rp(start as usize);
    let mut p = home as usize;
    loop {
        let c = rec[p];
        if c < rec[p + 1] {
            rec[p] = c + 1;
            let e = c - rec[p + 2];
            let q = rec[c as usize];
            stack.push((e, q));
            p = q as usize;
        } else {
            let Some((e, _)) = stack.pop() else { break };
            out -= 1;
            edges[out] = e;
            // We stand at the end of e: the vertex after e in the trail.
            verts[out + 1] = rec[p + 2] / 3 - 1;
            p = stack.last().map_or(home, |&(_, q)| q) as usize;
        }
    }
    verts[out] = start;
    if out > 0 {
        edges.drain(..out);
        verts.drain(..out);
    }
    (edges, verts)
}

/// The textbook layout (cursor array + targets array), for graphs too large for `u32` record
/// positions.
fn hierholzer_plain(g: &Graph, start: u32) -> (Vec<u32>, Vec<u32>) {
    let m = g.targets().len();
    let targets = g.targets();
    let mut cursor: Vec<[u32; 2]> = g
        .offsets()
        .windows(2)
        .map(|w| [w[0] as u32, w[1] as u32])
        .collect();
    let mut buf = vec![0u32; m];
    // When edge e is finished the walk stands at its end, so the vertex after e in the trail
    // is the current vertex: the vertex sequence costs no extra memory access.
    let mut verts = vec![0u32; m + 1];
    let mut sp = 0usize; // stack: buf[..sp]
    let mut out = m; // output: buf[out..]
    let mut v = start;
    loop {
        let c = &mut cursor[v as usize];
        if c[0] < c[1] {
            let e = c[0];
            c[0] += 1;
            buf[sp] = e;
            sp += 1;
            v = targets[e as usize];
        } else {
            if sp == 0 {
                break;
            }
            sp -= 1;
            let e = buf[sp];
            out -= 1;
            buf[out] = e;
            verts[out + 1] = v;
            // Back to where e started: the end of the edge below it, or the start.
            v = if sp > 0 {
                targets[buf[sp - 1] as usize]
            } else {
                start
            };
        }
    }
    verts[out] = start;
    if out > 0 {
        buf.drain(..out);
        verts.drain(..out);
    }
    (buf, verts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::euler::EulerTrail;
    use crate::{EulerStyle, is_euler_circuit, random_euler_graph};

    #[test]
    fn both_layouts_give_the_same_circuit() {
        for m in [1u64, 2, 33, 1025, 65_537] {
            for style in [EulerStyle::Deep, EulerStyle::Shallow] {
                let g = random_euler_graph(m, style, m).unwrap();
                let a = hierholzer_records(&g, 0);
                let b = hierholzer_plain(&g, 0);
                // Same cursor order, so the same walk.
                assert_eq!(a, b, "m = {m}");
                let t = EulerTrail {
                    edges: a.0,
                    vertices: a.1,
                };
                assert!(is_euler_circuit(&g, &t));
            }
        }
    }
}
