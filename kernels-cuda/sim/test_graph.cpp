// CPU simulation of kernels-cuda/graph.cu: the GPU Euler circuit pipeline, launched as
// crates/graph-core/src/euler/cuda.rs (device_circuit, scan_max) does: same kernels, order,
// grid/block/shared-memory configurations, pointer-jumping round counts, residual loop that
// stops on the read-back "unsettled" flag, and the host decisions on read-back counts
// (unbalanced vertex, splitter count k, cycle and link counts, disconnection).
// Checked:
// - the order is an Euler circuit (independent checker: m entries, every edge exactly once,
//   consecutive edges chain head to tail, the last returns to the first) and starts with edge 0;
// - the read-back counts: k = the number of splitters, cycles = the cycles of the pairing
//   succ, links = cycles - 1 on connected graphs;
// - the errors: the smallest unbalanced vertex, and the component count of disconnected graphs;
// - graph_edge_sources (graph/cuda.rs) against the sources each graph was built from, on every
//   graph below and on graphs with empty rows and a hub;
// - graph_scan_max_tiles + graph_scan_max_carry (with the host's recursion) against a
//   sequential inclusive max-scan, on sizes around the 1024-element tile.
// Graphs: single cycles, self loops (one, and thousands at one vertex), parallel edges, two
// cycles sharing a vertex, "shallow" (many short cycles through a hub), "deep" (a random walk
// closed into a circuit), a de Bruijn graph, with m around warp/block/tile boundaries; each with
// the host's splitter mask 31 and a few with masks 1 (every other edge a splitter) and 2^20-1
// (almost every edge residual),
// and with a grid cap of 132 SMs (one grid-stride pass) or, for the larger inputs, 1 SM (loops
// that iterate).
// Undirected graphs (undirected/cuda.rs circuit_order): graph_undirected_slot_of, graph_undirected_next_dart,
// the cycle labelling of the 2 m darts, graph_undirected_orient and, after the directed pipeline on
// the oriented graph, graph_undirected_map_edges; checked: the orientation is balanced and maps its
// edges one to one onto the undirected edges, each as one of its two directions; the order is
// an undirected Euler circuit from the first vertex with an edge; disconnected graphs report
// their number of components. Graphs: self-loops, parallel edges, triangles sharing a vertex,
// closed random walks and doubled walks, with m around warp, block and tile boundaries (2 m
// darts), splitter masks 31, 1 and 2^20-1, and 1 SM.
// Not checked: timing, memory ordering between blocks (blocks run one after another here, so
// the lock-free union-find never sees a concurrent CAS), the scan's second recursion level
// (n > 2^20: too slow here), graphs with 2^32-1 edges or more.
// Needs a cuda_sim.hpp whose min/max return values (not references to their parameters) and
// whose __ballot_sync/__activemask leave out lanes that have returned (graph.cu's warp_count
// ballots in partial warps).
#include "sim/cuda_sim.hpp"
#include "sim/check.hpp"
#include "graph.cu"
#include "sim/host_grid.hpp"

#include <bit>
#include <chrono>
#include <numeric>
#include <random>
#include <string>
#include <utility>

// ---- host side, as cuda.rs ----------------------------------------------------------------

static const u32 GPU_SPLITTER_MASK = 31;  // cuda.rs
static const u64 TILE = 1024;             // SCAN_TILE

// cuda.rs scan_max: tiles, then the recursion on the tile maxima and the carry.
static void scan_max(const std::vector<u32>& input, std::vector<u32>& out, u64 n) {
    const u64 tiles = std::max<u64>(1, (n + TILE - 1) / TILE);
    std::vector<u32> tile_max = alloc_u32(tiles);
    warpath_sim::launch((unsigned)tiles, SCAN_THREADS, 0,
                        [&] { graph_scan_max_tiles(input.data(), out.data(), n, tile_max.data()); });
    if (tiles > 1) {
        std::vector<u32> scanned = alloc_u32(tiles);
        scan_max(tile_max, scanned, tiles);
        launch_grid(n, [&] { graph_scan_max_carry(out.data(), n, scanned.data()); });
    }
}

struct Graph {
    u32 n = 0;
    std::vector<u64> off;  // CSR offsets, n + 1
    std::vector<u32> tgt;  // targets, m; edge e leaves the vertex v with off[v] <= e < off[v+1]
    std::vector<u32> src;  // source of each edge (checker only)
};

