//! A sequential model of the CUDA pipeline (tests only): every kernel of `graph.cu` as a plain
//! loop with the same indexing, driven in the same order as `cuda::device_circuit`, with the
//! orders that atomics make arbitrary on the GPU (pairing slots, splitter numbers, union-find
//! link order) shuffled. It checks the GPU algorithm's logic (round counts, the max-scan tiling,
//! the splice by run starts, the cut list ranking) on machines without a GPU; it does not check
//! the CUDA code itself.

// Index loops on purpose: each loop mirrors a kernel's thread index.
#![allow(clippy::needless_range_loop)]

use super::parallel::is_splitter;
use crate::components::UnionFind;
use crate::{EulerError, Graph, UndirectedGraph};

const NONE: u32 = u32::MAX;
const TILE: usize = 1024;

struct Shuffle(u64);
impl Shuffle {
    fn order(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            v.swap(i, (self.0 % (i as u64 + 1)) as usize);
        }
        v
    }
}

fn rounds_for(k: usize) -> u32 {
    usize::BITS - k.leading_zeros() + 1
}

/// graph_scan_max_tiles + recursion + graph_scan_max_carry.
fn scan_max(input: &[u32]) -> Vec<u32> {
    let n = input.len();
    let tiles = n.div_ceil(TILE).max(1);
    let mut out = vec![0u32; n];
    let mut tile_max = vec![0u32; tiles];
    for b in 0..tiles {
        let mut run = 0;
        for i in b * TILE..((b + 1) * TILE).min(n) {
            run = run.max(input[i]);
            out[i] = run;
        }
        tile_max[b] = run;
    }
    if tiles > 1 {
        let scanned = scan_max(&tile_max);
        for i in 0..n {
            let b = i / TILE;
            if b > 0 {
                out[i] = out[i].max(scanned[b - 1]);
            }
        }
    }
    out
}

/// The sublists of `cuda::Sublists`: the splitters, and each edge's sublist and offset in it.
struct Sublists {
    split_of: Vec<u32>,
    split_edge: Vec<u32>,
    seg: Vec<u32>,
    offs: Vec<u32>,
    next: Vec<u32>,
    len: Vec<u32>,
}

impl Sublists {
    /// graph_euler_walk: from each splitter along `succ` to the next, numbering the edges passed.
    fn walk(&mut self, succ: &[u32]) {
        let Self {
            split_of,
            split_edge,
            seg,
            offs: off,
            next,
            len,
        } = self;
        for j in 0..split_edge.len() {
            let s = split_edge[j];
            seg[s as usize] = j as u32;
            off[s as usize] = 0;
            let mut e = succ[s as usize];
            let mut r = 1;
            let mut sj = split_of[e as usize];
            while sj == NONE {
                seg[e as usize] = j as u32;
                off[e as usize] = r;
                r += 1;
                e = succ[e as usize];
                sj = split_of[e as usize];
            }
            next[j] = sj;
            len[j] = r;
        }
    }
}

/// The sublists of `cuda::Sublists` and the labels of `cuda::cycle_labels`.
struct ModelLabels {
    lists: Sublists,
    lab: Vec<u32>,
}

/// `Sublists::new` + `cycle_labels` on the permutation `succ` of `0..m`.
fn model_labels(succ: &[u32], mask: u32, sh: &mut Shuffle) -> ModelLabels {
    let m = succ.len();
    // graph_euler_count_splitters / graph_euler_number_splitters (numbers in a random order).
    let k = (0..m as u32).filter(|&e| is_splitter(e, mask + 1)).count();
    let mut split_of = vec![NONE; m];
    let mut split_edge = vec![0u32; k];
    let mut count = 0usize;
    for e in sh.order(m) {
        if is_splitter(e as u32, mask + 1) {
            split_of[e] = count as u32;
            split_edge[count] = e as u32;
            count += 1;
        }
    }
    let mut lists = Sublists {
        split_of,
        split_edge,
        seg: vec![NONE; m],
        offs: vec![0u32; m],
        next: vec![0u32; k],
        len: vec![0u32; k],
    };
    lists.walk(succ);
    let seg = &lists.seg;
    // graph_euler_jump_min, fixed rounds.
    let (mut sl, mut sj) = (lists.split_edge.clone(), lists.next.clone());
    for _ in 0..rounds_for(k) {
        let nl: Vec<u32> = (0..k).map(|j| sl[j].min(sl[sj[j] as usize])).collect();
        let nj: Vec<u32> = (0..k).map(|j| sj[sj[j] as usize]).collect();
        sl = nl;
        sj = nj;
    }
    // graph_euler_label_init + graph_euler_jump_residual until settled.
    let mut lab: Vec<u32> = (0..m)
        .map(|e| {
            if seg[e] == NONE {
                e as u32
            } else {
                sl[seg[e] as usize]
            }
        })
        .collect();
    let mut jmp: Vec<u32> = (0..m)
        .map(|e| if seg[e] == NONE { succ[e] } else { NONE })
        .collect();
    for _ in 0..40 {
        let mut unsettled = false;
        let mut nl = lab.clone();
        let mut nj = jmp.clone();
        for e in 0..m {
            if seg[e] == NONE {
                let t = jmp[e] as usize;
                nl[e] = lab[e].min(lab[t]);
                nj[e] = jmp[t];
                unsettled |= lab[e] != lab[succ[e] as usize];
            }
        }
        lab = nl;
        jmp = nj;
        if !unsettled {
            break;
        }
    }
    ModelLabels { lists, lab }
}

