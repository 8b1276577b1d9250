"""warpath's linear_sum_assignment against scipy's on small problems (issue 48), whole Python
calls in one process, the contenders alternating round by round:

* square n x n for n = 2..30 and rectangular n x 2n/3 and 2n/3 x n, float64 uniform in [0, 1)
  and int64 uniform in [0, 100): per call, best and median over the rounds, and the ratio
  scipy / warpath (above 1: warpath is faster). ``lap`` (pip ``lapx``; ``lapjvh``, its
  fastest function on small problems that returns scipy's ``(rows, cols)``, rectangular
  problems solved without padding) is a second peer when it is installed;
* batches: ``warpath.linear_sum_assignment_batch`` on a (b, r, c) stack against a Python loop
  over scipy and a loop over warpath (and ``lap.lapjvh_batch`` when installed);
* the fixed cost of a call: tiny problems in every input form (dtypes, lists, strides,
  maximize, options).

By default every call gets a different matrix, cycling through a pool of distinct matrices
(``--pool``): the realistic case, where the branch predictor cannot learn the solve.
``--same`` calls each matrix over and over instead (the measure of a loop that times ``f(a)``
on one ``a``), in blocks of calls on one matrix, for ``--same-matrices`` matrices per cell so
that one lucky or unlucky matrix does not decide the cell: it flatters solvers whose branches
depend on the data, scipy's among them, because the predictor learns the whole solve.

    python crates/warpath-py/bench/lap_small.py                 # every table, distinct matrices
    python crates/warpath-py/bench/lap_small.py --same          # one matrix per cell
    WARPATH_DISABLE_AVX512=1 python crates/warpath-py/bench/lap_small.py   # warpath without AVX-512
    python crates/warpath-py/bench/lap_small.py --quick         # fewer sizes and rounds

Run it outside the source tree (``cd /tmp``) so that ``import warpath`` finds the installed
package; ``RAYON_NUM_THREADS`` sets warpath's threads (the batch uses them; single calls run in
the calling thread). OpenBLAS is limited to one thread (its idle threads spin on small
machines; neither solver uses BLAS).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.optimize  # noqa: E402

import warpath  # noqa: E402

try:
    import lap  # noqa: E402

    LAP = getattr(lap, "lapjvh", None)
except ImportError:  # pragma: no cover - optional peer
    lap = None
    LAP = None

SCIPY = scipy.optimize.linear_sum_assignment
WARPATH = warpath.linear_sum_assignment


def cpu_model() -> str:
    model, family, mod = "?", "?", "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "model name" and model == "?":
                    model = value
                elif key == "cpu family" and family == "?":
                    family = value
                elif key == "model" and mod == "?":
                    mod = value
                elif key == "flags":
                    avx512 = "avx512f" in value.split()
                    break
    except OSError:
        return platform.processor() or "?"
    return f"{model} (family {family}, model {mod}; AVX-512 {'yes' if avx512 else 'no'})"


def header(args) -> None:
    info = warpath.info()
    print("# warpath vs scipy: linear_sum_assignment on small problems")
    print()
    print(f"- CPU: {cpu_model()}, {os.cpu_count()} logical CPUs")
    print(f"- load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"- python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"warpath {warpath.__version__}"
        + (f", lapx {getattr(lap, '__version__', '?')}" if lap is not None else ", lap not installed")
    )
    print(
        f"- warpath threads {info['threads']} (RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS', 'unset')}), "
        f"WARPATH_DISABLE_AVX512={os.environ.get('WARPATH_DISABLE_AVX512', 'unset')}, "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
    )
    mode = (
        f"each matrix called over and over (--same), {args.same_matrices} matrices per cell"
        if args.same
        else f"a pool of {args.pool} distinct matrices per cell, a different one each call"
    )
    print(
        f"- {mode}; {args.rounds} rounds per cell, contenders alternating over the same calls "
        f"(as many as the slowest contender makes in {args.round_ms:g} ms); times are per call "
        f"(per problem for batches), in us"
    )
    print("- ratio = scipy / warpath (> 1: warpath faster), of the best and of the medians")
    print()


def make(shape, kind: str, count: int, rng) -> list[np.ndarray]:
    if kind == "f64":
        return [rng.random(shape) for _ in range(count)]
    return [rng.integers(0, 100, size=shape, dtype=np.int64) for _ in range(count)]


def per_call(f, seq) -> float:
    """Seconds per call of f over the matrices of seq, in one timed loop."""
    t = time.perf_counter()
    for a in seq:
        f(a)
    return (time.perf_counter() - t) / len(seq)


def race(contenders: dict, pool: list, args, blocks: bool = False) -> dict[str, list[float]]:
    """Alternating rounds of every contender over the same calls: per-call times (us). The
    calls cycle through the pool, or with ``blocks`` call each matrix of the pool over and
    over, one block of calls per matrix."""
    # calibrate: enough calls that a round of the slowest contender is at least round_ms
    probe = pool * max(1, 50 // len(pool))
    for f in contenders.values():  # warm-up (first calls, imports, caches)
        per_call(f, probe)
    slowest = max(per_call(f, probe) for f in contenders.values())
    calls = max(len(pool), int(args.round_ms / 1e3 / max(slowest, 1e-9)))
    calls = min(calls, 200_000)
    if blocks:
        each = -(-calls // len(pool))
        seq = [m for m in pool for _ in range(each)]
    else:
        seq = [pool[k % len(pool)] for k in range(calls)]
    for f in contenders.values():  # warm-up
        per_call(f, seq[: min(len(seq), 200)])
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for r in range(args.rounds):
        order = list(contenders.items())
        if r % 2:
            order.reverse()
        for name, f in order:
            times[name].append(per_call(f, seq) * 1e6)
    return times


def fmt(x: float) -> str:
    return f"{x:.2f}" if x < 100 else f"{x:.1f}"


def cell_row(label: str, times: dict[str, list[float]], peer: bool) -> str:
    s, w = times["scipy"], times["warpath"]
    cols = [
        label,
        f"{fmt(min(s))} / {fmt(statistics.median(s))}",
        f"{fmt(min(w))} / {fmt(statistics.median(w))}",
        f"**{min(s) / min(w):.2f}x**",
        f"{statistics.median(s) / statistics.median(w):.2f}x",
    ]
    if peer:
        if "lap" in times:
            l_ = times["lap"]
            cols += [f"{fmt(min(l_))} / {fmt(statistics.median(l_))}", f"{min(l_) / min(w):.2f}x"]
        else:
            cols += ["", ""]
    return "| " + " | ".join(cols) + " |"


def single_tables(args, rng) -> list[tuple[str, str, float]]:
    squares = [2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30] if args.quick else list(range(2, 31))
    if args.sizes:
        squares = [int(x) for x in args.sizes.split(",")]
    rects = [(10, 7), (7, 10), (15, 10), (10, 15), (21, 14), (14, 21), (30, 20), (20, 30), (40, 25), (25, 40), (45, 30), (30, 45)]
    if args.quick:
        rects = [(10, 7), (7, 10), (30, 20), (20, 30), (40, 25), (25, 40)]
    shapes = [(n, n) for n in squares] + ([] if args.sizes else rects)
    peer = LAP is not None
    misses = []
    for kind in ("f64", "i64"):
        title = "float64 uniform in [0, 1)" if kind == "f64" else "int64 uniform in [0, 100)"
        print(f"## Single calls, {title}")
        print()
        head = "| shape | scipy best / median | warpath best / median | ratio (best) | ratio (median) |"
        rule = "|---|---|---|---|---|"
        if peer:
            head += " lap.lapjvh best / median | lap / warpath |"
            rule += "---|---|"
        print(head)
        print(rule)
        for shape in shapes:
            pool = make(shape, kind, args.same_matrices if args.same else args.pool, rng)
            contenders = {"scipy": SCIPY, "warpath": WARPATH}
            if peer:
                rect = shape[0] != shape[1]
                contenders["lap"] = lambda a, rect=rect: LAP(a, extend_cost=rect, return_cost=False)
            times = race(contenders, pool, args, blocks=args.same)
            label = f"{shape[0]}x{shape[1]}"
            print(cell_row(label, times, peer), flush=True)
            ratio = min(times["scipy"]) / min(times["warpath"])
            if ratio < 1.0:
                misses.append((kind, label, ratio))
        print()
    return misses


def batch_table(args, rng) -> None:
    count = args.batch
    print(f"## Batches of {count:,} problems (per problem, whole calls included)")
    print()
    peer = lap is not None and hasattr(lap, "lapjvh_batch")
    head = "| problems | scipy loop | warpath loop | warpath batch | batch vs scipy loop | batch vs warpath loop |"
    rule = "|---|---|---|---|---|---|"
    if peer:
        head += " lap.lapjvh_batch | lap batch / warpath batch |"
        rule += "---|---|"
    print(head)
    print(rule)
    shapes = [(2, 2), (3, 3), (10, 10), (30, 30), (40, 25), (25, 40)]
    if args.quick:
        shapes = [(3, 3), (10, 10), (30, 30)]
    threads = warpath.info()["threads"]
    for kind in ("f64", "i64"):
        for shape in shapes:
            stack = np.stack(make(shape, kind, count, rng))
            mats = list(stack)  # views made before timing

            def scipy_loop(_):
                for c in mats:
                    SCIPY(c)

            def warpath_loop(_):
                for c in mats:
                    WARPATH(c)

            def warpath_batch(_):
                warpath.linear_sum_assignment_batch(stack)

            contenders = {"scipy": scipy_loop, "warpath_loop": warpath_loop, "warpath": warpath_batch}
            if peer:
                rect = shape[0] != shape[1]
                contenders["lap"] = lambda _, rect=rect: lap.lapjvh_batch(
                    stack, extend_cost=rect, return_cost=False, n_threads=threads
                )
            rounds = max(3, args.rounds // 2)
            times: dict[str, list[float]] = {k: [] for k in contenders}
            for r in range(rounds):
                order = list(contenders.items())
                if r % 2:
                    order.reverse()
                for name, f in order:
                    t = time.perf_counter()
                    f(None)
                    times[name].append((time.perf_counter() - t) / count * 1e6)
            s, wl, wb = min(times["scipy"]), min(times["warpath_loop"]), min(times["warpath"])
            cols = [f"{kind} {shape[0]}x{shape[1]}", fmt(s), fmt(wl), fmt(wb), f"**{s / wb:.1f}x**", f"{wl / wb:.1f}x"]
            if peer:
                if "lap" in times:
                    lb = min(times["lap"])
                    cols += [fmt(lb), f"{lb / wb:.2f}x"]
                else:
                    cols += ["", ""]
            print("| " + " | ".join(cols) + " |", flush=True)
    print()


def overhead_lines(args, rng) -> None:
    print("## The fixed cost of a call (best / median per call, us)")
    print()
    print("| call | scipy | warpath | ratio (best) |")
    print("|---|---|---|---|")
    a = rng.random((2, 2))
    b = rng.random((3, 3))
    cases = [
        ("2x2 float64, C order", a, {}),
        ("2x2 int64", rng.integers(0, 100, (2, 2)), {}),
        ("2x2 float32", a.astype(np.float32), {}),
        ("2x2 int32", rng.integers(0, 100, (2, 2)).astype(np.int32), {}),
        ("2x2 float64, Fortran order", np.asfortranarray(a), {}),
        ("2x2 float64, strided view", rng.random((2, 4))[:, ::2], {}),
        ("2x2 bool", a > 0.5, {}),
        ("2x2 Python list of floats", a.tolist(), {}),
        ("2x2 float64, maximize=True", a, {"maximize": True}),
        ("3x3 float64", b, {}),
        ("3x3 float64 transposed view (3 x 3, F order)", b.T, {}),
        ("1x1 float64", rng.random((1, 1)), {}),
        ("0x0 float64", np.empty((0, 0)), {}),
        ("3x2 float64 (more rows than columns)", rng.random((3, 2)), {}),
    ]
    for label, m, kw in cases:
        contenders = {"scipy": lambda x, kw=kw: SCIPY(x, **kw), "warpath": lambda x, kw=kw: WARPATH(x, **kw)}
        times = race(contenders, [m], args)
        s, w = times["scipy"], times["warpath"]
        print(
            f"| {label} | {fmt(min(s))} / {fmt(statistics.median(s))} | "
            f"{fmt(min(w))} / {fmt(statistics.median(w))} | {min(s) / min(w):.2f}x |",
            flush=True,
        )
    stack = rng.random((1, 3, 3))
    times = race({"scipy": lambda x: SCIPY(x[0]), "warpath": warpath.linear_sum_assignment_batch}, [stack], args)
    s, w = times["scipy"], times["warpath"]
    print(
        f"| batch of one 3x3 (scipy: one call) | {fmt(min(s))} / {fmt(statistics.median(s))} | "
        f"{fmt(min(w))} / {fmt(statistics.median(w))} | {min(s) / min(w):.2f}x |"
    )
    print()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--same", action="store_true", help="call each matrix over and over instead of a different one each call")
    p.add_argument("--same-matrices", type=int, default=16, help="matrices per cell with --same (default 16)")
    p.add_argument("--pool", type=int, default=1000, help="distinct matrices per cell (default 1000)")
    p.add_argument("--rounds", type=int, default=7, help="rounds per cell (default 7)")
    p.add_argument("--round-ms", type=float, default=30.0, help="least duration of the slowest contender's round (default 30 ms)")
    p.add_argument("--batch", type=int, default=10_000, help="problems per batch (default 10,000)")
    p.add_argument("--sizes", help="square sizes only, comma-separated (no rectangles)")
    p.add_argument("--quick", action="store_true", help="fewer sizes")
    p.add_argument("--only", choices=["single", "batch", "overhead"], help="one table")
    args = p.parse_args()
    rng = np.random.default_rng(48)
    header(args)
    misses = []
    if args.only in (None, "single"):
        misses = single_tables(args, rng)
    if args.only in (None, "batch"):
        batch_table(args, rng)
    if args.only in (None, "overhead"):
        overhead_lines(args, rng)
    if args.only in (None, "single"):
        if misses:
            print("Cells where warpath is slower (best): " + ", ".join(f"{k} {s} {r:.2f}x" for k, s, r in misses))
        else:
            print("warpath is at least as fast as scipy (best) in every single-call cell.")
    print(f"\nload average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