struct Outcome {
    enum Kind { Circuit, Unbalanced, Disconnected } kind = Circuit;
    u32 bad = NONE;         // Unbalanced: the vertex
    u64 components = 0;     // Disconnected
    std::vector<u32> order; // Circuit: order[0..m)
    u64 k = 0, cycles = 0, links = 0;  // read-back counts
};

// cuda.rs Sublists::new: the splitters of 0..m numbered (in any order), the walks' outputs
// allocated (seg filled with NONE).
struct Sublists {
    u64 k = 0;
    std::vector<u32> split_of, split_edge, seg, offs, next, len;
};

static Sublists sublists_new(u64 m, u32 mask) {
    Sublists s;
    u32 count = 0;
    launch_grid(m, [&] { graph_euler_count_splitters(m, mask, &count); });
    s.k = count;
    s.split_of = alloc_u32(m);
    std::fill(s.split_of.begin(), s.split_of.end(), NONE);  // the host side fills (runtime_fill_u32)
    s.split_edge = alloc_u32(s.k);
    count = 0;
    const u32 cap = (u32)s.k;
    launch_grid(m, [&] { graph_euler_number_splitters(m, mask, s.split_of.data(), s.split_edge.data(), &count, cap); });
    s.seg = alloc_u32(m);
    std::fill(s.seg.begin(), s.seg.end(), NONE);
    s.offs = alloc_u32(m);
    s.next = alloc_u32(s.k);
    s.len = alloc_u32(s.k);
    return s;
}

// cuda.rs Sublists::walk: one thread per splitter, 128 threads per block.
static void sublists_walk(Sublists& s, const std::vector<u32>& succ, u32 mask) {
    const u64 k = s.k;
    launch_grid(k, [&] {
        graph_euler_walk_sublists(succ.data(), s.split_of.data(), s.split_edge.data(), k, mask, s.seg.data(), s.offs.data(),
                            s.next.data(), s.len.data());
    }, 128);
}

// cuda.rs cycle_labels: the walk, fixed rounds of jump_min on the splitters, then residual
// pointer jumping until the read-back flag says settled. Returns lab[0..m).
static std::vector<u32> cycle_labels(const std::vector<u32>& succ, u64 m, Sublists& s, u32 mask) {
    const u64 k = s.k;
    sublists_walk(s, succ, mask);
    std::vector<u32> sl_a = s.split_edge, sj_a = s.next;  // copy(): alloc of max(k, 1), then dtod
    std::vector<u32> sl_b = alloc_u32(k), sj_b = alloc_u32(k);
    for (unsigned i = 0; i < rounds_for(k); ++i) {
        launch_grid(k, [&] { graph_euler_jump_min(sl_a.data(), sj_a.data(), sl_b.data(), sj_b.data(), k); });
        std::swap(sl_a, sl_b);
        std::swap(sj_a, sj_b);
    }
    std::vector<u32> lab_a = alloc_u32(m), jmp_a = alloc_u32(m), lab_b = alloc_u32(m), jmp_b = alloc_u32(m);
    launch_grid(m, [&] { graph_euler_label_init(s.seg.data(), succ.data(), sl_a.data(), m, lab_a.data(), jmp_a.data()); });
    for (int i = 0; i < 40; ++i) {
        u32 flag = 0;
        launch_grid(m, [&] {
            graph_euler_jump_residual(s.seg.data(), succ.data(), lab_a.data(), jmp_a.data(), lab_b.data(), jmp_b.data(), m,
                                &flag);
        });
        std::swap(lab_a, lab_b);
        std::swap(jmp_a, jmp_b);
        if (flag == 0) break;
    }
    return lab_a;
}

