#!/usr/bin/env python3
"""``warpath sort`` (the command line) against numpy's in-place sort, each in its own process.

For every size and key type: runs ``warpath sort --generate N --type T --discard --json``
``--repeat`` times and keeps the best and median of the sort time it reports (the sort only:
keys generated before the clock, rayon's workers started), then times ``ndarray.sort()``
(in place, so also without the copy) on uniform keys of the same type and size in this
process, best and median of ``--repeat``. Prints the ratio numpy / warpath (above 1: the
command line is faster). Both sort uniform keys over the type's range (floats: [0, 1)).

Usage::

    RAYON_NUM_THREADS=2 python crates/warpath-py/bench/cli_sort_vs_numpy.py \\
        --warpath target/release/warpath [--sizes 1e6,1e7,1e8] [--types u32,u64,i64,f32,f64] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time

import numpy as np

DTYPES = {"u32": np.uint32, "u64": np.uint64, "i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--warpath", default="target/release/warpath")
    ap.add_argument("--sizes", default="1e6,1e7,1e8")
    ap.add_argument("--types", default="u32,u64,i64,f32,f64")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(3)
    print(f"numpy {np.__version__}; warpath: {args.warpath}")
    for n in [int(float(s)) for s in args.sizes.split(",")]:
        for t in args.types.split(","):
            cli = []
            for _ in range(args.repeat):
                out = subprocess.run(
                    [args.warpath, "sort", "--generate", str(n), "--type", t, "--discard", "--json"],
                    check=True, capture_output=True, text=True,
                ).stdout
                rec = json.loads(out)
                if not rec.get("verified", True):
                    raise SystemExit(f"warpath sort did not verify: {rec}")
                cli.append(rec["seconds"])
            dt = np.dtype(DTYPES[t])
            if dt.kind == "f":
                a = rng.random(n).astype(dt)
            else:
                info = np.iinfo(dt)
                a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
            ref = []
            for _ in range(args.repeat):
                b = a.copy()
                t0 = time.perf_counter()
                b.sort()
                ref.append(time.perf_counter() - t0)
            wb, wm, nb, nm = min(cli), statistics.median(cli), min(ref), statistics.median(ref)
            print(
                f"n={n:>10} {t:4}  warpath sort best {wb*1e3:9.2f} ms median {wm*1e3:9.2f} ms | "
                f"numpy a.sort() best {nb*1e3:9.2f} ms median {nm*1e3:9.2f} ms | numpy/warpath best {nb/wb:5.2f} median {nm/wm:5.2f}",
                flush=True,
            )
            del a


if __name__ == "__main__":
    main()
