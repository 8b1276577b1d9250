#!/usr/bin/env bash
# warpath assemble at scale beside GGCAT, BCALM2 and KMC3, on a seeded synthetic genome with
# planted diverged repeats (examples/synthetic_genome.rs: 1-10 kbp units, 0.5-2% divergence,
# one copy per 30 kbp) and 150 bp reads with 0.5% substitutions simulated from it.
#
# Usage: crates/assembly/scripts/scale.sh SIZE [COVERAGE=20] [THREADS=2] [RUNS=3] [BOUND]
#   SIZE      genome size: 60M, 250M, ...
#   BOUND     also run warpath with --max-memory BOUND (e.g. 2G), a row of its own
# Environment:
#   GGCAT=/path/to/ggcat   add GGCAT 2 (its binary)
#   GGCAT_SRC=DIR          or a checkout of https://github.com/algbio/ggcat (not on crates.io;
#                          its libraries come from crates.io, stable Rust): the script builds
#                          it with `cargo build --release -p ggcat_cmdline` (~10 min on 2 cores)
#   KMERS=0                skip `warpath kmers` and KMC (their text counts are large: 2 GB
#                          at 60 Mbp)
#   TOOLS="warpath bcalm kmc ggcat"   which tools (default: all available)
#   EULERTIGS=1            also one run each of `warpath assemble --eulertigs` and
#                          `ggcat build --eulertigs` (counts and lengths compared)
#   WORK=DIR               where data and outputs go (default target/assembly-scale)
#
# Installs BCALM2 and KMC3 from Debian when missing; builds warpath in release. The tools run
# interleaved, RUNS times each; the table gives the median and best wall seconds and the
# median peak resident memory (/usr/bin/time -v), with the load average before and after.
# Afterwards the unitigs are compared as sets of canonical spellings (canonical_unitigs.py).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
size="${1:?usage: scale.sh SIZE [COVERAGE] [THREADS] [RUNS] [BOUND]}"
cov="${2:-20}"; threads="${3:-2}"; runs="${4:-3}"; bound="${5:-}"
work="$(realpath -m "${WORK:-$root/target/assembly-scale}")"  # absolute: BCALM2 runs in $work/out
k=31
mkdir -p "$work"
cd "$root"

tools="${TOOLS:-warpath bcalm kmc ggcat}"
if [ "${KMERS:-1}" = 0 ]; then tools="${tools//kmc/}"; fi
if [ -z "${GGCAT:-}" ] && [ -n "${GGCAT_SRC:-}" ]; then
    (cd "$GGCAT_SRC" && cargo build --release -q -p ggcat_cmdline)
    GGCAT="$GGCAT_SRC/target/release/ggcat"
fi
need=()
for t in bcalm kmc; do
    if [[ " $tools " == *" $t "* ]] && ! command -v "$t" >/dev/null; then need+=("$t"); fi
done
if [ ${#need[@]} -gt 0 ]; then
    echo "installing from Debian: ${need[*]}"
    apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
cargo build --release -q -p warpath -p assembly --examples --bins
bin="$root/target/release"

genome="$work/syn-$size.fa"
reads="$work/syn-$size-${cov}x.fa"
if [ ! -s "$reads" ]; then
    "$bin/examples/synthetic_genome" "$size" "$genome" "$reads" "$cov" 0.005 1
fi
echo "== $(basename "$reads"): $(stat -c %s "$reads") bytes, k = $k, $threads threads, $runs runs"
lscpu | grep -i 'model name' | sed 's/^ */cpu: /'
echo "load before: $(uptime | sed 's/.*load average: //')"

# "seconds peak_kib" of one run; the command's output goes to $work/NAME.log
measure() {
    local name="$1"; shift
    /usr/bin/time -v -o "$work/$name.time" "$@" >"$work/$name.log" 2>&1 || {
        echo "$name failed:" >&2; tail -5 "$work/$name.log" >&2; return 1; }
    local wall peak
    wall=$(grep 'Elapsed (wall clock)' "$work/$name.time" | awk '{print $NF}' \
        | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
    peak=$(grep 'Maximum resident set size' "$work/$name.time" | awk '{print $NF}')
    echo "$wall $peak"
}

declare -A times mems
run_tool() {
    local name="$1"; shift
    read -r t m < <(measure "$name" "$@")
    times[$name]+="$t "; mems[$name]+="$m "
    if [ "${name%%-*}" = warpath ]; then
        head -1 "$work/$name.log" > "$work/$name.json" || true
    fi
}

d="$work/out"; mkdir -p "$d/kmc-tmp" "$d/ggcat-tmp"
for r in $(seq "$runs"); do
    for tool in $tools; do
        case "$tool" in
            warpath)
                run_tool warpath "$bin/warpath" assemble "$reads" --k $k --threads "$threads" \
                    --unitigs "$d/warpath.fa" --backend cpu --json
                if [ -n "$bound" ]; then
                    run_tool "warpath-$bound" "$bin/warpath" assemble "$reads" --k $k \
                        --threads "$threads" --max-memory "$bound" --unitigs "$d/warpath-bound.fa" \
                        --backend cpu --json
                fi
                [ "${KMERS:-1}" = 0 ] || run_tool warpath-kmers "$bin/warpath" kmers "$reads" --k $k --threads "$threads" \
                    -o "$d/warpath.counts.txt" --backend cpu --json ;;
            bcalm)
                run_tool bcalm bash -c "cd '$d' && bcalm -in '$reads' -kmer-size $k \
                    -abundance-min 2 -nb-cores $threads -out bcalm" ;;
            kmc)
                run_tool kmc kmc -k$k -ci2 -cs4000000000 -t"$threads" -fm "$reads" "$d/kmc" \
                    "$d/kmc-tmp" ;;
            ggcat)
                if [ -n "${GGCAT:-}" ]; then
                    run_tool ggcat "$GGCAT" build -k $k -s 2 -j "$threads" -t "$d/ggcat-tmp" \
                        -o "$d/ggcat.fa" "$reads"
                fi ;;
        esac
    done