// cuda.rs device_circuit, with `mask` = GPU_SPLITTER_MASK on the GPU.
static Outcome device_circuit(const Graph& g, u32 mask) {
    Outcome r;
    const u64 m = g.tgt.size(), n = g.n;
    const u64* d_off = g.off.data();
    const u32* d_tgt = g.tgt.data();

    // Degrees.
    std::vector<u32> cnt(std::max<u64>(n, 1), 0);
    launch_grid(m, [&] { graph_euler_in_degree(d_tgt, m, cnt.data()); });
    u32 bad = NONE;
    launch_grid(n, [&] { graph_euler_check_balanced(d_off, cnt.data(), n, &bad); });
    if (bad != NONE) {
        r.kind = Outcome::Unbalanced;
        r.bad = bad;
        return r;
    }

    // 1. Pairing.
    std::fill(cnt.begin(), cnt.end(), 0u);
    std::vector<u32> succ = alloc_u32(m), pred = alloc_u32(m);
    launch_grid(m, [&] { graph_euler_pair(d_off, d_tgt, m, cnt.data(), succ.data(), pred.data()); });

    // 2. Splitters and cycle labels.
    Sublists subs = sublists_new(m, mask);
    const u64 k = subs.k;
    r.k = k;
    const std::vector<u32> lab = cycle_labels(succ, m, subs, mask);

    // 3. Spanning forest of the cycle graph.
    u32 cycles = 0;
    launch_grid(m, [&] { graph_euler_count_cycles(lab.data(), m, &cycles); });
    r.cycles = cycles;
    std::vector<unsigned char> tree(m, 0);
    u64 links_n = 0;
    if (cycles > 1) {
        std::vector<u32> parent = alloc_u32(m);
        std::iota(parent.begin(), parent.end(), 0u);  // the host side uses runtime_iota_u32
        std::vector<unsigned char> row_last(m, 0);
        launch_grid(n, [&] { graph_euler_mark_row_ends(d_off, n, row_last.data()); });
        u32 links = 0;
        launch_grid(m, [&] { graph_euler_link_cycles(lab.data(), row_last.data(), m, parent.data(), tree.data(), &links); });
        links_n = links;
    }
    r.links = links_n;
    const u64 components = cycles > links_n ? cycles - links_n : 0;
    if (components > 1) {
        r.kind = Outcome::Disconnected;
        r.components = components;
        return r;
    }

    // 4. Splice.
    if (links_n > 0) {
        std::vector<u32> run_key = alloc_u32(m), run_start = alloc_u32(m);
        launch_grid(m, [&] { graph_euler_run_keys(tree.data(), m, run_key.data()); });
        scan_max(run_key, run_start, m);
        launch_grid(m, [&] { graph_euler_splice(pred.data(), tree.data(), run_start.data(), m, succ.data()); });
    }

    // 5. Ranking.
    sublists_walk(subs, succ, mask);
    const std::vector<u32>& next = subs.next;
    const std::vector<u32>& len = subs.len;
    const std::vector<u32>& split_of = subs.split_of;
    const std::vector<u32>& seg = subs.seg;
    const std::vector<u32>& offs = subs.offs;
    std::vector<u32> val_a = alloc_u32(k), nxt_a = alloc_u32(k), val_b = alloc_u32(k), nxt_b = alloc_u32(k);
    launch_grid(k, [&] { graph_euler_rank_init(next.data(), len.data(), split_of.data(), k, val_a.data(), nxt_a.data()); });
    for (unsigned i = 0; i < rounds_for(k); ++i) {
        launch_grid(k, [&] { graph_euler_rank_round(val_a.data(), nxt_a.data(), val_b.data(), nxt_b.data(), k); });
        std::swap(val_a, val_b);
        std::swap(nxt_a, nxt_b);
    }
    std::vector<u32> order = alloc_u32(m);
    launch_grid(m, [&] { graph_euler_scatter_order(seg.data(), offs.data(), val_a.data(), m, order.data()); });
    order.resize(m);
    r.order = std::move(order);
    return r;
}

// ---- graphs and references ----------------------------------------------------------------

// CSR from an edge list; edges keep their list order within a source (stable counting sort).
static Graph from_edges(u32 n, const std::vector<std::pair<u32, u32>>& edges) {
    Graph g;
    g.n = n;
    g.off.assign((u64)n + 1, 0);
    for (auto& [s, t] : edges) g.off[s + 1]++;
    for (u32 v = 0; v < n; ++v) g.off[v + 1] += g.off[v];
    std::vector<u64> pos(g.off.begin(), g.off.end() - 1);
    g.tgt.resize(edges.size());
    g.src.resize(edges.size());
    for (auto& [s, t] : edges) {
        g.tgt[pos[s]] = t;
        g.src[pos[s]++] = s;
    }
    return g;
}

// The smallest vertex with in-degree != out-degree, or NONE.
static u32 ref_unbalanced(const Graph& g) {
    std::vector<u64> in(g.n, 0);
    for (u32 t : g.tgt) in[t]++;
    for (u32 v = 0; v < g.n; ++v)
        if (in[v] != g.off[v + 1] - g.off[v]) return v;
    return NONE;
}

