//! The parallel Euler circuit algorithm on the CPU (rayon), in the Awerbuch–Israeli–Shiloach
//! style. Every stage is a constant number of passes over the edges, whatever the number of
//! cycles. All per-edge state lives in one 16-byte [`Node`] per edge slot, so a step of a
//! random walk costs one cache miss, not one per array.
//!
//! 1. **Pairing.** Each vertex's `i`-th in-edge (in edge order) is paired with its `i`-th
//!    out-edge: since in = out everywhere, the in-edge slots of `v` are its out-edge positions
//!    `offsets[v]..offsets[v+1]`, so a stable counting sort of the edges by end vertex, with
//!    the CSR offsets as its (already known) bucket starts, gives `pred[k]`, the edge before
//!    out-edge `k` on its closed walk: `pred` is a permutation of the edges whose cycles are
//!    closed walks. The sort first buckets the edges by ranges of end vertices, so that each
//!    bucket's placement stays in the L2 cache; its final cursors are the in-degrees, which
//!    checks the Euler degree condition for free.
//! 2. **Cycle labels.** List ranking with sampled splitters (Helman–JáJá): about `E / S`
//!    splitter edges each walk their sublist backwards (through `pred`) to the next splitter
//!    in parallel, 32 walks interleaved per task with prefetching, recording every edge's
//!    sublist, and copying each sublist's (edge, end vertex) pairs into an arena; the small
//!    splitter-level lists are labelled sequentially (`O(E / S)`). A cycle that contains no
//!    splitter is labelled by a leader election among its edges (interleaved walks that stop
//!    at the first edge of higher priority) when it has at most 256 edges, else by pointer
//!    jumping restricted to such cycles, which stops as soon as every one agrees on its
//!    minimum (`log2` of the longest such cycle rounds).
//! 3. **Cycle graph and spanning forest.** Consecutive out-edges `k, k+1` of a vertex with
//!    different labels are candidate links between two cycles; a lock-free union-find over the
//!    labels keeps the links that merge distinct sets: a spanning forest of the cycle graph.
//!    Cycles minus forest links = weak components (more than one is an error).
//! 4. **Splice.** At each vertex, a run of forest links `k, k+1, ..., j+1` joins distinct
//!    cycles; rotating the predecessors of those out-edges right by one (`pred[i + 1] =
//!    pred[i]`, `pred[k] = pred[j + 1]`) is the composition of swaps of the predecessors of two
//!    out-edges of the same vertex in different cycles, each of which merges two cycles into
//!    one. The runs are recorded by stage 3 and applied after it, in parallel.
//! 5. **Ranking.** A sublist whose predecessors did not change is the same list in the final
//!    cycle, so only the sublists holding a spliced edge are walked again (few when the cycles
//!    are few); a sequential prefix over the splitter chain from edge 0 gives each sublist's
//!    position, and a parallel copy writes the arena segments out in that order (reversed:
//!    the walks go backwards).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use rayon::prelude::*;

use crate::EulerError;
use crate::par::{PAR_THRESHOLD, SharedMut, prefetch, recast_vec};

mod forest;
mod pairing;

use forest::{link_forest, splice};
use pairing::pair_edges;

const NONE: u32 = u32::MAX;

/// The wall-clock time of each stage of one run of the parallel Euler circuit algorithm
/// (seconds), and what the stages found: see [`euler_circuit_parallel_staged`](crate::euler_circuit_parallel_staged).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EulerStages {
    /// Stage 1: each vertex's in-edges paired with its out-edges (a counting sort by end
    /// vertex), which also checks the degrees.
    pub pairing: f64,
    /// Stage 2: every edge labelled with its cycle of the pairing (sampled list ranking, leader
    /// election on short splitter-free cycles, pointer jumping on long ones).
    pub labelling: f64,
    /// Stage 3: the spanning forest of the cycle graph (links between cycles at shared
    /// vertices, a lock-free union-find), without the pointer jumping of stage 2 it waits for.
    pub linking: f64,
    /// Stage 4: the predecessors rotated along each run of forest links (cycles merged).
    pub splicing: f64,
    /// Stage 5: the changed sublists walked again, their positions summed along the splitter
    /// chain, and the circuit written out.
    pub ranking: f64,
    /// The cycles the pairing leaves, which splicing joins into one (the seed's "partitions").
    pub cycles_after_pairing: u64,
    /// The links of the spanning forest (one fewer than the cycles on a connected graph).
    pub forest_links: u64,
}