/// The model of `cuda::device_circuit` (after the degree check).
pub(super) fn model_circuit_order(g: &Graph, mask: u32, seed: u64) -> Result<Vec<u32>, EulerError> {
    let mut sh = Shuffle(seed | 1);
    let (off64, tgt) = (g.offsets(), g.targets());
    let (m, n) = (tgt.len(), g.vertex_count());
    // graph_euler_pair in a random arrival order.
    let mut cursor = vec![0u32; n];
    let (mut succ, mut pred) = (vec![0u32; m], vec![0u32; m]);
    for e in sh.order(m) {
        let t = tgt[e] as usize;
        let pos = off64[t] + cursor[t] as u64;
        cursor[t] += 1;
        succ[e] = pos as u32;
        pred[pos as usize] = e as u32;
    }
    let ModelLabels { mut lists, lab } = model_labels(&succ, mask, &mut sh);
    let k = lists.split_edge.len();
    // graph_euler_count_cycles, graph_euler_mark_row_ends, graph_euler_link_cycles (random order).
    let cycles = (0..m).filter(|&e| lab[e] == e as u32).count() as u64;
    let mut row_last = vec![false; m];
    for v in 0..n {
        if off64[v + 1] > off64[v] {
            row_last[off64[v + 1] as usize - 1] = true;
        }
    }
    let uf = UnionFind::new(m);
    let mut tree = vec![false; m];
    let mut links = 0u64;
    if cycles > 1 {
        for k in sh.order(m) {
            if k + 1 < m && !row_last[k] {
                let (a, b) = (lab[k], lab[k + 1]);
                if a != b && uf.union(a, b) {
                    tree[k] = true;
                    links += 1;
                }
            }
        }
    }
    if cycles - links > 1 {
        return Err(EulerError::Disconnected {
            kind: "circuit",
            components: cycles - links,
        });
    }
    // graph_euler_run_keys, scan, graph_euler_splice.
    if links > 0 {
        let keys: Vec<u32> = (0..m)
            .map(|k| if k == 0 || !tree[k - 1] { k as u32 } else { 0 })
            .collect();
        let run_start = scan_max(&keys);
        for k in 0..m {
            let a = pred[k] as usize;
            if tree[k] {
                succ[a] = k as u32 + 1;
            } else if run_start[k] != k as u32 {
                succ[a] = run_start[k];
            }
        }
    }
    // Ranking: walk, graph_euler_rank_init, graph_euler_rank_round, graph_euler_scatter_order.
    lists.walk(&succ);
    let j0 = lists.split_of[0];
    let mut val = lists.len.clone();
    let mut nxt: Vec<u32> = lists
        .next
        .iter()
        .map(|&x| if x == j0 { NONE } else { x })
        .collect();
    for _ in 0..rounds_for(k) {
        let mut nv = val.clone();
        let mut nn = nxt.clone();
        for j in 0..k {
            let t = nxt[j];
            if t != NONE {
                nv[j] = val[j] + val[t as usize];
                nn[j] = nxt[t as usize];
            }
        }
        val = nv;
        nxt = nn;
    }
    let mut order = vec![NONE; m];
    for e in 0..m {
        let pos = m as u64 - val[lists.seg[e] as usize] as u64 + lists.offs[e] as u64;
        if pos < m as u64 {
            order[pos as usize] = e as u32;
        }
    }
    Ok(order)
}

