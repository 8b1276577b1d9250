//! Stages 3 and 4 of the CPU parallel Euler circuit (see the parent module): the spanning
//! forest of the cycle graph, found with a lock-free union-find over the cycle numbers, and
//! the splices that its links make, which merge the cycles into one.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rayon::prelude::*;

use super::{CycleNumbers, EulerStages, Node, SHORT_CYCLE, jump_labels};
use crate::components::UnionFind;
use crate::par::{PAR_THRESHOLD, SharedMut, prefetch};

/// Stage 3, in one pass over the vertices: consecutive out-edges `k, k+1` of a vertex whose
/// cycles the lock-free union-find has not yet joined are a forest link. Edges of long
/// splitter-free cycles ("residual", still unlabelled) are collected and labelled by pointer
/// jumping afterwards (which adds their cycles to `cycles`), and their vertices linked then.
/// Returns the links with the runs of slots they splice, and the number of cycles. The time
/// of the pointer jumping goes to `stages.labelling`, the linking before it to
/// `stages.linking` (`lap` gives the seconds since its last call).
pub(super) fn link_forest(
    offsets: &[u64],
    nodes: &mut [Node],
    numbers: &CycleNumbers,
    mut cycles: u64,
    stages: &mut EulerStages,
    lap: &mut impl FnMut() -> f64,
) -> (Links, u64) {
    let m = nodes.len();
    let n = offsets.len() - 1;
    // At most one residual cycle per `SHORT_CYCLE + 1` edges.
    let uf = UnionFind::new(cycles as usize + m / (SHORT_CYCLE as usize + 1) + 1);
    let linker = Linker {
        offsets,
        numbers,
        uf: &uf,
    };
    #[derive(Default)]
    struct Acc {
        links: Links,
        residual: Vec<u32>,
        deferred: Vec<u32>,
    }
    let acc = {
        let nodes = &*nodes;
        let visit = |mut acc: Acc, v: usize| {
            let (lo, hi) = (offsets[v] as usize, offsets[v + 1] as usize);
            // What linking the slots ahead will look up at random is prefetched while this
            // vertex is linked: `rep` entries `LABEL_AHEAD` slots ahead, union-find slots of
            // the labels (through `rep`, by then in cache) half as far.
            for nd in nodes
                .get(lo + LABEL_AHEAD..(hi + LABEL_AHEAD).min(m))
                .unwrap_or(&[])
            {
                if let Some(j) = nd.sublist() {
                    prefetch(numbers.rep.as_ptr().wrapping_add(j));
                }
            }
            let near = LABEL_AHEAD / 2;
            for &nd in nodes.get(lo + near..(hi + near).min(m)).unwrap_or(&[]) {
                if nd.sub != 0 || nd.label != 0 {
                    uf.prefetch(linker.label_of(nd));
                }
            }
            let before = acc.residual.len();
            for (i, nd) in nodes[lo..hi].iter().enumerate() {
                if nd.sub == 0 && nd.label == 0 {
                    acc.residual.push((lo + i) as u32);
                }
            }
            if acc.residual.len() > before {
                acc.deferred.push(v as u32);
            } else {
                acc.links.count += linker.link(nodes, v, &mut acc.links.runs);
            }
            acc
        };
        let merge = |mut a: Acc, b: Acc| {
            a.links = a.links.merge(b.links);
            a.residual.extend_from_slice(&b.residual);
            a.deferred.extend_from_slice(&b.deferred);
            a
        };
        if m < PAR_THRESHOLD {
            (0..n).fold(Acc::default(), visit)
        } else {
            (0..n)
                .into_par_iter()
                .with_min_len(1 << 10)
                .fold(Acc::default, visit)
                .reduce(Acc::default, merge)
        }
    };
    let mut links = acc.links;
    if !acc.residual.is_empty() {
        stages.linking += lap();
        cycles += jump_labels(nodes, &acc.residual);
        stages.labelling += lap();
        drop(acc.residual);
        let nodes = &*nodes;
        let link_one = |mut l: Links, &v: &u32| {
            l.count += linker.link(nodes, v as usize, &mut l.runs);
            l
        };
        let more = if acc.deferred.len() < PAR_THRESHOLD {
            acc.deferred.iter().fold(Links::default(), link_one)
        } else {
            acc.deferred
                .par_iter()
                .fold(Links::default, link_one)
                .reduce(Links::default, Links::merge)
        };
        links = links.merge(more);
    }
    drop(uf);
    (links, cycles)
}