impl EulerStages {
    /// The sum of the stage times.
    pub fn total(&self) -> f64 {
        self.pairing + self.labelling + self.linking + self.splicing + self.ranking
    }
}

/// Splitter-free cycles up to this length are labelled by walks (see [`label_short`]), longer
/// ones by pointer jumping. A cycle this long holds no splitter with probability under 2%.
const SHORT_CYCLE: u32 = 256;

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

struct Splitters {
    /// The spacing (a power of two) of [`is_splitter`].
    spacing: u32,
    /// Splitter edges, in increasing id order.
    edges: Vec<u32>,
}

impl Splitters {
    fn new(m: usize, s: u32) -> Self {
        let edges: Vec<u32> = if m < PAR_THRESHOLD {
            (0..m as u32).filter(|&e| is_splitter(e, s)).collect()
        } else {
            (0..m as u32)
                .into_par_iter()
                .filter(|&e| is_splitter(e, s))
                .collect()
        };
        Splitters { spacing: s, edges }
    }

    /// Stores each splitter's index in its node's `label` (unused for covered edges), where a
    /// walk reaching the splitter finds it in a cache line it has already loaded: a binary
    /// search over the splitters instead costs several dependent cache misses per sublist,
    /// since the walks' random loads evict the splitter array from the caches.
    fn mark(&self, nodes: &mut [Node]) {
        for (j, &e) in self.edges.iter().enumerate() {
            nodes[e as usize].label = j as u32;
        }
    }
}

/// Everything the stages keep per edge slot, in one 16-byte record: a step of a walk touches
/// one cache line, not one per array.
#[derive(Clone, Copy)]
#[repr(C)]
struct Node {
    /// The in-edge paired with out-edge `k` (the slot's index): the edge before `k` on its
    /// cycle. Walks follow `pred`, so they list a cycle backwards.
    pred: u32,
    /// The end vertex of edge `k` (a copy of the CSR target, so a walk needs no second load).
    target: u32,
    /// 0 until a walk reaches the edge, then `j + 1` for sublist `j`; stays 0 on a
    /// splitter-free cycle, `RESIDUAL` once a long one is labelled.
    sub: u32,
    /// For a splitter, its index among the splitters. For an edge of a splitter-free cycle,
    /// 0 until it is labelled, then its [`short_label`] (a cycle of at most `SHORT_CYCLE`
    /// edges) or its residual cycle's number (`sub == RESIDUAL`).
    label: u32,
}

const _: () = assert!(size_of::<Node>() == 16 && align_of::<Node>() == 4);

/// `m` zeroed nodes, from a zeroed allocation: pages are mapped (and zeroed) by the kernel at
/// their first touch, which the pairing does in parallel, instead of by one thread here.
/// (Large allocations are 16-byte aligned, so no node straddles two cache lines.)
fn zeroed_nodes(m: usize) -> Vec<Node> {
    // SAFETY: Node is repr(C) with four u32 fields: the size, alignment and bit validity of
    // [u32; 4].
    unsafe { recast_vec::<[u32; 4], Node>(vec![[0; 4]; m]) }
}

/// The first `len` words of the nodes' allocation, as a `Vec<u32>` of length `len` (contents
/// unspecified) that owns it, shrunk in place.
fn nodes_into_u32s(nodes: Vec<Node>, len: usize) -> Vec<u32> {
    // SAFETY: a Node is four u32 words, every bit pattern valid.
    let mut w = unsafe { recast_vec::<Node, u32>(nodes) };
    w.truncate(len);
    w.shrink_to_fit();
    w
}

impl Node {
    /// The sublist holding this edge, `None` for a splitter-free edge.
    #[inline(always)]
    fn sublist(self) -> Option<usize> {
        (self.sub != 0 && self.sub != RESIDUAL).then(|| self.sub as usize - 1)
    }
}

/// Where a walk left the edges of one sublist: `len[j]` (edge, end vertex) pairs from `off` in
/// buffer `buf` of [`Sublists::bufs`], in walk order.
#[derive(Clone, Copy, Default)]
struct Seg {
    buf: u32,
    off: usize,
}

/// (edge, end vertex) pairs, sublist after sublist.
type Buf = Vec<[u32; 2]>;

