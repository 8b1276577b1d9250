#!/usr/bin/env python3
"""Checks colored compacted De Bruijn graphs against each other, k-mer by k-mer, and colored
query results against each other (issue 51's correctness target).

Graphs (give two or more; each k-mer's color set is compared on the canonical k-mers):

  --warpath UNITIGS.fa SETS.jsonl       `warpath assemble --unitigs --color-sets`: headers
                                        carry `C:<set id, hex>:<k-mers>` runs, SETS.jsonl
                                        lines {"id": N, "colors": [names]} (an optional first
                                        line {"colors": [...]} is skipped)
  --ggcat UNITIGS.fa COLORS.jsonl COLORMAP.csv
                                        `ggcat build -c`: the same header runs; COLORS.jsonl
                                        from `ggcat dump-colors G.colors.dat COLORS` (color
                                        index -> name), COLORMAP.csv from `ggcat dump-colormap
                                        G.colors.dat COLORMAP -k K 0-4294967294` (set id ->
                                        color indices as ranges: `7,0-2,5`)
  --cuttlefish UNITIGS.fa DUMP.tsv LIST.tsv
                                        `cuttlefish build --ref --color`: DUMP.tsv from
                                        `cuttlefish colors dump -r PREFIX.cf3rs.color-repository
                                        -i UNITIGS.fa` (unitig number, k-mer range, 1-based
                                        source ids), LIST.tsv the NAME<TAB>PATH list whose
                                        paths were given to it, in that order
  --truth LIST.tsv                      the inputs themselves (NAME<TAB>PATH lines, FASTA):
                                        every k-mer of every input, a brute-force oracle
                                        (memory: ~20 bytes per k-mer occurrence; small sets)

Queries (give both; compared query by query and color by color):

  --warpath-query OUT.jsonl             `warpath query`: {"query": NAME, "kmers": N,
                                        "matches": {color: k-mers held}}
  --ggcat-query OUT.jsonl               `ggcat query --colors --colored-query-output-format
                                        json-lines-with-names`: {"query_index": I (0-based),
                                        "matches": {color: fraction held, 2 decimals}}
  --queries QUERIES.fa                  the query records, for their names and order
                                        (default: warpath's lines in order); with a graph
                                        (--warpath or --ggcat, the first given), warpath's
                                        counts are also recomputed from that graph's color
                                        sets and compared exactly

GGCAT 2.2.0 (commit 65749e6) writes wrong colors in `query --colors`: on two genomes A and B
sharing no k-mer, a read of A is reported as B's (the k-mer totals are right, the colors not,
and they change from run to run), while its unitigs' runs and colormap are right. Its query lines are compared and the
differences printed, but they do not fail the check; the exact check of warpath's query is the
recomputation from the graph.

A k-mer's color set is compared through a 64-bit key (the sum of one random 64-bit value per
color name), so the check needs memory for two arrays per graph, not a set per k-mer;
k <= 31. Prints what was compared and up to --show differences of each kind; exits 1 when any
difference was found. Needs numpy.

Example:
  colors_check.py --k 31 --warpath w.fa w.jsonl --ggcat g.fa g.colors.jsonl g.colormap.csv
"""
import argparse
import gc
import hashlib
import json
import re
import sys

import numpy as np

CODE = np.full(256, 4, dtype=np.uint8)
for i, c in enumerate(b"ACGT"):
    CODE[c] = i
    CODE[ord(chr(c).lower())] = i
LETTERS = np.frombuffer(b"ACGT", dtype=np.uint8)
RUN = re.compile(rb"\bC:([0-9a-fA-F]+):([0-9]+)")
CHUNK = 1 << 24  # bases of unitigs per batch of k-mer codes