// Connected components among the edges (vertices with edges, undirected).
static u64 ref_components(const Graph& g) {
    std::vector<u32> p(g.n);
    std::iota(p.begin(), p.end(), 0u);
    auto find = [&](u32 x) {
        while (p[x] != x) x = p[x] = p[p[x]];
        return x;
    };
    for (u64 e = 0; e < g.tgt.size(); ++e) p[find(g.src[e])] = find(g.tgt[e]);
    std::vector<bool> has(g.n, false), root(g.n, false);
    for (u64 e = 0; e < g.tgt.size(); ++e) has[g.src[e]] = true;
    u64 c = 0;
    for (u32 v = 0; v < g.n; ++v)
        if (has[v] && !root[find(v)]) root[find(v)] = true, ++c;
    return c;
}

// The number of splitters: edge 0 and the edges whose hash has no bit of `mask`.
static u64 ref_splitters(u64 m, u32 mask) {
    u64 k = 0;
    for (u64 e = 0; e < m; ++e) k += (e == 0 || (warpath_mix32((u32)e) & mask) == 0);
    return k;
}

// Euler circuit checker: every edge once, head to tail, closed.
static void check_circuit(const Graph& g, const std::vector<u32>& order, const std::string& what) {
    const u64 m = g.tgt.size();
    SIM_CHECK(order.size() == m, "%s: %zu edges in the order, %llu in the graph", what.c_str(), order.size(), m);
    std::vector<bool> seen(m, false);
    for (u64 i = 0; i < m; ++i) {
        const u32 e = order[i];
        SIM_CHECK(e < m, "%s: order[%llu] = %u is no edge", what.c_str(), i, e);
        SIM_CHECK(!seen[e], "%s: edge %u appears twice (again at %llu)", what.c_str(), e, i);
        seen[e] = true;
        const u32 f = order[(i + 1) % m];
        SIM_CHECK(f < m && g.tgt[e] == g.src[f], "%s: order[%llu] = %u ends at %u, order[%llu] = %u leaves %u",
                  what.c_str(), i, e, g.tgt[e], (i + 1) % m, f, f < m ? g.src[f] : NONE);
    }
    SIM_CHECK(order[0] == 0, "%s: the circuit starts with edge %u, not 0", what.c_str(), order[0]);
}

static int g_cases = 0;

// graph/cuda.rs edge_sources: graph_edge_sources over m edges (grid(m), 256 threads), against
// the sources the graph was built from.
static void check_edge_sources(const Graph& g, const std::string& what) {
    const u64 m = g.tgt.size();
    if (m == 0) return;
    std::vector<u32> src = alloc_u32(m);
    launch_grid(m, [&] { graph_edge_sources(g.off.data(), (u64)g.n, m, src.data()); });
    for (u64 e = 0; e < m; ++e)
        SIM_CHECK(src[e] == g.src[e], "%s: edge_sources[%llu] = %u, expected %u", what.c_str(), e, src[e], g.src[e]);
}

// Runs the pipeline on `g` and checks the outcome against the references.
static void check_graph(const Graph& g, const std::string& name, u32 mask = GPU_SPLITTER_MASK) {
    const std::string what = name + " (m=" + std::to_string(g.tgt.size()) + " n=" + std::to_string(g.n) +
                             " mask=" + std::to_string(mask) + " sms=" + std::to_string(g_sms) + ")";
    check_edge_sources(g, what);
    const Outcome r = device_circuit(g, mask);
    ++g_cases;
    const u32 bad = ref_unbalanced(g);
    if (bad != NONE) {
        SIM_CHECK(r.kind == Outcome::Unbalanced && r.bad == bad, "%s: expected unbalanced vertex %u, got kind %d vertex %u",
                  what.c_str(), bad, (int)r.kind, r.bad);
        return;
    }
    SIM_CHECK(r.kind != Outcome::Unbalanced, "%s: balanced graph reported unbalanced at %u", what.c_str(), r.bad);
    SIM_CHECK(r.k == ref_splitters(g.tgt.size(), mask), "%s: splitter count %llu, expected %llu", what.c_str(), r.k,
              ref_splitters(g.tgt.size(), mask));
    const u64 comps = ref_components(g);
    if (comps > 1) {
        SIM_CHECK(r.kind == Outcome::Disconnected && r.components == comps, "%s: expected %llu components, got kind %d (%llu)",
                  what.c_str(), comps, (int)r.kind, r.components);
        return;
    }
    SIM_CHECK(r.kind == Outcome::Circuit, "%s: connected graph reported with %llu components", what.c_str(), r.components);
    SIM_CHECK(r.cycles >= 1 && r.links == r.cycles - 1, "%s: %llu cycles but %llu forest links", what.c_str(), r.cycles,
              r.links);
    check_circuit(g, r.order, what);
}

