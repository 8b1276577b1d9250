#!/usr/bin/env python3
"""Compare graph-core's undirected Euler circuits and paths with NetworkX's on generated graphs.

Both sides answer the same questions on each graph: is_eulerian, has_eulerian_path (with and
without a source), eulerian_circuit and eulerian_path (keys=True; with and without a source).
The script checks that

- both agree on whether each trail exists, and on the predicates;
- every trail of both is a valid Euler trail (an independent checker: every edge exactly once,
  each edge joins the vertex before it to the vertex after it, closed for circuits), starting
  at the source when one is given, and at the same vertex as NetworkX's when none is (the
  smaller odd-degree vertex for paths, the smallest vertex with an edge for circuits);
- where graph-core refuses, it says why with the expected error kind.

NetworkX's Euler functions refuse graphs with isolated vertices (they are not connected);
graph-core's trail functions ignore vertices without edges, and its predicates
(`UndirectedGraph::is_eulerian`, `has_euler_path`) follow NetworkX exactly. So the predicates
are compared on the graph with all `n` vertices, the trails on the graph of the vertices with
edges (added in increasing order, so NetworkX's "first node" is the smallest one).

Run it (NetworkX 3.x; no build dependency of warpath):

    python3 crates/graph-core/scripts/compare_networkx.py            # about 970 graphs
    python3 crates/graph-core/scripts/compare_networkx.py --large    # adds 3e5..1e6-edge graphs

It builds and runs `cargo run --release -p graph-core --example undirected_euler`. The Rust
test `tests/networkx.rs` uses `--generate` and `--check` with graph-core's answers computed in
process: `--generate FILE` writes the graphs (JSON lines), `--check GRAPHS ANSWERS` checks
graph-core's answers (from the example) against NetworkX and exits non-zero on a mismatch.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

import networkx as nx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


# ---- graphs ------------------------------------------------------------------------------

def closed_walks(rng, n, walks, length, exact=False):
    """Edges of `walks` random closed walks of up to (or, `exact`, of) `length` steps: every
    degree even."""
    e = []
    for _ in range(walks):
        w = [rng.randrange(n) for _ in range(length if exact else rng.randint(1, length))]
        e += [(w[i], w[(i + 1) % len(w)]) for i in range(len(w))]
    return e


def shuffled(rng, e):
    e = [(v, u) if rng.random() < 0.5 else (u, v) for (u, v) in e]
    rng.shuffle(e)
    return e


def graphs(seed, quick, large):
    """(name, n, edges, source) tuples: random and adversarial undirected multigraphs."""
    rng = random.Random(seed)
    out = []

    def add(name, n, e, source="random"):
        if source == "random":
            source = rng.randrange(n + 1) if n > 0 else None  # sometimes n: out of range
        out.append((name, n, e, source))

    # Edge cases.
    add("null graph", 0, [], None)
    add("single vertex", 1, [], 0)
    add("edgeless", 3, [], 1)
    add("one self-loop", 1, [(0, 0)], 0)
    add("self-loops only", 1, [(0, 0)] * 5, 0)
    add("self-loops at two vertices", 2, [(0, 0), (1, 1)], 1)
    add("isolated vertex", 4, [(0, 1), (1, 2), (2, 0)], 3)
    add("isolated vertex, source on the triangle", 4, [(0, 1), (1, 2), (2, 0)], 2)
    add("path graph", 3, [(1, 2), (0, 1)], 1)
    add("path graph from its end", 3, [(1, 2), (0, 1)], 2)
    add("two parallel edges", 2, [(0, 1), (1, 0)], 1)
    add("three parallel edges", 2, [(0, 1)] * 3, 1)
    add("two triangles sharing a vertex", 5, [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2)], 4)
    add("two components", 5, [(0, 1), (1, 0), (2, 3), (3, 4), (4, 2)], 0)
    add("four odd vertices", 4, [(0, 1), (2, 3)], 0)
    add("star", 5, [(0, i) for i in range(1, 5)], 0)
    add("tadpole", 4, [(0, 1), (1, 2), (2, 0), (0, 3)], 3)
    tri = [(0, 2 * i - 1) for i in range(1, 41)] + [(2 * i - 1, 2 * i) for i in range(1, 41)] + \
          [(2 * i, 0) for i in range(1, 41)]
    add("star of triangles", 81, shuffled(rng, tri), 0)
    # Sizes around warp, block and tile boundaries, even degrees, and with one edge removed
    # (two odd vertices) or added (two more).
    sizes = [1, 2, 3, 31, 32, 33, 255, 256, 257] + ([] if quick else [1023, 1024, 1025, 4097])
    for m in sizes:
        n = max(1, m // rng.choice([1, 3, 8]))
        e = shuffled(rng, closed_walks(rng, n, 1, m, exact=True))
        add(f"walk m={len(e)}", n, e)
        if len(e) > 1:
            add(f"walk minus an edge m={len(e) - 1}", n, e[:-1])
        add(f"walk plus an edge m={len(e) + 1}", n, e + [(rng.randrange(n), rng.randrange(n))])
        add(f"doubled m={2 * m}", n, shuffled(rng, [p for p in e for _ in (0, 1)]))
    # Random multigraphs: unions of closed walks on few vertices (often disconnected),
    # sometimes with extra edges.
    count = 120 if quick else 900
    for i in range(count):
        n = rng.randint(1, 12)
        e = closed_walks(rng, n, rng.randint(0, 5), 8)
        e += [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.choice([0, 0, 1, 2, 3]))]
        add(f"random {i}", n, shuffled(rng, e))
    if large:
        for m in (300_000, 1_000_000):
            n = m // 4
            e = shuffled(rng, closed_walks(rng, n, 1, m, exact=True))
            add(f"large walk m={len(e)}", n, e)
            add(f"large walk minus an edge m={len(e) - 1}", n, e[:-1])
    return out


def write_graphs(path, gs):
    with open(path, "w") as f:
        for name, n, e, source in gs:
            f.write(json.dumps({"name": name, "n": n, "edges": e, "source": source}) + "\n")


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


# ---- NetworkX's answers ---------------------------------------------------------------------

def multigraph(nodes, edges):
    g = nx.MultiGraph()
    g.add_nodes_from(nodes)
    for k, (u, v) in enumerate(edges):
        g.add_edge(u, v, key=k)
    return g


def nx_trail(fn, g, source):
    """(edges, vertices) of NetworkX's trail, or None when it refuses."""
    if source is not None and source not in g:
        return None
    try:
        t = list(fn(g, source=source, keys=True))
    except nx.NetworkXError:
        return None
    if not t:
        return ([], [])
    return ([k for (_, _, k) in t], [t[0][0]] + [v for (_, v, _) in t])


