#!/usr/bin/env bash
# warpath's k-mer counting and unitigs against the tools users would pick, on the same data,
# cores and run: BCALM2 (unitigs), KMC3 and jellyfish (counts), minia (contigs, for reference).
# Installs the tools and data from Debian when missing (bcalm kmc jellyfish minia minimap2
# velvet-example bowtie-examples); builds warpath in release.
#
# Data: velvet's example reads (142,858 x 35 bp) and 30x 150 bp reads with 0.5% substitutions
# simulated, seeded, from the E. coli 536 genome that bowtie-examples ships (both strands).
#
# GGCAT is not packaged: build it from its public repository (algbio/ggcat, with its
# submodules; `cargo build --release -p ggcat_cmdline`) and point GGCAT at the binary to add its
# row: GGCAT=/path/to/ggcat crates/assembly/scripts/compare_tools.sh
#
# Usage: crates/assembly/scripts/compare_tools.sh [K=31] [THREADS=2] [RUNS=3]
# Prints one table per data set (median wall seconds and peak RSS of RUNS runs) and whether
# the unitigs equal BCALM2's and the counts equal KMC3's / jellyfish's. Work files in
# target/assembly-compare/.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
k="${1:-31}"; threads="${2:-2}"; runs="${3:-3}"
work="$root/target/assembly-compare"
mkdir -p "$work"
cd "$root"

need=()
for tool in bcalm kmc jellyfish minia minimap2; do command -v "$tool" >/dev/null || need+=("$tool"); done
[ -e /usr/share/doc/velvet/examples/test_reads.fa.xz ] || need+=(velvet-example)
[ -e /usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz ] || need+=(bowtie-examples)
if [ ${#need[@]} -gt 0 ]; then
    echo "installing from Debian: ${need[*]}"
    apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
cargo build --release -q -p warpath -p assembly --examples --bins
bin="$root/target/release"

xz -dc /usr/share/doc/velvet/examples/test_reads.fa.xz > "$work/velvet.fa"
[ -e "$work/ecoli-30x.fa" ] || "$bin/examples/simulate" \
    /usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz "$work/ecoli-30x.fa" 30 150 0.005 1

# median of RUNS runs of a command: "seconds peak_kib"
measure() {
    local name="$1"; shift
    local times=() mems=()
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >"$work/$name.log" 2>&1 || {
            echo "$name failed:"; tail -5 "$work/$name.log"; return 1; }
        read -r t m < "$work/time.txt"; times+=("$t"); mems+=("$m")
    done
    local mt mm
    mt=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p")
    mm=$(printf '%s\n' "${mems[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p")
    echo "$mt $mm"
}

for data in velvet ecoli-30x; do
    reads="$work/$data.fa"
    d="$work/$data"; rm -rf "$d"; mkdir -p "$d/kmc-tmp"
    echo "== $data ($(grep -c '>' "$reads") reads), k = $k, $threads threads, median of $runs"
    printf '%-34s %10s %12s\n' tool seconds peak_MB
    row() { printf '%-34s %10s %12.0f\n' "$1" "$2" "$(echo "$3 / 1024" | bc -l)"; }
    read -r t m < <(measure warpath-assemble env RAYON_NUM_THREADS="$threads" "$bin/warpath" assemble "$reads" --k "$k" --unitigs "$d/warpath.unitigs.fa" --backend cpu)
    row "warpath assemble (unitigs)" "$t" "$m"
    read -r t m < <(measure warpath-contigs env RAYON_NUM_THREADS="$threads" "$bin/warpath" assemble "$reads" --k "$k" --unitigs "$d/warpath.unitigs2.fa" --contigs "$d/warpath.contigs.fa" --backend cpu)
    row "warpath assemble --contigs" "$t" "$m"
    read -r t m < <(measure minia bash -c "cd '$d' && minia -in '$reads' -kmer-size $k -abundance-min 2 -nb-cores $threads -out minia")
    row "minia (contigs)" "$t" "$m"
    if [ -n "${GGCAT:-}" ]; then
        read -r t m < <(measure ggcat bash -c "cd '$d' && '$GGCAT' build -k $k -j $threads -s 2 '$reads' -o ggcat.unitigs.fa")
        row "ggcat build (unitigs)" "$t" "$m"
    fi
    read -r t m < <(measure bcalm bash -c "cd '$d' && bcalm -in '$reads' -kmer-size $k -abundance-min 2 -nb-cores $threads -out bcalm")
    row "bcalm (unitigs)" "$t" "$m"
    read -r t m < <(measure warpath-kmers env RAYON_NUM_THREADS="$threads" "$bin/warpath" kmers "$reads" --k "$k" -o "$d/warpath.counts.txt" --backend cpu)
    row "warpath kmers (counts, text out)" "$t" "$m"
    read -r t m < <(measure kmc kmc -k"$k" -ci2 -cs4000000000 -t"$threads" -fm "$reads" "$d/kmc" "$d/kmc-tmp")
    row "kmc (counts, database out)" "$t" "$m"
    read -r t m < <(measure jellyfish jellyfish count -C -m "$k" -s 100M -t "$threads" -L 2 -o "$d/jf" "$reads")
    row "jellyfish count -C (counts)" "$t" "$m"
    "$bin/examples/compare_unitigs" "$k" "$d/warpath.unitigs.fa" "$d/bcalm.unitigs.fa" | tail -1 | sed 's/^/unitigs vs bcalm: /'
    if [ -n "${GGCAT:-}" ]; then
        "$bin/examples/compare_unitigs" "$k" "$d/warpath.unitigs.fa" "$d/ggcat.unitigs.fa" | tail -1 | sed 's/^/unitigs vs ggcat: /'
    fi
    if [ "$data" = ecoli-30x ]; then
        zcat /usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz > "$work/ecoli.fa"
        for who in warpath minia; do
            contigs="$d/$who.contigs.fa"
            # -f 0: keep every minimizer; by default minimap2 drops the most repeated ones, and
            # short contigs made of E. coli's REP elements (62-80 bases, exact pieces of the
            # genome) then find no seed and count as unaligned
            minimap2 -c -f 0 -t "$threads" "$work/ecoli.fa" "$contigs" > "$d/$who.paf" 2>/dev/null
            printf '%-8s ' "$who"; python3 "$root/crates/assembly/scripts/contig_quality.py" "$contigs" "$work/ecoli.fa" "$d/$who.paf"
        done
    fi
    jellyfish dump -c -L 2 "$d/jf" | sort > "$d/jf.txt"
    if cmp -s <(sort "$d/warpath.counts.txt" | tr '\t' ' ') "$d/jf.txt"; then
        echo "counts vs jellyfish: identical ($(wc -l < "$d/jf.txt") k-mers)"
    else
        echo "counts vs jellyfish: DIFFERENT"
    fi
    kmc_tools -t"$threads" transform "$d/kmc" dump -s "$d/kmc.txt" >/dev/null 2>&1 || kmc_dump "$d/kmc" "$d/kmc.txt" >/dev/null
    if cmp -s <(tr '\t' ' ' < "$d/warpath.counts.txt" | sort) <(tr '\t' ' ' < "$d/kmc.txt" | sort); then
        echo "counts vs kmc: identical ($(wc -l < "$d/kmc.txt") k-mers)"
    else
        echo "counts vs kmc: DIFFERENT"
    fi
done
