#!/usr/bin/env python3
"""k-means on the everyday shapes: ``warpath.KMeans`` against scikit-learn's ``KMeans`` on a
grid of tabular shapes, whole ``fit`` calls from Python, in one process, the same data.

Every cell of the grid ``n x d x k`` (``k < n / 10``) x data (``blobs``, ``uniform``, and
scikit-learn's bundled data sets with ``--data sklearn``) x dtype (float64, float32) is fitted in
three modes:

- ``explicit``: the same ``k`` rows of the data as initial centres for both, ``n_init=1``, the
  defaults otherwise (``tol=1e-4``, ``max_iter=300``): time (best of ``--repeat`` or more rounds for short fits, the
  contenders alternating, each fit after a pause of ``--pause`` seconds so that the other
  contender's spinning threads are asleep), iterations, and the relative inertia difference
  ``(warpath - sklearn) / sklearn`` (float64 fits follow the same trajectory; float32 ones may
  part after a near-tie, since scikit-learn's float32 distances are not the exact ones);
- ``default``: ``KMeans(n_clusters=k, random_state=s)`` for ``--seeds`` seeds (k-means++, one
  run): the summed time of the seeds, and the mean inertia's relative difference. warpath
  draws scikit-learn's random numbers from the same ``random_state``, so both start from the
  same centres: float64 fits end at the same inertia (up to an exact tie of a draw or a
  distance, as on integer-valued data), float32 ones may part after a near-tie (their
  distances round differently), and then their iteration counts differ too. The line also
  gives the summed iterations and the ratio of the times per iteration (``per-iter``), and
  the standard error of the inertia difference (``se``, from both sides' spread over the
  seeds): where the fits parted, a difference within two standard errors is the draw, not the
  algorithm;
- ``ninit10``: as ``default`` with ``n_init=10``.

Ratios are ``sklearn time / warpath time`` (above 1: warpath is faster). With ``--algorithms``
every warpath algorithm (``lloyd``, ``hamerly``, ``yinyang``, ``elkan``, ``auto``) is timed
from the explicit start too, and scikit-learn's ``elkan``: it prints how far ``auto`` is from
the fastest of them and how warpath's ``elkan`` compares with scikit-learn's.

Data: ``blobs`` is ``make_blobs(n, d, centers=k, random_state=seed)``; ``uniform`` is
``U[0, 1)^d`` (no cluster structure: many iterations, the bounds prune little); ``sklearn``
runs iris, wine, breast_cancer, digits and diabetes (bundled with scikit-learn, no download)
at the grid's ``k`` values below ``n / 10``.

Threads: ``RAYON_NUM_THREADS`` for warpath (set to ``--threads`` before importing it), and
threadpoolctl for scikit-learn's OpenMP and BLAS. The header names the CPU, the versions, the
BLAS scikit-learn runs and whether AVX-512 is on (``--no-avx512`` re-executes the script with
``WARPATH_DISABLE_AVX512=1``, numpy's ``NPY_DISABLE_CPU_FEATURES`` for its AVX-512 features,
and ``OPENBLAS_CORETYPE=Haswell``). Otherwise OpenBLAS picks its kernels for the CPU (the
peer at its best): an ``OPENBLAS_CORETYPE`` inherited from the environment is dropped unless
``--openblas-coretype`` names one (some machine images set ``Haswell`` for every process,
which on a Zen 5 made scikit-learn's float64 steps up to 1.7x slower than its own choice,
``SkylakeX``). The header says which kernels ran.

Usage::

    python crates/warpath-py/bench/kmeans_grid.py [--n 1e3,1e4,1e5] [--d 2,4,8,16,32,64,128]
        [--k 3,8,16,64,256] [--data blobs,uniform,sklearn] [--dtype f64,f32]
        [--modes explicit,default,ninit10] [--repeat 3] [--seeds 5] [--threads 2]
        [--budget 60] [--algorithms] [--no-avx512] [--csv out.csv]

``--budget`` skips (and says so) a cell whose first scikit-learn fit took longer than that
many seconds in its mode, so the whole grid fits in an afternoon; the default grid is
``n <= 10^5``. The last lines summarise: the smallest ratio per mode and dtype, the cells
below 1.5x, and the largest inertia differences.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import subprocess
import sys
import time

AVX512_NUMPY = "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
        return (
            f"{fields.get('Model name', '?').strip()}, family {fields.get('CPU family', '?').strip()}, "
            f"model {fields.get('Model', '?').strip()}"
        )
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown CPU"


def floats(s):
    return [int(float(v)) for v in s.split(",") if v]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", default="1e3,1e4,1e5")
    p.add_argument("--d", default="2,4,8,16,32,64,128")
    p.add_argument("--k", default="3,8,16,64,256")
    p.add_argument("--data", default="blobs,uniform,sklearn")
    p.add_argument("--dtype", default="f64,f32")
    p.add_argument("--modes", default="explicit,default,ninit10")
    p.add_argument("--repeat", type=int, default=3, help="best of at least this many fits per contender (explicit mode; more for fits under 30 ms)")
    p.add_argument("--seeds", type=int, default=5, help="seeds of the default and ninit10 modes")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--budget", type=float, default=60.0, help="skip a cell whose first scikit-learn fit took longer (seconds)")
    p.add_argument("--pause", type=float, default=0.05, help="seconds of rest before every timed fit, so that the other contender's spinning threads have gone to sleep (default 0.05)")
    p.add_argument("--algorithms", action="store_true", help="also time every warpath algorithm and scikit-learn's elkan")
    p.add_argument("--no-avx512", action="store_true", help="AVX-512 off for warpath, numpy and OpenBLAS")
    p.add_argument(
        "--openblas-coretype",
        metavar="NAME",
        help="OpenBLAS kernels for scikit-learn (default: OpenBLAS's choice for the CPU; Haswell with --no-avx512)",
    )
    p.add_argument("--csv", help="also write every cell to this CSV file")
    args = p.parse_args()
    # numpy's names are accepted too; anything else is an error, not a silent float64.
    names = {"f32": "f32", "float32": "f32", "f64": "f64", "float64": "f64"}
    try:
        args.dtype = ",".join(names[t] for t in args.dtype.split(","))
    except KeyError as e:
        p.error(f"--dtype: unknown type {e.args[0]!r} (f32, f64, float32 or float64)")
    return args


def rounds_for(repeat, first_s, spend_s=0.1, most=15):
    """Rounds per contender: at least ``repeat``, more for short fits (up to ``most``, about
    ``spend_s`` seconds each), since the best of three millisecond calls still varies by 2x on
    a 2-vCPU virtual machine whose threads wake slowly."""
    return max(repeat, min(most, int(spend_s / max(first_s, 1e-6))))


def setup_env(args):
    """Sets the thread and ISA variables before numpy and warpath are imported (re-executing
    the interpreter when numpy's dispatch must change)."""
    want = {"RAYON_NUM_THREADS": str(args.threads)}
    if args.no_avx512:
        want |= {"WARPATH_DISABLE_AVX512": "1", "NPY_DISABLE_CPU_FEATURES": AVX512_NUMPY, "OPENBLAS_CORETYPE": "Haswell"}
    if args.openblas_coretype:
        want["OPENBLAS_CORETYPE"] = args.openblas_coretype
    # OpenBLAS's own choice unless asked otherwise: an inherited core type goes
    drop = "OPENBLAS_CORETYPE" not in want and "OPENBLAS_CORETYPE" in os.environ
    if drop or any(os.environ.get(k) != v for k, v in want.items()):
        if drop:
            print(f"# dropped OPENBLAS_CORETYPE={os.environ.pop('OPENBLAS_CORETYPE')} from the environment", flush=True)
        os.environ.update(want)
        os.execv(sys.executable, [sys.executable, *sys.argv])


def main():
    args = parse_args()
    setup_env(args)
    import numpy as np
    import sklearn
    from sklearn.cluster import KMeans as SkKMeans
    from sklearn import datasets
    from threadpoolctl import threadpool_info, threadpool_limits

    import warpath

    threadpool_limits(args.threads)
    blas = [f"{i.get('internal_api')} {i.get('version')} {i.get('architecture', '')}".strip() for i in threadpool_info() if i.get("user_api") == "blas"]
    print(f"# CPU: {cpu_model()}")
    print(
        f"# numpy {np.__version__}, scikit-learn {sklearn.__version__} (BLAS: {'; '.join(blas) or '?'}), "
        f"warpath threads {os.environ['RAYON_NUM_THREADS']}, scikit-learn threads {args.threads}, "
        f"AVX-512 {'off' if args.no_avx512 else 'on'}"
    )
    print("# ratio = scikit-learn time / warpath time (above 1: warpath faster); dinertia = (warpath - sklearn) / sklearn")

    rows = []
    modes = args.modes.split(",")

    def cells():
        for kind in args.data.split(","):
            if kind == "sklearn":
                for name, loader in [("iris", datasets.load_iris), ("wine", datasets.load_wine), ("breast_cancer", datasets.load_breast_cancer), ("diabetes", datasets.load_diabetes), ("digits", datasets.load_digits)]:
                    X = loader().data
                    for k in floats(args.k):
                        if k < X.shape[0] / 10:
                            yield name, X, k
                continue
            for n in floats(args.n):
                for d in floats(args.d):
                    for k in floats(args.k):
                        if k >= n / 10:
                            continue
                        if kind == "blobs":
                            X = datasets.make_blobs(n, d, centers=k, random_state=0)[0]
                        elif kind == "uniform":
                            X = np.random.default_rng(0).random((n, d))
                        else:
                            raise SystemExit(f"unknown data {kind!r}")
                        yield kind, X, k

    def fit_time(make, X):
        # scikit-learn's OpenMP threads spin for a while after its fit, and on a machine with
        # few cores they would take the next fit's cores: a pause before every fit lets the
        # previous contender's threads go to sleep, so each is timed at its best.
        time.sleep(args.pause)
        t = time.perf_counter()
        m = make().fit(X)
        return time.perf_counter() - t, m

    for kind, X64, k in cells():
        n, d = X64.shape
        for dt in args.dtype.split(","):
            X = np.ascontiguousarray(X64, dtype=np.float32 if dt == "f32" else np.float64)
            for mode in modes:
                row = {"data": kind, "n": n, "d": d, "k": k, "dtype": dt, "mode": mode}
                if mode == "explicit":
                    init = X[np.random.default_rng(1).choice(n, k, replace=False)].copy()
                    mk_sk = lambda: SkKMeans(k, init=init, n_init=1)
                    mk_wp = lambda: warpath.KMeans(k, init=init, n_init=1)
                    ts, ms = fit_time(mk_sk, X)
                    if ts > args.budget:
                        row["skipped"] = f"scikit-learn took {ts:.1f} s"
                        rows.append(row)
                        print(f"{kind:>13} {n:>8} {d:>4} {k:>4} {dt} {mode:<8} skipped: scikit-learn {ts:.1f} s > budget", flush=True)
                        continue
                    tw, mw = fit_time(mk_wp, X)
                    # short fits are noisy on a small VM (two threads' wake-ups): more rounds
                    rounds = rounds_for(args.repeat, max(ts, tw))
                    for _ in range(rounds - 1):
                        ts = min(ts, fit_time(mk_sk, X)[0])
                        tw = min(tw, fit_time(mk_wp, X)[0])
                    row |= {"sk_s": ts, "wp_s": tw, "sk_iter": ms.n_iter_, "wp_iter": mw.n_iter_, "dinertia": (mw.inertia_ - ms.inertia_) / ms.inertia_}
                    if args.algorithms:
                        # The contenders in turns, round after round: a burst of load on the
                        # host then slows one round of each, not every round of one (warpath's
                        # `auto` runs Lloyd's very code below k = 128, and timed apart from it,
                        # read up to 1.4x slower on a noisy VM).
                        mk = {f"wp_{alg}_s": (lambda alg=alg: warpath.KMeans(k, init=init, n_init=1, algorithm=alg))
                              for alg in ("lloyd", "hamerly", "yinyang", "elkan", "auto")}
                        mk["sk_elkan_s"] = lambda: SkKMeans(k, init=init, n_init=1, algorithm="elkan")
                        best = dict.fromkeys(mk, float("inf"))
                        for _ in range(rounds):
                            for key, make in mk.items():
                                best[key] = min(best[key], fit_time(make, X)[0])
                        row |= best
                else:
                    n_init = 10 if mode == "ninit10" else 1
                    ts = tw = 0.0
                    isk, iwp = [], []
                    nsk = nwp = 0
                    skipped = False
                    for s in range(args.seeds):
                        t1, ms = fit_time(lambda: SkKMeans(k, n_init=n_init, random_state=s), X)
                        if s == 0 and t1 * args.seeds > args.budget:
                            skipped = True
                            break
                        t2, mw = fit_time(lambda: warpath.KMeans(k, n_init=n_init, random_state=s), X)
                        ts, tw = ts + t1, tw + t2
                        nsk, nwp = nsk + ms.n_iter_, nwp + mw.n_iter_
                        isk.append(ms.inertia_)
                        iwp.append(mw.inertia_)
                    if skipped:
                        row["skipped"] = f"scikit-learn took {t1:.1f} s a seed"
                        rows.append(row)
                        print(f"{kind:>13} {n:>8} {d:>4} {k:>4} {dt} {mode:<8} skipped: scikit-learn {t1:.1f} s a seed", flush=True)
                        continue
                    se = np.sqrt(np.var(isk) / len(isk) + np.var(iwp) / len(iwp)) / np.mean(isk)
                    row |= {"sk_s": ts, "wp_s": tw, "dinertia": (np.mean(iwp) - np.mean(isk)) / np.mean(isk), "dinertia_se": se}
                    if n_init == 1:
                        # (with n_init > 1, n_iter_ is only the best run's)
                        row |= {"sk_iter": nsk, "wp_iter": nwp, "iter_ratio": (ts / nsk) / (tw / nwp)}
                row["ratio"] = row["sk_s"] / row["wp_s"]
                rows.append(row)
                line = f"{kind:>13} {n:>8} {d:>4} {k:>4} {dt} {mode:<8} sk {row['sk_s'] * 1e3:9.2f} ms  wp {row['wp_s'] * 1e3:9.2f} ms  ratio {row['ratio']:5.2f}  dinertia {row['dinertia']:+.1e}"
                if "dinertia_se" in row:
                    line += f" (se {row['dinertia_se']:.1e})"
                if "sk_iter" in row:
                    line += f"  iter {row['sk_iter']}/{row['wp_iter']}"
                if "iter_ratio" in row:
                    line += f"  per-iter {row['iter_ratio']:5.2f}"
                if args.algorithms and mode == "explicit":
                    algs = {a: row[f"wp_{a}_s"] for a in ("lloyd", "hamerly", "yinyang", "elkan")}
                    fastest = min(algs, key=algs.get)
                    line += (
                        "  | " + " ".join(f"{a} {v * 1e3:.2f}" for a, v in algs.items())
                        + f" auto {row['wp_auto_s'] * 1e3:.2f} ({row['wp_auto_s'] / algs[fastest]:.2f}x {fastest})"
                        + f" | sk elkan {row['sk_elkan_s'] * 1e3:.2f} ({row['sk_elkan_s'] / row['wp_elkan_s']:.2f}x)"
                    )
                print(line, flush=True)

    done = [r for r in rows if "ratio" in r]
    print("\n# summary")
    for mode in modes:
        for dt in args.dtype.split(","):
            sel = [r for r in done if r["mode"] == mode and r["dtype"] == dt]
            if not sel:
                continue
            worst = min(sel, key=lambda r: r["ratio"])
            below = sum(r["ratio"] < 1.5 for r in sel)
            print(
                f"{mode:<8} {dt}: {len(sel)} cells, {below} below 1.5x, smallest ratio {worst['ratio']:.2f} "
                f"({worst['data']} {worst['n']}x{worst['d']} k={worst['k']}), largest |dinertia| {max(abs(r['dinertia']) for r in sel):.1e}"
            )
            drawn = [r for r in sel if "dinertia_se" in r]
            if drawn:
                worse = [r for r in drawn if r["dinertia"] > max(0.01, 2 * r["dinertia_se"])]
                print(
                    f"{mode:<8} {dt} mean inertia more than 1% and two standard errors above scikit-learn's: {len(worse)} of {len(drawn)} cells"
                    + "".join(f"; {r['data']} {r['n']}x{r['d']} k={r['k']} {r['dinertia']:+.1%} (se {r['dinertia_se']:.1%})" for r in worse)
                )
            per = [r for r in sel if "iter_ratio" in r]
            if per:
                w = min(per, key=lambda r: r["iter_ratio"])
                print(
                    f"{mode:<8} {dt} per iteration: {sum(r['iter_ratio'] < 1.5 for r in per)} below 1.5x, "
                    f"smallest {w['iter_ratio']:.2f} ({w['data']} {w['n']}x{w['d']} k={w['k']})"
                )
    if args.algorithms:
        sel = [r for r in done if r["mode"] == "explicit"]
        if sel:
            over = [r for r in sel if r["wp_auto_s"] > 1.05 * min(r[f"wp_{a}_s"] for a in ("lloyd", "hamerly", "yinyang", "elkan"))]
            slow_elkan = [r for r in sel if r["wp_elkan_s"] > r["sk_elkan_s"]]
            print(f"auto more than 5% slower than the fastest algorithm: {len(over)} of {len(sel)} cells")
            print(f"warpath elkan slower than scikit-learn's elkan: {len(slow_elkan)} of {len(sel)} cells")
    skipped = [r for r in rows if "skipped" in r]
    if skipped:
        print(f"skipped (budget {args.budget} s): {len(skipped)} cells")
    if args.csv:
        keys = sorted({key for r in rows for key in r})
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
