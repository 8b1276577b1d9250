"""warpath.euler_circuit against NetworkX, every result checked independently."""

from collections import Counter

import networkx as nx
import numpy as np
import pytest

import warpath



def random_eulerian(rng, n, m):
    """Edges of a random closed walk of m steps over n vertices (Eulerian by construction),
    in shuffled order."""
    walk = rng.integers(0, n, m)
    edges = np.column_stack((walk, np.roll(walk, -1)))
    return edges[rng.permutation(m)]


def check_trail(edges, walk, index, closed):
    """walk uses every input edge once (index maps it back), consecutive edges meet."""
    m = len(edges)
    assert walk.shape == (m, 2) and walk.dtype == np.int64
    assert sorted(index.tolist()) == list(range(m))
    np.testing.assert_array_equal(walk, np.asarray(edges)[index])
    assert np.all(walk[1:, 0] == walk[:-1, 1])
    if closed and m:
        assert walk[0, 0] == walk[-1, 1]


@pytest.mark.parametrize("n, m", [(1, 1), (2, 2), (3, 7), (10, 31), (10, 32), (50, 1000), (1000, 70_000)])
def test_random_circuits(rng, n, m):
    for _ in range(3):
        edges = random_eulerian(rng, n, m)
        walk, index = warpath.euler_circuit(edges, return_index=True)
        check_trail(edges, walk, index, closed=True)


def test_paths(rng):
    for _ in range(5):
        edges = random_eulerian(rng, 20, 200)
        cut = int(np.flatnonzero(edges[:, 0] != edges[:, 1])[0])
        open_edges = np.delete(edges, cut, axis=0)  # removing a non-loop leaves an open trail
        walk, index = warpath.euler_circuit(open_edges, path=True, return_index=True)
        check_trail(open_edges, walk, index, closed=False)
        assert walk[0, 0] == edges[cut, 1] and walk[-1, 1] == edges[cut, 0]
        with pytest.raises(warpath.NotEulerianError, match="no Euler circuit"):
            warpath.euler_circuit(open_edges)


def test_empty_and_small():
    assert warpath.euler_circuit(np.zeros((0, 2), dtype=int)).shape == (0, 2)
    assert warpath.euler_circuit([]).shape == (0, 2)
    np.testing.assert_array_equal(warpath.euler_circuit([[5, 5]]), [[5, 5]])
    np.testing.assert_array_equal(warpath.euler_circuit([[0, 1]], path=True), [[0, 1]])


def test_not_eulerian_messages():
    with pytest.raises(warpath.NotEulerianError, match="vertex 0 has in-degree 0 but out-degree 1"):
        warpath.euler_circuit([[0, 1]])
    with pytest.raises(ValueError, match="2 weakly connected components"):
        warpath.euler_circuit([[0, 1], [1, 0], [2, 3], [3, 2]])
    with pytest.raises(ValueError, match="no Euler path"):
        warpath.euler_circuit([[0, 1], [0, 2]], path=True)


def test_sparse_huge_vertex_ids_are_a_memory_error_not_a_crash():
    import os

    if os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") > 48 << 30:
        pytest.skip("the 64 GB the graph needs might fit here")
    with pytest.raises(MemoryError, match="vertices need"):
        warpath.euler_circuit([[0, 4_000_000_000], [4_000_000_000, 0]])


def test_bad_edges():
    for bad in (np.zeros((3, 3), int), np.zeros(4, int) + 1, [[0.5, 1.0]], [[-1, 0]], [[0, 2**32]]):
        with pytest.raises(ValueError):
            warpath.euler_circuit(bad)


def as_multiset(pairs):
    return Counter(map(tuple, pairs))


@pytest.mark.parametrize("seed", range(5))
def test_networkx_multidigraph(rng, seed):
    edges = random_eulerian(np.random.default_rng(seed), 12, 60)
    labels = [f"v{i}" for i in range(12)]
    g = nx.MultiDiGraph()
    g.add_nodes_from(sorted({labels[v] for v in edges.ravel()}))  # no isolated nodes
    g.add_edges_from((labels[u], labels[v]) for u, v in edges)
    assert nx.is_eulerian(g)
    got = warpath.euler_circuit(g)
    want = list(nx.eulerian_circuit(g))
    assert as_multiset(got) == as_multiset(want) == as_multiset(g.edges())
    assert all(a[1] == b[0] for a, b in zip(got, got[1:])) and got[0][0] == got[-1][1]
    keyed = warpath.euler_circuit(g, keys=True)
    assert sorted(keyed, key=str) == sorted(g.edges(keys=True), key=str)