static std::vector<std::pair<u32, u32>> cycle_edges(const std::vector<u32>& vs) {
    std::vector<std::pair<u32, u32>> e;
    for (size_t i = 0; i < vs.size(); ++i) e.push_back({vs[i], vs[(i + 1) % vs.size()]});
    return e;
}

// One cycle through m distinct vertices, numbered in a random order.
static Graph single_cycle(u32 m, std::mt19937_64& rng) {
    std::vector<u32> vs(m);
    std::iota(vs.begin(), vs.end(), 0u);
    std::shuffle(vs.begin() + 1, vs.end(), rng);
    return from_edges(m, cycle_edges(vs));
}

// A random walk on n vertices closed into a circuit: long cycles, repeated vertices.
static Graph deep(u32 m, u32 n, std::mt19937_64& rng) {
    std::vector<u32> vs(m);
    for (auto& v : vs) v = (u32)(rng() % n);
    auto e = cycle_edges(vs);
    std::shuffle(e.begin(), e.end(), rng);  // random edge ids within each source
    return from_edges(n, e);
}

// Hub 0 with cycles of random length 1..max_len (a length-1 cycle is a self loop at the hub).
static Graph shallow(u32 m, u32 max_len, std::mt19937_64& rng) {
    std::vector<std::pair<u32, u32>> e;
    u32 n = 1;
    while (e.size() < m) {
        const u32 len = std::min<u32>(1 + (u32)(rng() % max_len), m - (u32)e.size());
        std::vector<u32> vs{0};
        for (u32 i = 1; i < len; ++i) vs.push_back(n++);
        auto c = cycle_edges(vs);
        e.insert(e.end(), c.begin(), c.end());
    }
    std::shuffle(e.begin(), e.end(), rng);
    return from_edges(n, e);
}

static Graph self_loops(u32 count) {
    return from_edges(1, std::vector<std::pair<u32, u32>>(count, {0, 0}));
}

static Graph parallel_edges(u32 k) {
    std::vector<std::pair<u32, u32>> e;
    for (u32 i = 0; i < k; ++i) e.push_back({0, 1}), e.push_back({1, 0});
    return from_edges(2, e);
}

// de Bruijn graph B(s, d): vertices are (d-1)-digit words over s symbols, one edge per d-word.
static Graph de_bruijn(u32 s, u32 d) {
    u32 n = 1;
    for (u32 i = 1; i < d; ++i) n *= s;
    std::vector<std::pair<u32, u32>> e;
    for (u32 v = 0; v < n; ++v)
        for (u32 c = 0; c < s; ++c) e.push_back({v, (v * s + c) % n});
    return from_edges(n, e);
}

// ---- undirected graphs: the balanced orientation, then the directed pipeline ---------------

// An undirected multigraph as graph_core::UndirectedGraph holds it: half-edges 2e, 2e + 1 at
// ends[2e], ends[2e + 1]; halves = the half-edges grouped by vertex, increasing within one.
struct UGraph {
    u32 n = 0;
    std::vector<u32> ends;
    std::vector<u64> off;
    std::vector<u32> halves;
    u64 m() const { return ends.size() / 2; }
};

static UGraph ugraph(u32 n, const std::vector<std::pair<u32, u32>>& edges) {
    UGraph g;
    g.n = n;
    for (auto& [u, v] : edges) g.ends.push_back(u), g.ends.push_back(v);
    g.off.assign((u64)n + 1, 0);
    for (u32 x : g.ends) g.off[x + 1]++;
    for (u32 v = 0; v < n; ++v) g.off[v + 1] += g.off[v];
    std::vector<u64> pos(g.off.begin(), g.off.end() - 1);
    g.halves.resize(g.ends.size());
    for (u64 h = 0; h < g.ends.size(); ++h) g.halves[pos[g.ends[h]]++] = (u32)h;
    return g;
}

// Components among the vertices with edges, and whether some degree is odd.
static u64 ref_ucomponents(const UGraph& g) {
    std::vector<std::pair<u32, u32>> e;
    for (u64 i = 0; i < g.m(); ++i) e.push_back({g.ends[2 * i], g.ends[2 * i + 1]});
    Graph d = from_edges(g.n, e);
    // Count the vertices with edges at either end, as the undirected graph does.
    std::vector<u32> p(g.n);
    std::iota(p.begin(), p.end(), 0u);
    auto find = [&](u32 x) {
        while (p[x] != x) x = p[x] = p[p[x]];
        return x;
    };
    for (auto& [u, v] : e) p[find(u)] = find(v);
    std::vector<bool> root(g.n, false);
    u64 c = 0;
    for (u32 x : g.ends)
        if (!root[find(x)]) root[find(x)] = true, ++c;
    return c;
}

