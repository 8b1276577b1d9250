#!/usr/bin/env bash
# One device call's worth of GPU verification: run it on the machine with the GPU, from the
# repository root, after `cargo xtask gpu-bundle` here and with target/gpu-bundle.tar.gz carried
# (23 MiB compressed; the unpacked folder is close to the 64 MiB transfer limit).
#
#   bash scripts/gpu/verify.sh tests          # every test executable, WARPATH_REQUIRE_GPU=1, + demo
#   bash scripts/gpu/verify.sh bench [FILTER] # criterion benches (short) + torch/cupy baselines
#   bash scripts/gpu/verify.sh chart          # the Euler sweep chart (euler.csv, euler.svg)
#
# Logs go to $OUT (the device tool brings them back) or ./gpu-out.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
bundle=target/gpu-bundle
if [ ! -x "$bundle/run.sh" ] && [ -f target/gpu-bundle.tar.gz ]; then
  tar xzf target/gpu-bundle.tar.gz -C target
fi
[ -x "$bundle/run.sh" ] || { echo "no $bundle/run.sh: run cargo xtask gpu-bundle and carry target/gpu-bundle.tar.gz (or target/gpu-bundle)"; exit 2; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/nvidia-smi.txt"
case "${1:-tests}" in
  tests)
    WARPATH_REQUIRE_GPU=1 "$bundle/run.sh" 2>&1 | tee "$out/tests.log"
    status=${PIPESTATUS[0]}
    "$bundle/bin/warpath" info --json | tee "$out/info.json"
    "$bundle/bin/warpath" demo --size large 2>&1 | tee "$out/demo.log"
    exit $status ;;
  bench)
    shift
    "$bundle/run.sh" --bench "$@" --warm-up-time 1 --measurement-time 3 --noplot 2>&1 | tee "$out/bench.log"
    PYTHONUNBUFFERED=1 OUT="$out" python3 scripts/gpu/baselines.py 2>&1 | tee "$out/baselines.log" ;;
  chart)
    # The seed's chart: Euler circuit time against edges (1M..100M), CPU and GPU, deep and
    # shallow (a few minutes; its own device call). The CSV gains a row per measurement, so a
    # run stopped by the time limit (540 s, under the device's 600 s per call) keeps its rows.
    timeout 540 "$bundle/bin/warpath" euler --sweep --reps 3 --csv "$out/euler.csv" --plot "$out/euler.svg" 2>&1 | tee "$out/euler-sweep.log" ;;
  *) echo "usage: verify.sh tests|bench [FILTER]|chart"; exit 2 ;;
esac
