//! The parallel Euler circuit algorithm on the CPU (rayon), in the Awerbuch–Israeli–Shiloach
//! style. Every stage is a constant number of passes over the edges, whatever the number of
//! cycles:
//!
//! 1. **Pairing.** A stable counting sort of the edges by end vertex lists each vertex's
//!    in-edges; since in = out everywhere, the in-edge list of `v` occupies the same positions
//!    `offsets[v]..offsets[v+1]` as its out-edges, so pairing the `i`-th in-edge with the `i`-th
//!    out-edge is `succ[pred[k]] = k`. `succ` is a permutation of the edges whose cycles are
//!    closed walks.
//! 2. **Cycle labels.** List ranking with sampled splitters (Helman–JáJá): about `E / S`
//!    splitter edges each walk their sublist to the next splitter in parallel; the small
//!    splitter-level lists are labelled sequentially (`O(E / S)`); cycles that contain no
//!    splitter (short ones) are labelled by pointer jumping restricted to them, which stops as
//!    soon as every such cycle agrees on its minimum (`log2` of the longest such cycle rounds).
//! 3. **Cycle graph and spanning forest.** Consecutive out-edges `k, k+1` of a vertex with
//!    different labels are candidate links between two cycles; a lock-free union-find over the
//!    labels keeps the links that merge distinct sets: a spanning forest of the cycle graph.
//!    Cycles minus forest links = weak components (more than one is an error).
//! 4. **Splice.** At each vertex, a run of forest links `k, k+1, ..., j+1` joins distinct
//!    cycles; rotating the successors of their in-edges (`succ[pred[i]] = i + 1`,
//!    `succ[pred[j+1]] = k`) is the composition of swaps of successors of two in-edges of the
//!    same vertex in different cycles, each of which merges two cycles into one.
//! 5. **Ranking.** The same splitter walk on the final single cycle, a sequential prefix over
//!    the splitter chain starting at edge 0, and a parallel scatter give the edge order.

use rayon::prelude::*;

use crate::EulerError;
use crate::components::UnionFind;
use crate::par::{PAR_THRESHOLD, SharedMut, counting_sort_by_key, zeroed_huge};

const NONE: u32 = u32::MAX;

/// Splitter-free cycles up to this length are labelled by direct walks, longer ones by pointer
/// jumping.
const SHORT_CYCLE: u32 = 8;

/// One edge in about this many is a splitter of the list ranking (a power of two).
pub(crate) const CPU_SPLITTER_SPACING: u32 = 64;

/// The hash that picks splitters (the same function as `warpath_mix32` in `graph.cu`).
#[inline]
pub(crate) fn mix32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// Whether edge `e` is a splitter for spacing `s` (edge 0 always is).
#[inline]
pub(crate) fn is_splitter(e: u32, s: u32) -> bool {
    e == 0 || mix32(e) & (s - 1) == 0
}

/// Runs `f` over `0..n`, in parallel when `n` is large.
fn for_range(n: usize, f: impl Fn(usize) + Sync + Send) {
    if n < PAR_THRESHOLD {
        (0..n).for_each(f);
    } else {
        (0..n).into_par_iter().with_min_len(1 << 12).for_each(f);
    }
}

fn for_range_fill(v: &mut [u32], value: u32) {
    if v.len() < PAR_THRESHOLD {
        v.fill(value);
    } else {
        v.par_chunks_mut(1 << 16).for_each(|c| c.fill(value));
    }
}

struct Splitters {
    /// The spacing (a power of two) of [`is_splitter`].
    spacing: u32,
    /// Splitter edges, in increasing id order.
    edges: Vec<u32>,
    /// `split_of[e]`: index of `e` among the splitters, or `NONE`.
    split_of: Vec<u32>,
}

fn choose_splitters(m: usize, s: u32) -> Splitters {
    let edges: Vec<u32> = if m < PAR_THRESHOLD {
        (0..m as u32).filter(|&e| is_splitter(e, s)).collect()
    } else {
        (0..m as u32)
            .into_par_iter()
            .filter(|&e| is_splitter(e, s))
            .collect()
    };
    let mut split_of = vec![NONE; m];
    let w = SharedMut::new(&mut split_of);
    for_range(edges.len(), |j| {
        // SAFETY: splitter edges are distinct.
        unsafe { w.write(edges[j] as usize, j as u32) }
    });
    Splitters {
        spacing: s,
        edges,
        split_of,
    }
}

