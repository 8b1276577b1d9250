//! Hierholzer's algorithm, iterative, `O(V + E)`: a single walk (small graphs, and the
//! reference) and interleaved walks that hide DRAM latency (large graphs).

use crate::Graph;
use crate::par::prefetch;

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
    let m = g.targets().len();
    let mut rec = build_records(g);
    // stack: (edge, record of its end); finished edges fill `edges`/`verts` from the back.
    let mut stack: Vec<(u32, u32)> = Vec::with_capacity(m);
    let mut edges = vec![0u32; m];
    let mut verts = vec![0u32; m + 1];
    let mut out = m;
    let home = record_of(g, start);
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

/// Walks running at once in [`hierholzer_interleaved`]: enough to cover a DRAM miss with the
/// steps of the others.
const LANES: usize = 32;

/// An Euler circuit or path from `start` (a balanced graph, or `start` with out = in + 1 and
/// one vertex with in = out + 1): the interleaved walk for large graphs (when its records fit in
/// `u32` positions), the single walk otherwise. Returns fewer than `E` edges when some edges
/// are not reachable.
pub(crate) fn hierholzer_trail(g: &Graph, start: u32) -> (Vec<u32>, Vec<u32>) {
    let records = g.targets().len() as u64 + 3 * g.vertex_count() as u64;
    if g.edge_count() >= super::EULER_INTERLEAVE_THRESHOLD && records < u32::MAX as u64 {
        hierholzer_interleaved(g, start)
    } else {
        hierholzer_edges(g, start)
    }
}

/// No trail / no lane.
const NONE: u32 = u32::MAX;

/// One trail found by a walk of [`hierholzer_interleaved`].
#[derive(Clone, Copy)]
struct Trail {
    /// The lane whose buffer holds the trail's steps, from `begin`, `len` of them.
    lane: u32,
    begin: u32,
    len: u32,
    /// First and last vertex.
    start: u32,
    end: u32,
    /// Where it hangs off an earlier trail: after `at` steps of trail `parent` (the root, trail
    /// 0, has `parent == NONE`).
    parent: u32,
    at: u32,
}

/// Hierholzer's algorithm with [`LANES`] walks interleaved on one core, so that the cache misses
/// of different walks overlap instead of queueing behind each other. A single walk is one chain
/// of dependent DRAM reads, one memory latency per edge whatever the code around it does;
/// interleaved, several of those latencies overlap (figures in the repository's BENCHMARKS.md,
/// graph-core, thresholds).
///
/// Hierholzer's algorithm is: walk unused edges from a vertex of the tour until stuck, then
/// splice the new trail into the tour at that vertex. Here several walks run at once:
///
/// 1. **Walk.** Each lane takes unused edges (one step per turn, prefetching the next vertex's
///    record) until its vertex has none left; its steps `(edge, end)` go to the lane's buffer.
///    Lane 0 starts the root trail at `start`.
/// 2. **Scan.** An idle lane gets its start from a scanner that reads the root's start point
///    and then every step ever taken, in each lane's order, and starts a trail at the first
///    point whose vertex still has unused out-edges (at most one start per point). That point
///    is the new trail's anchor.
/// 3. **Match.** With walks running at once a trail may stop at a vertex that is not its
///    start, but only where another trail started (or at the path's end). Pairing each
///    trail's end with a trail other than the root that starts at the same vertex gives one
///    chain from the root to the single unpaired end (the circuit's or path's last edge) and
///    closed circuits.
/// 4. **Splice and write.** Every closed circuit hangs off the anchor of its oldest trail (an
///    older trail, so the anchors form a tree); one depth-first pass writes the edges in order,
///    inserting each circuit at its anchor.
///
/// Why it reaches every edge: with `b(x) = out(x) - in(x)` (0, or +1 at `start` and -1 at the
/// path's end), at the end `unused_out(x) - unused_in(x) = b(x) + ends(x) - starts(x)` for
/// every vertex. A walk stops only at a vertex with no unused out-edges, so where trails ended
/// the difference is `<= 0`; elsewhere it is `b(x) - starts(x) <= 0` too, as `start` has the
/// root's start. The differences sum to zero, so all are zero. A visited vertex that kept an
/// unused out-edge would have had a start for each of its points (and `start` one more, the
/// root), hence `starts(x) > b(x)`: impossible. So visited vertices have no unused edges, and
/// with one weak component every edge was used. Otherwise the result is short and the caller
/// reports the disconnection.
///
/// Returns empty vectors when some edge was not reached. Requires the degree conditions above
/// and `E + 3 V < u32::MAX`.
pub(super) fn hierholzer_interleaved(g: &Graph, start: u32) -> (Vec<u32>, Vec<u32>) {
    let m = g.targets().len();
    let mut rec = build_records(g);
    let walks = walk_lanes(g, start, &mut rec);
    if walks.walked < m {
        return (Vec::new(), Vec::new());
    }
    drop(rec);
    let Some(next) = match_ends(&walks.trails, g.vertex_count()) else {
        // Cannot happen under the degree conditions (see above); the single walk is the
        // safe answer if it ever did.
        return hierholzer_edges(g, start);
    };
    let (child_begin, children) = hang_circuits(&walks.trails, &next);
    write_trails(&walks, &next, (&child_begin, &children), start, m)
}

