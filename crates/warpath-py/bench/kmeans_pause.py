"""One k-means fit after a rest, as a user's single call runs it: wall time and CPU time.

A fit that starts after the machine has been idle finds its worker threads asleep; on a
virtual machine waking one can take as long as a step. This script times the same fit with a
rest before each call and without, for warpath and scikit-learn, and prints the medians and
the process CPU time per fit (CPU time near the wall time on two threads means one of them
did the work).

    python crates/warpath-py/bench/kmeans_pause.py [--n 10000] [--d 32] [--k 8]
        [--iters 100] [--dtype f32] [--reps 15] [--pause 0.05] [--start]

With ``--start`` each call draws its own k-means++ start (``random_state`` 0, 1, ... one per
repetition, the same seeds for both libraries) and runs ``--iters`` iterations (``1``: the
start and one step).
"""

import argparse
import os
import resource
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--d", type=int, default=32)
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--iters", type=int, default=100, help="iterations of each fit (tol 0)")
    p.add_argument("--dtype", default="f32", choices=["f32", "f64"])
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--pause", type=float, default=0.05, help="seconds of rest before each timed fit")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--start", action="store_true", help="time the k-means++ start (a seed per repetition) instead of fits from given centres")
    a = p.parse_args()
    os.environ.setdefault("RAYON_NUM_THREADS", str(a.threads))
    import numpy as np
    from sklearn.cluster import KMeans as SkKMeans
    from threadpoolctl import threadpool_limits

    import warpath

    threadpool_limits(a.threads)
    dt = np.float32 if a.dtype == "f32" else np.float64
    X = np.ascontiguousarray(np.random.default_rng(0).random((a.n, a.d)), dtype=dt)
    init = X[np.random.default_rng(1).choice(a.n, a.k, replace=False)].copy()

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    if a.start:
        makers = {
            "warpath": lambda s: warpath.KMeans(a.k, random_state=s, max_iter=a.iters),
            "scikit-learn": lambda s: SkKMeans(a.k, random_state=s, max_iter=a.iters),
        }
    else:
        makers = {
            "warpath": lambda s: warpath.KMeans(a.k, init=init, n_init=1, max_iter=a.iters, tol=0),
            "scikit-learn": lambda s: SkKMeans(a.k, init=init, n_init=1, max_iter=a.iters, tol=0),
        }
    what = "k-means++ starts, a seed each" if a.start else "from given centres"
    print(f"# {a.n} x {a.d}, k = {a.k}, {a.dtype}, {a.iters} iterations {what}, {a.threads} threads; medians of {a.reps}")
    for pause in (a.pause, 0.0):
        for name, make in makers.items():
            make(0).fit(X)
            walls, cpus = [], []
            for s in range(a.reps):
                time.sleep(pause)
                c, t = cpu(), time.perf_counter()
                make(s).fit(X)
                walls.append(time.perf_counter() - t)
                cpus.append(cpu() - c)
            print(f"{name:>13} rest {pause * 1e3:4.0f} ms: wall {np.median(walls) * 1e3:8.2f} ms  CPU {np.median(cpus) * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