// undirected/cuda.rs circuit_order: returns the undirected edge order, or empty with
// *components set when the directed pipeline reports a disconnection. Checks on the way that
// the orientation is balanced and uses every undirected edge once, as its own direction.
static std::vector<u32> undirected_circuit(const UGraph& g, u32 mask, const std::string& what, u64* components) {
    const u64 m = g.m(), m2 = 2 * m;
    std::vector<u32> slot_of = alloc_u32(m2), succ = alloc_u32(m2);
    launch_grid(m2, [&] { graph_undirected_slot_of(g.halves.data(), m2, slot_of.data()); });
    launch_grid(m2, [&] { graph_undirected_next_dart(g.halves.data(), slot_of.data(), m2, succ.data()); });
    Sublists subs = sublists_new(m2, mask);
    const std::vector<u32> lab = cycle_labels(succ, m2, subs, mask);
    std::vector<u32> targets = alloc_u32(m), edge_of = alloc_u32(m);
    launch_grid(m, [&] {
        graph_undirected_orient(g.halves.data(), g.ends.data(), lab.data(), m, targets.data(), edge_of.data());
    });
    // The oriented digraph: out-edges of v are its slot pairs.
    Graph d;
    d.n = g.n;
    for (u64 o : g.off) d.off.push_back(o / 2);
    d.tgt.assign(targets.begin(), targets.begin() + m);
    d.src.resize(m);
    for (u32 v = 0; v < g.n; ++v)
        for (u64 j = d.off[v]; j < d.off[v + 1]; ++j) d.src[j] = v;
    SIM_CHECK(ref_unbalanced(d) == NONE, "%s: the orientation leaves vertex %u unbalanced", what.c_str(),
              ref_unbalanced(d));
    std::vector<bool> used(m, false);
    for (u64 j = 0; j < m; ++j) {
        const u32 e = edge_of[j];
        SIM_CHECK(e < m && !used[e], "%s: directed edge %llu maps to edge %u (twice, or no edge)", what.c_str(), j, e);
        used[e] = true;
        const u32 a = g.ends[2 * e], b = g.ends[2 * e + 1];
        SIM_CHECK((d.src[j] == a && d.tgt[j] == b) || (d.src[j] == b && d.tgt[j] == a),
                  "%s: directed edge %llu goes %u -> %u, edge %u joins %u and %u", what.c_str(), j, d.src[j], d.tgt[j], e,
                  a, b);
    }
    Outcome r = device_circuit(d, mask);
    SIM_CHECK(r.kind != Outcome::Unbalanced, "%s: the directed pipeline found vertex %u unbalanced", what.c_str(), r.bad);
    if (r.kind == Outcome::Disconnected) {
        *components = r.components;
        return {};
    }
    *components = 1;
    launch_grid(m, [&] { graph_undirected_map_edges(r.order.data(), edge_of.data(), m); });
    return r.order;
}

static void check_undirected(const UGraph& g, const std::string& name, u32 mask = GPU_SPLITTER_MASK) {
    const std::string what = name + " (undirected, m=" + std::to_string(g.m()) + " n=" + std::to_string(g.n) +
                             " mask=" + std::to_string(mask) + " sms=" + std::to_string(g_sms) + ")";
    ++g_cases;
    u64 components = 0;
    const std::vector<u32> order = undirected_circuit(g, mask, what, &components);
    const u64 want = ref_ucomponents(g);
    if (want > 1) {
        SIM_CHECK(order.empty() && components == want, "%s: expected %llu components, got %llu", what.c_str(), want,
                  components);
        return;
    }
    // Checker: every edge once, each joins the current vertex to the next, back at the start
    // (the first vertex with an edge: the directed circuit starts with slot pair 0).
    const u64 m = g.m();
    SIM_CHECK(order.size() == m, "%s: %zu edges in the order, %llu in the graph", what.c_str(), order.size(), m);
    std::vector<bool> seen(m, false);
    const u32 start = g.ends[g.halves[0]];
    u32 v = start;
    for (u64 i = 0; i < m; ++i) {
        const u32 e = order[i];
        SIM_CHECK(e < m && !seen[e], "%s: order[%llu] = %u is no edge or repeats", what.c_str(), i, e);
        seen[e] = true;
        const u32 a = g.ends[2 * e], b = g.ends[2 * e + 1];
        SIM_CHECK(a == v || b == v, "%s: order[%llu] = edge %u joins %u and %u, not vertex %u", what.c_str(), i, e, a, b,
                  v);
        v = a == v ? b : a;
    }
    SIM_CHECK(v == start, "%s: the circuit ends at %u, not at its start %u", what.c_str(), v, start);
}