/// Walks run this many at once per task (see [`interleave`]).
const LANES: usize = 32;

/// Runs walks `LANES` at a time, round-robin: `start(l, lane)` puts a new walk on lane `l`
/// (`false` when none is left), `step(l, lane)` advances it by one step (`false` when the walk
/// is over; the lane then starts another). Each step prefetches what its lane's next step
/// touches: the lanes' loads are independent, so the core overlaps their cache misses
/// (memory-level parallelism) instead of waiting for one dependent miss per step.
#[inline(always)]
fn interleave<L: Copy + Default>(
    mut start: impl FnMut(usize, &mut L) -> bool,
    mut step: impl FnMut(usize, &mut L) -> bool,
) {
    let mut lanes = [L::default(); LANES];
    let mut live = [false; LANES];
    let mut active = 0;
    for l in 0..LANES {
        live[l] = start(l, &mut lanes[l]);
        active += usize::from(live[l]);
    }
    while active > 0 {
        for l in 0..LANES {
            if live[l] && !step(l, &mut lanes[l]) && !start(l, &mut lanes[l]) {
                live[l] = false;
                active -= 1;
            }
        }
    }
}

/// The per-sublist results of the walks, indexed by splitter index.
struct Sublists {
    /// The splitter index reached at the end of the sublist.
    next: Vec<u32>,
    /// The number of edges, the splitter included.
    len: Vec<u32>,
    /// Where its edges were written.
    seg: Vec<Seg>,
    /// The buffers that `seg` points into: one arena per walk, and the rare segments that
    /// did not fit in it.
    bufs: Vec<Buf>,
}

/// The arena entries a walk over sublists holding `m` edges in all may need: the blocks it
/// hands out leave gaps (each shorter than the segment that did not fit), so some slack.
fn arena_len(m: usize) -> usize {
    m + m / 8 + 16 * WALK_BLOCK
}

/// Arena space is handed to the walking tasks in blocks of this many entries (one atomic
/// operation per block). Each task leaves at most the rest of one block unused, plus a gap
/// shorter than a sublist whenever a sublist does not fit in the rest of its block: about 4%
/// of the arena for the default spacing.
const WALK_BLOCK: usize = 1 << 12;

