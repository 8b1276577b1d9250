// graph-core's kernels: the stages of the parallel Euler circuit algorithm
// (crates/graph-core/src/euler/cuda.rs drives them; the rayon version in parallel.rs is the
// same algorithm and documents the stages), and the balanced orientation of undirected graphs
// that feeds it (euler/undirected/cuda.rs); the edge list of a CSR graph (graph/cuda.rs).
//
// Edge ids are u32 (the host rejects graphs with u32::MAX edges or more); element counts and
// CSR offsets are 64-bit. No kernel synchronises with the host.
#include "common.cuh"
#include "block/fill.cuh"
#include "block/reduce.cuh"
#include "block/scan.cuh"

#define NONE 0xFFFFFFFFu
WARPATH_SHARE_WITH_HOST(NONE)

// The splitter hash; the same function as `mix32` in parallel.rs.
__device__ __forceinline__ u32 warpath_mix32(u32 x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

__device__ __forceinline__ bool is_splitter(u32 e, u32 mask) {
    return e == 0 || (warpath_mix32(e) & mask) == 0;
}



// ---- edge list from CSR ----------------------------------------------------------------------

// sources[e] = the vertex whose out-edge range offsets[v]..offsets[v+1] holds edge e: the last v
// with offsets[v] <= e, by binary search over offsets[0..=n] (non-decreasing, offsets[0] = 0,
// offsets[n] = m). One thread per edge, so writes are coalesced whatever the degrees.
extern "C" __global__ void graph_edge_sources(const u64* __restrict__ offsets, u64 n, u64 m,
                                              u32* sources) {
    WARPATH_GRID_STRIDE(e, m) {
        u64 lo = 0, hi = n;  // invariant: offsets[lo] <= e < offsets[hi]
        while (hi - lo > 1) {
            u64 mid = lo + (hi - lo) / 2;
            if (offsets[mid] <= e) lo = mid; else hi = mid;
        }
        sources[e] = (u32)lo;
    }
}

// ---- degrees and pairing ---------------------------------------------------------------------

// in_deg[v] += 1 for every edge ending at v (in_deg zeroed by the host).
extern "C" __global__ void graph_euler_in_degree(const u32* __restrict__ targets, u64 m, u32* in_deg) {
    WARPATH_GRID_STRIDE(e, m) { atomicAdd(&in_deg[targets[e]], 1u); }
}

// *first_bad = the smallest vertex whose in-degree differs from its out-degree (init NONE).
extern "C" __global__ void graph_euler_check_balanced(const u64* __restrict__ offsets,
                                                const u32* __restrict__ in_deg, u64 n,
                                                u32* first_bad) {
    WARPATH_GRID_STRIDE(v, n) {
        if ((u64)in_deg[v] != offsets[v + 1] - offsets[v]) atomicMin(first_bad, (u32)v);
    }
}

// Pairs in-edges with out-edges: the in-edges of v take the slots offsets[v].. in arrival order
// (cursor zeroed by the host), and in-edge e paired with out-edge pos gives succ[e] = pos,
// pred[pos] = e. Valid because in-degree = out-degree at every vertex (checked before).
extern "C" __global__ void graph_euler_pair(const u64* __restrict__ offsets,
                                      const u32* __restrict__ targets, u64 m, u32* cursor,
                                      u32* succ, u32* pred) {
    WARPATH_GRID_STRIDE(e, m) {
        u32 t = targets[e];
        u64 pos = offsets[t] + atomicAdd(&cursor[t], 1u);
        succ[e] = (u32)pos;
        pred[pos] = (u32)e;
    }
}

// ---- list ranking with sampled splitters -----------------------------------------------------

extern "C" __global__ void graph_euler_count_splitters(u64 m, u32 mask, u32* count) {
    WARPATH_GRID_STRIDE(e, m) { warpath::warp_count_add(is_splitter((u32)e, mask), count); }
}

// Numbers the splitters (in any order): split_of[e] = j, split_edge[j] = e. split_of must be
// filled with NONE first; *count zeroed; capacity = the count from graph_euler_count_splitters.
extern "C" __global__ void graph_euler_number_splitters(u64 m, u32 mask, u32* split_of, u32* split_edge,
                                                  u32* count, u32 capacity) {
    WARPATH_GRID_STRIDE(e, m) {
        if (is_splitter((u32)e, mask)) {
            u32 j = atomicAdd(count, 1u);
            if (j < capacity) {
                split_of[e] = j;
                split_edge[j] = (u32)e;
            }
        }
    }
}

// One thread per splitter j walks succ from split_edge[j] to the next splitter, writing the
// sublist index seg[e] = j and the offset off[e] within the sublist; next[j] is the next
// splitter's index and len[j] the sublist's length. Every edge reachable from a splitter lies on
// exactly one sublist, so the writes do not collide. Edges on cycles without a splitter are not
// touched (seg stays NONE if the host filled it so).
extern "C" __global__ void graph_euler_walk_sublists(const u32* __restrict__ succ,
                                               const u32* __restrict__ split_of,
                                               const u32* __restrict__ split_edge, u64 k, u32 mask,
                                               u32* seg, u32* off, u32* next, u32* len) {
    WARPATH_GRID_STRIDE(j, k) {
        u32 s = split_edge[j];
        seg[s] = (u32)j;
        off[s] = 0;
        u32 e = succ[s];
        u32 r = 1;
        // Splitter-ness comes from the hash (no load); split_of is read once, at the end.
        while (!is_splitter(e, mask)) {
            seg[e] = (u32)j;
            off[e] = r;
            ++r;
            e = succ[e];
        }
        next[j] = split_of[e];
        len[j] = r;
    }
}

// One pointer-jumping round of "minimum over the cycle" on the splitter lists:
// lab_out[j] = min(lab_in[j], lab_in[jmp_in[j]]), jmp_out[j] = jmp_in[jmp_in[j]].
// After ceil(log2 k) + 1 rounds every splitter holds the minimum label of its cycle.
extern "C" __global__ void graph_euler_jump_min(const u32* __restrict__ lab_in,
                                          const u32* __restrict__ jmp_in, u32* lab_out,
                                          u32* jmp_out, u64 k) {
    WARPATH_GRID_STRIDE(j, k) {
        u32 t = jmp_in[j];
        lab_out[j] = min(lab_in[j], lab_in[t]);
        jmp_out[j] = jmp_in[t];
    }
}

// Edge labels from the splitter labels; residual edges (seg == NONE, on cycles without a
// splitter) start pointer jumping with lab = e, jmp = succ[e].
extern "C" __global__ void graph_euler_label_init(const u32* __restrict__ seg,
                                            const u32* __restrict__ succ,
                                            const u32* __restrict__ split_lab, u64 m, u32* lab,
                                            u32* jmp) {
    WARPATH_GRID_STRIDE(e, m) {
        u32 s = seg[e];
        if (s == NONE) {
            lab[e] = (u32)e;
            jmp[e] = succ[e];
        } else {
            lab[e] = split_lab[s];
            jmp[e] = NONE;
        }
    }
}

// One pointer-jumping round on the residual edges (covered edges are copied). Sets *unsettled
// when some residual edge's label differed from its successor's before the round: once no label
// differs, every residual cycle carries its minimum edge id and the host stops.
extern "C" __global__ void graph_euler_jump_residual(const u32* __restrict__ seg,
                                               const u32* __restrict__ succ,
                                               const u32* __restrict__ lab_in,
                                               const u32* __restrict__ jmp_in, u32* lab_out,
                                               u32* jmp_out, u64 m, u32* unsettled) {
    WARPATH_GRID_STRIDE(e, m) {
        u32 l = lab_in[e];
        if (seg[e] == NONE) {
            u32 t = jmp_in[e];
            lab_out[e] = min(l, lab_in[t]);
            jmp_out[e] = jmp_in[t];
            if (l != lab_in[succ[e]]) *unsettled = 1u;
        } else {
            lab_out[e] = l;
            jmp_out[e] = NONE;
        }
    }
}

// *count += number of cycles (edges that are their cycle's representative).
extern "C" __global__ void graph_euler_count_cycles(const u32* __restrict__ lab, u64 m, u32* count) {
    WARPATH_GRID_STRIDE(e, m) { warpath::warp_count_add(lab[e] == (u32)e, count); }
}

// ---- spanning forest of the cycle graph (lock-free union-find) -------------------------------

__device__ __forceinline__ u32 uf_find(u32* parent, u32 x) {
    volatile u32* p = parent;
    while (true) {
        u32 px = p[x];
        if (px == x) return x;
        u32 gp = p[px];
        if (gp != px) p[x] = gp;  // path halving: gp is an ancestor of x whatever happens
        x = gp;
    }
}

// Links the larger root under the smaller one; true when the two sets were different.
__device__ __forceinline__ bool uf_union(u32* parent, u32 a, u32 b) {
    while (true) {
        a = uf_find(parent, a);
        b = uf_find(parent, b);
        if (a == b) return false;
        if (a < b) {
            u32 t = a;
            a = b;
            b = t;
        }
        if (atomicCAS(&parent[a], a, b) == a) return true;
    }
}

// row_last[k] = 1 when out-edge position k is the last out-edge of its vertex (zeroed first).
extern "C" __global__ void graph_euler_mark_row_ends(const u64* __restrict__ offsets, u64 n,
                                               unsigned char* row_last) {
    WARPATH_GRID_STRIDE(v, n) {
        u64 hi = offsets[v + 1];
        if (hi > offsets[v]) row_last[hi - 1] = 1;
    }
}

// Consecutive out-edges k, k+1 of one vertex on different cycles link those cycles; a link that
// merges two union-find sets is a spanning-forest edge: tree[k] = 1, *links += 1.
extern "C" __global__ void graph_euler_link_cycles(const u32* __restrict__ lab,
                                             const unsigned char* __restrict__ row_last, u64 m,
                                             u32* parent, unsigned char* tree, u32* links) {
    WARPATH_GRID_STRIDE(k, m) {
        bool linked = false;
        if (k + 1 < m && !row_last[k]) {
            u32 a = lab[k], b = lab[k + 1];
            if (a != b && uf_union(parent, a, b)) {
                tree[k] = 1;
                linked = true;
            }
        }
        warpath::warp_count_add(linked, links);
    }
}

// run_key[k] = k when position k starts a run of forest links (k == 0 or tree[k-1] == 0), else 0.
// An inclusive max-scan of run_key gives each position the start of its run.
extern "C" __global__ void graph_euler_run_keys(const unsigned char* __restrict__ tree, u64 m,
                                          u32* run_key) {
    WARPATH_GRID_STRIDE(k, m) { run_key[k] = (k == 0 || !tree[k - 1]) ? (u32)k : 0u; }
}

// Splice: along each run k..j+1 of forest links at a vertex, rotate the successors of the
// in-edges paired with those out-edges: succ[pred[i]] = i + 1 inside the run and
// succ[pred[j+1]] = k at its end. pred is a permutation, so each succ entry has one writer.
extern "C" __global__ void graph_euler_splice(const u32* __restrict__ pred,
                                        const unsigned char* __restrict__ tree,
                                        const u32* __restrict__ run_start, u64 m, u32* succ) {
    WARPATH_GRID_STRIDE(k, m) {
        u32 a = pred[k];
        if (tree[k]) {
            succ[a] = (u32)(k + 1);
        } else if (run_start[k] != (u32)k) {
            succ[a] = run_start[k];
        }
    }
}

// ---- ranking the final cycle -----------------------------------------------------------------

// Wyllie list ranking on the splitter chain cut before the splitter of edge 0:
// val = sublist length, nxt = next splitter or NONE at the end of the chain.
extern "C" __global__ void graph_euler_rank_init(const u32* __restrict__ next,
                                           const u32* __restrict__ len,
                                           const u32* __restrict__ split_of, u64 k, u32* val,
                                           u32* nxt) {
    u32 j0 = split_of[0];
    WARPATH_GRID_STRIDE(j, k) {
        val[j] = len[j];
        nxt[j] = next[j] == j0 ? NONE : next[j];
    }
}

// One Wyllie round: val_out[j] = val_in[j] + val_in[nxt_in[j]] (sum to the end of the chain).
extern "C" __global__ void graph_euler_rank_round(const u32* __restrict__ val_in,
                                            const u32* __restrict__ nxt_in, u32* val_out,
                                            u32* nxt_out, u64 k) {
    WARPATH_GRID_STRIDE(j, k) {
        u32 t = nxt_in[j];
        if (t == NONE) {
            val_out[j] = val_in[j];
            nxt_out[j] = NONE;
        } else {
            val_out[j] = val_in[j] + val_in[t];
            nxt_out[j] = nxt_in[t];
        }
    }
}

// order[m - suffix[seg[e]] + off[e]] = e: suffix[j] is the number of edges from splitter j to
// the end of the chain, so m - suffix[j] is where sublist j starts.
extern "C" __global__ void graph_euler_scatter_order(const u32* __restrict__ seg,
                                               const u32* __restrict__ off,
                                               const u32* __restrict__ suffix, u64 m,
                                               u32* order) {
    WARPATH_GRID_STRIDE(e, m) {
        u64 pos = m - (u64)suffix[seg[e]] + off[e];
        if (pos < m) order[pos] = (u32)e;
    }
}

// ---- undirected graphs: a balanced orientation ------------------------------------------------
// (crates/graph-core/src/euler/undirected/cuda.rs drives these; orient.rs documents the idea.)
// The half-edges of edge e are 2e and 2e + 1; halves[s] is the half-edge in incidence slot s,
// grouped by vertex. Every degree is even, so slots 2j and 2j + 1 belong to one vertex: a pair.

// slot_of[halves[s]] = s (halves is a permutation of 0..m2).
extern "C" __global__ void graph_undirected_slot_of(const u32* __restrict__ halves, u64 m2, u32* slot_of) {
    WARPATH_GRID_STRIDE(s, m2) { slot_of[halves[s]] = (u32)s; }
}

// The dart permutation: the dart that leaves through slot s arrives at the slot of the other
// half-edge of its edge, and the walk leaves through that slot's pair partner. Its cycles are
// closed trails, each present twice (once per direction).
extern "C" __global__ void graph_undirected_next_dart(const u32* __restrict__ halves,
                                                const u32* __restrict__ slot_of, u64 m2,
                                                u32* succ) {
    WARPATH_GRID_STRIDE(s, m2) { succ[s] = slot_of[halves[s] ^ 1u] ^ 1u; }
}

// Orientation from the dart cycles' labels (each cycle's smallest dart): pair j leaves through
// the slot whose dart lies on the cycle of smaller label (exactly one of the two does), so
// directed edge j goes to the other end of that half-edge's edge; edge_of[j] is the undirected
// edge. The directed graph's offsets are the incidence offsets halved.
extern "C" __global__ void graph_undirected_orient(const u32* __restrict__ halves,
                                             const u32* __restrict__ ends,
                                             const u32* __restrict__ lab, u64 m, u32* targets,
                                             u32* edge_of) {
    WARPATH_GRID_STRIDE(j, m) {
        const u64 c = lab[2 * j] < lab[2 * j + 1] ? 2 * j : 2 * j + 1;
        const u32 h = halves[c];
        targets[j] = ends[h ^ 1u];
        edge_of[j] = h >> 1;
    }
}

// order[i] = edge_of[order[i]]: directed edge ids back to undirected ones, in place.
extern "C" __global__ void graph_undirected_map_edges(u32* order, const u32* __restrict__ edge_of, u64 m) {
    WARPATH_GRID_STRIDE(i, m) { order[i] = edge_of[order[i]]; }
}

// ---- inclusive max-scan over u32 -------------------------------------------------------------
// Reduce-then-scan in tiles of SCAN_TILE (the block scan of block/scan.cuh, as gpu-primitives'
// scans): the host recurses on the tile maxima and then adds the carries back.

#define SCAN_THREADS 256
#define SCAN_ITEMS 4
#define SCAN_TILE (SCAN_THREADS * SCAN_ITEMS)
WARPATH_SHARE_WITH_HOST(SCAN_THREADS, SCAN_TILE)

// Inclusive max-scan of each tile of `in` into `out`; tile_max[b] = the tile's maximum.
// Launch with exactly ceil(n / SCAN_TILE) blocks of SCAN_THREADS threads.
extern "C" __global__ void graph_scan_max_tiles(const u32* __restrict__ in, u32* out, u64 n,
                                                u32* tile_max) {
    __shared__ u32 warp_tot[SCAN_THREADS / 32];
    const u64 base = (u64)blockIdx.x * SCAN_TILE + (u64)threadIdx.x * SCAN_ITEMS;
    u32 v[SCAN_ITEMS];
#pragma unroll
    for (int i = 0; i < SCAN_ITEMS; ++i) v[i] = (base + i < n) ? in[base + i] : 0u;
    u32 total;
    warpath::block_inclusive_scan<SCAN_THREADS>(v, 0u, warp_tot, &total, warpath::Max());
#pragma unroll
    for (int i = 0; i < SCAN_ITEMS; ++i) {
        if (base + i < n) out[base + i] = v[i];
    }
    if (threadIdx.x == 0) tile_max[blockIdx.x] = total;
}

// out[i] = max(out[i], scanned_tiles[tile(i) - 1]) for tiles after the first.
extern "C" __global__ void graph_scan_max_carry(u32* out, u64 n, const u32* __restrict__ scanned_tiles) {
    WARPATH_GRID_STRIDE(i, n) {
        u64 b = i / SCAN_TILE;
        if (b > 0) out[i] = max(out[i], scanned_tiles[b - 1]);
    }
}
