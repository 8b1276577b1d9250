#!/usr/bin/env bash
# Colored compacted De Bruijn graphs of a simulated pangenome (issue 51): warpath against
# GGCAT 2 and Cuttlefish 3 on the same genomes, threads and run, then colored queries of
# simulated reads (warpath query against ggcat query --colors), then a k-mer-by-k-mer check of
# the color sets and (with --truth) of warpath's query counts (colors_check.py).
#
# Usage: crates/assembly/scripts/pangenome.sh [options]
#   --genomes N        genomes (default 100)
#   --length L         base genome length (default 5M)
#   --quick            8 genomes x 200k, 10^4 reads, with --truth (CI size)
#   --truth            check the color sets against the inputs too (brute force, in memory:
#                      ~20 bytes per k-mer of every genome; up to ~10^8 k-mers in all)
#   --seed S           seed of the genomes and the reads (default 1)
#   --reads N          query reads, 150 bp, 1% substitutions (default 10^5)
#   --threads T        threads of every tool (default 2)
#   --max-memory M     warpath's --max-memory (default 4G)
#   --tools "..."      which of warpath ggcat cuttlefish (default: all three)
#   --build-peers      build GGCAT and Cuttlefish 3 first where their binaries are missing
#   --work DIR         genomes, reads and outputs (default target/assembly-pangenome)
#   -h, --help         this text
# Environment:
#   WARPATH_TOOLS=DIR  where the peers' binaries are kept (default ~/.cache/warpath-tools):
#                      DIR/ggcat and DIR/cuttlefish
#   GGCAT=BIN, CUTTLEFISH=BIN   use these binaries instead
#   GGCAT_SRC=DIR      a checkout of GGCAT (GitHub algbio/ggcat; its libraries are published
#                      crates, stable Rust) for --build-peers: `cargo build --release
#                      --locked -p ggcat_cmdline` (~10 min on 2 cores)
#   PYTHON=BIN         a Python with numpy for the checks and the reads (default python3)
# Cuttlefish 3 is built with `cargo install --locked cuttlefish-rs-cli` (rustc >= 1.91,
# ~15 min on 2 cores). A tool that is missing is left out of the table, and said so.
#
# Each row: one run, wall seconds and peak resident memory (/usr/bin/time -v), and the peak
# size of the tool's temporary folder (sampled each second). Outputs in WORK/out/.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

genomes=100; length=5M; seed=1; reads=100000; threads=2; max_memory=4G; k=31
tools="warpath ggcat cuttlefish"; build_peers=0; truth=0
work="$root/target/assembly-pangenome"
while [ $# -gt 0 ]; do
    case "$1" in
        --genomes) genomes="$2"; shift 2 ;;
        --length) length="$2"; shift 2 ;;
        --quick) truth=1; genomes=8; length=200k; reads=10000; shift ;;
        --truth) truth=1; shift ;;
        --seed) seed="$2"; shift 2 ;;
        --reads) reads="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --max-memory) max_memory="$2"; shift 2 ;;
        --tools) tools="$2"; shift 2 ;;
        --build-peers) build_peers=1; shift ;;
        --work) work="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done
work="$(realpath -m "$work")"
tools_dir="${WARPATH_TOOLS:-$HOME/.cache/warpath-tools}"
GGCAT="${GGCAT:-$tools_dir/ggcat}"
CUTTLEFISH="${CUTTLEFISH:-$tools_dir/cuttlefish}"
PYTHON="${PYTHON:-python3}"
has() { [[ " $tools " == *" $1 "* ]]; }
mkdir -p "$work" "$tools_dir"
cd "$root"

if [ "$build_peers" = 1 ]; then
    if has ggcat && [ ! -x "$GGCAT" ]; then
        [ -n "${GGCAT_SRC:-}" ] || { echo "--build-peers: set GGCAT_SRC to a checkout of GGCAT" >&2; exit 2; }
        echo "building GGCAT in $GGCAT_SRC"
        (cd "$GGCAT_SRC" && nice -n 19 cargo build --release --locked -q -p ggcat_cmdline)
        cp "$GGCAT_SRC/target/release/ggcat" "$GGCAT"
    fi
    if has cuttlefish && [ ! -x "$CUTTLEFISH" ]; then
        echo "building Cuttlefish 3 (cargo install cuttlefish-rs-cli)"
        nice -n 19 cargo install --locked -q cuttlefish-rs-cli --root "$tools_dir/cuttlefish-root" \
            --target-dir "$tools_dir/build-cuttlefish"
        cp "$tools_dir/cuttlefish-root/bin/cuttlefish" "$CUTTLEFISH"
    fi