/// What the walks of [`hierholzer_interleaved`] found (its steps 1 and 2).
struct Walks {
    /// Per lane: the steps taken, `[edge, vertex at its end]`, trail after trail.
    steps: Vec<Vec<[u32; 2]>>,
    /// Every trail, in order of discovery (the root first).
    trails: Vec<Trail>,
    /// How many edges the trails hold together (`E` when every edge was reached).
    walked: usize,
}

/// Steps 1 and 2 of [`hierholzer_interleaved`]: runs the [`LANES`] walks over the records
/// `rec` (used up: their cursors end at their ends), the scanner starting each idle lane at
/// the next point with unused out-edges, until every lane is idle and the scanner has read
/// every step. One function for the whole loop, so the interleaved steps stay one loop body.
fn walk_lanes(g: &Graph, start: u32, rec: &mut [u32]) -> Walks {
    let m = g.targets().len();
    let vertex_of = |rec: &[u32], q: u32| rec[q as usize + 2] / 3 - 1;

    // Per lane: the steps taken (`[edge, record of the end]`, turned into `[edge, vertex]` by
    // the scanner), the trails in the buffer, the current trail and position.
    let mut steps: Vec<Vec<[u32; 2]>> = (0..LANES)
        .map(|_| Vec::with_capacity(m / LANES + 64))
        .collect();
    let mut lane_trails: Vec<Vec<u32>> = vec![Vec::new(); LANES];
    let mut current = [NONE; LANES];
    let mut at = [0u32; LANES];
    let mut trails: Vec<Trail> = Vec::new();
    // The scanner: the root's start point, then per lane the next step to read and the index
    // of its trail in lane_trails.
    let home = record_of(g, start);
    let mut root_point = true;
    let mut scan_pos = [0usize; LANES];
    let mut scan_trail = [0usize; LANES];
    let mut scan_lane = 0usize;

    trails.push(Trail {
        lane: 0,
        begin: 0,
        len: 0,
        start,
        end: start,
        parent: NONE,
        at: 0,
    });
    lane_trails[0].push(0);
    current[0] = 0;
    at[0] = home;
    let mut active = 1usize;
    let mut walked = 0usize;

    loop {
        let mut scanner_dry = false;
        for l in 0..LANES {
            if current[l] == NONE {
                if scanner_dry {
                    continue;
                }
                // Find a point whose vertex still has unused out-edges.
                let mut found = None;
                if root_point {
                    root_point = false;
                    let h = home as usize;
                    if rec[h] < rec[h + 1] {
                        found = Some((home, 0, 0));
                    }
                }
                let mut dry_lanes = 0;
                while found.is_none() && dry_lanes < LANES {
                    let sl = scan_lane;
                    let buf = &mut steps[sl];
                    let pos = scan_pos[sl];
                    if pos == buf.len() {
                        dry_lanes += 1;
                        scan_lane = (scan_lane + 1) % LANES;
                        continue;
                    }
                    dry_lanes = 0;
                    if let Some(ahead) = buf.get(pos + 16) {
                        prefetch(&rec[ahead[1] as usize]);
                    }
                    let q = buf[pos][1];
                    buf[pos][1] = vertex_of(rec, q);
                    scan_pos[sl] = pos + 1;
                    let lt = &lane_trails[sl];
                    while scan_trail[sl] + 1 < lt.len()
                        && trails[lt[scan_trail[sl] + 1] as usize].begin as usize <= pos
                    {
                        scan_trail[sl] += 1;
                    }
                    if rec[q as usize] < rec[q as usize + 1] {
                        let parent = lt[scan_trail[sl]];
                        let anchor = (pos - trails[parent as usize].begin as usize) as u32 + 1;
                        found = Some((q, parent, anchor));
                    }
                }
                let Some((q, parent, anchor)) = found else {
                    scanner_dry = true;
                    continue;
                };
                let id = trails.len() as u32;
                trails.push(Trail {
                    lane: l as u32,
                    begin: steps[l].len() as u32,
                    len: 0,
                    start: vertex_of(rec, q),
                    end: 0,
                    parent,
                    at: anchor,
                });
                lane_trails[l].push(id);
                current[l] = id;
                at[l] = q;
                active += 1;
            }
            // One step of lane l.
            let p = at[l] as usize;
            let c = rec[p];
            if c < rec[p + 1] {
                rec[p] = c + 1;
                let q = rec[c as usize];
                steps[l].push([c - rec[p + 2], q]);
                at[l] = q;
                prefetch(&rec[q as usize]);
            } else {
                let t = &mut trails[current[l] as usize];
                t.len = steps[l].len() as u32 - t.begin;
                t.end = rec[p + 2] / 3 - 1;
                walked += t.len as usize;
                current[l] = NONE;
                active -= 1;
            }
        }
        if active == 0 && scanner_dry {
            break;
        }
    }
    Walks {
        steps,
        trails,
        walked,
    }
}