/// Walks run this many sublists at once per task, round-robin: their loads are independent, so
/// the core overlaps their cache misses (memory-level parallelism) instead of waiting for one
/// dependent miss per step.
const LANES: usize = 16;

/// Walks the sublist of every splitter: `step(j, r, e)` for the edge `e` at rank `r` of
/// sublist `j` (rank 0 is the splitter itself), then `end(j, e, len)` with the splitter `e`
/// that ends it and the sublist's length. Splitter-ness is recomputed from the hash, so a step
/// costs one memory access (`succ[e]`).
fn walk_sublists(
    succ: &[u32],
    sp: &Splitters,
    step: impl Fn(usize, u32, u32) + Sync,
    end: impl Fn(usize, u32, u32) + Sync,
) {
    const IDLE: usize = usize::MAX;
    const CHUNK: usize = 512;
    let k = sp.edges.len();
    let s = sp.spacing;
    let run_chunk = |c: usize| {
        let hi = ((c + 1) * CHUNK).min(k);
        let mut next_j = c * CHUNK;
        let mut lane_j = [IDLE; LANES];
        let mut lane_e = [0u32; LANES];
        let mut lane_r = [0u32; LANES];
        let mut active = 0usize;
        let start = |j: usize, lane_e: &mut u32, lane_r: &mut u32| {
            let e = sp.edges[j];
            step(j, 0, e);
            *lane_e = succ[e as usize];
            *lane_r = 1;
        };
        for l in 0..LANES {
            if next_j < hi {
                start(next_j, &mut lane_e[l], &mut lane_r[l]);
                lane_j[l] = next_j;
                next_j += 1;
                active += 1;
            }
        }
        while active > 0 {
            for l in 0..LANES {
                let j = lane_j[l];
                if j == IDLE {
                    continue;
                }
                let e = lane_e[l];
                if is_splitter(e, s) {
                    end(j, e, lane_r[l]);
                    if next_j < hi {
                        start(next_j, &mut lane_e[l], &mut lane_r[l]);
                        lane_j[l] = next_j;
                        next_j += 1;
                    } else {
                        lane_j[l] = IDLE;
                        active -= 1;
                    }
                } else {
                    step(j, lane_r[l], e);
                    lane_r[l] += 1;
                    lane_e[l] = succ[e as usize];
                }
            }
        }
    };
    let chunks = k.div_ceil(CHUNK);
    if k < 4 * CHUNK {
        (0..chunks).for_each(run_chunk);
    } else {
        (0..chunks).into_par_iter().for_each(run_chunk);
    }
}

/// `seg[e]` = index of the sublist holding `e`, for every edge reachable from a splitter;
/// returns each splitter's next splitter.
fn walk_label(succ: &[u32], sp: &Splitters, seg: &mut [u32]) -> Vec<u32> {
    let mut next = vec![0u32; sp.edges.len()];
    let ws = SharedMut::new(seg);
    let wn = SharedMut::new(&mut next);
    walk_sublists(
        succ,
        sp,
        // SAFETY: every edge lies on exactly one sublist, so seg[e] has one writer.
        |j, _, e| unsafe { ws.write(e as usize, j as u32) },
        // SAFETY: next[j] belongs to sublist j alone.
        |j, e, _| unsafe { wn.write(j, sp.split_of[e as usize]) },
    );
    next
}

/// Per splitter: the next splitter and the length of its sublist.
fn walk_lengths(succ: &[u32], sp: &Splitters) -> (Vec<u32>, Vec<u32>) {
    let k = sp.edges.len();
    let (mut next, mut len) = (vec![0u32; k], vec![0u32; k]);
    let (wn, wl) = (SharedMut::new(&mut next), SharedMut::new(&mut len));
    walk_sublists(
        succ,
        sp,
        |_, _, _| {},
        // SAFETY: next[j] and len[j] belong to sublist j alone.
        |j, e, r| unsafe {
            wn.write(j, sp.split_of[e as usize]);
            wl.write(j, r);
        },
    );
    (next, len)
}

