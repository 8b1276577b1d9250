#!/usr/bin/env python3
"""warpath.dask.KMeans against dask-ml's KMeans on one LocalCluster, and the seed's recovery
experiment (a worker lost at iteration 29, one started again at 69, 100 iterations).

Part 1, time per iteration (``--only compare``): 2 x 10^6 x 8 float64 points (uniform, seeded,
so that Lloyd does not converge within the iterations timed), k = 16, the same initial centres
(the first 16 rows) for everyone, ``tol=0``. The data are written as ``.npy`` files, one per
chunk of 250,000 rows, and read on the workers (``np.load`` per chunk: the recipe a lost chunk
is recomputed from); the dask array is persisted on the cluster once and given to both
estimators. The cluster is a ``LocalCluster`` of two worker processes with one thread each.
The contenders alternate in ``--repeat`` turns of 30-iteration fits; a turn's figure is the
median time of one Lloyd iteration as each estimator measures it (dask-ml's own "Lloyd loop"
log timings, warpath.dask's ``metrics_``: both the whole iteration seen from the client), and
the table gives the median over turns. ``warpath.KMeans`` in one process (rayon, both cores)
on the same numpy array, which has no per-iteration hook, is timed as
``(T(30) - T(10)) / 20`` in the same turns: the price of distribution.

Part 2, recovery (``--only recovery``): the scheduler of a LocalCluster without workers, and two
``dask worker --no-nanny --nthreads 1`` processes. A 100-iteration fit (``tol=0``) SIGKILLs one
worker process after iteration 29 (nothing restarts it) and starts a new worker process after
iteration 69; it prints the time of every iteration around both events, and checks that the
final centres are bit-identical to an undisturbed 100-iteration fit on the same cluster.

Usage::

    python crates/warpath-py/bench/dask_kmeans.py [--repeat 5] [--only compare,recovery] [--rows 2000000] [--chunk 250000]

Needs warpath (with the dask extra), dask-ml for part 1.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import distributed  # noqa: E402

import warpath  # noqa: E402
import warpath.dask  # noqa: E402

K, D, CHUNK = 16, 8, 250_000
ITERS = 30


def data(rows, folder):
    """Uniform points in [0, 1)^8, seeded, written as one .npy file per chunk; returns the
    numpy array and the dask array over the files."""
    X = np.random.default_rng(2026).random((rows, D))
    parts = []
    for i in range(0, rows, CHUNK):
        p = os.path.join(folder, f"part{i // CHUNK:04d}.npy")
        np.save(p, X[i : i + CHUNK])
        parts.append(da.from_delayed(dask.delayed(np.load)(p), shape=X[i : i + CHUNK].shape, dtype=X.dtype))
    return X, da.concatenate(parts)


class LloydLoopTimes(logging.Handler):
    """Collects dask-ml's own per-iteration timings (its "Finished Lloyd loop NN. in H:MM:SS.f"
    log lines)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.times = []

    def emit(self, record):
        msg = record.getMessage()
        if msg.startswith("Finished Lloyd loop"):
            h, m, sec = msg.rsplit(" in ", 1)[1].split(":")
            self.times.append(int(h) * 3600 + int(m) * 60 + float(sec))


def compare(args, folder):
    from dask_ml.cluster import KMeans as DaskMLKMeans

    X, Xd = data(args.rows, folder)
    init = X[:K].copy()
    log = logging.getLogger("dask_ml.cluster.k_means")
    log.setLevel(logging.INFO)
    loops = LloydLoopTimes()
    log.addHandler(loops)
    ours_t, theirs_t, single_t, splits = [], [], [], []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as client:
            Xp = client.persist(Xd)
            distributed.wait(Xp)
            # warm-up fits (imports, numba compilation in dask-ml)
            warpath.dask.KMeans(K, init=init, max_iter=2, tol=0).fit(Xp)
            DaskMLKMeans(n_clusters=K, init=init, max_iter=2, tol=0, n_init=1).fit(Xp)
            warpath.KMeans(K, init=init, max_iter=2, tol=0, backend="cpu").fit(X)
            for _ in range(args.repeat):
                # the contenders alternate; each turn is a 30-iteration fit
                km = warpath.dask.KMeans(K, init=init, max_iter=ITERS, tol=0).fit(Xp)
                assert km.n_iter_ == ITERS
                ours_t.append(statistics.median(m["wall_s"] for m in km.metrics_))
                splits.extend(km.metrics_)
                loops.times.clear()
                DaskMLKMeans(n_clusters=K, init=init, max_iter=ITERS, tol=0, n_init=1).fit(Xp)
                assert len(loops.times) == ITERS
                theirs_t.append(statistics.median(loops.times))
                # one process has no per-iteration hook: (T(30) - T(10)) / 20
                t = time.perf_counter()
                a = warpath.KMeans(K, init=init, max_iter=10, tol=0, backend="cpu").fit(X).n_iter_
                t10 = time.perf_counter() - t
                t = time.perf_counter()
                b = warpath.KMeans(K, init=init, max_iter=ITERS, tol=0, backend="cpu").fit(X).n_iter_
                single_t.append((time.perf_counter() - t - t10) / (b - a))
    t_ours, t_theirs, t_single = (statistics.median(v) for v in (ours_t, theirs_t, single_t))
    print(f"\n## time per iteration, {args.rows} x {D} float64, k = {K}, chunks of {CHUNK} rows, median of {args.repeat} turns\n")
    print("| contender | s / iteration (median) | turns |")
    print("|---|---:|---|")
    for name, t, v in (
        ("dask-ml KMeans (2 workers x 1 thread)", t_theirs, theirs_t),
        ("warpath.dask.KMeans (2 workers x 1 thread)", t_ours, ours_t),
        ("warpath.KMeans, one process (rayon, 2 threads)", t_single, single_t),
    ):
        print(f"| {name} | {t:.4f} | {', '.join(f'{x:.3f}' for x in v)} |")
    print(f"\ndask-ml / warpath.dask = {t_theirs / t_ours:.2f}x (target >= 3); "
          f"warpath.dask / warpath.KMeans = {t_ours / t_single:.2f}x (target <= 2)")
    keys = ("compute_s", "reduce_s", "schedule_s", "wall_s")
    med = {key: statistics.median(m[key] for m in splits) for key in keys}
    tot = {key: sum(m[key] for m in splits) for key in keys}
    print(f"\n## where an iteration of warpath.dask.KMeans goes ({len(splits)} iterations of the turns above; metrics_)\n")
    print("| part | median per iteration (ms) | total (ms) | share |")
    print("|---|---:|---:|---:|")
    for key, name in (("compute_s", "computing (busiest worker thread, native)"), ("reduce_s", "reducing + centre update"), ("schedule_s", "scheduling, transfers"), ("wall_s", "total")):
        print(f"| {name} | {med[key] * 1e3:.1f} | {tot[key] * 1e3:.0f} | {100 * tot[key] / tot['wall_s']:.1f}% |")