/// Walks the sublists `jobs` (indices of splitters) backwards through `pred`: writes
/// `sub = j + 1` into every node of sublist `j`, and records its next splitter, its length,
/// and its (edge, end vertex) pairs, in walk order, in `arena` (pushed onto `out.bufs`; a
/// segment that does not fit goes to a buffer of its own). Splitter-ness is recomputed from
/// the hash, so a step touches one node, prefetched one turn ahead.
///
/// Each lane stages its sublist in a small buffer that stays in the L1 cache and copies it
/// into the task's current arena block when the sublist ends: writing 32 interleaved output
/// streams to fresh memory directly costs the walk about half its time. Reusing the
/// pairing's scratch array as the first arena also saves its page faults.
///
/// Without `RECORD` (cycle labels only, [`orbit_numbers`]) no pairs are kept: `arena` is
/// ignored and `out.seg` and `out.bufs` are left as they are.
fn walk<const RECORD: bool>(
    nodes: &mut [Node],
    sp: &Splitters,
    jobs: &[u32],
    mut arena: Buf,
    out: &mut Sublists,
) {
    const CHUNK: usize = 1024;
    let s = sp.spacing;
    let arena_id = out.bufs.len() as u32;
    let cap = arena.len();
    let wa = SharedMut::new(&mut arena);
    let bump = AtomicUsize::new(0);
    let overflow: Mutex<Vec<Buf>> = Mutex::new(Vec::new());
    let wn = SharedMut::new(nodes);
    let (wnext, wlen) = (SharedMut::new(&mut out.next), SharedMut::new(&mut out.len));
    let wseg = SharedMut::new(&mut out.seg);
    let run_chunk = |jobs: &[u32]| {
        let stage_cap = if RECORD {
            4 * s.min(1 << 10) as usize
        } else {
            0
        };
        let mut stage: [Buf; LANES] = std::array::from_fn(|_| Vec::with_capacity(stage_cap));
        // The task's current arena block.
        let (mut cur, mut end) = (0usize, 0usize);
        // Stores lane l's finished sublist j and empties its stage.
        let mut finish = |stage: &mut Buf, j: usize| {
            let len = stage.len();
            if end - cur < len {
                let size = len.max(WALK_BLOCK);
                let at = bump.fetch_add(size, Relaxed);
                if at.saturating_add(size) <= cap {
                    (cur, end) = (at, at + size);
                }
            }
            let seg = if end - cur >= len {
                // SAFETY: [cur, cur + len) lies in this task's block, handed out once.
                unsafe {
                    std::ptr::copy_nonoverlapping(stage.as_ptr(), wa.ptr().add(cur), len);
                }
                cur += len;
                Seg {
                    buf: arena_id,
                    off: cur - len,
                }
            } else {
                let mut o = overflow.lock().unwrap_or_else(PoisonError::into_inner);
                o.push(stage.clone());
                Seg {
                    buf: arena_id + o.len() as u32,
                    off: 0,
                }
            };
            // SAFETY: seg[j] belongs to sublist j alone.
            unsafe { wseg.write(j, seg) };
            stage.clear();
        };
        let mut taken = 0;
        // A lane: its sublist, the edge it visits at its next turn (already prefetched) and
        // the number of edges taken so far.
        let start = |_, (lane_j, lane_e, lane_n): &mut (usize, u32, u32)| {
            let Some(&j) = jobs.get(taken) else {
                return false;
            };
            taken += 1;
            let e = sp.edges[j as usize];
            prefetch(wn.addr(e as usize));
            (*lane_j, *lane_e, *lane_n) = (j as usize, e, 0);
            true
        };
        let step = |l: usize, &mut (j, ref mut e, ref mut n): &mut (usize, u32, u32)| {
            if *n > 0 && is_splitter(*e, s) {
                // The splitter's index is in its node's `label`, whose line the prefetch of
                // one turn ago brought in.
                // SAFETY: next[j] and len[j] belong to sublist j alone; `label` of a splitter
                // is only read during walks.
                unsafe {
                    wnext.write(j, (*wn.ptr().add(*e as usize)).label);
                    wlen.write(j, *n);
                }
                if RECORD {
                    finish(&mut stage[l], j);
                }
                return false;
            }
            // SAFETY: every edge lies on exactly one sublist, so node e has one walker, which
            // alone writes its `sub` during the walk.
            let (x, t) = unsafe {
                let p = wn.ptr().add(*e as usize);
                (*p).sub = j as u32 + 1;
                ((*p).pred, (*p).target)
            };
            if RECORD {
                stage[l].push([*e, t]);
            }
            *n += 1;
            prefetch(wn.addr(x as usize));
            *e = x;
            true
        };
        interleave(start, step);
    };
    if jobs.len() < 4 * CHUNK {
        jobs.chunks(CHUNK).for_each(run_chunk);
    } else {
        jobs.par_chunks(CHUNK).for_each(run_chunk);
    }
    if !RECORD {
        return;
    }
    out.bufs.push(arena);
    out.bufs.extend(
        overflow
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner),
    );
}

/// The splitter-level cycles, after [`walk`] over all sublists: each sublist's cycle number
/// (from 0, in order of their first sublist) and their number. Sequential, `O(E / S)`.
fn splitter_cycles(sp: &Splitters, next: &[u32]) -> (Vec<u32>, u64) {
    let k = sp.edges.len();
    let mut rep = vec![NONE; k];
    let mut cycles = 0u64;
    for j0 in 0..k {
        if rep[j0] != NONE {
            continue;
        }
        let r = cycles as u32;
        cycles += 1;
        let mut j = j0;
        while rep[j] == NONE {
            rep[j] = r;
            j = next[j] as usize;
        }
    }
    (rep, cycles)
}

/// The priority of edge `e` in the leader election of [`label_short`]: a bijection of the
/// edge ids that looks random, so that however the ids lie along a cycle, a walk meets a
/// higher-priority edge after about `ln L` steps on average on a cycle of `L` edges (ids in
/// increasing order along a cycle would make the walks quadratic).
#[inline(always)]
fn priority(e: u32) -> u32 {
    mix32(e ^ 0x9e37_79b9)
}

