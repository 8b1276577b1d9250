#!/usr/bin/env bash
# Time per iteration of the seed's small k-means fits (the quick shapes of kmeans-vary-n,
# kmeans-vary-d and kmeans-vary-k, every backend of `warpath reproduce`), this checkout against
# another commit (default a71c666, the build before issue 34), interleaved in the same run:
# ROUNDS rounds, each runs the base build's harness and then this one's on every shape
# (examples/seed_small.rs, REPEATS fits per shape and backend, run r from seed r), and the
# table gives per shape and backend the median over all fits of seconds per iteration, and
# the ratio this / base.
#
#   crates/clustering/scripts/seed_small_vs.sh [BASE_COMMIT] [ROUNDS] [REPEATS]
#
# Builds both (release, `-p clustering --example seed_small`) under $WORK
# (default /tmp/kmeans-seed-small). Quote the machine's load (printed) with the figures.
set -euo pipefail
base=${1:-a71c666}
rounds=${2:-7}
repeats=${3:-5}
root=$(git rev-parse --show-toplevel)
work=${WORK:-/tmp/kmeans-seed-small}
mkdir -p "$work/base"
if [ ! -f "$work/base/.commit" ] || [ "$(cat "$work/base/.commit")" != "$base" ]; then
    rm -rf "$work/base" && mkdir -p "$work/base"
    git -C "$root" archive "$base" | tar -x -C "$work/base"
    echo "$base" > "$work/base/.commit"
fi
# The same harness for both; the base has no `Algorithm`, so its copy always runs `auto`.
mkdir -p "$work/base/crates/clustering/examples"
sed -e '/let algorithm: clustering::Algorithm = a/,/expect("algorithm");/d' \
    -e 's/seed_kmeans(k, r as u64).algorithm(algorithm)/seed_kmeans(k, r as u64)/' \
    "$root/crates/clustering/examples/seed_small.rs" > "$work/base/crates/clustering/examples/seed_small.rs"
(cd "$work/base" && CARGO_TARGET_DIR="$work/base-target" cargo build -q --release -p clustering --example seed_small)
(cd "$root" && CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" cargo build -q --release -p clustering --example seed_small)
old="$work/base-target/release/examples/seed_small"
new="${CARGO_TARGET_DIR:-$root/target}/release/examples/seed_small"
out="$work/runs.txt"
: > "$out"
echo "CPU: $(lscpu | grep -i 'model name' | sed 's/.*: *//'), $(nproc) threads"
echo "load before: $(uptime | sed 's/.*load average: //')"
for r in $(seq 1 "$rounds"); do
    "$old" "$repeats" | sed 's/^/base /' >> "$out"
    "$new" "$repeats" | sed 's/^/this /' >> "$out"
done
echo "load after: $(uptime | sed 's/.*load average: //')"
python3 - "$out" <<'PY'
import sys, statistics
from collections import defaultdict
t = defaultdict(list); it = {}
for line in open(sys.argv[1]):
    b, n, d, k, be, r, s, iters, inertia = line.split()
    key = (int(n), int(d), int(k), be)
    t[(b,) + key].append(float(s) / max(int(iters), 1))
    it.setdefault((b,) + key, set()).add(inertia)
keys = sorted({k[1:] for k in t}, key=lambda k: (k[3], k[0], k[1], k[2]))
print(f"{'n':>7} {'d':>4} {'k':>4} {'backend':>15} {'base ms/it':>11} {'this ms/it':>11} {'this/base':>9}")
worst = 0
for key in keys:
    a = statistics.median(t[('base',) + key]) * 1e3
    b = statistics.median(t[('this',) + key]) * 1e3
    worst = max(worst, b / a)
    same = "" if it[('base',) + key] == it[('this',) + key] else "  (inertia differs)"
    print(f"{key[0]:>7} {key[1]:>4} {key[2]:>4} {key[3]:>15} {a:>11.4f} {b:>11.4f} {b / a:>9.2f}{same}")
print(f"largest ratio this/base: {worst:.2f}")
PY
