#!/usr/bin/env python3
"""Time per Lloyd iteration, side by side: scikit-learn KMeans(algorithm="lloyd") and
`warpath kmeans --backend cpu`, on the same data (f64), the same initial centroids and the same
number of threads, in one run.

Set up (a throwaway virtual environment outside the repository):
    python3 -m venv /tmp/venv-sk && /tmp/venv-sk/bin/pip install scikit-learn numpy threadpoolctl
    cargo build --release -p warpath
Run:
    /tmp/venv-sk/bin/python crates/clustering/scripts/compare_sklearn.py --threads 2

Each library fits the data twice from the same centroids, with max_iter = 2 and 12 (tol = 0,
the data does not converge that fast), and the time per iteration is the difference divided
by 10, so fixed costs (validation, variance, final labels) cancel. Both wall-clock and CPU
time (all threads; warpath reports its own from /proc) are shown, each the best of --repeats;
on a loaded machine the CPU figures are the steadier ones.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

CONFIGS = [(1_000_000, 16, 64), (100_000, 2, 4)]
SHORT, LONG = 2, 12


def data(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-1.0, 1.0, (k, d))
    x = centres[rng.integers(0, k, n)] + rng.normal(0.0, 0.3, (n, d))
    init = x[rng.choice(n, k, replace=False)].copy()
    return np.ascontiguousarray(x), init


def sklearn_fit(x, init, max_iter, threads):
    with threadpool_limits(limits=threads):
        w, c = time.perf_counter(), time.process_time()
        km = KMeans(n_clusters=len(init), init=init, n_init=1, max_iter=max_iter, tol=0.0,
                    algorithm="lloyd").fit(x)
        return time.perf_counter() - w, time.process_time() - c, km.n_iter_, km.inertia_


def warpath_fit(exe, xpath, ipath, k, max_iter, threads):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), WARPATH_BACKEND="cpu")
    out = subprocess.run([exe, "--json", "kmeans", xpath, "--k", str(k), "--init-centroids", ipath,
                          "--max-iter", str(max_iter), "--tol", "0", "--backend", "cpu"],
                         env=env, check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    return r["seconds"], r["cpu_seconds"], r["iterations"], r["inertia"]


def per_iteration(fit, repeats):
    """(wall, cpu) seconds per iteration from the best short and long fits, and the long fit."""
    short = [fit(SHORT) for _ in range(repeats)]
    long = [fit(LONG) for _ in range(repeats)]
    assert all(r[2] == SHORT for r in short) and all(r[2] == LONG for r in long), "converged early"
    wall = (min(r[0] for r in long) - min(r[0] for r in short)) / (LONG - SHORT)
    cpu = (min(r[1] for r in long) - min(r[1] for r in short)) / (LONG - SHORT)
    return wall, cpu, long[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--warpath", default="target/release/warpath")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print(f"threads={a.threads}, per iteration = (t[max_iter={LONG}] - t[max_iter={SHORT}]) / "
          f"{LONG - SHORT}, best of {a.repeats}")
    print(f"{'N':>9} {'d':>3} {'k':>3} | {'sklearn wall ms':>15} {'cpu ms':>8} | "
          f"{'warpath wall ms':>15} {'cpu ms':>8} | {'wall ratio':>10} {'cpu ratio':>9} | inertia diff")
    with tempfile.TemporaryDirectory() as tmp:
        for n, d, k in CONFIGS:
            x, init = data(n, d, k)
            xp, ip = os.path.join(tmp, "x.npy"), os.path.join(tmp, "init.npy")
            np.save(xp, x)
            np.save(ip, init)
            sw, sc, sl = per_iteration(lambda m: sklearn_fit(x, init, m, a.threads), a.repeats)
            ww, wc, wl = per_iteration(
                lambda m: warpath_fit(a.warpath, xp, ip, k, m, a.threads), a.repeats)
            # warpath's CPU time comes from /proc in 10 ms ticks: below 1 ms per iteration
            # the difference of two fits is not resolved.
            wcs = f"{wc * 1e3:>8.2f}" if wc > 0 else f"{'<1':>8}"
            ratio = f"{wc / sc:>9.2f}" if wc > 0 and sc > 0 else f"{'n/a':>9}"
            print(f"{n:>9} {d:>3} {k:>3} | {sw * 1e3:>15.2f} {sc * 1e3:>8.2f} | "
                  f"{ww * 1e3:>15.2f} {wcs} | {ww / sw:>10.2f} {ratio} | "
                  f"{abs(sl[3] - wl[3]) / sl[3]:.1e}")


if __name__ == "__main__":
    main()
