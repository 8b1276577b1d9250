#!/usr/bin/env python3
"""warpath's linear assignment against scipy, lap and lapjv on the matrices users bring
(issue 35): dense matrices of uniform floats, tied integers and Euclidean distances, sparse
matrices, and batches of small problems. Prints the tables of BENCHMARKS.md.

Run it through ``lap_peers.sh``, which builds a virtual environment with the peers from PyPI
(scipy, ``lap`` from gatagat, ``lapjv`` from src-d) and warpath itself
(``pip install ./crates/warpath-py``). Directly::

    python lap_peers.py                      # every table, the issue's sizes
    python lap_peers.py --dense --sizes 1000,4000 --reps 3
    python lap_peers.py --sparse --sparse-sizes 100000
    python lap_peers.py --batch

Method: one process; each matrix is generated once (seeded) and handed to every solver in
the dtype a user would have (int64 for integers, float64 otherwise); runs are interleaved
(warpath, scipy, lap, lapjv, warpath, ...) so that every solver sees the same machine load;
the best and the median of ``--reps`` runs are printed, with the ratio of the fastest peer's
best to warpath's best (above 1: warpath is faster). Every solver's total cost is checked
against scipy's. A peer whose previous size took more than ``--budget`` seconds once is
skipped at the next size (its time there is estimated from n^3 and marked "skipped"). The
load average is printed before and after each table.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time

import numpy as np


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1e-5:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


# --------------------------------------------------------------------------- solvers


def dense_solvers():
    """(name, solve(matrix) -> (row_ind, col_ind)) for every solver that is installed."""
    import warpath
    from scipy.optimize import linear_sum_assignment

    out = [("warpath", lambda c: warpath.linear_sum_assignment(c)),
           ("scipy", lambda c: linear_sum_assignment(c))]
    try:
        import lap

        def run_lap(c):
            _, x, _ = lap.lapjv(c, extend_cost=c.shape[0] != c.shape[1])
            rows = np.flatnonzero(x >= 0)
            return rows, x[rows]

        out.append(("lap", run_lap))
    except ImportError:
        print("(lap is not installed: pip install lap)")
    try:
        import lapjv

        def run_lapjv(c):
            x = lapjv.lapjv(c)[0]
            return np.arange(len(x)), x

        out.append(("lapjv", run_lapjv))
    except ImportError:
        print("(lapjv is not installed: pip install lapjv)")
    return out


def dense_matrix(kind: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        return rng.random((n, n))
    if kind == "int100":
        return rng.integers(0, 100, (n, n))
    if kind == "int1e6":
        return rng.integers(0, 10**6, (n, n))
    if kind == "euclid":
        a, b = rng.random((n, 2)), rng.random((n, 2))
        return np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
    raise ValueError(kind)


KIND_LABEL = {
    "uniform": "uniform [0, 1)",
    "int100": "integers in [0, 100)",
    "int1e6": "integers in [0, 10^6)",
    "euclid": "Euclidean distances of random 2-D points",
}


def timed(solve, c, reps, budget):
    """Best and median of up to `reps` runs (one run when a run exceeds `budget`), the cost,
    and every run's seconds."""
    runs, cost = [], None
    for _ in range(reps):
        gc.collect()
        t = time.perf_counter()
        r, k = solve(c)
        runs.append(time.perf_counter() - t)
        cost = c[r, k].sum()
        if runs[-1] > budget:
            break
    return min(runs), statistics.median(runs), cost


def interleaved(solvers, c, reps, budget, skip):
    """Runs the solvers in turn, `reps` rounds; returns {name: (best, median, cost)}."""
    runs = {name: [] for name, _ in solvers}
    costs = {}
    for _ in range(reps):
        for name, solve in solvers:
            if name in skip or (runs[name] and runs[name][-1] > budget):
                continue
            gc.collect()
            t = time.perf_counter()
            r, k = solve(c)
            runs[name].append(time.perf_counter() - t)
            costs[name] = c[r, k].sum()
    return {n: (min(v), statistics.median(v), costs[n]) for n, v in runs.items() if v}


def dense_table(sizes, kinds, reps, budget, seed):
    solvers = dense_solvers()
    names = [n for n, _ in solvers]
    print(f"\n## Dense, one process, best of {reps} (median in brackets); load before: {load()}")
    print("\n| n | costs | " + " | ".join(names) + " | fastest peer / warpath |")
    print("|---|---|" + "---|" * len(names) + "---|")
    slow: dict[tuple[str, str], float] = {}
    for kind in kinds:
        for n in sizes:
            c = dense_matrix(kind, n, seed)
            skip = {name for name in names if slow.get((kind, name), 0) * (n / slow.get(("n", kind), n)) ** 3 > 60}
            res = interleaved(solvers, c, reps, budget, skip)
            ref = res["scipy"][2] if "scipy" in res else None
            cells = []
            for name in names:
                if name not in res:
                    est = slow[(kind, name)] * (n / slow[("n", kind)]) ** 3
                    cells.append(f"skipped (~{fmt(est)})")
                    continue
                best, med, cost = res[name]
                ok = ref is None or np.isclose(cost, ref, rtol=1e-12, atol=1e-9)
                cells.append(f"{fmt(best)} ({fmt(med)})" + ("" if ok else f" COST {cost} != {ref}"))
                slow[(kind, name)] = best
            slow[("n", kind)] = n
            peers = [res[p][0] for p in names if p != "warpath" and p in res]
            ratio = f"{min(peers) / res['warpath'][0]:.2f}x" if peers else "-"
            print(f"| {n:,} | {KIND_LABEL[kind]} | " + " | ".join(cells) + f" | {ratio} |", flush=True)
            del c
    print(f"\nload after: {load()}")