/// Labels the splitter-free cycles of at most `SHORT_CYCLE` edges: returns the number of them
/// that each chunk of `SHORT_CHUNK` slots leads.
///
/// Such a cycle is labelled by its leader, the edge of smallest [`priority`] (unique: the
/// priority is a bijection). A parallel scan of the nodes starts a walk from every
/// splitter-free edge; it follows `pred` until it meets an edge of smaller priority (then its
/// start is not the leader), returns to its start (which is: it walks the cycle again, writing
/// the label, [`short_label`]), or has taken `SHORT_CYCLE` steps. The walks run 32 at a time per task,
/// interleaved and prefetching, like the list ranking's; they take about `ln L` steps each on
/// a cycle of `L` edges, and never more than `SHORT_CYCLE`. The splitter-free edges left
/// unlabelled lie on longer cycles, which pointer jumping labels.
fn label_short(nodes: &mut [Node]) -> Vec<u32> {
    const CHUNK: usize = SHORT_CHUNK;
    let m = nodes.len();
    let wn = SharedMut::new(nodes);
    let run_chunk = |c: usize| -> u32 {
        let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(m));
        let mut leaders = 0u32;
        let mut scan = lo;
        // A lane: its start, the start's priority, the edge it examines at its next turn
        // (prefetched) and the number of edges seen.
        // SAFETY (every node access in this function): the walks read only `pred`, the scan
        // only `sub`, and leaders write only `label`, of their own cycle (each cycle has one
        // leader).
        let start = |_, lane: &mut (u32, u32, u32, u32)| {
            while scan < hi && unsafe { (*wn.ptr().add(scan)).sub } != 0 {
                scan += 1;
            }
            if scan == hi {
                return false;
            }
            let e = scan as u32;
            scan += 1;
            *lane = (e, priority(e), e, 0);
            true
        };
        let step = |_, lane: &mut (u32, u32, u32, u32)| {
            let (s, pr, x, n) = *lane;
            let p = unsafe { (*wn.ptr().add(x as usize)).pred };
            if p == s {
                let label = short_label(c, leaders);
                leaders += 1;
                let mut y = s;
                loop {
                    unsafe { (*wn.ptr().add(y as usize)).label = label };
                    y = unsafe { (*wn.ptr().add(y as usize)).pred };
                    if y == s {
                        return false;
                    }
                }
            }
            if priority(p) < pr || n + 1 == SHORT_CYCLE {
                return false;
            }
            prefetch(wn.addr(p as usize));
            (lane.2, lane.3) = (p, n + 1);
            true
        };
        interleave(start, step);
        leaders
    };
    let chunks = m.div_ceil(CHUNK);
    if m < PAR_THRESHOLD {
        (0..chunks).map(run_chunk).collect()
    } else {
        (0..chunks).into_par_iter().map(run_chunk).collect()
    }
}

/// `label_short` scans the nodes in chunks of this many slots (a power of two, `2^14`).
const SHORT_CHUNK: usize = 1 << 14;

/// The label written for the `l`-th leader found in chunk `c` of `label_short`: one more than
/// `c << 14 | l`, so never 0 (which means "not labelled"). It cannot overflow: `l` is below the
/// number of slots of chunk `c`, and with fewer than `u32::MAX` edges the last chunk has at
/// most `2^14 - 2` slots.
#[inline(always)]
fn short_label(c: usize, l: u32) -> u32 {
    ((c as u32) << 14 | l) + 1
}

/// `Node::sub` of a residual edge once pointer jumping has labelled it (its `label` is then the
/// residual cycle's number).
const RESIDUAL: u32 = u32::MAX;

