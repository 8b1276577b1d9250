#!/usr/bin/env python3
"""k-means on the shapes users bring: ``warpath.KMeans`` against scikit-learn and FAISS (CPU), in
one process, on the same data and the same initial centroids, the same number of threads.

Set up and run (``kmeans_vs_faiss.sh`` next to this file does both: a virtual environment under
``target/bench-kmeans`` with numpy, scikit-learn, faiss-cpu and threadpoolctl from PyPI, and
warpath built from this checkout)::

    crates/warpath-py/bench/kmeans_vs_faiss.sh [--shapes ...] [--threads 2] [--repeat 2]

For every shape ``n x d, k`` (dtype float32 unless the shape says f64):

- **data**: an embedding-like mixture, seeded: ``k / 2`` Gaussian clusters of uneven sizes
  (Zipf weights) around centres drawn from N(0, 1), noise N(0, 0.6^2) per coordinate, every row
  then scaled to unit length (as sentence embeddings are); shapes with ``d <= 16`` are left
  unnormalised (blobs, as the seed's experiments);
- **initial centroids**: ``k`` rows of the data chosen by a seeded draw, given to every library
  (so no library's initialisation is timed);
- **one iteration** (``max_iter=1``, ``tol=0``) and **twenty iterations** (``max_iter=20``,
  ``tol=0``): whole fits, best of ``--repeat`` (and the median), for
  ``warpath.KMeans(algorithm="auto")``, ``sklearn.cluster.KMeans(algorithm="lloyd")`` and
  ``faiss.Kmeans`` (``max_points_per_centroid`` large enough that FAISS does not subsample,
  ``min_points_per_centroid=0``, ``train(x, init_centroids=...)``): ``faiss`` is ``train``
  alone, which returns no labels, while warpath and scikit-learn end every fit with the labels
  of the final centroids (a second pass over the distances after one iteration);
  ``faiss+labels`` adds what a FAISS user runs to get them, ``km.index.search(x, 1)``, and
  ``warpath-centres`` is warpath's fit without them (``compute_labels=False``, as
  scikit-learn's ``MiniBatchKMeans``): FAISS's ``train`` is compared with ``warpath-centres``,
  ``faiss+labels`` and scikit-learn with warpath's fit with labels, so that every ratio
  compares the same work;
- after twenty iterations: the labels of warpath and scikit-learn compared (the points that
  differ, and whether each is a near-tie in float32: the two nearest centres within
  ``1e-5`` relative), and the relative inertia difference;
- with ``--converge``: fits to convergence (``tol=1e-4``, scikit-learn's rule, ``max_iter=300``)
  of warpath and scikit-learn's ``"lloyd"`` and ``"elkan"``, time and iterations.

Threads: ``RAYON_NUM_THREADS`` (warpath), ``threadpoolctl`` (scikit-learn's OpenMP and BLAS),
``faiss.omp_set_num_threads``. Prints the CPU model and a markdown table; ratios are
``peer time / warpath time`` (above 1: warpath is faster).

BLAS kernels: both peers multiply through OpenBLAS, which reads ``OPENBLAS_CORETYPE`` once
when it loads. On a CPU with AVX-512 the script sets ``SkylakeX`` (faiss-cpu's bundled
OpenBLAS falls back to older kernels on CPUs newer than itself: SSE3 on an Intel Xeon of
family 6, model 207; scikit-learn's picks ``SkylakeX`` there and on Zen 5 by itself), and
otherwise leaves the choice to OpenBLAS, dropping a core type inherited from the environment
(some machine images set ``Haswell`` for every process); ``--openblas-coretype`` overrides
both. The header says what was set.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

SHAPES = "200000x128k1024,100000x256k4096,500000x32k256,1000000x16k64f64"


def parse_shape(s):
    dtype = "float64" if s.endswith("f64") else "float32"
    s = s.removesuffix("f64").removesuffix("f32")
    nd, k = s.split("k")
    n, d = nd.split("x")
    return int(float(n)), int(d), int(k), dtype


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
        return f"{fields.get('Model name', '?').strip()}, family {fields.get('CPU family', '?').strip()}, model {fields.get('Model', '?').strip()}"
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown CPU"


def make_data(n, d, k, dtype, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    m = max(k // 2, 1)
    centres = rng.standard_normal((m, d))
    w = 1.0 / np.arange(1, m + 1) ** 0.5
    z = rng.choice(m, size=n, p=w / w.sum())
    x = centres[z] + 0.6 * rng.standard_normal((n, d))
    if d > 16:
        x /= np.linalg.norm(x, axis=1, keepdims=True)
    x = np.ascontiguousarray(x, dtype=dtype)
    init = x[np.sort(rng.choice(n, size=k, replace=False))].copy()
    return x, init


def has_avx512():
    """Whether the CPU has AVX-512F (Linux's flags; False elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512f" in line for line in f)
    except OSError:
        return False


def best_median(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=SHAPES, help="comma-separated NxDkK[f64] (default %(default)s)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--converge", action="store_true", help="also fit to convergence (tol 1e-4)")
    ap.add_argument("--only", default="warpath,sklearn,faiss", help="contenders to run")
    ap.add_argument("--openblas-coretype", metavar="NAME", help="OpenBLAS kernels of both peers (default: SkylakeX with AVX-512, else OpenBLAS's choice)")
    args = ap.parse_args()

    # OpenBLAS reads its core type when it loads: set it (or drop an inherited one) and
    # start again before numpy is imported
    coretype = args.openblas_coretype or ("SkylakeX" if has_avx512() else None)
    if os.environ.get("OPENBLAS_CORETYPE") != coretype:
        if coretype is None:
            print(f"# dropped OPENBLAS_CORETYPE={os.environ.pop('OPENBLAS_CORETYPE')} from the environment", flush=True)
        else:
            os.environ["OPENBLAS_CORETYPE"] = coretype
        os.execv(sys.executable, [sys.executable, *sys.argv])
    print(f"# OPENBLAS_CORETYPE={coretype or '(OpenBLAS chooses)'}")
    os.environ["RAYON_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import sklearn
    from sklearn.cluster import KMeans as SkKMeans
    from threadpoolctl import threadpool_limits

    import warpath

    only = set(args.only.split(","))
    faiss = None
    if "faiss" in only:
        import faiss

        faiss.omp_set_num_threads(args.threads)

    print(f"CPU: {cpu_model()}; {args.threads} threads each; numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
          f"faiss {faiss.__version__ if faiss else '-'}, warpath {getattr(warpath, '__version__', '?')}")
    rows = []
    for spec in args.shapes.split(","):
        n, d, k, dtype = parse_shape(spec)
        x, init = make_data(n, d, k, dtype)
        init64 = init.astype(np.float64)
        res = {}

        def run_warpath(iters, tol=0.0, algorithm="auto", compute_labels=True):
            km = warpath.KMeans(k, init=init64, n_init=1, max_iter=iters, tol=tol, algorithm=algorithm, backend="cpu",
                                compute_labels=compute_labels)
            return km.fit(x)

        def run_warpath_centres(iters):
            return run_warpath(iters, compute_labels=False)

        def run_sklearn(iters, tol=0.0, algorithm="lloyd"):
            with threadpool_limits(limits=args.threads):
                km = SkKMeans(k, init=init, n_init=1, max_iter=iters, tol=tol, algorithm=algorithm)
                return km.fit(x)

        def run_faiss(iters):
            km = faiss.Kmeans(d, k, niter=iters, seed=1, verbose=False, spherical=False,
                              max_points_per_centroid=n + 1, min_points_per_centroid=0)
            km.train(np.ascontiguousarray(x, dtype=np.float32), init_centroids=np.ascontiguousarray(init, dtype=np.float32))
            return km

        def run_faiss_labels(iters):
            km = run_faiss(iters)
            km.index.search(np.ascontiguousarray(x, dtype=np.float32), 1)
            return km

        contenders = [("warpath", run_warpath), ("warpath-centres", run_warpath_centres), ("sklearn", run_sklearn),
                      ("faiss", run_faiss), ("faiss+labels", run_faiss_labels)]
        for name, fn in contenders:
            if name.split("+")[0].split("-")[0] not in only:
                continue
            b1, m1, _ = best_median(lambda: fn(1), args.repeat)
            bn, mn, fit = best_median(lambda: fn(args.iters), args.repeat)
            res[name] = dict(first=b1, first_med=m1, total=bn, total_med=mn, fit=fit)
            print(f"  {spec} {name}: 1 iteration {b1 * 1e3:.0f} ms (median {m1 * 1e3:.0f}), "
                  f"{args.iters} iterations {bn * 1e3:.0f} ms (median {mn * 1e3:.0f})", flush=True)
        agree = ""
        if "warpath" in res and "sklearn" in res:
            a, b = res["warpath"]["fit"], res["sklearn"]["fit"]
            differ = np.flatnonzero(a.labels_ != b.labels_)
            near = 0
            if len(differ):
                c = b.cluster_centers_.astype(np.float64)
                xd = x[differ].astype(np.float64)
                dist = ((xd[:, None, :] - c[None, :, :]) ** 2).sum(-1) if len(differ) * k * d < 5e8 else None
                if dist is not None:
                    two = np.sort(dist, axis=1)[:, :2]
                    near = int(np.sum(two[:, 1] - two[:, 0] <= 1e-5 * two[:, 1]))
            rel = abs(a.inertia_ - b.inertia_) / b.inertia_
            agree = f"{len(differ)} labels differ ({near} near-ties), inertia rel. diff {rel:.1e}"
            if x.dtype == np.float32:
                # scikit-learn's float32 products round differently from the exact distances,
                # and one different label changes the trajectory: the same fit on a float64
                # copy (its distances then far more accurate) is the fair oracle for exact labels.
                with threadpool_limits(limits=args.threads):
                    b64 = SkKMeans(k, init=init64, n_init=1, max_iter=args.iters, tol=0.0, algorithm="lloyd").fit(
                        x.astype(np.float64))
                d64 = int(np.sum(a.labels_ != b64.labels_))
                rel64 = abs(a.inertia_ - b64.inertia_) / b64.inertia_
                agree += f"; vs sklearn on a float64 copy: {d64} differ, inertia rel. diff {rel64:.1e}"
            print(f"  {spec}: after {args.iters} iterations {agree}", flush=True)
        conv = {}
        if args.converge:
            for name, fn in [("warpath", lambda: run_warpath(300, 1e-4)),
                             ("sklearn-lloyd", lambda: run_sklearn(300, 1e-4, "lloyd")),
                             ("sklearn-elkan", lambda: run_sklearn(300, 1e-4, "elkan"))]:
                if name.split("-")[0] not in only:
                    continue
                t, _, fit = best_median(fn, 1)
                conv[name] = (t, fit.n_iter_)
                print(f"  {spec} {name} to convergence: {t:.2f} s, {fit.n_iter_} iterations", flush=True)
        rows.append((spec, res, agree, conv))

    print()
    # Ratios are peer / warpath doing the same work: scikit-learn and FAISS + labels against
    # warpath's fit with its final labels, FAISS's train (centroids only) against warpath's
    # compute_labels=False fit (centroids only).
    print("Ratios: peer time / warpath time for the same work (faiss train vs warpath compute_labels=False; "
          "the others vs warpath with labels).")
    print(f"| shape | warpath 1 it. | warpath centres 1 it. | sklearn 1 it. | faiss 1 it. | faiss 1 it. + labels | "
          f"warpath {args.iters} it. | warpath centres {args.iters} it. | sklearn {args.iters} it. | faiss {args.iters} it. | "
          f"faiss {args.iters} it. + labels | labels vs sklearn |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for spec, res, agree, _ in rows:

        def cell(name, key, ref="warpath"):
            r = res.get(name)
            if not r:
                return "-"
            s = f"{r[key] * 1e3:.0f} ms"
            w = res.get(ref)
            if w and name != ref:
                s += f" ({r[key] / w[key]:.2f}x)"
            return s

        cells = []
        for key in ("first", "total"):
            cells += [cell("warpath", key), cell("warpath-centres", key, "warpath-centres"), cell("sklearn", key),
                      cell("faiss", key, "warpath-centres"), cell("faiss+labels", key)]
        print(f"| {spec} | {' | '.join(cells)} | {agree} |")
    if args.converge:
        print()
        print("| shape | warpath | sklearn lloyd | sklearn elkan |")
        print("|---|---:|---:|---:|")
        for spec, _, _, conv in rows:
            w = conv.get("warpath")

            def c2(name):
                r = conv.get(name)
                if not r:
                    return "-"
                s = f"{r[0]:.2f} s ({r[1]} it.)"
                if w and name != "warpath":
                    s += f" {r[0] / w[0]:.2f}x"
                return s

            print(f"| {spec} | {c2('warpath')} | {c2('sklearn-lloyd')} | {c2('sklearn-elkan')} |")


if __name__ == "__main__":
    main()
