#!/usr/bin/env python3
"""Compare warpath's Jonker-Volgenant solver with scipy.optimize.linear_sum_assignment on the
same matrix (written once to a .npy file that both read).

Set-up (scipy is never a build dependency of warpath):

    python3 -m venv /tmp/venv-scipy && /tmp/venv-scipy/bin/pip install scipy numpy
    cargo build --release -p warpath
    /tmp/venv-scipy/bin/python crates/assignment/scripts/compare_scipy.py --n 5000 --reps 3

Runs alternate (scipy, warpath, scipy, warpath, ...) so both see the same machine load, and
the best of `--reps` is reported, as wall-clock seconds and as CPU seconds of the solving
thread (scipy: time.thread_time; warpath: /proc/thread-self/schedstat), the latter being the
fairer figure on a shared, loaded machine. Only the solve is timed (not the file load).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.optimize import linear_sum_assignment


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=5000, help="matrix size n x n")
    ap.add_argument("--cols", type=int, default=None, help="columns (default n)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--dist", choices=["uniform", "exp", "int"], default="uniform")
    ap.add_argument("--warpath", default=os.path.join("target", "release", "warpath"))
    ap.add_argument("--maximize", action="store_true")
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    shape = (args.n, args.cols or args.n)
    if args.dist == "uniform":
        c = rng.random(shape)
    elif args.dist == "exp":
        c = rng.exponential(size=shape)
    else:
        c = rng.integers(0, 1000, size=shape).astype(np.float64)
    path = os.path.join(tempfile.gettempdir(), f"warpath_lap_{shape[0]}x{shape[1]}_{args.dist}_{args.seed}.npy")
    np.save(path, np.ascontiguousarray(c))

    cmd = [args.warpath, "--json", "lap", path, "--solver", "jv"] + (["--maximize"] if args.maximize else [])
    sp_wall, sp_cpu, wp_wall, wp_cpu = [], [], [], []
    sp_cost = wp_cost = None
    for _ in range(args.reps):
        t0, c0 = time.perf_counter(), time.thread_time()
        r, k = linear_sum_assignment(c, maximize=args.maximize)
        sp_wall.append(time.perf_counter() - t0)
        sp_cpu.append(time.thread_time() - c0)
        sp_cost = float(c[r, k].sum())
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        rep = json.loads(out)
        if not rep.get("verified"):
            sys.exit(f"warpath did not verify its result: {rep.get('check')}")
        wp_wall.append(rep["seconds"])
        if rep.get("cpu_seconds") is not None:
            wp_cpu.append(rep["cpu_seconds"])
        wp_cost = rep["cost"]

    rel = abs(sp_cost - wp_cost) / max(1.0, abs(sp_cost))
    best = lambda xs: min(xs) if xs else float("nan")
    print(f"matrix {shape[0]}x{shape[1]} {args.dist} seed {args.seed} ({path}), best of {args.reps}")
    print(f"  scipy {__import__('scipy').__version__:>8}: wall {best(sp_wall):8.3f} s  cpu {best(sp_cpu):8.3f} s  cost {sp_cost:.9f}")
    print(f"  warpath jv     : wall {best(wp_wall):8.3f} s  cpu {best(wp_cpu):8.3f} s  cost {wp_cost:.9f}")
    print(f"  ratio warpath/scipy: wall {best(wp_wall) / best(sp_wall):.3f}  cpu {best(wp_cpu) / best(sp_cpu):.3f}")
    print(f"  costs agree: {rel < 1e-9} (relative difference {rel:.2e})")
    print(json.dumps({"n": shape[0], "cols": shape[1], "scipy_wall": sp_wall, "scipy_cpu": sp_cpu,
                      "warpath_wall": wp_wall, "warpath_cpu": wp_cpu, "scipy_cost": sp_cost,
                      "warpath_cost": wp_cost}))
    if rel >= 1e-9:
        sys.exit(1)


if __name__ == "__main__":
    main()