fi
for t in ggcat cuttlefish; do
    bin_var="${t^^}"
    if has "$t" && [ ! -x "${!bin_var}" ]; then
        echo "no $t at ${!bin_var} (--build-peers, or $bin_var=BIN): left out"
        tools="${tools//$t/}"
    fi
done
"$PYTHON" -c 'import numpy' 2>/dev/null || { echo "$PYTHON has no numpy: pip install numpy, or PYTHON=BIN" >&2; exit 2; }
cargo build --release -q -p warpath
warpath="$root/target/release/warpath"

# the genomes, once per (count, length, seed)
data="$work/pangenome-$genomes-$length-s$seed"
if [ ! -s "$data/list.tsv" ]; then
    "$warpath" simulate pangenome --genomes "$genomes" --length "$length" --seed "$seed" --out "$data"
fi
list="$data/list.tsv"
cut -f2 "$list" > "$data/paths.txt"
bases=$(awk -F'\t' '{print $2}' "$list" | xargs cat | grep -v '>' | tr -d '\n' | wc -c)

# query reads: 150 bp from a uniformly chosen genome, position and strand, 1% substitutions
queries="$data/reads-$reads.fa"
if [ ! -s "$queries" ]; then
    "$PYTHON" - "$list" "$reads" "$seed" "$queries" <<'EOF'
import random, sys
lst, n, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
paths = [l.rstrip("\n").split("\t")[1] for l in open(lst) if l.strip()]
rng = random.Random(seed)
per = [0] * len(paths)
for _ in range(n):
    per[rng.randrange(len(paths))] += 1
comp = str.maketrans("ACGT", "TGCA")
i = 0
with open(out, "w") as f:
    for path, m in zip(paths, per):
        g = "".join(l.strip() for l in open(path) if not l.startswith(">"))
        for _ in range(m):
            s = rng.randrange(len(g) - 150 + 1)
            r = g[s:s + 150]
            if rng.random() < 0.5:
                r = r.translate(comp)[::-1]
            r = "".join(rng.choice("ACGT".replace(b, "")) if rng.random() < 0.01 else b for b in r)
            f.write(f">q{i}\n{r}\n")
            i += 1
EOF
fi

out="$work/out"; rm -rf "$out"; mkdir -p "$out/runs"
echo "== $genomes genomes x $length ($bases bases), k = $k, $threads threads; $reads query reads"
lscpu | grep -i 'model name' | sed 's/^ */cpu: /'
echo "load before: $(uptime | sed 's/.*load average: //')"

