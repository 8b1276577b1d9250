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
