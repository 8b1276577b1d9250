#!/usr/bin/env python3
"""Baselines that warpath's GPU targets are measured against, on the same device and in the
same command as the bundle's benchmarks (see verify.sh): device-to-device copy bandwidth,
torch/cupy sort, scan and unique, the "distinct of N ints in [0, 1000)" experiment end to end,
cuSPARSE's batched tridiagonal solver (through cupy), and scipy's linear_sum_assignment.

Every figure is the median of several runs timed with CUDA events after a warm-up; GPU timings
exclude host transfers unless the name says `end_to_end`. Each baseline runs on its own: one
that fails prints its error and the rest go on. Output: a table, and one JSON object per line
in baselines.jsonl under $OUT (or the current folder).
"""
import json
import os
import statistics
import sys
import time
import traceback

RESULTS = []


def record(name, seconds, n=None, bytes_moved=None, note=""):
    row = {"name": name, "seconds": seconds, "n": n}
    if bytes_moved:
        row["GB_per_s"] = bytes_moved / seconds / 1e9
    if n:
        row["G_elems_per_s"] = n / seconds / 1e9
    if note:
        row["note"] = note
    RESULTS.append(row)
    extra = f"{row.get('GB_per_s', 0):8.1f} GB/s" if bytes_moved else ""
    rate = f"{row['G_elems_per_s']:8.3f} G/s" if n else ""
    print(f"{name:<48} {seconds * 1e3:10.3f} ms {rate} {extra} {note}", flush=True)