# --------------------------------------------------------------------------- sparse


def sparse_matrix(n: int, per_row: int, seed: int):
    """n x n CSR: `per_row` random columns per row with costs uniform in [1, 100), plus a
    feasible diagonal (so a full matching exists); duplicates merged by scipy (summed)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(0, n, n * per_row)
    vals = rng.uniform(1, 100, n * per_row)
    rows = np.concatenate([rows, np.arange(n)])
    cols = np.concatenate([cols, np.arange(n)])
    vals = np.concatenate([vals, rng.uniform(1, 100, n)])
    m = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    m.sum_duplicates()
    return m


def sparse_table(sizes, per_row, reps, seed):
    import warpath
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    print(f"\n## Sparse, {per_row} random entries per row plus the diagonal, best of {reps}; load before: {load()}")
    print("\n| n | entries | warpath | scipy min_weight_full_bipartite_matching | scipy / warpath | same cost |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        m = sparse_matrix(n, per_row, seed)
        solvers = [("warpath", warpath.min_weight_full_bipartite_matching),
                   ("scipy", min_weight_full_bipartite_matching)]
        runs = {"warpath": [], "scipy": []}
        costs = {}
        for _ in range(reps):
            for name, f in solvers:
                if name == "scipy" and runs["scipy"] and runs["scipy"][-1] > 120:
                    continue
                gc.collect()
                t = time.perf_counter()
                r, k = f(m)
                runs[name].append(time.perf_counter() - t)
                costs[name] = float(np.asarray(m[r, k]).sum())
        w, s = min(runs["warpath"]), min(runs["scipy"])
        same = np.isclose(costs["warpath"], costs["scipy"], rtol=1e-12)
        print(f"| {n:,} | {m.nnz:,} | {fmt(w)} | {fmt(s)} | {s / w:.2f}x | {same} |", flush=True)
    print(f"\nload after: {load()}")


# --------------------------------------------------------------------------- batches


def batch_table(shapes, reps, seed):
    import warpath
    from scipy.optimize import linear_sum_assignment

    try:
        import lap
    except ImportError:
        lap = None
    print(f"\n## Batches, best of {reps}; load before: {load()}")
    print("\n| problems | shape | dtype | warpath batch | per problem | scipy loop | lap loop | scipy / warpath | lap / warpath |")
    print("|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(seed)
    for b, r, c, dtype in shapes:
        if dtype == "int":
            costs = rng.integers(0, 100, (b, r, c))
        else:
            costs = rng.random((b, r, c))

        def wp():
            return warpath.linear_sum_assignment_batch(costs)

        def sp_loop():
            return [linear_sum_assignment(m) for m in costs]

        def lap_loop():
            return [lap.lapjv(m, extend_cost=r != c) for m in costs]

        fns = [("warpath", wp), ("scipy", sp_loop)] + ([("lap", lap_loop)] if lap else [])
        runs = {n: [] for n, _ in fns}
        for _ in range(reps):
            for name, f in fns:
                gc.collect()
                t = time.perf_counter()
                f()
                runs[name].append(time.perf_counter() - t)
        # same costs as scipy
        rows, cols = wp()
        mine = costs[np.arange(b)[:, None], rows, cols].sum(axis=1)
        theirs = np.array([m[linear_sum_assignment(m)].sum() for m in costs])
        assert np.allclose(mine, theirs), "batch costs differ from scipy's"
        w = min(runs["warpath"])
        s = min(runs["scipy"])
        lp = min(runs["lap"]) if "lap" in runs else None
        print(f"| {b:,} | {r} x {c} | {dtype} | {fmt(w)} | {fmt(w / b)} | {fmt(s)} | {fmt(lp)} | {s / w:.2f}x | "
              + (f"{lp / w:.2f}x" if lp else "-") + " |", flush=True)
    print(f"\nload after: {load()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dense", action="store_true")
    ap.add_argument("--sparse", action="store_true")
    ap.add_argument("--batch", action="store_true")
    ap.add_argument("--sizes", default="1000,4000,8000", help="dense sizes")
    ap.add_argument("--kinds", default="uniform,int100,int1e6,euclid")
    ap.add_argument("--sparse-sizes", default="100000")
    ap.add_argument("--per-row", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--budget", type=float, default=20.0, help="seconds: one run only above this")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    everything = not (args.dense or args.sparse or args.batch)

    import scipy
    import warpath

    from importlib import metadata

    versions = [f"warpath {warpath.__version__}", f"scipy {scipy.__version__}", f"numpy {np.__version__}"]
    for dist in ("lap", "lapx", "lapjv"):
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            pass
    print(f"# {cpu_name()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; " + ", ".join(versions))
    if args.dense or everything:
        dense_table([int(x) for x in args.sizes.split(",")], args.kinds.split(","), args.reps, args.budget, args.seed)
    if args.sparse or everything:
        sparse_table([int(x) for x in args.sparse_sizes.split(",")], args.per_row, args.reps, args.seed)
    if args.batch or everything:
        batch_table([(10_000, 30, 30, "float"), (10_000, 30, 30, "int"), (1_000, 200, 200, "float"),
                     (1_000, 200, 200, "int"), (10_000, 5, 5, "float"), (100, 500, 500, "float"),
                     (2_000, 30, 60, "float"), (1_000, 200, 100, "int")], args.reps, args.seed)


if __name__ == "__main__":
    sys.exit(main())