/// Pointer jumping on the `residual` edges (whole splitter-free cycles, followed through
/// `pred`): every edge's label becomes its cycle's smallest edge; the cycles are then numbered
/// from 0 and each edge's node gets `sub = RESIDUAL` and its cycle's number as `label`.
/// Returns the number of cycles. Only the residual indices of the edge-sized scratch arrays
/// are touched, so they are plain lazily zeroed vectors, not `zeroed_huge`.
fn jump_labels(nodes: &mut [Node], residual: &[u32]) -> u64 {
    let m = nodes.len();
    let mut lab: Vec<u32> = vec![0; m];
    let mut jmp: Vec<u32> = vec![0; m];
    let mut lab2: Vec<u32> = vec![0; m];
    let mut jmp2: Vec<u32> = vec![0; m];
    for &e in residual {
        let e = e as usize;
        (lab[e], jmp[e]) = (e as u32, nodes[e].pred);
        (lab2[e], jmp2[e]) = (lab[e], jmp[e]);
    }
    loop {
        // One round: window doubles. `unsettled` says whether the labels were not yet constant
        // on every residual cycle before the round (then keep going).
        let unsettled = {
            let wl = SharedMut::new(&mut lab2);
            let wj = SharedMut::new(&mut jmp2);
            let (lab, jmp, nodes) = (&lab, &jmp, &*nodes);
            let round = |&e: &u32| {
                let e = e as usize;
                let j = jmp[e] as usize;
                // SAFETY: residual edges are distinct; the old arrays are only read.
                unsafe {
                    wl.write(e, lab[e].min(lab[j]));
                    wj.write(e, jmp[j]);
                }
                lab[e] != lab[nodes[e].pred as usize]
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
    // `jmp` is free now: it numbers the cycles at their smallest edges.
    let mut cycles = 0u32;
    for &e in residual {
        if lab[e as usize] == e {
            jmp[e as usize] = cycles;
            cycles += 1;
        }
    }
    for &e in residual {
        let nd = &mut nodes[e as usize];
        (nd.sub, nd.label) = (RESIDUAL, jmp[lab[e as usize] as usize]);
    }
    u64::from(cycles)
}

/// Compact cycle numbers, from the labels that stage 2 leaves in the nodes: splitter-level
/// cycles first, then short splitter-free ones chunk by chunk, then residual ones. The
/// union-find of stage 3 has one slot per cycle: a few megabytes when the cycles are few,
/// where slots indexed by edge would be spread over the whole edge range.
struct CycleNumbers {
    /// Each sublist's splitter-level cycle number.
    rep: Vec<u32>,
    /// The number of the first short cycle led from each chunk of `label_short`.
    short_base: Vec<u32>,
    /// The number of the first residual cycle (the number of the other cycles).
    residual_base: u32,
}

impl CycleNumbers {
    /// After [`walk`] over all sublists (`next`): numbers the splitter-level cycles and labels
    /// the short splitter-free ones ([`label_short`]).
    fn new(nodes: &mut [Node], sp: &Splitters, next: &[u32]) -> Self {
        let (rep, splitter_level) = splitter_cycles(sp, next);
        let led = label_short(nodes);
        let mut short_base = Vec::with_capacity(led.len());
        let mut cycles = splitter_level;
        for c in led {
            short_base.push(cycles as u32);
            cycles += u64::from(c);
        }
        CycleNumbers {
            rep,
            short_base,
            residual_base: cycles as u32,
        }
    }

    /// The cycle number of an edge's node (a splitter-free edge must be labelled already).
    #[inline]
    fn of(&self, nd: Node) -> u32 {
        match nd.sub {
            0 => {
                let v = nd.label.wrapping_sub(1);
                self.short_base[(v >> 14) as usize] + (v & ((1 << 14) - 1))
            }
            RESIDUAL => self.residual_base + nd.label,
            j => self.rep[j as usize - 1],
        }
    }
}

/// Stage 2 but for the long splitter-free ("residual") cycles: picks and marks the splitters,
/// walks every sublist (keeping its (edge, end vertex) pairs in `arena` when `RECORD`), and
/// numbers the splitter-level cycles and the short splitter-free ones.
fn label_cycles<const RECORD: bool>(
    nodes: &mut [Node],
    spacing: u32,
    arena: Buf,
) -> (Splitters, Sublists, CycleNumbers) {
    let sp = Splitters::new(nodes.len(), spacing);
    let k = sp.edges.len();
    sp.mark(nodes);
    let all: Vec<u32> = (0..k as u32).collect();
    let mut subs = Sublists {
        next: vec![0; k],
        len: vec![0; k],
        seg: if RECORD {
            vec![Seg::default(); k]
        } else {
            Vec::new()
        },
        bufs: Vec::new(),
    };
    walk::<RECORD>(nodes, &sp, &all, arena, &mut subs);
    drop(all);
    let numbers = CycleNumbers::new(nodes, &sp, &subs.next);
    (sp, subs, numbers)
}

/// The cycles of a permutation, numbered compactly by [`orbit_numbers`].
pub(crate) struct Orbits {
    nodes: Vec<Node>,
    numbers: CycleNumbers,
}

impl Orbits {
    /// The number of the cycle holding element `i`: equal within a cycle, distinct between
    /// cycles, below the number of cycles.
    #[inline]
    pub(crate) fn of(&self, i: usize) -> u32 {
        self.numbers.of(self.nodes[i])
    }

    /// The value that `node(i)` gave element `i` besides its predecessor.
    #[inline]
    pub(crate) fn value(&self, i: usize) -> u32 {
        self.nodes[i].target
    }
}

/// Numbers the cycles of a permutation of `0..m` (`0 < m < u32::MAX`): stage 2 of
/// [`circuit_order`] on its own (sampled splitters, walks, leader election on short
/// splitter-free cycles, pointer jumping on long ones), without recording the sublists.
/// `node(i)` gives element `i`'s predecessor and a value kept beside it (the nodes' `target`
/// slot, read back by [`Orbits::value`], so that a later pass over the elements finds it in
/// the cache line it reads anyway); it is called once per element, in parallel.
///
/// `O(m)` work in a constant number of passes (plus `O(log L)` pointer-jumping rounds for
/// the longest splitter-free cycle `L > 256`); 16 bytes per element.
pub(crate) fn orbit_numbers(
    m: usize,
    node: impl Fn(usize) -> [u32; 2] + Sync,
    spacing: u32,
) -> Orbits {
    debug_assert!(m > 0 && m < u32::MAX as usize);
    let mut nodes = zeroed_nodes(m);
    const CHUNK: usize = 1 << 14;
    let fill = |(c, chunk): (usize, &mut [Node])| {
        for (i, nd) in (c * CHUNK..).zip(chunk.iter_mut()) {
            [nd.pred, nd.target] = node(i);
        }
    };
    if m < PAR_THRESHOLD {
        nodes.chunks_mut(CHUNK).enumerate().for_each(fill);
    } else {
        nodes.par_chunks_mut(CHUNK).enumerate().for_each(fill);
    }
    let (_, _, numbers) = label_cycles::<false>(&mut nodes, spacing, Vec::new());
    let unlabelled = |(i, nd): (usize, &Node)| (nd.sub == 0 && nd.label == 0).then_some(i as u32);
    let residual: Vec<u32> = if m < PAR_THRESHOLD {
        nodes.iter().enumerate().filter_map(unlabelled).collect()
    } else {
        nodes
            .par_iter()
            .enumerate()
            .filter_map(unlabelled)
            .collect()
    };
    if !residual.is_empty() {
        jump_labels(&mut nodes, &residual);
    }
    Orbits { nodes, numbers }
}

/// The edge order and vertex sequence of an Euler circuit starting with edge 0, for a graph
/// with `0 < E < u32::MAX`.
///
/// # Errors
/// [`EulerError::Unbalanced`] naming the first vertex whose in-degree differs from its
/// out-degree (found by the pairing, at no extra cost); [`EulerError::Disconnected`] when the
/// edges form several weak components.
pub(crate) fn circuit_order(
    offsets: &[u64],
    targets: &[u32],
    spacing: u32,
    stages: &mut EulerStages,
) -> Result<(Vec<u32>, Vec<u32>), EulerError> {
    let m = targets.len();
    let mut clock = Instant::now();
    let mut lap = || {
        let now = Instant::now();
        let s = now.duration_since(clock).as_secs_f64();
        clock = now;
        s
    };
    // 1. Pairing.
    let mut nodes = zeroed_nodes(m);
    let mut arena: Buf = vec![[0; 2]; arena_len(m)];
    if let Some((vertex, in_degree, out_degree)) =
        pair_edges(offsets, targets, &mut nodes, &mut arena)
    {
        return Err(EulerError::Unbalanced {
            vertex,
            in_degree,
            out_degree,
        });
    }
    // 2. Cycle labels: every covered edge's sublist, and each sublist's edges in a buffer.
    stages.pairing = lap();
    let (sp, mut subs, numbers) = label_cycles::<true>(&mut nodes, spacing, arena);
    let k = sp.edges.len();
    let cycles = u64::from(numbers.residual_base);
    stages.labelling = lap();
    // 3. Spanning forest of the cycle graph, in one pass over the vertices (the long
    // splitter-free cycles labelled on the way).
    let (links, cycles) = link_forest(offsets, &mut nodes, &numbers, cycles, stages, &mut lap);
    stages.linking += lap();
    stages.cycles_after_pairing = cycles;
    stages.forest_links = links.count;
    let components = cycles - links.count;
    if components > 1 {
        return Err(EulerError::Disconnected {
            kind: "circuit",
            components,
        });
    }
    drop(numbers);
    // 4. Splice. A sublist whose predecessors did not change is the same list in the final
    // cycle, so its buffered edges stay valid.
    let dirty: Vec<AtomicBool> = (0..k).map(|_| AtomicBool::new(false)).collect();
    splice(&mut nodes, &links.runs, &dirty);
    drop(links);
    stages.splicing = lap();
    // 5. Ranking from edge 0 (always a splitter): only the dirty sublists are walked again
    // (every edge of a spliced-in splitter-free cycle now lies on one: the first rotated slot
    // on the way back from its sublist's splitter was on that splitter's old sublist), then a
    // sequential prefix over the splitter chain gives every sublist's position, and a
    // parallel copy writes the buffers out.
    let dirty: Vec<u32> = (0..k as u32)
        .filter(|&j| dirty[j as usize].load(Relaxed))
        .collect();
    if !dirty.is_empty() {
        let arena = vec![[0; 2]; arena_len(m)];
        walk::<true>(&mut nodes, &sp, &dirty, arena, &mut subs);
    }
    // The edge order reuses the nodes' memory, whose pages are already mapped: a fresh array
    // costs a page fault per 4 KiB on first touch (about a tenth of a second per 100 MB).
    let mut order = nodes_into_u32s(nodes, m);
    let base = sublist_positions(&subs, k, m);
    let mut verts: Vec<u32> = vec![0; m + 1];
    emit(&subs, &base, &mut order, &mut verts);
    // Edge 0 starts at the first vertex with an out-edge.
    verts[0] = (offsets.partition_point(|&o| o == 0) - 1) as u32;
    stages.ranking = lap();
    Ok((order, verts))
}

/// The backward position of each sublist's first edge on the spliced circuit: a sequential
/// prefix over the splitter chain from edge 0 (always a splitter, the first), checking that
/// the chain is one cycle through all `k` sublists and `m` edges.
fn sublist_positions(subs: &Sublists, k: usize, m: usize) -> Vec<u32> {
    let mut base = vec![0u32; k];
    // Edge 0 is always a splitter, the first.
    let j0 = 0;
    let mut j = j0;
    let mut run = 0u64;
    let mut visited = 0usize;
    loop {
        base[j] = run as u32;
        run += u64::from(subs.len[j]);
        visited += 1;
        j = subs.next[j] as usize;
        if j == j0 || visited > k {
            break;
        }
    }
    // Internal invariant (proved by the splice argument of the module docs); checked because
    // the copy of `emit` relies on it.
    assert!(
        visited == k && run == m as u64,
        "the spliced permutation must be one cycle"
    );
    base
}

/// Writes the circuit out. The walks list it backwards from edge 0: the edge at backward
/// position `q = base[j] + r` (rank `r` of sublist `j`) is at forward position `(m - q) % m`,
/// so `order[f] = e` and `verts[f + 1] = target(e)`.
fn emit(subs: &Sublists, base: &[u32], order: &mut [u32], verts: &mut [u32]) {
    let m = order.len();
    let k = base.len();
    let wo = SharedMut::new(order);
    let wv = SharedMut::new(verts);
    let copy = |j: usize| {
        let Seg { buf, off } = subs.seg[j];
        let src = &subs.bufs[buf as usize][off..][..subs.len[j] as usize];
        let b = base[j] as usize;
        // A bounds check that makes the unchecked writes safe whatever the buffers hold.
        assert!(b + src.len() <= m, "sublist beyond the circuit");
        for (r, &[e, t]) in src.iter().enumerate() {
            let q = b + r;
            let f = if q == 0 { 0 } else { m - q };
            // SAFETY: f < m; on a single cycle, (base of the sublist + rank in it) is a
            // bijection onto 0..m, so each position (and position + 1 in verts) has one writer.
            unsafe {
                wo.write(f, e);
                wv.write(f + 1, t);
            }
        }
    };
    if m < PAR_THRESHOLD {
        (0..k).for_each(copy);
    } else {
        (0..k).into_par_iter().with_min_len(1 << 8).for_each(copy);
    }
}

#[cfg(test)]
mod tests;