def color_value(name):
    """The random 64-bit value of one color, from its name."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little")


def set_key(names):
    """A color set's key: the sum of its colors' values, modulo 2^64."""
    return sum(color_value(n) for n in names) % (1 << 64)


def read_fasta(path):
    """(header, sequence) records of a FASTA file (sequence lines joined)."""
    header, seq = None, []
    with open(path, "rb") as f:
        for line in f:
            line = line.rstrip(b"\r\n")
            if line.startswith(b">"):
                if header is not None:
                    yield header, b"".join(seq)
                header, seq = line[1:], []
            elif line:
                seq.append(line)
    if header is not None:
        yield header, b"".join(seq)


def kmer_codes(seqs, k):
    """The canonical 2-bit codes (uint64) of the k-mers of the sequences, in order, one
    sequence after the other; windows over a base other than ACGT are left out."""
    blob = np.frombuffer(b"N".join(seqs) + b"N", dtype=np.uint8)
    b = CODE[blob]
    n = len(b) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    bad = np.concatenate(([0], np.cumsum(b == 4)))
    ok = (bad[k:] - bad[:-k]) == 0
    v = np.where(b == 4, 0, b).astype(np.uint64)
    fw = np.zeros(n, dtype=np.uint64)
    rc = np.zeros(n, dtype=np.uint64)
    for j in range(k):
        fw = (fw << np.uint64(2)) | v[j:j + n]
        rc |= (np.uint64(3) - v[j:j + n]) << np.uint64(2 * j)
    return np.minimum(fw, rc)[ok[:n]]


def decode(code, k):
    """The k-mer spelled by a 2-bit code."""
    return bytes(LETTERS[(int(code) >> (2 * (k - 1 - i))) & 3] for i in range(k)).decode()


class Graph:
    """One tool's k-mers (sorted canonical codes) and the key of each one's color set."""

    def __init__(self, name, kmers, keys, sets):
        order = np.argsort(kmers, kind="stable")
        self.name = name
        self.kmers = kmers[order]
        self.keys = keys[order]
        self.sets = sets  # key -> sorted color names, for the report
        dup = np.flatnonzero(self.kmers[1:] == self.kmers[:-1])
        self.duplicates = len(dup)
        self.duplicate_example = self.kmers[dup[0]] if len(dup) else None


def header_runs(_index, header):
    """The `C:<hex set id>:<k-mers>` runs of a unitig's header."""
    return [(int(h, 16), int(c)) for h, c in RUN.findall(header)]


def colored_unitigs(name, path, k, set_keys, set_names, runs_of=header_runs):
    """A tool's graph from its unitigs' runs (`runs_of(record number, header)`: (set id,
    k-mers) pairs in order along the sequence) and its set id -> key table."""
    kmer_parts, key_parts = [], []
    seqs, ids, counts, bases = [], [], [], 0
    unknown = set()

    def flush():
        nonlocal seqs, ids, counts, bases
        if not seqs:
            return
        codes = kmer_codes(seqs, k)
        per_kmer = np.repeat(np.array(ids, dtype=np.int64), np.array(counts, dtype=np.int64))
        if len(per_kmer) != len(codes):
            sys.exit(f"{path}: the C: runs cover {len(per_kmer)} k-mers, the unitigs hold "
                     f"{len(codes)} (k = {k}?)")
        kmer_parts.append(codes)
        key_parts.append(set_keys[per_kmer])
        seqs, ids, counts, bases = [], [], [], 0

    for index, (header, seq) in enumerate(read_fasta(path)):
        runs = runs_of(index, header)
        total = sum(c for _, c in runs)
        if total != len(seq) - k + 1:
            sys.exit(f"{path}: unitig {index} ({header.decode()}): runs cover {total} k-mers, "
                     f"its {len(seq)} bases hold {len(seq) - k + 1}")
        for i, c in runs:
            if i not in set_names:
                unknown.add(i)
            ids.append(i)
            counts.append(c)
        seqs.append(seq)
        bases += len(seq)
        if bases >= CHUNK:
            flush()
    if unknown:
        sys.exit(f"{path}: set ids with no color set: {sorted(unknown)[:10]}")
    flush()
    kmers = np.concatenate(kmer_parts) if kmer_parts else np.zeros(0, dtype=np.uint64)
    keys = np.concatenate(key_parts) if key_parts else np.zeros(0, dtype=np.uint64)
    sets = {int(set_keys[i]): names for i, names in set_names.items()}
    return Graph(name, kmers, keys, sets)