def nx_predicate(fn, g, *args):
    try:
        return bool(fn(g, *args))
    except (nx.NetworkXPointlessConcept, KeyError, nx.NetworkXError):
        return False


# ---- the checker -----------------------------------------------------------------------------

def check_trail(edges_list, trail, closed, source):
    """None when `trail` is an Euler trail of the edges (from `source`), else why not."""
    edges, verts = trail
    m = len(edges_list)
    if len(edges) != m:
        return f"{len(edges)} edges, the graph has {m}"
    if m == 0:
        return None if len(verts) <= 1 else "vertices without edges"
    if len(verts) != m + 1:
        return f"{len(verts)} vertices for {m} edges"
    seen = set()
    for i, e in enumerate(edges):
        if not (0 <= e < m) or e in seen:
            return f"position {i}: edge {e} missing or repeated"
        seen.add(e)
        a, b = edges_list[e]
        if (verts[i], verts[i + 1]) not in ((a, b), (b, a)):
            return f"position {i}: edge {e} joins {a} and {b}, not {verts[i]} and {verts[i + 1]}"
    if closed and verts[0] != verts[-1]:
        return f"not closed: {verts[0]} ... {verts[-1]}"
    if source is not None and verts[0] != source:
        return f"starts at {verts[0]}, not at the source {source}"
    return None


# Which of graph-core's error kinds may answer "no trail" (NetworkX has one message for all).
REFUSALS = {
    "circuit": {"OddDegree", "Disconnected", "SourceWithoutEdges", "SourceOutOfRange"},
    "path": {"TooManyOddVertices", "SourceNotOdd", "Disconnected", "SourceWithoutEdges",
             "SourceOutOfRange"},
}