// A closed random walk on n vertices: edge i joins step i and step i + 1; ids shuffled and
// each edge's ends in a random order.
static UGraph uwalk(u32 m, u32 n, std::mt19937_64& rng) {
    std::vector<u32> vs(m);
    for (auto& v : vs) v = (u32)(rng() % n);
    auto e = cycle_edges(vs);
    std::shuffle(e.begin(), e.end(), rng);
    for (auto& p : e)
        if (rng() & 1) std::swap(p.first, p.second);
    return ugraph(n, e);
}

// Every edge of a random walk twice (pairs of parallel edges, many short trails).
static UGraph udoubled(u32 pairs, u32 n, std::mt19937_64& rng) {
    std::vector<std::pair<u32, u32>> e;
    u32 v = 0;
    for (u32 i = 0; i < pairs; ++i) {
        const u32 w = (u32)(rng() % n);
        e.push_back({v, w});
        e.push_back({w, v});
        v = w;
    }
    std::shuffle(e.begin(), e.end(), rng);
    return ugraph(n, e);
}

// Hub 0 with triangles (0, 2i - 1, 2i).
static UGraph utriangles(u32 k) {
    std::vector<std::pair<u32, u32>> e;
    for (u32 i = 1; i <= k; ++i) e.push_back({0, 2 * i - 1}), e.push_back({2 * i - 1, 2 * i}), e.push_back({2 * i, 0});
    return ugraph(2 * k + 1, e);
}

// ---- the scan on its own --------------------------------------------------------------------

static void check_scan(u64 n, std::mt19937_64& rng, bool sparse_keys) {
    std::vector<u32> in(n);
    for (u64 i = 0; i < n; ++i)
        in[i] = sparse_keys ? ((rng() % 7 == 0) ? (u32)i : 0u) : (u32)(rng() >> 40);
    std::vector<u32> out = alloc_u32(n);
    scan_max(in, out, n);
    u32 run = 0;
    for (u64 i = 0; i < n; ++i) {
        run = std::max(run, in[i]);
        SIM_CHECK(out[i] == run, "scan n=%llu sms=%u: out[%llu] = %u, expected %u", n, g_sms, i, out[i], run);
    }
}

