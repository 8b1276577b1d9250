#!/usr/bin/env python3
"""warpath against its Python peers on the issue's targets, in one process, same inputs.

Each measurement alternates the contenders (warpath, peer, warpath, peer, ...) and reports
the median wall time of ``--repeat`` turns, the median process CPU time (all threads), and
the ratio of the wall medians (peer / warpath: above 1 means warpath is faster). Targets:

- ``linear_sum_assignment`` on 2000 x 2000 uniform costs: at least 2x faster than scipy's;
- ``KMeans`` time per iteration on 10^6 x 16, k = 64: at most scikit-learn's, same threads;
- ``sort`` / ``unique`` of 10^7 values: at least as fast as numpy's;
- call overhead on a 3 x 3 assignment problem: under 20 us.

Usage::

    python crates/warpath-py/bench/compare.py [--repeat 5] [--quick] [--only lsa,kmeans,sort,overhead]

Needs numpy, scipy, scikit-learn (and threadpoolctl, which scikit-learn installs). warpath
uses ``RAYON_NUM_THREADS`` threads (default: all cores); scikit-learn and numpy are limited
to the same number with threadpoolctl.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


class Timing(float):
    """A median wall time in seconds that also carries the median process CPU time (all
    threads), which says more than the wall time on a machine shared with other work."""

    cpu: float

    def __new__(cls, wall, cpu):
        t = super().__new__(cls, wall)
        t.cpu = cpu
        return t

    def __truediv__(self, k):
        return Timing(float(self) / k, self.cpu / k)


def alternate(contenders, repeat):
    """Times every contender ``repeat`` times, alternating; returns the median wall and CPU
    times of each (as ``Timing``)."""
    wall = {name: [] for name, _ in contenders}
    cpu = {name: [] for name, _ in contenders}
    for _ in range(repeat):
        for name, fn in contenders:
            c, t = time.process_time(), time.perf_counter()
            fn()
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    return {name: Timing(statistics.median(wall[name]), statistics.median(cpu[name])) for name in wall}


def report(rows, what, ours, theirs, peer, unit="s", scale=1.0, target=None):
    ratio = theirs / ours
    rows.append((what, ours * scale, theirs * scale, peer, ratio, target))
    tgt = f"  (target: {target})" if target else ""
    print(
        f"{what:<44} warpath {ours * scale:9.4f} {unit} (cpu {ours.cpu * scale:9.4f})   "
        f"{peer} {theirs * scale:9.4f} {unit} (cpu {theirs.cpu * scale:9.4f})   ratio {ratio:5.2f}x{tgt}",
        flush=True,
    )


def bench_lsa(rows, repeat, quick):
    import scipy.optimize

    import warpath

    n = 500 if quick else 2000
    cost = np.random.default_rng(1).random((n, n))
    a = warpath.linear_sum_assignment(cost)
    b = scipy.optimize.linear_sum_assignment(cost)
    assert np.isclose(cost[a].sum(), cost[b].sum()), "different optimal costs"
    m = alternate(
        [("warpath", lambda: warpath.linear_sum_assignment(cost)), ("scipy", lambda: scipy.optimize.linear_sum_assignment(cost))],
        repeat,
    )
    report(rows, f"linear_sum_assignment {n}x{n} uniform", m["warpath"], m["scipy"], "scipy", target=">= 2x")


def bench_overhead(rows, repeat, quick):
    import scipy.optimize

    import warpath

    cost = np.array([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]])
    calls = 2000 if quick else 20000

    def loop(f):
        def run():
            for _ in range(calls):
                f(cost)

        return run

    m = alternate([("warpath", loop(warpath.linear_sum_assignment)), ("scipy", loop(scipy.optimize.linear_sum_assignment))], repeat)
    report(rows, "linear_sum_assignment 3x3, per call", m["warpath"] / calls, m["scipy"] / calls, "scipy", unit="us", scale=1e6, target="< 20 us")


def bench_kmeans(rows, repeat, quick, threads):
    from sklearn.cluster import KMeans as SkKMeans
    from threadpoolctl import threadpool_limits

    from warpath import KMeans

    n, d, k, iters = (100_000, 16, 64, 5) if quick else (1_000_000, 16, 64, 10)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((n, d))
    init = X[rng.choice(n, k, replace=False)].copy()

    per_iter = {}

    def ours():
        km = KMeans(k, init=init, max_iter=iters, tol=0.0, backend="cpu").fit(X)
        per_iter.setdefault("warpath", []).append(km.n_iter_)

    def theirs():
        km = SkKMeans(k, init=init, n_init=1, max_iter=iters, tol=0.0, algorithm="lloyd").fit(X)
        per_iter.setdefault("sklearn", []).append(km.n_iter_)

    with threadpool_limits(limits=threads):
        m = alternate([("warpath", ours), ("sklearn", theirs)], max(3, repeat // 2))
    it_ours, it_theirs = statistics.median(per_iter["warpath"]), statistics.median(per_iter["sklearn"])
    assert it_ours == it_theirs == iters, "tol=0 runs every iteration"
    report(
        rows, f"KMeans {n}x{d} k={k}, per iteration ({threads} thr)", m["warpath"] / it_ours, m["sklearn"] / it_theirs,
        "sklearn", unit="ms", scale=1e3, target=">= 1x",
    )


def bench_sort(rows, repeat, quick, threads):
    from threadpoolctl import threadpool_limits

    import warpath

    n = 1_000_000 if quick else 10_000_000
    rng = np.random.default_rng(3)
    inputs = {
        "float64": rng.random(n),
        "float32": rng.random(n, dtype=np.float32),
        "int64": rng.integers(-(2**62), 2**62, n),
        "uint32": rng.integers(0, 2**32, n, dtype=np.uint32),
    }
    with threadpool_limits(limits=threads):
        for name, x in inputs.items():
            assert np.array_equal(warpath.sort(x), np.sort(x))
            m = alternate([("warpath", lambda: warpath.sort(x)), ("numpy", lambda: np.sort(x))], repeat)
            report(rows, f"sort {n:.0e} {name}", m["warpath"], m["numpy"], "numpy", target=">= 1x")
        dup = {
            "float64": inputs["float64"],
            "float32 (many repeats)": np.round(inputs["float32"], 3),
            "int64 (1e6 distinct)": rng.integers(0, 1_000_000, n),
        }
        for name, x in dup.items():
            assert np.array_equal(warpath.unique(x), np.unique(x))
            m = alternate([("warpath", lambda: warpath.unique(x)), ("numpy", lambda: np.unique(x))], repeat)
            report(rows, f"unique {n:.0e} {name}", m["warpath"], m["numpy"], "numpy", target=">= 1x")
        x = inputs["float64"]
        m = alternate(
            [("warpath", lambda: warpath.unique(x, return_inverse=True, return_counts=True)), ("numpy", lambda: np.unique(x, return_inverse=True, return_counts=True))],
            max(3, repeat // 2),
        )
        report(rows, f"unique {n:.0e} float64 +inverse +counts", m["warpath"], m["numpy"], "numpy")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=5, help="turns per contender (median reported)")
    p.add_argument("--quick", action="store_true", help="small inputs (a smoke test, not the targets)")
    p.add_argument("--only", default="overhead,lsa,sort,kmeans", help="comma-separated subset")
    args = p.parse_args()
    import warpath

    threads = warpath.info()["threads"]
    print(f"warpath {warpath.__version__}, numpy {np.__version__}, {threads} threads (RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS', 'unset')}), median of {args.repeat} alternating turns")
    rows = []
    only = set(args.only.split(","))
    if "overhead" in only:
        bench_overhead(rows, args.repeat, args.quick)
    if "lsa" in only:
        bench_lsa(rows, args.repeat, args.quick)
    if "sort" in only:
        bench_sort(rows, args.repeat, args.quick, threads)
    if "kmeans" in only:
        bench_kmeans(rows, args.repeat, args.quick, threads)


if __name__ == "__main__":
    main()