/// Writes each sublist's edges and their end vertices at their rank: `order[base[j] + r]` and
/// `verts[base[j] + r + 1]`.
fn walk_emit(
    succ: &[u32],
    targets: &[u32],
    sp: &Splitters,
    base: &[u32],
    order: &mut [u32],
    verts: &mut [u32],
) {
    let wo = SharedMut::new(order);
    let wv = SharedMut::new(verts);
    walk_sublists(
        succ,
        sp,
        |j, r, e| {
            let pos = (base[j] + r) as usize;
            // SAFETY: on a single cycle, (base of the sublist + rank in it) is a bijection onto
            // 0..m, so each position (and position + 1 in verts) has one writer.
            unsafe {
                wo.write(pos, e);
                wv.write(pos + 1, targets[e as usize]);
            }
        },
        |_, _, _| {},
    );
}

/// Labels every edge with a representative edge of its `succ` cycle.
fn label_cycles(succ: &[u32], sp: &Splitters, seg: &mut [u32]) -> Vec<u32> {
    let m = succ.len();
    let next = walk_label(succ, sp, seg);
    // Splitter-level cycles: sequential, O(E / S).
    let k = sp.edges.len();
    let mut rep = vec![NONE; k];
    for j0 in 0..k {
        if rep[j0] != NONE {
            continue;
        }
        let r = sp.edges[j0];
        let mut j = j0;
        while rep[j] == NONE {
            rep[j] = r;
            j = next[j] as usize;
        }
    }
    // Cycles without splitters: a short one (at most SHORT_CYCLE edges) is labelled by its
    // minimum edge, found by walking it from each of its edges (at most SHORT_CYCLE^2 loads
    // per cycle, independent across edges); longer ones go to pointer jumping.
    let mut lab: Vec<u32> = zeroed_huge(m);
    let mut jmp: Vec<u32> = zeroed_huge(m);
    {
        let wl = SharedMut::new(&mut lab);
        let wj = SharedMut::new(&mut jmp);
        let seg = &*seg;
        for_range(m, |e| {
            // SAFETY: index e belongs to this iteration alone.
            unsafe {
                if seg[e] != NONE {
                    wl.write(e, rep[seg[e] as usize]);
                    wj.write(e, NONE);
                    return;
                }
                let (mut x, mut low, mut steps) = (succ[e], e as u32, 1);
                while x as usize != e && steps < SHORT_CYCLE {
                    low = low.min(x);
                    x = succ[x as usize];
                    steps += 1;
                }
                if x as usize == e {
                    wl.write(e, low);
                    wj.write(e, NONE);
                } else {
                    wl.write(e, e as u32);
                    wj.write(e, succ[e]);
                }
            }
        });
    }
    let residual: Vec<u32> = if m < PAR_THRESHOLD {
        (0..m as u32).filter(|&e| jmp[e as usize] != NONE).collect()
    } else {
        (0..m as u32)
            .into_par_iter()
            .filter(|&e| jmp[e as usize] != NONE)
            .collect()
    };
    if !residual.is_empty() {
        let mut lab2 = lab.clone();
        let mut jmp2 = jmp.clone();
        loop {
            // One round: window doubles. `changed` says whether the labels were not yet
            // constant on every residual cycle before the round (then keep going).
            let unsettled = {
                let wl = SharedMut::new(&mut lab2);
                let wj = SharedMut::new(&mut jmp2);
                let (lab, jmp) = (&lab, &jmp);
                let round = |&e: &u32| {
                    let e = e as usize;
                    let j = jmp[e] as usize;
                    // SAFETY: residual edges are distinct; the old arrays are only read.
                    unsafe {
                        wl.write(e, lab[e].min(lab[j]));
                        wj.write(e, jmp[j]);
                    }
                    lab[e] != lab[succ[e] as usize]
                };
                if residual.len() < PAR_THRESHOLD {
                    residual.iter().map(round).fold(false, |a, b| a | b)
                } else {
                    residual
                        .par_iter()
                        .map(round)
                        .reduce(|| false, |a, b| a | b)
                }
            };
            std::mem::swap(&mut lab, &mut lab2);
            std::mem::swap(&mut jmp, &mut jmp2);
            if !unsettled {
                break;
            }
        }
    }
    lab
}

