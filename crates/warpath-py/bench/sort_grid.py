#!/usr/bin/env python3
"""Every cell of ``warpath.sort`` / ``argsort`` / ``unique`` against numpy: sizes x dtypes x ops.

One command prints, for n in 10^3 .. 10^8 (``--sizes``), dtypes u32, u64, i64, f32, f64
(``--dtypes``) and the three operations (``--ops``), warpath's time and numpy's in the same
process on the same array, the contenders alternating sample by sample, best and median of
``--repeat`` samples each, and the ratios numpy / warpath (above 1: warpath is faster).
A sample of a short call times a loop of calls long enough (``--min-sample``, default 2 ms)
and divides; long calls are timed one by one.

What numpy runs is what its users call: ``np.sort(a)``, ``np.argsort(a)`` (numpy's default
kind, an unstable quicksort: AVX-512 x86-simd-sort where the CPU has it; the ratio of the
target), ``np.unique(a)``. ``argsort`` rows also time ``np.argsort(a, kind="stable")``,
which is what warpath's argsort returns (warpath's argsort is always stable), in the column
``stable``. Every result is checked against numpy's (sort bitwise up to NaN payloads, argsort
equal to numpy's stable argsort, unique's values).

Before the table: the CPU model, numpy's version and the CPU features its dispatch uses
here, warpath's widest instruction set, the threads, the load average, and the per-call
overhead (``n = 1`` and ``n = 16``, u32 and f64, each op).

``--no-avx512`` runs both sides without AVX-512: it sets ``WARPATH_DISABLE_AVX512=1`` and
``NPY_DISABLE_CPU_FEATURES`` to numpy's AVX-512 dispatch targets on this numpy (those of
``numpy._core._multiarray_umath.__cpu_dispatch__`` named ``X86_V4`` or containing ``512``:
``"X86_V4 AVX512_ICL AVX512_SPR"`` for numpy 2.4; older numpy lists ``AVX512F``,
``AVX512_SKX``, ...), and re-executes the interpreter, since numpy reads the variable when
it is imported. The header shows what numpy dispatches to afterwards (and a 10^6 u32
``np.sort`` time, about 1.6x longer on Zen 5 without AVX-512).

Sizes per op (and per dtype): the default ``--max-n
sort=1e8,argsort=1e8,unique=1e7,unique:f32=1e8,unique:f64=1e8`` runs every cell but
``unique`` of integers at 10^8: numpy's ``unique`` of integers counts through a hash table (3 s
a call at 10^6 on Zen 5, minutes at 10^8). ``argsort`` at 10^8 takes numpy 10-25 s a call on
one core (its default and its stable kind alike, with NaNs in the input); 10^8 cells take
``--repeat-large`` (default 3) samples. The whole default grid takes about 20-30 minutes. Memory: 10^8 x 8 bytes is 800 MB per array;
an argsort cell holds the input, three int64 results and numpy's scratch, about 4 GB.

Usage::

    RAYON_NUM_THREADS=2 python crates/warpath-py/bench/sort_grid.py [--no-avx512] \\
        [--sizes 1e3,1e4,1e5,1e6,1e7,1e8] [--dtypes u32,u64,i64,f32,f64] \\
        [--ops sort,argsort,unique] [--max-n sort=1e8,argsort=1e8,unique=1e7] \\
        [--repeat 9] [--markdown]

Inputs are those of ``sort_vs_numpy.py``: integers uniform over the dtype (so nearly all
distinct), floats standard normal with 1% NaN (both signs) and 1% signed zeros.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

DTYPES = ("u32", "u64", "i64", "f32", "f64")
NUMPY_NAMES = {"u32": "uint32", "u64": "uint64", "i32": "int32", "i64": "int64", "f32": "float32", "f64": "float64"}
OPS = ("sort", "argsort", "unique")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1e3,1e4,1e5,1e6,1e7,1e8")
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--max-n", default="sort=1e8,argsort=1e8,unique=1e7,unique:f32=1e8,unique:f64=1e8",
                    help="largest n per op (op=n or op:dtype=n, comma-separated); larger cells are skipped")
    ap.add_argument("--repeat", type=int, default=9, help="samples per contender (n < 1e8)")
    ap.add_argument("--repeat-large", type=int, default=3, help="samples per contender at n >= 1e8")
    ap.add_argument("--min-sample", type=float, default=2e-3,
                    help="seconds a sample lasts at least (short calls are looped)")
    ap.add_argument("--prefault-gb", type=float, default=4.0,
                    help="GiB touched and freed before timing (fresh memory on a VM is slow to touch)")
    ap.add_argument("--no-avx512", action="store_true",
                    help="AVX-512 off on both sides (WARPATH_DISABLE_AVX512, NPY_DISABLE_CPU_FEATURES)")
    ap.add_argument("--no-overhead", action="store_true", help="skip the per-call overhead lines")
    ap.add_argument("--markdown", action="store_true", help="also print a markdown table")
    return ap.parse_args(argv)


def reexec_without_avx512():
    """Re-runs this script with both switches set (numpy reads its variable at import)."""
    import numpy as np  # only to read the names of its dispatch targets; this process is replaced

    from numpy._core._multiarray_umath import __cpu_dispatch__ as dispatch  # type: ignore

    wide = [f for f in dispatch if f == "X86_V4" or "512" in f]
    env = dict(os.environ)
    env["WARPATH_DISABLE_AVX512"] = "1"
    env["NPY_DISABLE_CPU_FEATURES"] = " ".join(wide)
    env["_WARPATH_SORT_GRID_CHILD"] = "1"
    del np
    os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            info = {}
            for line in f:
                if ":" in line:
                    k, v = line.split(":", 1)
                    info.setdefault(k.strip(), v.strip())
                if not line.strip() and info:
                    break
        return (f"{info.get('model name', '?')} (vendor {info.get('vendor_id', '?')}, family "
                f"{info.get('cpu family', '?')}, model {info.get('model', '?')})")
    except OSError:
        try:
            return subprocess.run(["lscpu"], capture_output=True, text=True).stdout.split("\n")[0]
        except OSError:
            return "?"


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def header(np, warpath, args):
    from numpy._core._multiarray_umath import __cpu_dispatch__ as dispatch  # type: ignore
    from numpy._core._multiarray_umath import __cpu_features__ as features  # type: ignore

    active = [f for f in dispatch if features.get(f)]
    print(f"CPU: {cpu_model()}, os.cpu_count() {os.cpu_count()}")
    print(f"numpy {np.__version__}: dispatch targets built {list(dispatch)}, usable here {active}"
          f" (NPY_DISABLE_CPU_FEATURES={os.environ.get('NPY_DISABLE_CPU_FEATURES', '')!r})")
    flags = cpu_flags()
    has512 = all(f in flags for f in ("avx512f", "avx512vl", "avx512bw", "avx512dq"))
    off = os.environ.get("WARPATH_DISABLE_AVX512", "") not in ("", "0")
    print(f"warpath {warpath.__version__}: AVX-512 {'on' if has512 and not off else 'off'}"
          f" (CPU has AVX-512F/VL/BW/DQ: {has512}; WARPATH_DISABLE_AVX512={os.environ.get('WARPATH_DISABLE_AVX512', '')!r}),"
          f" RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS', '(all cores)')}")
    a = np.random.default_rng(1).integers(0, 2**32, 10**6, dtype=np.uint64).astype(np.uint32)
    t = min(_once(lambda: np.sort(a)) for _ in range(5))
    print(f"numpy np.sort(10^6 u32): {t * 1e3:.2f} ms (a check of its dispatch); load average"
          f" {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _once(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def make(np, dtype, n, rng):
    dt = np.dtype(NUMPY_NAMES[dtype])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    a = rng.standard_normal(n).astype(dt)
    k = max(n // 100, 1)
    if n >= 100:
        a[rng.integers(0, n, k)] = np.nan
        a[rng.integers(0, n, k)] = -np.nan
        a[rng.integers(0, n, k)] = 0.0
        a[rng.integers(0, n, k)] = -0.0
    return a


def timed(contenders, repeat, min_sample):
    """Per-call best and median seconds of each contender, sampled alternately."""
    # calibrate: calls per sample so that a sample lasts at least min_sample
    loops = {}
    for name, fn in contenders:
        fn()  # warm-up (first-touch of this size's buffers)
        t = _once(fn)
        loops[name] = max(1, int(min_sample / max(t, 1e-9)) + 1) if t < min_sample else 1
    wall = {name: [] for name, _ in contenders}
    for _ in range(repeat):
        for name, fn in contenders:
            k = loops[name]
            t = time.perf_counter()
            for _ in range(k):
                fn()
            wall[name].append((time.perf_counter() - t) / k)
    return {name: (min(w), statistics.median(w)) for name, w in wall.items()}


def check(np, op, got, want):
    if op == "sort":
        return np.array_equal(got, want, equal_nan=got.dtype.kind == "f")
    if op == "argsort":
        return np.array_equal(got, want)
    return np.array_equal(got, want, equal_nan=got.dtype.kind == "f")


def contenders(np, warpath, op, a):
    if op == "sort":
        return [("warpath", lambda: warpath.sort(a)), ("numpy", lambda: np.sort(a))]
    if op == "argsort":
        return [("warpath", lambda: warpath.argsort(a)), ("numpy", lambda: np.argsort(a)),
                ("stable", lambda: np.argsort(a, kind="stable"))]
    return [("warpath", lambda: warpath.unique(a)), ("numpy", lambda: np.unique(a))]


def reference(np, op, a):
    if op == "sort":
        return np.sort(a)
    if op == "argsort":
        return np.argsort(a, kind="stable")
    return np.unique(a)


def fmt_t(s):
    if s < 1e-3:
        return f"{s * 1e6:8.2f} us"
    if s < 1:
        return f"{s * 1e3:8.3f} ms"
    return f"{s:8.3f} s "


def main():
    args = parse_args()
    if args.no_avx512 and not os.environ.get("_WARPATH_SORT_GRID_CHILD"):
        reexec_without_avx512()
    import numpy as np

    import warpath

    sizes = [int(float(s)) for s in args.sizes.split(",")]
    dtypes = args.dtypes.split(",")
    ops = [o for o in OPS if o in args.ops.split(",")]
    max_n = {op: 10**18 for op in OPS}
    for item in filter(None, args.max_n.split(",")):
        key, n = item.split("=")
        max_n[key] = int(float(n))
    if args.prefault_gb > 0:
        b = np.ones(int(args.prefault_gb * 2**30), dtype=np.uint8)
        del b
    header(np, warpath, args)
    print(f"samples: {args.repeat} per contender ({args.repeat_large} at n >= 1e8), alternating,"
          f" each at least {args.min_sample * 1e3:.1f} ms of calls; limits {args.max_n}")
    rng = np.random.default_rng(7)
    if not args.no_overhead:
        print("\nper-call overhead (whole Python calls, per call):")
        for op in ops:
            for d in ("u32", "f64"):
                for n in (1, 16):
                    a = make(np, d, n, rng)
                    t = timed(contenders(np, warpath, op, a), args.repeat, args.min_sample)
                    extra = f"  numpy stable {fmt_t(t['stable'][0])}" if op == "argsort" else ""
                    print(f"  {op:8} n={n:<3} {d}  warpath {fmt_t(t['warpath'][0])}  numpy"
                          f" {fmt_t(t['numpy'][0])}{extra}  (best)", flush=True)
    print()
    print(f"{'op':8} {'n':>9} {'dt':3} | {'warpath best':>12} {'median':>11} | {'numpy best':>11}"
          f" {'median':>11} | ratio best median | numpy stable best, ratio")
    rows = []
    ok_all = True
    for op in ops:
        for n in sizes:
            for d in dtypes:
                if n > max_n.get(f"{op}:{d}", max_n[op]):
                    continue
                a = make(np, d, n, rng)
                ok = check(np, op, reference(np, op, a) if op != "sort" else np.sort(a),
                           {"sort": warpath.sort, "argsort": warpath.argsort, "unique": warpath.unique}[op](a))
                ok_all &= ok
                repeat = args.repeat if n < 10**8 else args.repeat_large
                t = timed(contenders(np, warpath, op, a), repeat, args.min_sample)
                (wb, wm), (nb, nm) = t["warpath"], t["numpy"]
                st = t.get("stable")
                row = (op, n, d, wb, wm, nb, nm, st, ok)
                rows.append(row)
                extra = f" | {fmt_t(st[0])} {st[0] / wb:6.2f}" if st else ""
                print(f"{op:8} {n:>9.0e} {d:3} | {fmt_t(wb)} {fmt_t(wm)} | {fmt_t(nb)} {fmt_t(nm)} |"
                      f" {nb / wb:6.2f} {nm / wm:6.2f}{extra}" + ("" if ok else "  RESULT DIFFERS FROM NUMPY"),
                      flush=True)
                del a
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.markdown:
        print("\n| op | n | dtype | warpath best | warpath median | numpy best | numpy median |"
              " numpy / warpath best | median | numpy stable best | stable / warpath |")
        print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for op, n, d, wb, wm, nb, nm, st, ok in rows:
            s = f"{fmt_t(st[0]).strip()} | {st[0] / wb:.2f}" if st else " | "
            print(f"| {op} | {n:.0e} | {d} | {fmt_t(wb).strip()} | {fmt_t(wm).strip()} | {fmt_t(nb).strip()} |"
                  f" {fmt_t(nm).strip()} | {nb / wb:.2f} | {nm / wm:.2f} | {s} |")
    if not ok_all:
        raise SystemExit("some results differ from numpy's")


if __name__ == "__main__":
    main()