def cuda_time(fn, reps=10, warmup=3):
    """Median seconds of fn() on the current torch stream, timed with CUDA events."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times)


def baseline(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - report and continue
        print(f"{fn.__name__}: FAILED: {e}", flush=True)
        traceback.print_exc(limit=2)
        RESULTS.append({"name": fn.__name__, "error": str(e)})


N = 1 << 28


def copy_bandwidth():
    import torch

    src = torch.randint(0, 2**31 - 1, (N,), dtype=torch.int32, device="cuda")
    dst = torch.empty_like(src)
    s = cuda_time(lambda: dst.copy_(src))
    record("d2d copy 2^28 x 4 B", s, N, bytes_moved=2 * 4 * N)


def torch_sort():
    import torch

    x = torch.randint(0, 2**31 - 1, (N,), dtype=torch.int32, device="cuda")
    record("torch.sort int32 2^28", cuda_time(lambda: torch.sort(x), reps=5), N)
    try:
        xu = x.to(torch.uint32)
        record("torch.sort uint32 2^28", cuda_time(lambda: torch.sort(xu), reps=5), N)
    except Exception as e:  # older torch: no uint32 sort
        print(f"torch.sort uint32: not supported ({e})")
    idx = torch.arange(N, dtype=torch.int32, device="cuda")
    record("torch.sort int32 pairs (argsort) 2^28", cuda_time(lambda: torch.sort(x, stable=True), reps=5), N)
    del idx


def cupy_sort_scan():
    import cupy as cp

    x = cp.random.randint(0, 2**32 - 1, size=N, dtype=cp.uint32)
    record("cupy.sort uint32 2^28", cuda_time(lambda: cp.sort(x), reps=5), N)
    record("cupy.cumsum uint32->uint64 2^28", cuda_time(lambda: cp.cumsum(x, dtype=cp.uint64), reps=5), N,
           bytes_moved=4 * N + 8 * N)


def torch_scan():
    import torch

    x = torch.randint(0, 1000, (N,), dtype=torch.int32, device="cuda")
    record("torch.cumsum int32->int64 2^28", cuda_time(lambda: torch.cumsum(x, 0, dtype=torch.int64)), N,
           bytes_moved=4 * N + 8 * N)


def torch_unique():
    import numpy as np
    import torch

    x = torch.randint(0, 1000, (N,), dtype=torch.int32, device="cuda")
    record("torch.unique 2^28 in [0,1000)", cuda_time(lambda: torch.unique(x, sorted=True), reps=5), N)
    record("torch.unique +counts +inverse 2^28", cuda_time(
        lambda: torch.unique(x, sorted=True, return_inverse=True, return_counts=True), reps=5), N)
    # The seed experiment, end to end from host memory: upload, unique, download.
    rng = np.random.default_rng(1)
    for p in range(21, int(os.environ.get("E2E_MAX_P", "28")) + 1):
        n = 1 << p
        host = rng.integers(0, 1000, size=n, dtype=np.int32)
        def e2e():
            return torch.unique(torch.from_numpy(host).cuda(), sorted=True).cpu()
        e2e()
        t = []
        for _ in range(3):
            t0 = time.perf_counter()
            e2e()
            t.append(time.perf_counter() - t0)
        record(f"torch.unique end_to_end 2^{p}", statistics.median(t), n)
        t = []
        for _ in range(3):
            t0 = time.perf_counter()
            np.unique(host)
            t.append(time.perf_counter() - t0)
        record(f"numpy.unique (host CPU) 2^{p}", statistics.median(t), n)


def cusparse_gtsv2_strided_batch():
    import cupy as cp
    from cupy_backends.cuda.libs import cusparse

    handle = cp.cuda.device.get_cusparse_handle()
    for dtype, buf_fn, solve_fn in [
        (cp.float32, cusparse.sgtsv2StridedBatch_bufferSizeExt, cusparse.sgtsv2StridedBatch),
        (cp.float64, cusparse.dgtsv2StridedBatch_bufferSizeExt, cusparse.dgtsv2StridedBatch),
    ]:
        for m, batch in [(1024, 16384), (401, 65536), (1 << 20, 16)]:
            dl = cp.full(m * batch, -1.0, dtype=dtype)
            du = cp.full(m * batch, -1.0, dtype=dtype)
            d = cp.full(m * batch, 4.0, dtype=dtype)
            dl[::m] = 0
            du[m - 1::m] = 0
            x0 = cp.random.random(m * batch).astype(dtype)
            x = x0.copy()
            size = buf_fn(handle, m, dl.data.ptr, d.data.ptr, du.data.ptr, x.data.ptr, batch, m)
            buf = cp.empty(max(size, 1), dtype=cp.uint8)

            def solve():
                x[...] = x0  # the solver overwrites x; the copy is timed too, and reported separately
                solve_fn(handle, m, dl.data.ptr, d.data.ptr, du.data.ptr, x.data.ptr, batch, m, buf.data.ptr)

            s = cuda_time(solve)
            c = cuda_time(lambda: x.__setitem__(Ellipsis, x0))
            name = f"cusparse gtsv2StridedBatch {cp.dtype(dtype).name} m={m} batch={batch}"
            record(name, s - c, m * batch, note=f"(copy of rhs {c * 1e3:.3f} ms subtracted)")


def scipy_lap():
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(7)
    c = rng.random((5000, 5000))
    t0 = time.perf_counter()
    linear_sum_assignment(c)
    record("scipy linear_sum_assignment 5000^2 (host CPU)", time.perf_counter() - t0, 5000)
    batch = rng.random((1000, 300, 300))
    t0 = time.perf_counter()
    for m in batch:
        linear_sum_assignment(m)
    record("scipy linear_sum_assignment 1000 x 300^2 loop (host CPU)", time.perf_counter() - t0, 1000)


def torch_kmeans():
    """One Lloyd iteration as a torch user writes it: distances by cdist (matrix-product mode)
    in row chunks, argmin, index_add_ of the points into the sums, counts by bincount. float32,
    the data on the device; per-iteration medians. TF32 off (torch's default: exact float32
    products), then on (faster, not exact)."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(3)
    n, d = 1_000_000, 256
    x = torch.randn((n, d), device="cuda", dtype=torch.float32, generator=g)
    for k in (1024, 16384):
        c = x[torch.randperm(n, device="cuda", generator=g)[:k]].clone()
        chunk = max(1, (1 << 31) // (4 * k))  # a chunk's distance block: at most 2 GiB

        def step():
            labels = torch.empty(n, dtype=torch.int64, device="cuda")
            for s in range(0, n, chunk):
                dist = torch.cdist(x[s:s + chunk], c, compute_mode="use_mm_for_euclid_dist")
                labels[s:s + chunk] = dist.argmin(1)
            sums = torch.zeros((k, d), device="cuda", dtype=torch.float32).index_add_(0, labels, x)
            counts = torch.bincount(labels, minlength=k)
            return sums / counts.clamp(min=1).unsqueeze(1)

        for tf32 in (False, True):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            s = cuda_time(step, reps=3, warmup=1)
            record(f"torch k-means step 1e6x256 f32 k={k} (cdist+argmin+index_add_{', tf32' if tf32 else ''})",
                   s, n)
        torch.backends.cuda.matmul.allow_tf32 = False


def main():
    import torch

    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}", flush=True)
    for fn in [copy_bandwidth, torch_sort, cupy_sort_scan, torch_scan, torch_unique,
               cusparse_gtsv2_strided_batch, torch_kmeans, scipy_lap]:
        if len(sys.argv) > 1 and not any(a in fn.__name__ for a in sys.argv[1:]):
            continue
        baseline(fn)
        torch.cuda.empty_cache()
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "baselines.jsonl"), "w") as f:
        for r in RESULTS:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