def key_table(set_names):
    """uint64 keys indexed by set id (0 where an id has no set)."""
    table = np.zeros(max(set_names, default=-1) + 2, dtype=np.uint64)
    for i, names in set_names.items():
        table[i] = set_key(names)
    return table


def warpath_graph(unitigs, sets_path, k):
    set_names = {}
    with open(sets_path) as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            if "id" not in rec:
                continue  # the header line naming every color
            set_names[rec["id"]] = sorted(rec["colors"])
    return colored_unitigs("warpath", unitigs, k, key_table(set_names), set_names)


def ggcat_graph(unitigs, colors_jsonl, colormap_csv, k):
    names = {}
    with open(colors_jsonl) as f:
        for line in f:
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                names[rec["color_index"]] = rec["color_name"]
            except json.JSONDecodeError:  # dump-colors does not escape names
                m = re.match(r'\{"color_index":(\d+), "color_name":"(.*)" \}', line.strip())
                names[int(m.group(1))] = m.group(2)
    set_names = {}
    with open(colormap_csv) as f:
        for line in f:
            fields = line.strip().split(",")
            if not fields[0]:
                continue
            colors = []
            for r in fields[1:]:
                lo, _, hi = r.partition("-")
                colors.extend(range(int(lo), int(hi or lo) + 1))
            set_names[int(fields[0])] = sorted(names[c] for c in colors)
    return colored_unitigs("ggcat", unitigs, k, key_table(set_names), set_names)


def cuttlefish_graph(unitigs, dump_tsv, list_path, k):
    """Cuttlefish 3's graph: `cuttlefish colors dump` lines (unitig number in the FASTA,
    first and past-the-end k-mer, 1-based source ids) and the list of its inputs, in the
    order given to it (the sources' names: that list's NAME column)."""
    with open(list_path) as f:
        names = [line.split("\t", 1)[0] for line in f if line.strip()]
    set_ids, set_names, runs = {}, {}, {}
    with open(dump_tsv) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            unitig, start, end, sources = line.rstrip("\n").split("\t")
            i = set_ids.get(sources)
            if i is None:
                i = set_ids[sources] = len(set_ids)
                set_names[i] = sorted(names[int(x) - 1] for x in sources.split(","))
            runs.setdefault(int(unitig), []).append((int(start), int(end) - int(start), i))
    def runs_of(index, _header):
        return [(i, n) for _, n, i in sorted(runs.get(index, []))]
    return colored_unitigs("cuttlefish", unitigs, k, key_table(set_names), set_names, runs_of)


def truth_graph(list_path, k):
    """Every input's k-mers, each k-mer keyed by the set of inputs holding it."""
    per_color = {}
    with open(list_path) as f:
        for line in f:
            if not line.strip():
                continue
            name, path = line.rstrip("\n").split("\t", 1)
            codes = kmer_codes([s for _, s in read_fasta(path)], k)
            per_color.setdefault(name, []).append(codes)
    kmers, values = [], []
    for name, parts in per_color.items():
        u = np.unique(np.concatenate(parts))
        kmers.append(u)
        values.append(np.full(len(u), color_value(name), dtype=np.uint64))
    kmers = np.concatenate(kmers)
    values = np.concatenate(values)
    order = np.argsort(kmers, kind="stable")
    kmers, values = kmers[order], values[order]
    starts = np.flatnonzero(np.concatenate(([True], kmers[1:] != kmers[:-1])))
    keys = np.add.reduceat(values, starts)  # wraps modulo 2^64, as set_key
    g = Graph("truth", kmers[starts], keys, {})
    g.per_color = per_color
    return g


def truth_set(g, code):
    return sorted(n for n, parts in g.per_color.items()
                  if any(np.any(p == code) for p in parts))


def describe(g, key, code):
    if g.name == "truth":
        return truth_set(g, code)
    return g.sets.get(int(key), f"set key {int(key):x}")