# "seconds peak_kib temp_kib" of one run of a command whose temporary files go to TEMP;
# its output goes to $out/runs/NAME.log
measure() {
    local name="$1" temp="$2"; shift 2
    mkdir -p "$temp"
    echo 0 > "$out/runs/$name.disk"
    rm -f "$out/runs/$name.done"
    # the watcher stops by itself once the run is done; du fails now and then on files that
    # vanish under it, which must not end the watcher
    (set +e +o pipefail; peak=0; while [ ! -e "$out/runs/$name.done" ]; do
        s=$(du -sk "$temp" 2>/dev/null | cut -f1); s=${s:-0}
        if [ "$s" -gt "$peak" ]; then peak=$s; echo "$peak" > "$out/runs/$name.disk"; fi
        sleep 1
    done) </dev/null >/dev/null 2>&1 &
    local watcher=$!
    local rc=0
    /usr/bin/time -v -o "$out/runs/$name.time" "$@" >"$out/runs/$name.log" 2>&1 || rc=$?
    touch "$out/runs/$name.done"
    wait "$watcher" || true
    if [ "$rc" != 0 ]; then
        echo "$name failed (exit $rc):" >&2; tail -5 "$out/runs/$name.log" >&2; return 1
    fi
    local wall peak
    wall=$(grep 'Elapsed (wall clock)' "$out/runs/$name.time" | awk '{print $NF}' \
        | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
    peak=$(grep 'Maximum resident set size' "$out/runs/$name.time" | awk '{print $NF}')
    echo "$wall $peak $(cat "$out/runs/$name.disk")"
}

rows=()
row() { # LABEL NAME TEMP COMMAND...: a row of the table; a failed run is a row that says so
    local label="$1" name="$2" t m d; shift
    if read -r t m d < <(measure "$@"); then
        rows+=("$(printf '%-30s %10s %10.0f %10.0f' "$label" "$t" "$((m / 1024))" "$((d / 1024))")")
        echo "${rows[-1]}"
    else
        rows+=("$(printf '%-30s %10s' "$label" failed)")
    fi
}

if has warpath; then
    row "warpath assemble (colored)" warpath-build "$out/warpath-tmp" env RAYON_NUM_THREADS="$threads" \
        "$warpath" assemble --colored-inputs "$list" --k $k --threads "$threads" \
        --max-memory "$max_memory" --temp-dir "$out/warpath-tmp" \
        --unitigs "$out/warpath.fa" --color-sets "$out/warpath.sets.jsonl" --backend cpu
fi
if has ggcat; then
    row "ggcat build -c" ggcat-build "$out/ggcat-tmp" "$GGCAT" build -c -k $k -j "$threads" -s 1 \
        -d "$list" -t "$out/ggcat-tmp" -o "$out/ggcat.fa"
    # dump-colors: color index -> name; dump-colormap: set id -> color indices
    "$GGCAT" dump-colors "$out/ggcat.colors.dat" "$out/ggcat-colors" > "$out/ggcat-dump.log" 2>&1
    "$GGCAT" dump-colormap "$out/ggcat.colors.dat" "$out/ggcat-colormap" -k $k -j "$threads" \
        -t "$out/ggcat-tmp" 0-4294967294 >> "$out/ggcat-dump.log" 2>&1
fi
if has cuttlefish; then
    row "cuttlefish build --color" cuttlefish-build "$out/cuttlefish-tmp" "$CUTTLEFISH" build --ref \
        --list "$data/paths.txt" --color -k $k -t "$threads" -w "$out/cuttlefish-tmp" \
        -o "$out/cuttlefish"
    # its color runs: unitig number, k-mer range, 1-based source ids
    if [ -s "$out/cuttlefish.fa" ]; then
        "$CUTTLEFISH" colors dump -r "$out/cuttlefish.cf3rs.color-repository" \
            -i "$out/cuttlefish.fa" -o "$out/cuttlefish-dump.tsv" > "$out/cuttlefish-dump.log" 2>&1
    fi
fi
if has warpath && [ -s "$out/warpath.fa" ]; then
    row "warpath query ($reads reads)" warpath-query "$out/warpath-tmp" env RAYON_NUM_THREADS="$threads" \
        "$warpath" query --unitigs "$out/warpath.fa" --color-sets "$out/warpath.sets.jsonl" \
        --k $k "$queries" --output "$out/warpath-query.jsonl"
fi
if has ggcat && [ -s "$out/ggcat.fa" ]; then
    row "ggcat query --colors ($reads)" ggcat-query "$out/ggcat-tmp" "$GGCAT" query --colors -k $k \
        -j "$threads" -t "$out/ggcat-tmp" --colored-query-output-format json-lines-with-names \
        "$out/ggcat.fa" "$queries" -o "$out/ggcat-query"
fi
echo "load after: $(uptime | sed 's/.*load average: //')"
echo
printf '%-30s %10s %10s %10s\n' tool seconds peak_MB temp_MB
printf '%s\n' "${rows[@]}"
for f in warpath.fa ggcat.fa cuttlefish.fa; do
    if [ -s "$out/$f" ]; then echo "$f: $(grep -c '>' "$out/$f") unitigs"; fi
done
echo

# correctness: color sets k-mer by k-mer, every graph against the first (the inputs with
# --truth, else warpath's, else GGCAT's); warpath's
# query counts recomputed from a graph and compared exactly; GGCAT's query lines compared too
# (reported only: GGCAT 2.2's query --colors names wrong colors, see colors_check.py)
graphs=()
[ "$truth" = 1 ] && graphs+=(--truth "$list")
[ -s "$out/warpath.fa" ] && graphs+=(--warpath "$out/warpath.fa" "$out/warpath.sets.jsonl")
[ -s "$out/ggcat.fa" ] && graphs+=(--ggcat "$out/ggcat.fa" "$out/ggcat-colors.jsonl" "$out/ggcat-colormap.csv")
[ -s "$out/cuttlefish-dump.tsv" ] && graphs+=(--cuttlefish "$out/cuttlefish.fa" "$out/cuttlefish-dump.tsv" "$list")
queried=()
if [ -s "$out/warpath-query.jsonl" ]; then
    queried=(--warpath-query "$out/warpath-query.jsonl")
    # recomputing the counts from a graph holds it in Python dictionaries: the 100-genome
    # graph's 39 M k-mers outgrow 24 GB, so that check runs with --truth (the --quick size)
    [ "$truth" = 1 ] && queried+=(--queries "$queries")
    [ -s "$out/ggcat-query.jsonl" ] && queried+=(--ggcat-query "$out/ggcat-query.jsonl")
    [ "${#queried[@]}" = 2 ] && queried=()
fi
if [ "$(printf '%s\n' "${graphs[@]}" | grep -c '^--')" -ge 2 ] || [ "${#queried[@]}" -gt 0 ]; then
    "$PYTHON" "$root/crates/assembly/scripts/colors_check.py" --k $k "${graphs[@]}" "${queried[@]}"
else
    echo "colors_check: fewer than two graphs to compare"
fi
