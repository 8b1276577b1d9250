#!/usr/bin/env bash
# `warpath fhn` at 2^22 + 1 nodes (issue 37): cell updates per second (from --json) and peak
# resident memory (/usr/bin/time -v), two builds interleaved in the same run, REPS times each,
# --t-end 10 and 100, with RAYON_NUM_THREADS unset (every core) and 1.
#
#   bash scripts/fhn_bench.sh OLD_WARPATH NEW_WARPATH [REPS=5]
#
# Prints one line per run: build, threads, t_end, G cell updates/s, seconds, peak RSS (MB).
set -euo pipefail
OLD=$1
NEW=$2
REPS=${3:-5}
echo "# $(lscpu | grep -i 'model name' | sed 's/  */ /g'); $(uptime)"
run() {
    local label=$1 bin=$2 threads=$3 t=$4 out
    while [ -e /work/QUIET ]; do sleep 30; done
    out=$( { env ${threads:+RAYON_NUM_THREADS=$threads} /usr/bin/time -f 'RSS %M' "$bin" fhn \
        --scheme explicit --scenario gaussian --dx 0.5 --length 2097152 --dt 0.1 \
        --t-end "$t" --backend cpu --json; } 2>&1)
    python3 - "$label" "${threads:-all}" "$t" "$out" <<'EOF'
import json, sys
label, threads, t, out = sys.argv[1:]
lines = out.strip().splitlines()
j = json.loads(next(l for l in lines if l.startswith("{")))
rss = int(next(l for l in lines if l.startswith("RSS")).split()[1])
rate = j.get("cell_updates_per_second") or j["n"] * j["steps"] / j["seconds"]
print(f"{label} threads={threads} t_end={t} {rate / 1e9:.3f} G/s {j['seconds']:.3f} s "
      f"{rss / 1024:.0f} MB speed={j['speed']!r}")
EOF
}
for t in 10 100; do
    for threads in "" 1; do
        for _ in $(seq "$REPS"); do
            run old "$OLD" "$threads" "$t"
            run new "$NEW" "$threads" "$t"
        done
    done
done
echo "# $(uptime)"