/// Stage 3 for one vertex at a time: the cycle labels of its out-edges and the forest links
/// between consecutive ones. The splices are only recorded (as runs of slots) and applied
/// once every vertex is linked: labelling walks `pred`, which the splices change.
struct Linker<'a> {
    offsets: &'a [u64],
    numbers: &'a CycleNumbers,
    uf: &'a UnionFind,
}

impl Linker<'_> {
    /// The cycle number of an edge's node (a splitter-free edge must be labelled already).
    #[inline]
    fn label_of(&self, nd: Node) -> u32 {
        self.numbers.of(nd)
    }

    /// The cycle number of edge `e`.
    #[inline]
    fn label(&self, nodes: &[Node], e: usize) -> u32 {
        self.label_of(nodes[e])
    }

    /// Links vertex `v`, whose out-edges all have labels: returns the new links and pushes
    /// each run `[k, j + 1]` of slots joined by consecutive links `k, ..., j` onto `runs`.
    fn link(&self, nodes: &[Node], v: usize, runs: &mut Vec<[u32; 2]>) -> u64 {
        let (lo, hi) = (self.offsets[v] as usize, self.offsets[v + 1] as usize);
        if hi <= lo + 1 {
            return 0;
        }
        let mut c = 0;
        let mut run_start = lo;
        let mut prev = self.label(nodes, lo);
        for k in lo..hi - 1 {
            let cur = self.label(nodes, k + 1);
            if prev != cur && self.uf.union(prev, cur) {
                c += 1;
            } else {
                if k > run_start {
                    runs.push([run_start as u32, k as u32]);
                }
                run_start = k + 1;
            }
            prev = cur;
        }
        if hi - 1 > run_start {
            runs.push([run_start as u32, hi as u32 - 1]);
        }
        c
    }
}

/// How many slots ahead the link pass prefetches the cycle labels of.
const LABEL_AHEAD: usize = 64;

/// Forest links and the runs of slots they splice.
#[derive(Default)]
pub(super) struct Links {
    /// The number of links.
    pub(super) count: u64,
    /// The runs `[s, t]` of slots to rotate.
    pub(super) runs: Vec<[u32; 2]>,
}

impl Links {
    fn merge(mut self, other: Links) -> Links {
        self.count += other.count;
        self.runs.extend_from_slice(&other.runs);
        self
    }
}

/// Splices along each run `[s, t]` of slots: `pred[s..=t]` rotates right by one (`pred[i + 1]
/// = pred[i]`, `pred[s] = pred[t]`), a composition of swaps of the predecessors of two
/// out-edges of one vertex in different cycles, each of which merges two cycles. Marks the
/// sublists holding a rotated slot dirty. Runs are disjoint, so they are applied in parallel.
pub(super) fn splice(nodes: &mut [Node], runs: &[[u32; 2]], dirty: &[AtomicBool]) {
    let wn = SharedMut::new(nodes);
    let apply = |&[s, t]: &[u32; 2]| {
        let (s, t) = (s as usize, t as usize);
        // SAFETY: runs lie within one vertex's slots and are disjoint, so each slot has one
        // writer; t < m since runs come from the CSR offsets.
        unsafe {
            let p = wn.ptr();
            for i in s..=t {
                if let Some(j) = (*p.add(i)).sublist() {
                    dirty[j].store(true, Relaxed);
                }
            }
            let last = (*p.add(t)).pred;
            for i in (s..t).rev() {
                (*p.add(i + 1)).pred = (*p.add(i)).pred;
            }
            (*p.add(s)).pred = last;
        }
    };
    if runs.len() < PAR_THRESHOLD {
        runs.iter().for_each(apply);
    } else {
        runs.par_iter().for_each(apply);
    }
}