done
echo "load after: $(uptime | sed 's/.*load average: //')"

stat_of() { # median and best of a list
    printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {printf "%s %s\n", a[int((NR+1)/2)], a[1]}'
}
printf '%-24s %10s %10s %12s\n' tool median_s best_s peak_MB
for name in "${!times[@]}"; do
    read -r med best < <(stat_of "${times[$name]}")
    read -r mm _ < <(stat_of "${mems[$name]}")
    printf '%-24s %10s %10s %12.0f\n' "$name" "$med" "$best" "$(echo "$mm / 1024" | bc -l)"
done | sort
for j in "$work"/warpath*.json; do
    [ -s "$j" ] || continue
    python3 - "$j" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
if d.get("command") == "assemble":
    st = {k: round(v, 2) for k, v in d["stages"].items() if v >= 0.005}
    print(f"{sys.argv[1].split('/')[-1]}: solid {d['solid']}, unitigs {d['unitigs']}, "
          f"pieces {d['pieces']}, buckets {d['buckets']}, temp disk {d['temp_disk_bytes']/1e9:.2f} GB, "
          f"peak {d['peak_memory_bytes']/1e9:.2f} GB, stages {st}")
EOF
done
# Unitigs compared as sets of canonical spellings (canonical_unitigs.py; sorted on disk):
# examples/compare_unitigs holds both k-mer sets in memory (over 20 GB at 250 Mbp).
canon() { python3 "$root/crates/assembly/scripts/canonical_unitigs.py" $k "$1" | LC_ALL=C sort -S 1G -T "$d" > "$2"; }
same_unitigs() { # PEER FILE
    [ -s "$2" ] || return 0
    [ -s "$d/warpath.canon" ] || canon "$d/warpath.fa" "$d/warpath.canon"
    canon "$2" "$d/$1.canon"
    if cmp -s "$d/warpath.canon" "$d/$1.canon"; then
        echo "unitigs vs $1: identical ($(wc -l < "$d/$1.canon") unitigs)"
    else
        echo "unitigs vs $1: DIFFERENT ($(wc -l < "$d/warpath.canon") vs $(wc -l < "$d/$1.canon") unitigs)"
    fi
}
rm -f "$d"/*.canon
same_unitigs bcalm "$d/bcalm.unitigs.fa"
same_unitigs ggcat "$d/ggcat.fa"
rm -f "$d"/*.canon
if [ -n "$bound" ] && [ -s "$d/warpath-bound.fa" ]; then
    cmp -s "$d/warpath.fa" "$d/warpath-bound.fa" && echo "--max-memory $bound: the same file, byte for byte" \
        || echo "--max-memory $bound: DIFFERENT file"
fi
if [ -n "${EULERTIGS:-}" ]; then
    read -r t m < <(measure warpath-eulertigs "$bin/warpath" assemble "$reads" --k $k --threads "$threads" \
        --unitigs "$d/warpath.fa" --eulertigs "$d/warpath.eulertigs.fa" --backend cpu --json)
    python3 - "$work/warpath-eulertigs.log" "$t" "$m" <<'EOF'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
e = d["eulertigs"]
print(f"warpath eulertigs: {e['count']} strings, {e['total_length']} bases (unitigs: {d['unitigs']}, "
      f"{d['total_length']} bases); eulertigs {d['stages']['eulertigs']:.2f} s vs compaction "
      f"{d['stages']['compaction']:.2f} s; whole run {sys.argv[2]} s, {int(sys.argv[3])/1024:.0f} MB")
EOF
    if [ -n "${GGCAT:-}" ]; then
        read -r t m < <(measure ggcat-eulertigs "$GGCAT" build -k $k -s 2 -j "$threads" -t "$d/ggcat-tmp" \
            --eulertigs -o "$d/ggcat.eulertigs.fa" "$reads")
        echo "ggcat eulertigs: $(grep -c '>' "$d/ggcat.eulertigs.fa") strings, $(grep -v '>' "$d/ggcat.eulertigs.fa" | tr -d '\n' | wc -c) bases; $t s, $((m / 1024)) MB"
    fi
fi