def compare(graph, ours):
    """The list of mismatches between graph-core's answers and NetworkX's on one graph."""
    name, n, edges, source = graph["name"], graph["n"], [tuple(p) for p in graph["edges"]], graph["source"]
    bad = []
    g_all = multigraph(range(n), edges)
    g_edges = multigraph(sorted({x for p in edges for x in p}), edges)
    preds = [("is_eulerian", nx.is_eulerian, ()), ("has_euler_path", nx.has_eulerian_path, ())]
    if source is not None:
        preds.append(("has_euler_path_source", nx.has_eulerian_path, (source,)))
    for key, fn, args in preds:
        want = nx_predicate(fn, g_all, *args)
        if args and args[0] >= n:
            want = False  # documented difference: NetworkX says True for an Eulerian graph
        if ours[key] != want:
            bad.append(f"{key}: graph-core {ours[key]}, NetworkX {want}")
    questions = [("circuit", None), ("path", None), ("circuit_oriented", None)]
    if source is not None:
        questions += [("circuit_source", source), ("path_source", source)]
    for key, src in questions:
        kind = "path" if key.startswith("path") else "circuit"
        fn = nx.eulerian_path if kind == "path" else nx.eulerian_circuit
        if edges:
            theirs = nx_trail(fn, g_edges, src)
        else:
            # No edges: the empty trail (from any vertex there is). NetworkX raises
            # NetworkXPointlessConcept on the graph without vertices.
            theirs = ([], []) if src is None or src < n else None
        mine = ours[key]
        ok = "edges" in mine
        if ok != (theirs is not None):
            why = mine.get("error", "a trail")
            bad.append(f"{key}: graph-core says {why!r}, NetworkX {'finds a trail' if theirs else 'refuses'}")
            continue
        if not ok:
            if mine["kind"] not in REFUSALS[kind]:
                bad.append(f"{key}: unexpected error kind {mine['kind']}: {mine['error']}")
            continue
        # A path may be closed (all degrees even); a circuit must be.
        closed = kind == "circuit" or (theirs[1][:1] == theirs[1][-1:])
        for who, t in (("graph-core", (mine["edges"], mine["vertices"])), ("NetworkX", theirs)):
            why = check_trail(edges, t, closed, src)
            if why:
                bad.append(f"{key}: {who}'s trail is invalid: {why}")
        if src is None and mine["vertices"][:1] != theirs[1][:1]:
            bad.append(f"{key}: graph-core starts at {mine['vertices'][:1]}, NetworkX at {theirs[1][:1]}")
    return [f"{name}: {b}" for b in bad]


def check(graphs_path, ours_path):
    gs, ours = read_jsonl(graphs_path), read_jsonl(ours_path)
    if len(gs) != len(ours):
        print(f"{len(gs)} graphs but {len(ours)} answers", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    bad, trails, refusals = [], 0, 0
    for g, o in zip(gs, ours):
        if g["name"] != o["name"]:
            bad.append(f"answers out of order: {g['name']} vs {o['name']}")
            continue
        bad += compare(g, o)
        for k, v in o.items():
            if isinstance(v, dict):
                trails += "edges" in v
                refusals += "error" in v
    for b in bad[:50]:
        print("MISMATCH", b)
    edges = sum(len(g["edges"]) for g in gs)
    print(f"networkx {nx.__version__}: {len(gs)} graphs ({edges} edges), {trails} trails and "
          f"{refusals} refusals of graph-core checked against NetworkX in "
          f"{time.perf_counter() - t0:.1f} s: {'OK' if not bad else f'{len(bad)} MISMATCHES'}")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--quick", action="store_true", help="fewer random graphs")
    ap.add_argument("--large", action="store_true", help="add graphs of 3e5 and 1e6 edges")
    ap.add_argument("--generate", metavar="FILE", help="only write the graphs to FILE")
    ap.add_argument("--check", nargs=2, metavar=("GRAPHS", "ANSWERS"),
                    help="only check graph-core's ANSWERS for the GRAPHS against NetworkX")
    ap.add_argument("--dir", default=os.path.join(ROOT, "target", "networkx-compare"))
    args = ap.parse_args()
    if args.check:
        return check(*args.check)
    gs = graphs(args.seed, args.quick, args.large)
    if args.generate:
        write_graphs(args.generate, gs)
        return 0
    os.makedirs(args.dir, exist_ok=True)
    graphs_path = os.path.join(args.dir, "graphs.jsonl")
    ours_path = os.path.join(args.dir, "graph-core.jsonl")
    write_graphs(graphs_path, gs)
    t0 = time.perf_counter()
    with open(ours_path, "w") as out:
        subprocess.run(["cargo", "run", "--release", "-q", "-p", "graph-core", "--example",
                        "undirected_euler", "--", graphs_path], check=True, stdout=out, cwd=ROOT)
    print(f"graph-core answered {len(gs)} graphs in {time.perf_counter() - t0:.1f} s (build included)")
    return check(graphs_path, ours_path)


if __name__ == "__main__":
    sys.exit(main())