def compare_graphs(a, b, k, show):
    """Prints how b's k-mers and color sets differ from a's; returns the differences."""
    problems = 0
    for g in (a, b):
        if g.duplicates:
            problems += g.duplicates
            print(f"{g.name}: {g.duplicates} k-mers written twice, e.g. "
                  f"{decode(g.duplicate_example, k)}")
    only_a = np.setdiff1d(a.kmers, b.kmers, assume_unique=True)
    only_b = np.setdiff1d(b.kmers, a.kmers, assume_unique=True)
    ia = np.searchsorted(a.kmers, b.kmers)
    ia[ia == len(a.kmers)] = 0
    shared = a.kmers[ia] == b.kmers if len(a.kmers) else np.zeros(len(b.kmers), bool)
    bi = np.flatnonzero(shared)
    ai = ia[bi]
    differ = np.flatnonzero(a.keys[ai] != b.keys[bi])
    print(f"{a.name} vs {b.name}: {len(a.kmers)} and {len(b.kmers)} k-mers, {len(bi)} "
          f"compared; color sets differ on {len(differ)}; only in {a.name}: {len(only_a)}, "
          f"only in {b.name}: {len(only_b)}")
    for j in differ[:show]:
        code = b.kmers[bi[j]]
        print(f"  {decode(code, k)}: {a.name} {describe(a, a.keys[ai[j]], code)}, "
              f"{b.name} {describe(b, b.keys[bi[j]], code)}")
    for name, codes in ((a.name, only_a), (b.name, only_b)):
        for code in codes[:show]:
            print(f"  only in {name}: {decode(code, k)}")
    return problems + len(differ) + len(only_a) + len(only_b)


def noted(differences, show, text):
    """One more difference; printed while there are at most `show`."""
    if differences < show:
        print(text)
    return differences + 1


def read_warpath_query(path):
    """warpath query's lines by query name, and the names in order."""
    lines, order = {}, []
    with open(path) as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                lines[rec["query"]] = rec
                order.append(rec["query"])
    return lines, order


def check_queries_on_graph(g, warpath_path, queries_path, k, show):
    """Recomputes every query's per-color k-mer counts from graph g (each k-mer of the query
    looked up, its color set's colors counted) and compares warpath query's lines with them,
    exactly; returns the number of differences."""
    names, seqs = [], []
    for h, s in read_fasta(queries_path):
        names.append(h.split()[0].decode() if h.split() else "")
        seqs.append(s)
    per_query = np.array([max(len(s) - k + 1, 0) for s in seqs], dtype=np.int64)
    codes = kmer_codes(seqs, k)
    if len(codes) != per_query.sum():
        sys.exit(f"{queries_path}: queries with bases other than ACGT are not supported here")
    query_of = np.repeat(np.arange(len(seqs)), per_query)
    at = np.searchsorted(g.kmers, codes)
    at[at == len(g.kmers)] = 0
    found = g.kmers[at] == codes if len(g.kmers) else np.zeros(len(codes), bool)
    colors = sorted({c for names_ in g.sets.values() for c in names_})
    column = {c: i for i, c in enumerate(colors)}
    keys = sorted(g.sets)
    key_index = {key: i for i, key in enumerate(keys)}
    members = [[column[c] for c in g.sets[key]] for key in keys]
    sizes = np.array([len(m) for m in members], dtype=np.int64)
    flat = np.array([c for m in members for c in m], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    set_of = np.array([key_index[int(x)] for x in g.keys[at[found]]], dtype=np.int64)
    q = query_of[found]
    reps = sizes[set_of]
    rows = np.repeat(q, reps)
    offsets = np.repeat(starts[set_of], reps) + (
        np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps))
    counts = np.zeros((len(seqs), len(colors)), dtype=np.int64)
    np.add.at(counts, (rows, flat[offsets]), 1)
    warpath, _ = read_warpath_query(warpath_path)
    differences = 0
    for i, name in enumerate(names):
        want = {colors[c]: int(n) for c, n in enumerate(counts[i]) if n}
        w = warpath.get(name)
        got = w["matches"] if w else None
        if w is None or w["kmers"] != per_query[i] or got != want:
            differences = noted(differences, show, f"  query {name}: warpath {w}, from "
                                f"{g.name}'s graph {{'kmers': {per_query[i]}, 'matches': {want}}}")
    print(f"queries against {g.name}'s graph: {len(names)} queries, {int(found.sum())} of "
          f"{len(codes)} k-mers found, {differences} queries differ")
    return differences