/// Step 3 of [`hierholzer_interleaved`]: matches each trail's end with a trail (not the
/// root) that starts at the same vertex (of `n`): `next[t]` follows trail `t`. `None` unless
/// exactly one end stays unmatched (the last trail of the root's chain), which the degree
/// conditions guarantee.
fn match_ends(trails: &[Trail], n: usize) -> Option<Vec<u32>> {
    let mut head = vec![NONE; n];
    let mut link = vec![NONE; trails.len()];
    for (id, t) in trails.iter().enumerate().skip(1).rev() {
        link[id] = head[t.start as usize];
        head[t.start as usize] = id as u32;
    }
    let mut next = vec![NONE; trails.len()];
    let mut unmatched = 0;
    for (id, t) in trails.iter().enumerate() {
        let b = head[t.end as usize];
        if b == NONE {
            unmatched += 1;
        } else {
            head[t.end as usize] = link[b as usize];
            next[id] = b;
        }
    }
    drop((head, link));
    (unmatched == 1).then_some(next)
}

/// Step 4 of [`hierholzer_interleaved`], the tree: the closed circuits (those off the root's
/// chain of `next`), each represented by its oldest trail, which hangs off its anchor;
/// returns the representatives grouped by the anchor's trail (`children[child_begin[t]..
/// child_begin[t + 1]]` hang off trail `t`, as `(anchor position, representative)`). They
/// come in id order, which is the order of discovery, so each group is sorted along its
/// trail.
fn hang_circuits(trails: &[Trail], next: &[u32]) -> (Vec<u32>, Vec<(u32, u32)>) {
    let mut seen = vec![false; trails.len()];
    let mut t = 0u32;
    while t != NONE {
        seen[t as usize] = true;
        t = next[t as usize];
    }
    let mut reps = Vec::new();
    for id in 1..trails.len() {
        if !seen[id] {
            reps.push(id as u32);
            let mut t = id;
            while !seen[t] {
                seen[t] = true;
                t = next[t] as usize;
            }
        }
    }
    drop(seen);
    let mut child_begin = vec![0u32; trails.len() + 1];
    for &r in &reps {
        child_begin[trails[r as usize].parent as usize + 1] += 1;
    }
    for i in 0..trails.len() {
        child_begin[i + 1] += child_begin[i];
    }
    let mut fill = child_begin.clone();
    let mut children = vec![(0u32, 0u32); reps.len()];
    for &r in &reps {
        let slot = &mut fill[trails[r as usize].parent as usize];
        children[*slot as usize] = (trails[r as usize].at, r);
        *slot += 1;
    }
    drop((fill, reps));
    (child_begin, children)
}