/// The model of `undirected::cuda::circuit_order`: `graph_undirected_slot_of` (in a random order),
/// `graph_undirected_next_dart`, the labels of the `2 E` darts, `graph_undirected_orient`, the directed
/// model on the oriented graph, `graph_undirected_map_edges`.
pub(super) fn model_undirected_circuit_order(
    g: &UndirectedGraph,
    mask: u32,
    seed: u64,
) -> Result<Vec<u32>, EulerError> {
    let mut sh = Shuffle(seed | 1);
    let (halves, ends) = (g.half_edges(), g.ends());
    let (m2, m) = (halves.len(), halves.len() / 2);
    let mut slot_of = vec![NONE; m2];
    for s in sh.order(m2) {
        slot_of[halves[s] as usize] = s as u32;
    }
    let succ: Vec<u32> = (0..m2)
        .map(|s| slot_of[(halves[s] ^ 1) as usize] ^ 1)
        .collect();
    let lab = model_labels(&succ, mask, &mut sh).lab;
    let (mut targets, mut edge_of) = (vec![0u32; m], vec![0u32; m]);
    for j in 0..m {
        let c = if lab[2 * j] < lab[2 * j + 1] {
            2 * j
        } else {
            2 * j + 1
        };
        let h = halves[c];
        (targets[j], edge_of[j]) = (ends[(h ^ 1) as usize], h >> 1);
    }
    let offsets = g.offsets().iter().map(|&o| o / 2).collect();
    let dg = Graph::from_csr(offsets, targets).expect("a valid CSR");
    // graph_euler_check_balanced would report an unbalanced vertex: the orientation leaves none.
    assert_eq!(dg.in_degrees(), dg.out_degrees(), "unbalanced orientation");
    let order = model_circuit_order(&dg, mask, seed ^ 0x5eed)?;
    Ok(order.iter().map(|&e| edge_of[e as usize]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::euler::EulerTrail;
    use crate::{EulerStyle, de_bruijn_graph, is_euler_circuit, random_euler_graph};

    fn check(g: &Graph, mask: u32, seed: u64) {
        let order = model_circuit_order(g, mask, seed).unwrap();
        let t = EulerTrail::from_edges(g, order, g.source(0));
        assert!(
            is_euler_circuit(g, &t),
            "{:?}",
            crate::verify_euler_trail(g, &t, true)
        );
    }

    #[test]
    fn model_of_the_gpu_pipeline_gives_circuits() {
        for m in [1u64, 2, 3, 31, 32, 33, 1023, 1024, 1025, 4099, 70_001] {
            for style in [EulerStyle::Deep, EulerStyle::Shallow] {
                let g = random_euler_graph(m, style, m * 3).unwrap();
                for mask in [1u32, 31, (1 << 20) - 1] {
                    check(&g, mask, m + mask as u64);
                }
            }
        }
        check(&de_bruijn_graph(3, 7).unwrap(), 31, 5);
        let e: Vec<(u32, u32)> = (0..5000).map(|_| (0, 0)).collect();
        check(&Graph::from_edges(1, &e).unwrap(), 31, 9);
    }

    #[test]
    fn model_scan_matches_sequential() {
        for n in [1usize, 1023, 1024, 1025, 3 * 1024 * 1024 + 17] {
            let input: Vec<u32> = (0..n as u32)
                .map(|i| (i.wrapping_mul(2_654_435_761)) >> 8)
                .collect();
            let mut run = 0;
            let expect: Vec<u32> = input
                .iter()
                .map(|&x| {
                    run = run.max(x);
                    run
                })
                .collect();
            assert_eq!(scan_max(&input), expect);
        }
    }

    #[test]
    fn model_of_the_undirected_gpu_path_gives_circuits() {
        use crate::euler::undirected::trail_from_edges;
        use crate::{is_undirected_euler_circuit, random_undirected_euler_graph};
        let check = |g: &UndirectedGraph, mask: u32, seed: u64| {
            let order = model_undirected_circuit_order(g, mask, seed).unwrap();
            let t = trail_from_edges(g, order, g.first_vertex_with_edges());
            assert!(
                is_undirected_euler_circuit(g, &t),
                "{:?}",
                crate::verify_undirected_euler_trail(g, &t, true)
            );
        };
        for m in [
            1u64, 2, 3, 31, 32, 33, 127, 128, 129, 1023, 1024, 1025, 4099, 40_001,
        ] {
            for style in [EulerStyle::Deep, EulerStyle::Shallow] {
                let g = random_undirected_euler_graph(m, style, m * 7).unwrap();
                for mask in [1u32, 31, (1 << 20) - 1] {
                    check(&g, mask, m + mask as u64);
                }
            }
        }
        let loops = UndirectedGraph::from_edges(2, &vec![(1, 1); 3000]).unwrap();
        check(&loops, 31, 4);
        let tri: Vec<(u32, u32)> = (1..=700u32)
            .flat_map(|i| [(0, 2 * i - 1), (2 * i - 1, 2 * i), (2 * i, 0)])
            .collect();
        check(&UndirectedGraph::from_edges(1401, &tri).unwrap(), 31, 5);
        let two =
            UndirectedGraph::from_edges(5, &[(0, 1), (1, 0), (2, 3), (3, 4), (4, 2)]).unwrap();
        assert_eq!(
            model_undirected_circuit_order(&two, 31, 1),
            Err(EulerError::Disconnected {
                kind: "circuit",
                components: 2
            })
        );
    }

    #[test]
    fn model_detects_disconnection() {
        let g = Graph::from_edges(4, &[(0, 1), (1, 0), (2, 3), (3, 2)]).unwrap();
        assert_eq!(
            model_circuit_order(&g, 1, 3),
            Err(EulerError::Disconnected {
                kind: "circuit",
                components: 2
            })
        );
    }
}