def compare_queries(warpath_path, ggcat_path, queries_path, show):
    """Compares warpath's counts with GGCAT's fractions (rounded to 0.01) per query and
    color; returns the number of differences."""
    warpath, order = read_warpath_query(warpath_path)
    if queries_path:
        order = [h.split()[0].decode() if h.split() else "" for h, _ in read_fasta(queries_path)]
    ggcat = {}
    with open(ggcat_path) as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                ggcat[order[rec["query_index"]]] = rec["matches"]
    pairs = differences = 0
    for name in order:
        w = warpath.get(name)
        if w is None:
            differences = noted(differences, show, f"  query {name}: no line from warpath")
            continue
        n = w["kmers"]
        g = ggcat.get(name, {})
        for color in sorted(set(w["matches"]) | set(g)):
            pairs += 1
            ours = w["matches"].get(color, 0) / n if n else 0.0
            theirs = float(g.get(color, 0.0))
            if abs(ours - theirs) > 0.0051:
                differences = noted(differences, show, f"  query {name}, color {color}: warpath "
                                    f"{w['matches'].get(color, 0)}/{n} = {ours:.4f}, "
                                    f"ggcat {theirs}")
    print(f"queries: {len(order)} compared, {pairs} (query, color) pairs, "
          f"{differences} differences (ggcat's fractions have 2 decimals)")
    return differences


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--warpath", nargs=2, metavar=("UNITIGS", "SETS"))
    p.add_argument("--ggcat", nargs=3, metavar=("UNITIGS", "COLORS", "COLORMAP"))
    p.add_argument("--cuttlefish", nargs=3, metavar=("UNITIGS", "DUMP", "LIST"))
    p.add_argument("--truth", metavar="LIST")
    p.add_argument("--warpath-query")
    p.add_argument("--ggcat-query")
    p.add_argument("--queries")
    p.add_argument("--show", type=int, default=5, help="differences shown of each kind")
    a = p.parse_args()
    if not 1 <= a.k <= 31:
        p.error("k must be from 1 to 31")
    graphs = []
    if a.truth:
        graphs.append(truth_graph(a.truth, a.k))
    if a.warpath:
        graphs.append(warpath_graph(*a.warpath, a.k))
    if a.ggcat:
        graphs.append(ggcat_graph(*a.ggcat, a.k))
    if a.cuttlefish:
        graphs.append(cuttlefish_graph(*a.cuttlefish, a.k))
    tool_graphs = [g for g in graphs if g.name != "truth"]
    on_graph = a.warpath_query and a.queries and tool_graphs
    if len(graphs) == 1 and not on_graph:
        p.error("give two graphs to compare (--truth, --warpath, --ggcat, --cuttlefish)")
    if a.ggcat_query and not a.warpath_query:
        p.error("--ggcat-query needs --warpath-query")
    if a.warpath_query and not (a.ggcat_query or on_graph):
        p.error("--warpath-query needs --ggcat-query, or --queries and a graph")
    problems = 0
    for other in graphs[1:]:
        problems += compare_graphs(graphs[0], other, a.k, a.show)
    if on_graph:
        # only the graph the queries are checked on stays in memory (100 genomes' graphs
        # take about 10 GB each here)
        queried_graph = tool_graphs[0]
        graphs.clear()
        tool_graphs.clear()
        gc.collect()
        problems += check_queries_on_graph(queried_graph, a.warpath_query, a.queries, a.k,
                                           a.show)
    if a.ggcat_query:
        # reported, not counted: GGCAT 2.2's query --colors names wrong colors (see the top)
        compare_queries(a.warpath_query, a.ggcat_query, a.queries, a.show)
    print("OK: no differences" if problems == 0 else f"DIFFERENT: {problems} differences")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