/// The edge order and vertex sequence of an Euler circuit starting with edge 0, for a graph
/// whose in-degrees equal its out-degrees (checked by the caller) and `0 < E < u32::MAX`.
///
/// # Errors
/// [`EulerError::Disconnected`] when the edges form several weak components.
pub(crate) fn circuit_order(
    offsets: &[u64],
    targets: &[u32],
    spacing: u32,
) -> Result<(Vec<u32>, Vec<u32>), EulerError> {
    let m = targets.len();
    let n = offsets.len() - 1;
    // 1. Pairing.
    let mut pred: Vec<u32> = zeroed_huge(m);
    let mut succ: Vec<u32> = zeroed_huge(m);
    {
        let wp = SharedMut::new(&mut pred);
        let wsucc = SharedMut::new(&mut succ);
        let in_offsets = counting_sort_by_key(targets, n, |i, pos| {
            // SAFETY: positions are handed out once; i is visited once.
            unsafe {
                wp.write(pos as usize, i as u32);
                wsucc.write(i, pos as u32);
            }
        });
        debug_assert_eq!(in_offsets, offsets);
    }
    // 2. Cycle labels.
    let sp = choose_splitters(m, spacing);
    let mut seg: Vec<u32> = zeroed_huge(m);
    for_range_fill(&mut seg, NONE);
    let label = label_cycles(&succ, &sp, &mut seg);
    drop(seg);
    let cycles: u64 = if m < PAR_THRESHOLD {
        label
            .iter()
            .enumerate()
            .filter(|&(e, &l)| l as usize == e)
            .count() as u64
    } else {
        label
            .par_iter()
            .enumerate()
            .filter(|&(e, &l)| l as usize == e)
            .count() as u64
    };
    // 3. Spanning forest of the cycle graph.
    let mut tree = vec![false; m];
    let links: u64 = if cycles > 1 {
        let uf = UnionFind::new(m);
        let wt = SharedMut::new(&mut tree);
        let label = &label;
        let link = |v: usize| -> u64 {
            let (lo, hi) = (offsets[v] as usize, offsets[v + 1] as usize);
            let mut c = 0;
            for k in lo..hi.saturating_sub(1) {
                let (a, b) = (label[k], label[k + 1]);
                if a != b && uf.union(a, b) {
                    // SAFETY: index k belongs to vertex v's task alone.
                    unsafe { wt.write(k, true) };
                    c += 1;
                }
            }
            c
        };
        if m < PAR_THRESHOLD {
            (0..n).map(link).sum()
        } else {
            (0..n).into_par_iter().with_min_len(1 << 10).map(link).sum()
        }
    } else {
        0
    };
    let components = cycles - links;
    if components > 1 {
        return Err(EulerError::Disconnected {
            kind: "circuit",
            components,
        });
    }
    drop(label);
    // 4. Splice: rotate successors along each run of forest links.
    if links > 0 {
        let ws = SharedMut::new(&mut succ);
        let (pred, tree) = (&pred, &tree);
        let splice = |v: usize| {
            let (lo, hi) = (offsets[v] as usize, offsets[v + 1] as usize);
            let mut run_start = lo;
            for k in lo..hi {
                if k == lo || !tree[k - 1] {
                    run_start = k;
                }
                let a = pred[k] as usize;
                // SAFETY: pred is a permutation, so succ[pred[k]] is written by one task.
                unsafe {
                    if tree[k] {
                        ws.write(a, k as u32 + 1);
                    } else if k > run_start {
                        ws.write(a, run_start as u32);
                    }
                }
            }
        };
        for_range(n, splice);
    }
    drop(tree);
    drop(pred);
    // 5. Ranking from edge 0 (always a splitter).
    let (next, len) = walk_lengths(&succ, &sp);
    let k = sp.edges.len();
    let mut base = vec![0u32; k];
    let j0 = sp.split_of[0] as usize;
    let mut j = j0;
    let mut run = 0u32;
    let mut visited = 0usize;
    loop {
        base[j] = run;
        run += len[j];
        visited += 1;
        j = next[j] as usize;
        if j == j0 || visited > k {
            break;
        }
    }
    // Internal invariant (proved by the splice argument above); checked because the writes
    // below rely on it.
    assert!(
        visited == k && run as usize == m,
        "the spliced successor permutation must be one cycle"
    );
    let mut order = vec![0u32; m];
    let mut verts = vec![0u32; m + 1];
    walk_emit(&succ, targets, &sp, &base, &mut order, &mut verts);
    // Edge 0 starts at the first vertex with an out-edge.
    verts[0] = (offsets.partition_point(|&o| o == 0) - 1) as u32;
    Ok((order, verts))
}
