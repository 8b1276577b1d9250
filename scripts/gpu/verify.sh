#!/usr/bin/env bash
# One device call's worth of GPU verification: run it on the machine with the GPU, from the
# repository root, after `cargo xtask gpu-bundle` here and with target/gpu-bundle.tar.gz carried
# (23 MiB compressed; the unpacked folder is close to the 64 MiB transfer limit).
#
#   bash scripts/gpu/verify.sh tests          # every test executable, WARPATH_REQUIRE_GPU=1, + demo
#   bash scripts/gpu/verify.sh bench [FILTER] # criterion benches (short) + torch/cupy baselines
#   bash scripts/gpu/verify.sh chart          # the Euler sweep chart (euler.csv, euler.svg)
#   bash scripts/gpu/verify.sh gputests [SECONDS]  # only the GPU tests (as `all` runs them)
#   bash scripts/gpu/verify.sh scale [SIZE THREADS] # assemble a synthetic genome (60M), GPU and CPU
#   bash scripts/gpu/verify.sh kprof          # the GPU k-means step: shapes, ncu per kernel, torch
#   bash scripts/gpu/verify.sh kblas [SECONDS] # k-means products: cuBLAS against the own kernels,
#        tests of both on hardware, marginal step times, torch's step, then every GPU test
#   bash scripts/gpu/verify.sh all [SECONDS]  # the one-call plan (issue 33), within SECONDS (450):
#        GPU tests, demo, headline commands beside torch/cupy, reproduce --quick; 8 files in $OUT
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
# Every GPU test (names carry gpu or cuda, as CI's simulated step selects them), each executable
# under 60 s, skipped once fewer than $1 seconds of the budget are left; tests.log in $out.
gpu_tests() {
  : > "$out/tests.log"
  local failed=() t
  for t in "$bundle"/tests/*; do
    [ "$(left)" -gt "$1" ] || { echo "SKIPPED (time): $t" >> "$out/tests.log"; continue; }
    echo "=== test $t" >> "$out/tests.log"
    if ! (cd "$bundle" && WARPATH_BUNDLE=1 WARPATH_BIN="$PWD/bin/warpath" WARPATH_REQUIRE_GPU=1 \
          timeout 60 "$OLDPWD/$t" gpu cuda --test-threads=8) >> "$out/tests.log" 2>&1; then
      failed+=("$t")
    fi
  done
  echo "FAILED: ${failed[*]:-none}" >> "$out/tests.log"
}
# cuBLAS for the k-means products (gpu-runtime's blas.rs loads it by name): where the loader
# does not find it, the directory of the first libcublas.so* of the CUDA toolkit or of the
# nvidia-cublas wheel goes on LD_LIBRARY_PATH. Prints what it found.
use_cublas() {
  if ldconfig -p 2>/dev/null | grep -q 'libcublas\.so'; then
    ldconfig -p | grep 'libcublas\.so' | head -3
    return
  fi
  local dir
  for dir in /usr/local/cuda/lib64 /usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib \
      $(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null); do
    if ls "$dir"/libcublas.so* > /dev/null 2>&1; then
      export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      ls "$dir"/libcublas.so*
      return
    fi
  done
  echo "no libcublas.so found: k-means runs on warpath's own product kernels"
}
budget=450
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
w="$bundle/bin/warpath"
use_cublas
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
  all)
    # Everything in one call, each step under its own timeout and written as it goes, so a
    # call cut off still returns what ran. At most 8 files: nvidia-smi.txt, info.json,
    # tests.log, demo.json, headline.jsonl (one JSON object per command, its name added),
    # headline.log (stderr of the commands and the torch/cupy baselines), baselines.jsonl,
    # reproduce.log.
    budget=${2:-450}
    "$w" info --json > "$out/info.json" 2>&1
    # 1. Every GPU test (names carry gpu or cuda, as CI's simulated step selects them).
    gpu_tests 300
    # 2. The demo: every GPU row verified against the CPU.
    timeout 60 "$w" demo --size large --json > "$out/demo.json" 2>> "$out/headline.log"
    # 3. Headline commands (JSON, verified by the commands themselves) and their peers.
    run() {  # run NAME SECONDS ARGS...
      local name=$1 secs=$2; shift 2
      [ "$(left)" -gt $((secs + 60)) ] || { echo "SKIPPED (time): $name" >> "$out/headline.log"; return; }
      echo "=== $name: warpath $*" >> "$out/headline.log"
      local t0=$SECONDS j
      j=$(timeout "$secs" "$w" --json "$@" 2>> "$out/headline.log")
      local rc=$?
      # Long lists (centroids, assignments) are left out: the figures are what comes back.
      j=$(printf '%s' "$j" | python3 -c 'import json,sys
try: d=json.load(sys.stdin)
except Exception: d=None
if isinstance(d,dict): d={k:(v if not isinstance(v,list) or len(v)<=64 else f"[{len(v)} items]") for k,v in d.items()}
print(json.dumps(d))')
      echo "{\"name\": \"$name\", \"rc\": $rc, \"wall_s\": $((SECONDS - t0)), \"result\": $j}" >> "$out/headline.jsonl"
    }
    : > "$out/headline.jsonl"
    run sort-u32-2^28 60 sort --generate 2^28 --type u32 --backend cuda --discard
    run sort-u32-2^28-cpu 60 sort --generate 2^28 --type u32 --backend cpu --discard
    run distinct-u32-2^28-range1000 60 distinct --generate 2^28 --type u32 --range 1000 --counts --backend cuda --discard
    run euler-1e8 90 euler --generate 1e8 --backend cuda --discard
    run kmeans-1e6x256-k1024-f32 90 kmeans --generate 1e6 --dim 256 --k 1024 --dtype f32 --init random --max-iter 5 --tol 0 --backend cuda
    run kmeans-1e6x256-k16384-f32 120 kmeans --generate 1e6 --dim 256 --k 16384 --dtype f32 --init random --max-iter 3 --tol 0 --backend cuda
    run lap-auction-5000 60 lap --generate 5000 --solver auction --backend cuda
    run lap-auction-10000 60 lap --generate 10000 --solver auction --backend cuda
    if [ -f target/gpu-data/ecoli-10x.fa.gz ]; then  # E. coli reads (10x), carried from the dev machine
      for b in cuda cpu; do
        run "kmers-ecoli10x-$b" 60 kmers target/gpu-data/ecoli-10x.fa.gz --k 31 --backend $b --histo /tmp/histo-$b.txt
        run "assemble-ecoli10x-$b" 90 assemble target/gpu-data/ecoli-10x.fa.gz --k 31 --backend $b --unitigs /tmp/unitigs-$b.fa
      done
      cmp /tmp/unitigs-cuda.fa /tmp/unitigs-cpu.fa >> "$out/headline.log" 2>&1 && echo "unitigs: GPU file = CPU file" >> "$out/headline.log"
    fi
    run fhn-explicit-2^24 60 fhn --scheme explicit --scenario gaussian --dx 0.5 --length 8388608 --dt 0.1 --t-end 10 --backend cuda
    # Crossovers for Exec::Auto: the same command at small sizes on each side.
    for b in cuda cpu; do
      for p in 16 20 24; do
        run "sort-u32-2^$p-$b" 20 sort --generate 2^$p --type u32 --backend $b --discard
        run "distinct-u32-2^$p-$b" 20 distinct --generate 2^$p --type u32 --range 1000 --backend $b --discard
      done
      run "euler-1e6-$b" 20 euler --generate 1e6 --backend $b --discard
      run "kmeans-1e5x16-k64-$b" 30 kmeans --generate 1e5 --dim 16 --k 64 --init random --max-iter 10 --tol 0 --backend $b
      run "fhn-explicit-2^18-$b" 30 fhn --scheme explicit --scenario gaussian --dx 0.5 --length 131072 --dt 0.1 --t-end 10 --backend $b
      run "lap-auction-1000-$b" 30 lap --generate 1000 --solver auction --backend $b
    done
    [ "$(left)" -gt 150 ] && PYTHONUNBUFFERED=1 OUT="$out" E2E_MAX_P=24 timeout $(( $(left) - 120 )) python3 scripts/gpu/baselines.py \
        copy_bandwidth torch_sort cupy_sort_scan torch_scan torch_unique cusparse torch_kmeans >> "$out/headline.log" 2>&1
    # 4. The seed experiments' GPU rows at their quick sizes, in the time that is left.
    [ "$(left)" -gt 20 ] && timeout $(( $(left) - 10 )) "$w" reproduce --quick --out /tmp/reproduce > "$out/reproduce.log" 2>&1
    [ -f /tmp/reproduce/REPORT.md ] && cat /tmp/reproduce/REPORT.md >> "$out/reproduce.log"
    echo "all: done in $((SECONDS - start)) s" >> "$out/headline.log"
    exit 0 ;;
  kblas)
    # The k-means product engines (issue 49, target 1): cuBLAS (`blas`) and the tensor-core
    # kernel (`tensor`) on the same commands. 1. the GPU tests of gpu-runtime and clustering on
    # hardware (both engines against the CPU's labels); 2. per shape and engine, the command at
    # 2 and at 7 iterations (kblas.jsonl: one object per run; the difference / 5 is only a
    # rough step time, as the commands' seconds include host work that varies from run to run:
    # kprof's ncu times are a step's device time); 3. torch's step;
    # 4. every GPU test in the time left (tests.log).
    budget=${2:-420}
    : > "$out/kblas.log"
    "$w" --json info > "$out/info.json" 2>&1
    : > "$out/ktests.log"
    for t in "$bundle"/tests/*; do
      case "$(basename "$t")" in
        gpu*runtime*|clustering*)
          echo "=== test $t" >> "$out/ktests.log"
          (cd "$bundle" && WARPATH_BUNDLE=1 WARPATH_BIN="$PWD/bin/warpath" WARPATH_REQUIRE_GPU=1 \
            timeout 90 "$OLDPWD/$t" gpu cuda blas --test-threads=8) >> "$out/ktests.log" 2>&1 \
            || echo "FAILED: $t" >> "$out/ktests.log" ;;
      esac
    done
    # A first command pays the driver's compile of the PTX; later ones find it cached.
    timeout 60 "$w" kmeans --generate 1e5 --dim 64 --k 256 --dtype f32 --init random --max-iter 2 \
      --backend cuda > /dev/null 2>> "$out/kblas.log"
    : > "$out/kblas.jsonl"
    shapes=${KBLAS_SHAPES:-"1e6,256,1024 1e6,256,16384 2e5,128,1024 1e5,256,4096 1e6,64,256"}
    for shape in $shapes; do
      set -- ${shape//,/ }
      for engine in blas tensor; do
        for iters in 2 7; do
          [ "$(left)" -gt 150 ] || { echo "SKIPPED (time): $shape $engine" >> "$out/kblas.log"; continue; }
          echo "=== n $1 d $2 k $3 $engine $iters" >> "$out/kblas.log"
          WARPATH_KMEANS_PRODUCT=$engine timeout 120 "$w" --json kmeans --generate "$1" --dim "$2" --k "$3" \
            --dtype f32 --init random --max-iter $iters --tol 0 --backend cuda 2>> "$out/kblas.log" \
            | python3 -c 'import json,sys
d=json.load(sys.stdin); d={k:v for k,v in d.items() if not isinstance(v,list)}
d["engine"]=sys.argv[1]; print(json.dumps(d))' "$engine" >> "$out/kblas.jsonl" 2>> "$out/kblas.log"
        done
      done
    done
    [ "$(left)" -gt 100 ] && PYTHONUNBUFFERED=1 OUT="$out" timeout 90 python3 scripts/gpu/baselines.py torch_kmeans >> "$out/kblas.log" 2>&1
    gpu_tests 20
    echo "kblas: done in $((SECONDS - start)) s" >> "$out/kblas.log"
    exit 0 ;;
  gputests)
    # Only the GPU tests, within SECONDS (default 150).
    budget=${2:-150}
    gpu_tests 0 ;;
  scale)
    # Assembly at scale on the device (issue 36): a seeded synthetic genome of SIZE (default
    # 60M) and 20x reads made there by the bundled synthetic_genome (as
    # crates/assembly/scripts/scale.sh), then `warpath assemble` with unitigs and eulertigs on
    # the GPU and on the CPU (THREADS, default all cores), the files compared. scale.jsonl: one
    # JSON object per run (its stages and peak memory), scale.log: their stderr and the checks.
    size=${2:-60M}; threads=${3:-$(nproc)}
    g=/tmp/warpath-scale; mkdir -p "$g"
    t0=$SECONDS
    "$bundle/bin/synthetic_genome" "$size" "$g/genome.fa" "$g/reads.fa" 20 0.005 1 > "$out/scale.log" 2>&1
    echo "reads made in $((SECONDS - t0)) s: $(du -h "$g/reads.fa" | cut -f1)" >> "$out/scale.log"
    : > "$out/scale.jsonl"
    for b in cuda cpu; do
      echo "=== assemble --backend $b --threads $threads" >> "$out/scale.log"
      t0=$SECONDS
      timeout 240 "$w" --json assemble "$g/reads.fa" --k 31 --threads "$threads" --backend $b \
        --unitigs "$g/u-$b.fa" --eulertigs "$g/e-$b.fa" >> "$out/scale.jsonl" 2>> "$out/scale.log"
      echo "rc $? wall $((SECONDS - t0)) s" >> "$out/scale.log"
    done
    cmp "$g/u-cuda.fa" "$g/u-cpu.fa" >> "$out/scale.log" 2>&1 && echo "unitigs: GPU file = CPU file" >> "$out/scale.log"
    cmp "$g/e-cuda.fa" "$g/e-cpu.fa" >> "$out/scale.log" 2>&1 && echo "eulertigs: GPU file = CPU file" >> "$out/scale.log"
    exit 0 ;;
  kprof)
    # Where the GPU k-means step's time goes (issue 34): the step at 10^6 x 256, k = 1,024 and
    # the issue's embedding shapes, timed by the command itself, then per-kernel device times
    # (ncu, one metric) and one launch of each product kernel in detail; torch's step beside.
    : > "$out/kprof.log"
    for shape in "1e6 256 1024" "2e5 128 1024" "1e5 256 4096" "1e6 16 64"; do
      set -- $shape
      echo "=== kmeans n $1 d $2 k $3 f32 (5 iterations)" >> "$out/kprof.log"
      timeout 60 "$w" --json kmeans --generate "$1" --dim "$2" --k "$3" --dtype f32 --init random \
        --max-iter 5 --tol 0 --backend cuda 2>> "$out/kprof.log" | python3 -c 'import json,sys
d=json.load(sys.stdin); print(json.dumps({k:v for k,v in d.items() if not isinstance(v,list)}))' >> "$out/kprof.log" 2>&1
    done
    ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    if [ -n "$ncu" ]; then
      echo "=== ncu per-kernel times, 1e6 x 256, k = 1024, 2 iterations" >> "$out/kprof.log"
      timeout 120 "$ncu" --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel \
        "$w" kmeans --generate 1e6 --dim 256 --k 1024 --dtype f32 --init random --max-iter 2 --tol 0 --backend cuda >> "$out/kprof.log" 2>&1
      echo "=== ncu detail of the product kernels" >> "$out/kprof.log"
      timeout 120 "$ncu" --clock-control none -k regex:'top|settle' --launch-skip 2 --launch-count 2 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis \
        --section MemoryWorkloadAnalysis --section WarpStateStats \
        "$w" kmeans --generate 1e6 --dim 256 --k 1024 --dtype f32 --init random --max-iter 2 --tol 0 --backend cuda >> "$out/kprof.log" 2>&1
    else
      echo "no ncu" >> "$out/kprof.log"
    fi
    PYTHONUNBUFFERED=1 OUT="$out" timeout 120 python3 scripts/gpu/baselines.py torch_kmeans >> "$out/kprof.log" 2>&1
    exit 0 ;;
  *) echo "usage: verify.sh tests|gputests [SECONDS]|scale [SIZE THREADS]|kprof|kblas [SECONDS]|bench [FILTER]|chart|all [SECONDS]"; exit 2 ;;
esac