def start_worker(address):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--memory-limit", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def recovery(args, folder):
    X, Xd = data(args.rows, folder)
    init = X[:K].copy()
    params = dict(init=init, max_iter=100, tol=0)
    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=":0") as cluster:
        procs = [start_worker(cluster.scheduler_address) for _ in range(2)]
        try:
            with distributed.Client(cluster) as client:
                client.wait_for_workers(2, timeout=120)
                calm = warpath.dask.KMeans(K, **params).fit(Xd)
                events = {}

                def events_cb(est, m):
                    it = m["iteration"]
                    if it == 29:
                        victim = procs[0]
                        victim.send_signal(signal.SIGKILL)
                        victim.wait()
                        events["killed"] = time.perf_counter()
                    elif it == 69:
                        procs.append(start_worker(cluster.scheduler_address))
                        events["started"] = time.perf_counter()
                    if m["joined"] and it > 69 and "joined_at" not in events:
                        events["joined_at"] = it

                hit = warpath.dask.KMeans(K, **params).fit(Xd, callback=events_cb)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
    walls = [m["wall_s"] for m in hit.metrics_]
    calm_walls = [m["wall_s"] for m in calm.metrics_]
    base2 = statistics.median(walls[10:29])
    base1 = statistics.median(walls[35:69])
    j = events.get("joined_at")
    base3 = statistics.median(walls[j + 3 :]) if j and j + 3 < len(walls) else float("nan")
    print(f"\n## recovery: {args.rows} x {D}, k = {K}, 100 iterations, worker killed after iteration 29, a new one started after 69\n")
    print("| iteration | s (disturbed run) | s (undisturbed run) | workers | chunk threads | note |")
    print("|---:|---:|---:|---:|---:|---|")
    show = set(range(27, 34)) | set(range(68, (j or 72) + 4))
    for m, c in zip(hit.metrics_, calm.metrics_):
        it = m["iteration"]
        if it in show:
            note = ""
            if it == 30:
                note = "first iteration without the killed worker: its chunks re-read from .npy"
            if j and it == j:
                note = "the new worker is noticed; chunks move to it"
            print(f"| {it} | {m['wall_s']:.4f} | {c['wall_s']:.4f} | {m['workers']} | {m['threads']} | {note} |")
    lost = walls[29] - base2
    print(f"\nmedian iteration: {base2:.4f} s with 2 workers (10-29), {base1:.4f} s with 1 worker (36-69), "
          f"{base3:.4f} s after the new worker joined (from {j + 3 if j else '?'}); undisturbed run {statistics.median(calm_walls):.4f} s")
    print(f"recovery cost (iteration 30 minus the 2-worker median): {lost:.4f} s; "
          f"the new worker was used from iteration {j} (started after 69), that iteration cost {walls[j - 1] - base1:+.4f} s over the 1-worker median" if j else "the new worker never joined")
    same = np.array_equal(hit.cluster_centers_, calm.cluster_centers_) and hit.n_iter_ == calm.n_iter_
    print(f"final centres bit-identical to the undisturbed run: {same} (n_iter {hit.n_iter_} vs {calm.n_iter_}); "
          f"total {sum(walls):.2f} s vs {sum(calm_walls):.2f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--only", default="compare,recovery")
    ap.add_argument("--chunk", type=int, default=CHUNK, help="rows per chunk (default 250000)")
    args = ap.parse_args()
    globals()["CHUNK"] = args.chunk
    with tempfile.TemporaryDirectory(prefix="warpath-dask-bench-") as folder:
        print(f"warpath {warpath.__version__}, dask {dask.__version__}, distributed {distributed.__version__}, {os.cpu_count()} cores")
        if "compare" in args.only:
            compare(args, folder)
        if "recovery" in args.only:
            recovery(args, folder)


if __name__ == "__main__":
    main()