/// Step 4 of [`hierholzer_interleaved`], the output: writes the trails depth-first from the
/// root, entering each child circuit of [`hang_circuits`] at its anchor: the `m` edges and
/// the vertex sequence from `start`.
fn write_trails(
    walks: &Walks,
    next: &[u32],
    (child_begin, children): (&[u32], &[(u32, u32)]),
    start: u32,
    m: usize,
) -> (Vec<u32>, Vec<u32>) {
    let Walks { steps, trails, .. } = walks;
    // Depth-first: write trail `a` from step `i`, entering child circuits at their anchors and
    // following `next` until the circuit of `first` closes (or, for the root, ends).
    let mut edges = vec![0u32; m];
    let mut verts = vec![0u32; m + 1];
    verts[0] = start;
    let mut k = 0usize;
    let mut stack: Vec<(u32, u32, u32, u32)> = Vec::new();
    let (mut a, mut i, mut ci, mut first) = (0u32, 0u32, child_begin[0], 0u32);
    loop {
        let t = trails[a as usize];
        let child_end = child_begin[a as usize + 1];
        if ci < child_end && children[ci as usize].0 == i {
            let r = children[ci as usize].1;
            stack.push((a, i, ci + 1, first));
            (a, i, ci, first) = (r, 0, child_begin[r as usize], r);
            continue;
        }
        if i < t.len {
            // Copy up to the next anchor (or the trail's end) in one go.
            let stop = if ci < child_end {
                children[ci as usize].0
            } else {
                t.len
            };
            let run = &steps[t.lane as usize][(t.begin + i) as usize..(t.begin + stop) as usize];
            for (j, &[e, v]) in run.iter().enumerate() {
                edges[k + j] = e;
                verts[k + j + 1] = v;
            }
            k += run.len();
            i = stop;
            continue;
        }
        let b = next[a as usize];
        if b != NONE && b != first {
            (a, i, ci) = (b, 0, child_begin[b as usize]);
            continue;
        }
        let Some(frame) = stack.pop() else { break };
        (a, i, ci, first) = frame;
    }
    debug_assert_eq!(k, m);
    (edges, verts)
}

/// Record position of vertex `v` in the layout of [`build_records`].
fn record_of(g: &Graph, v: u32) -> u32 {
    (g.offsets()[v as usize] + 3 * v as u64) as u32
}

/// The interleaved records (see [`hierholzer_records`]): one sequential pass with independent
/// gathers. Requires `E + 3 V < u32::MAX`.
fn build_records(g: &Graph) -> Vec<u32> {
    let off = g.offsets();
    let targets = g.targets();
    let n = g.vertex_count();
    let m = targets.len();
    // Record positions first: the gathers below then read 4 bytes per vertex instead of 8.
    let pos: Vec<u32> = (0..n).map(|v| (off[v] + 3 * v as u64) as u32).collect();
    let mut rec: Vec<u32> = crate::par::zeroed_huge(m + 3 * n);
    const AHEAD: usize = 32;
    for v in 0..n {
        let p = pos[v] as usize;
        let (lo, hi) = (off[v] as usize, off[v + 1] as usize);
        rec[p] = (p + 3) as u32;
        rec[p + 1] = (p + 3 + hi - lo) as u32;
        rec[p + 2] = 3 * (v as u32 + 1);
        for (j, slot) in rec[p + 3..p + 3 + hi - lo].iter_mut().enumerate() {
            if let Some(&t) = targets.get(lo + j + AHEAD) {
                prefetch(&pos[t as usize]);
            }
            *slot = pos[targets[lo + j] as usize];
        }
    }
    rec
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
