"""backend="cuda" against the CPU and the peers. Runs where a CUDA device is visible: a real
GPU, or the simulated driver (``cargo xtask sim``; ci.sh runs this file again under it with
``WARPATH_SIM=1``). Sizes stay small: the simulator runs kernels on the CPU. Without a device
every test is skipped, unless ``WARPATH_REQUIRE_GPU=1`` makes that a failure."""

import os

import numpy as np
import pytest
import scipy.optimize

import warpath
from warpath import KMeans, fhn

_INFO = warpath.info()
if not _INFO["cuda"]:
    if os.environ.get("WARPATH_REQUIRE_GPU") == "1":
        raise RuntimeError(f"WARPATH_REQUIRE_GPU=1 but no CUDA device: {_INFO['reason']}")
    pytest.skip(f"skipped: no CUDA device ({_INFO['reason']})", allow_module_level=True)

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint64, np.uint32]


def keys(rng, dtype, n):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = rng.standard_normal(n).astype(dt)
        if n:
            x[rng.random(n) < 0.05] = np.nan
            x[rng.random(n) < 0.05] = -np.inf
            x[rng.random(n) < 0.1] = x[0]
        return x
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 33, 1025, 4097])
def test_sort_argsort_unique(rng, dtype, n):
    x = keys(rng, dtype, n)
    np.testing.assert_array_equal(warpath.sort(x, backend="cuda"), np.sort(x))
    np.testing.assert_array_equal(warpath.argsort(x, backend="cuda"), warpath.argsort(x, backend="cpu"))
    got = warpath.unique(x, return_index=True, return_inverse=True, return_counts=True, backend="cuda")
    cpu = warpath.unique(x, return_index=True, return_inverse=True, return_counts=True, backend="cpu")
    for g, c in zip(got, cpu, strict=True):
        np.testing.assert_array_equal(g, c)


def test_rows_and_axes(rng):
    x = rng.integers(-50, 50, size=(3, 40))
    np.testing.assert_array_equal(warpath.sort(x, axis=0, backend="cuda"), np.sort(x, axis=0))


def test_auction_single_and_batch(rng):
    c = rng.integers(0, 100, (12, 12))
    r, k = warpath.linear_sum_assignment(c, solver="auction", backend="cuda")
    sr, sc = scipy.optimize.linear_sum_assignment(c)
    assert c[r, k].sum() == c[sr, sc].sum()
    stack = rng.integers(0, 50, (4, 6, 6))
    rows, cols = warpath.linear_sum_assignment_batch(stack, maximize=True, solver="auction", backend="cuda")
    for b in range(4):
        sr, sc = scipy.optimize.linear_sum_assignment(stack[b], maximize=True)
        assert stack[b][rows[b], cols[b]].sum() == stack[b][sr, sc].sum()


def test_kmeans(rng):
    centres = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0]])
    X = centres[rng.integers(0, 4, 400)] + rng.standard_normal((400, 3))
    init = X[:4].copy()
    gpu = KMeans(4, init=init, backend="cuda").fit(X)
    cpu = KMeans(4, init=init, backend="cpu").fit(X)
    assert gpu.backend_ == "cuda" and cpu.backend_ == "cpu"
    np.testing.assert_array_equal(gpu.labels_, cpu.labels_)
    np.testing.assert_allclose(gpu.cluster_centers_, cpu.cluster_centers_, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(gpu.predict(X), cpu.labels_)


def test_euler_circuit(rng):
    walk = rng.integers(0, 30, 300)
    edges = np.column_stack((walk, np.roll(walk, -1)))[rng.permutation(300)]
    got, index = warpath.euler_circuit(edges, return_index=True, backend="cuda")
    assert sorted(index.tolist()) == list(range(300))
    np.testing.assert_array_equal(got, edges[index])
    assert np.all(got[1:, 0] == got[:-1, 1]) and got[0, 0] == got[-1, 1]


def test_undirected_euler_circuit(rng):
    walk = rng.integers(0, 30, 300)
    edges = np.column_stack((walk, np.roll(walk, -1)))[rng.permutation(300)]
    got, index = warpath.euler_circuit(edges, directed=False, return_index=True, backend="cuda")
    assert sorted(index.tolist()) == list(range(300))
    assert all(sorted(got[i]) == sorted(edges[index[i]]) for i in range(300))
    assert np.all(got[1:, 0] == got[:-1, 1]) and got[0, 0] == got[-1, 1]


def test_permutations_and_de_bruijn():
    np.testing.assert_array_equal(warpath.permutations(5, backend="cuda"), warpath.permutations(5, backend="cpu"))
    np.testing.assert_array_equal(warpath.permutations(7, start=100, count=333, backend="cuda"), warpath.permutations(7, start=100, count=333, backend="cpu"))
    seq = warpath.de_bruijn_sequence(3, 4, construction="euler", backend="cuda").tolist()
    ext = seq + seq[:3]
    assert len({tuple(ext[i : i + 4]) for i in range(len(seq))}) == 81 == len(seq)


def test_fhn_explicit():
    gpu = fhn.simulate("gaussian", n=101, t_end=2.0, snapshots=2, backend="cuda")
    cpu = fhn.simulate("gaussian", n=101, t_end=2.0, snapshots=2, backend="cpu")
    assert gpu.backend == "cuda"
    np.testing.assert_allclose(gpu.v, cpu.v, rtol=1e-9, atol=1e-12)


def test_assemble_on_the_gpu_equals_the_cpu(tmp_path, rng):
    # a genome with errors in its reads, and a circular piece beside it (a cycle to cut)
    genome = "".join(rng.choice(list("ACGT"), 1500))
    circle = "".join(rng.choice(list("ACGT"), 200))
    reads = [genome[s:s + 80] for s in rng.integers(0, len(genome) - 80, 150)]
    reads = ["".join(c if rng.random() > 0.01 else "A" for c in r) for r in reads]
    reads += [circle + circle[:20]] * 2
    p = tmp_path / "r.fa"
    p.write_text("".join(f">r{i}\n{r}\n" for i, r in enumerate(reads)))
    cpu = warpath.assemble(p, 21, min_count=1, backend="cpu")
    gpu = warpath.assemble(p, 21, min_count=1, backend="cuda")
    assert gpu.stats["compaction_backend"] == "cuda" and cpu.stats["compaction_backend"] == "cpu"
    assert gpu.sequences == cpu.sequences
    np.testing.assert_array_equal(gpu.links, cpu.links)
    assert sum(gpu.circular) >= 1