def test_networkx_digraph_path_and_errors():
    g = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a"), ("a", "d")])
    assert nx.has_eulerian_path(g)
    got = warpath.euler_circuit(g, path=True)
    assert as_multiset(got) == as_multiset(g.edges()) and got[0][0] == "a" and got[-1][1] == "d"
    with pytest.raises(nx.NetworkXError):
        list(nx.eulerian_circuit(g))
    with pytest.raises(nx.NetworkXError, match="no Euler circuit"):
        warpath.euler_circuit(g)


def test_isolated_vertices_are_ignored_unlike_networkx():
    g = nx.DiGraph([(0, 1), (1, 0)])
    g.add_node(7)
    assert not nx.is_eulerian(g)
    assert as_multiset(warpath.euler_circuit(g)) == as_multiset(g.edges())


def undirected_multiset(pairs):
    return Counter(tuple(sorted(p, key=str)) for p in pairs)


def test_undirected_networkx_graph():
    g = nx.MultiGraph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2), (0, 1), (1, 0)])
    assert nx.is_eulerian(g)
    got = warpath.euler_circuit(g)
    assert undirected_multiset(got) == undirected_multiset(g.edges()) == undirected_multiset(nx.eulerian_circuit(g))
    assert all(a[1] == b[0] for a, b in zip(got, got[1:])) and got[0][0] == got[-1][1]
    keyed = warpath.euler_circuit(g, keys=True)
    assert sorted((min(u, v), max(u, v), k) for u, v, k in keyed) == sorted((min(u, v), max(u, v), k) for u, v, k in g.edges(keys=True))


def test_undirected_arrays():
    edges = np.array([[0, 1], [2, 1], [0, 2], [2, 3]])
    walk, index = warpath.euler_circuit(edges, path=True, directed=False, return_index=True)
    assert sorted(index.tolist()) == [0, 1, 2, 3]
    assert all(set(walk[i]) == set(edges[index[i]]) for i in range(4))
    assert np.all(walk[1:, 0] == walk[:-1, 1])
    with pytest.raises(warpath.NotEulerianError):
        warpath.euler_circuit(edges, directed=False)


def test_undirected_against_networkx(rng):
    for seed in range(5):
        g = nx.MultiGraph()
        walk = np.random.default_rng(seed).integers(0, 10, 40)
        g.add_edges_from(zip(walk.tolist(), np.roll(walk, -1).tolist()))
        g.remove_nodes_from(list(nx.isolates(g)))
        assert nx.is_eulerian(g)
        got = warpath.euler_circuit(g)
        assert undirected_multiset(got) == undirected_multiset(nx.eulerian_circuit(g))
        assert all(a[1] == b[0] for a, b in zip(got, got[1:])) and got[0][0] == got[-1][1]
        # one edge less: NetworkX has a path between the two odd ends, and so does warpath
        u, v = next(e for e in g.edges() if e[0] != e[1])
        g.remove_edge(u, v)
        if nx.is_connected(g):
            assert nx.has_eulerian_path(g)
            got = warpath.euler_circuit(g, path=True)
            assert undirected_multiset(got) == undirected_multiset(g.edges())
            assert {got[0][0], got[-1][1]} == {u, v}
            with pytest.raises(nx.NetworkXError, match="odd degree"):
                warpath.euler_circuit(g)


def test_undirected_simple_graph_and_errors():
    g = nx.cycle_graph(["a", "b", "c", "d"])
    got = warpath.euler_circuit(g)
    assert len(got) == 4 and undirected_multiset(got) == undirected_multiset(g.edges())
    with pytest.raises(warpath.NotEulerianError, match="odd degree"):
        warpath.euler_circuit([[0, 1], [1, 2]], directed=False)
    with pytest.raises(ValueError, match="connected"):
        warpath.euler_circuit([[0, 1], [1, 0], [2, 3], [3, 2]], directed=False)
    np.testing.assert_array_equal(warpath.euler_circuit([[3, 3]], directed=False), [[3, 3]])
