#!/usr/bin/env python3
"""``warpath.sort`` / ``argsort`` / ``unique`` against numpy's, in one process, on the same arrays.

For every dtype and size the contenders alternate (warpath, numpy, warpath, numpy, ...) on
the same input array; each call sorts a fresh copy (both functions return a new array, so
the copy is part of what is timed, as a user calls them), after ``--warmup`` untimed calls of
each (default 1), in a process that first touches and frees ``--prefault-gb`` GiB (default 8:
memory a virtual machine never used is slow to touch the first time). Prints the best and the median
wall time of each and the ratio numpy / warpath of both (above 1: warpath is faster).

Inputs: integers uniform over the whole dtype; floats standard normal with 1% NaN (both
signs) and 1% signed zeros, so numpy's NaN-last and -0.0 rules are exercised.

Usage::

    RAYON_NUM_THREADS=2 python crates/warpath-py/bench/sort_vs_numpy.py \\
        [--sizes 1e5,1e6,1e7,1e8] [--dtypes u32,u64,i64,f32,f64] [--repeat 7] \\
        [--only sort,argsort,unique] [--big-dtypes u32,f64] [--argsort-dtypes u32,i64,f64] [--markdown]

``--big-dtypes`` limits 10^8 to those dtypes (memory and time). numpy sorts on one thread;
warpath on ``RAYON_NUM_THREADS`` threads (default: all cores). Each result is checked
against numpy's (bitwise for sort, exactly for argsort and unique).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import warpath

DTYPES = {"u32": np.uint32, "u64": np.uint64, "i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64}


def make(dtype, n, rng):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    a = rng.standard_normal(n).astype(dt)
    k = max(n // 100, 1)
    a[rng.integers(0, n, k)] = np.nan
    a[rng.integers(0, n, k)] = -np.nan
    a[rng.integers(0, n, k)] = 0.0
    a[rng.integers(0, n, k)] = -0.0
    return a


def timed(contenders, repeat, warmup=1):
    wall = {name: [] for name, _ in contenders}
    out = {}
    # untimed calls first: the first calls of a size in a process pay for fresh memory mappings
    # (huge-page faults) that later calls reuse; both contenders get the same warm-up
    for _ in range(warmup):
        for _, fn in contenders:
            fn()
    for _ in range(repeat):
        for name, fn in contenders:
            t = time.perf_counter()
            out[name] = fn()
            wall[name].append(time.perf_counter() - t)
    return {name: (min(w), statistics.median(w)) for name, w in wall.items()}, out


def same(a, b):
    if isinstance(a, tuple):
        return all(same(x, y) for x, y in zip(a, b))
    if a.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1e5,1e6,1e7,1e8")
    ap.add_argument("--dtypes", default="u32,u64,i64,f32,f64")
    ap.add_argument("--big-dtypes", default="u32,f64", help="dtypes timed at sizes >= 1e8")
    ap.add_argument("--only", default="sort,argsort,unique")
    ap.add_argument("--argsort-sizes", default="1e7", help="sizes for argsort and unique")
    ap.add_argument("--argsort-dtypes", default=None, help="dtypes for argsort and unique (default: --dtypes)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=1, help="untimed calls of each contender first")
    ap.add_argument("--prefault-gb", type=float, default=8.0,
                    help="GiB of memory touched and freed before timing (0: none)")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    arg_sizes = [int(float(s)) for s in args.argsort_sizes.split(",")]
    if args.prefault_gb > 0:
        # On a virtual machine the host backs guest memory lazily: the first touch of memory
        # the machine never used costs several times a normal page fault (10^8 u32, one
        # thread: 1.1 s instead of 0.31 s for the first call), and it falls on whichever
        # contender allocates first. Touching (and freeing) a large buffer first puts both on
        # the same footing.
        b = np.ones(int(args.prefault_gb * 2**30), dtype=np.uint8)
        del b
    dtypes = args.dtypes.split(",")
    arg_dtypes = (args.argsort_dtypes or args.dtypes).split(",")
    big = set(args.big_dtypes.split(","))
    only = set(args.only.split(","))
    threads = os.environ.get("RAYON_NUM_THREADS", str(os.cpu_count()))
    print(f"numpy {np.__version__}, warpath threads {threads}, os.cpu_count() {os.cpu_count()}, best/median of {args.repeat}")
    rows = []
    rng = np.random.default_rng(7)
    cases = []
    for op in ["sort", "argsort", "unique"]:
        if op not in only:
            continue
        for n in sizes if op == "sort" else arg_sizes:
            for d in dtypes if op == "sort" else arg_dtypes:
                if n >= 10**8 and d not in big:
                    continue
                cases.append((op, n, d))
    for op, n, d in cases:
        a = make(DTYPES[d], n, rng)
        if op == "sort":
            c = [("warpath", lambda: warpath.sort(a)), ("numpy", lambda: np.sort(a))]
        elif op == "argsort":
            c = [("warpath", lambda: warpath.argsort(a)), ("numpy", lambda: np.argsort(a, kind="stable"))]
        else:
            c = [("warpath", lambda: warpath.unique(a)), ("numpy", lambda: np.unique(a))]
        repeat = args.repeat if n < 10**8 else max(3, args.repeat // 2)
        t, out = timed(c, repeat, args.warmup)
        ok = same(out["warpath"], out["numpy"])
        (wb, wm), (nb, nm) = t["warpath"], t["numpy"]
        row = (op, n, d, wb, wm, nb, nm, nb / wb, nm / wm, ok)
        rows.append(row)
        print(
            f"{op:8} n={n:>10} {d:4}  warpath best {wb*1e3:9.3f} ms median {wm*1e3:9.3f} ms | "
            f"numpy best {nb*1e3:9.3f} ms median {nm*1e3:9.3f} ms | numpy/warpath best {nb/wb:5.2f} median {nm/wm:5.2f}"
            + ("" if ok else "  RESULT DIFFERS FROM NUMPY"),
            flush=True,
        )
        del a, out
    if args.markdown:
        print()
        print(f"| op | n | dtype | warpath best (ms) | warpath median | numpy best (ms) | numpy median | numpy / warpath (best) | (median) |")
        print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
        for op, n, d, wb, wm, nb, nm, rb, rm, ok in rows:
            print(f"| {op} | {n:.0e} | {d} | {wb*1e3:.3f} | {wm*1e3:.3f} | {nb*1e3:.3f} | {nm*1e3:.3f} | {rb:.2f} | {rm:.2f} |")
    if not all(r[-1] for r in rows):
        raise SystemExit("some results differ from numpy's")


if __name__ == "__main__":
    main()