int main() {
    const auto t0 = std::chrono::steady_clock::now();
    std::mt19937_64 rng(20261122);

    // A GPU with 132 SMs: grid(n) = ceil(n / 256) blocks up to 2112, one grid-stride pass.
    g_sms = 132;
    for (u64 n : {1ull, 2ull, 255ull, 1023ull, 1024ull, 1025ull, 3000ull, 5000ull}) check_scan(n, rng, false);
    check_scan(4097, rng, true);

    // Edge sources on graphs with empty rows first, between, last, and a hub.
    check_edge_sources(from_edges(6, {{1, 2}, {1, 1}, {3, 0}, {3, 3}, {3, 4}}), "empty rows");
    {
        std::vector<std::pair<u32, u32>> e;
        for (u32 i = 0; i < 3000; ++i) e.push_back({(i % 7 == 0) ? 5u : 900u + (u32)(rng() % 99), i % 1000});
        check_edge_sources(from_edges(1000, e), "hub and sparse rows");
    }

    // Tiny and hand-made graphs.
    check_graph(self_loops(1), "self loop");
    check_graph(self_loops(2), "two self loops");
    check_graph(from_edges(2, {{0, 1}, {1, 0}}), "2-cycle");
    check_graph(from_edges(3, {{0, 1}, {1, 0}, {0, 2}, {2, 0}}), "two cycles sharing a vertex");
    check_graph(from_edges(5, {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 2}}), "two triangles sharing vertex 2");
    check_graph(from_edges(4, {{1, 2}, {2, 1}, {2, 3}, {3, 2}}), "isolated vertex 0");
    check_graph(parallel_edges(1), "parallel edges x1");
    check_graph(parallel_edges(17), "parallel edges x17");
    check_graph(de_bruijn(3, 4), "de Bruijn B(3,4)");
    // Errors the host reports from read-back values.
    check_graph(from_edges(3, {{0, 1}, {1, 2}, {2, 0}, {1, 2}}), "unbalanced");
    check_graph(from_edges(4, {{0, 1}, {1, 0}, {2, 3}, {3, 2}}), "two components");
    check_graph(from_edges(6, {{0, 0}, {1, 2}, {2, 1}, {3, 4}, {4, 5}, {5, 3}}), "three components");

    // Sizes around warp, block and scan-tile boundaries.
    for (u32 m : {1u, 2u, 31u, 32u, 33u, 255u, 256u, 257u, 1023u, 1024u, 1025u, 4099u}) {
        check_graph(single_cycle(m, rng), "single cycle");
        check_graph(deep(m, std::max<u32>(1, m / 8), rng), "deep");
        check_graph(shallow(m, 4, rng), "shallow");
        if (m >= 31) check_graph(self_loops(m), "self loops at one vertex");
        if (m % 2 == 0) check_graph(parallel_edges(m / 2), "parallel edges");
    }
    check_graph(deep(9000, 300, rng), "deep");
    check_graph(shallow(9000, 3, rng), "shallow");

    // Other splitter densities (the host uses 31): about every other edge a splitter, and
    // almost none (nearly all edges residual, ranked through one long sublist).
    for (u32 mask : {1u, (1u << 20) - 1}) {
        for (u32 m : {33u, 1025u, 3000u}) {
            check_graph(deep(m, std::max<u32>(1, m / 16), rng), "deep", mask);
            check_graph(shallow(m, 5, rng), "shallow", mask);
        }
        check_graph(self_loops(2000), "self loops at one vertex", mask);
    }

    // Undirected graphs: the orientation (2 m darts) around block and tile boundaries.
    check_undirected(ugraph(1, {{0, 0}}), "one self-loop");
    check_undirected(ugraph(3, std::vector<std::pair<u32, u32>>(300, {2, 2})), "self-loops at one vertex");
    check_undirected(ugraph(2, {{0, 1}, {1, 0}}), "two parallel edges");
    check_undirected(ugraph(2, std::vector<std::pair<u32, u32>>(514, {1, 0})), "514 parallel edges");
    check_undirected(ugraph(5, {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 2}}), "two triangles sharing vertex 2");
    check_undirected(ugraph(6, {{0, 1}, {1, 0}, {3, 4}, {4, 5}, {5, 3}}), "two components");
    check_undirected(ugraph(4, {{0, 0}, {1, 1}, {3, 3}}), "three self-loop components");
    check_undirected(utriangles(171), "star of triangles");
    for (u32 m : {1u, 2u, 3u, 31u, 32u, 33u, 127u, 128u, 129u, 511u, 512u, 513u}) {
        check_undirected(uwalk(m, std::max<u32>(1, m / 6), rng), "closed walk");
        if (m % 2 == 0) check_undirected(udoubled(m / 2, std::max<u32>(2, m / 8), rng), "doubled walk");
    }
    for (u32 mask : {1u, (1u << 20) - 1})
        for (u32 m : {33u, 300u}) {
            check_undirected(uwalk(m, std::max<u32>(1, m / 10), rng), "closed walk", mask);
            check_undirected(udoubled(m, 9, rng), "doubled walk", mask);
        }

    // One SM: grids capped at 16 blocks (4096 threads; 2048 for the walks), so the grid-stride
    // loops iterate and the warp counts see partial warps on later passes. Smaller inputs
    // launch the same grids as above.
    g_sms = 1;
    for (u64 n : {5000ull, 9000ull}) check_scan(n, rng, false);
    check_graph(single_cycle(4099, rng), "single cycle");
    check_graph(deep(4099, 512, rng), "deep");
    check_graph(shallow(4099, 4, rng), "shallow");
    check_graph(self_loops(5000), "self loops at one vertex");
    check_graph(parallel_edges(2500), "parallel edges");
    check_graph(deep(9000, 300, rng), "deep");
    check_graph(shallow(9000, 3, rng), "shallow");
    check_graph(deep(9000, 100, rng), "deep", 1);
    check_graph(shallow(9000, 4, rng), "shallow", (1u << 20) - 1);
    check_undirected(uwalk(1100, 150, rng), "closed walk");
    check_undirected(udoubled(600, 40, rng), "doubled walk");

    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("graph.cu: %d pipeline runs and the max-scan OK (%s order, %.1f s)\n", g_cases,
                std::getenv("WARPATH_SIM_ORDER") ? std::getenv("WARPATH_SIM_ORDER") : "forward", s);
    return 0;
}
