"""warpath.count_kmers and warpath.assemble against plain Python references."""

import collections
import gzip

import numpy as np
import pytest

import warpath

COMP = str.maketrans("ACGT", "TGCA")


def rc(s):
    return s.translate(COMP)[::-1]


def canon(s):
    return min(s, rc(s))


def unpack(x, k):
    return "".join("ACGT"[(int(x) >> (2 * (k - 1 - i))) & 3] for i in range(k))


@pytest.fixture
def reads(tmp_path, rng):
    genome = "".join(rng.choice(list("ACGT"), 3000))
    rs = []
    for _ in range(500):
        s = int(rng.integers(0, len(genome) - 80))
        r = genome[s:s + 80]
        r = rc(r) if rng.random() < 0.5 else r
        r = "".join(c if rng.random() > 0.005 else "N" for c in r)
        rs.append(r)
    p = tmp_path / "r.fa"
    p.write_text("".join(f">r{i}\n{r.lower() if i % 3 == 0 else r}\n" for i, r in enumerate(rs)))
    return genome, rs, p


def reference(rs, k):
    c = collections.Counter()
    for r in rs:
        for piece in r.upper().split("N"):
            for i in range(len(piece) - k + 1):
                c[canon(piece[i:i + k])] += 1
    return c


@pytest.mark.parametrize("k", [5, 15, 31])
def test_counts_equal_a_counter(reads, k):
    _, rs, p = reads
    want = {s: n for s, n in reference(rs, k).items() if n >= 2}
    kmers, counts = warpath.count_kmers(p, k)
    assert kmers.dtype == np.uint64 and counts.dtype == np.uint32
    assert np.all(np.diff(kmers.astype(object)) > 0)
    got = {unpack(x, k): int(n) for x, n in zip(kmers, counts)}
    assert got == want


def test_wide_kmers_and_gzip(reads, tmp_path):
    _, rs, p = reads
    gz = tmp_path / "r.fa.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    kmers, counts = warpath.count_kmers([gz], 33, min_count=1)
    assert kmers.shape == (len(counts), 2)
    want = reference(rs, 33)
    got = {unpack((int(h) << 64) | int(lo), 33): int(n) for (h, lo), n in zip(kmers, counts)}
    assert got == dict(want)


def test_assemble_spells_every_solid_kmer_once(reads, tmp_path):
    genome, rs, p = reads
    k = 21
    u = warpath.assemble(p, k, fasta=tmp_path / "u.fa", gfa=tmp_path / "g.gfa")
    solid = {s for s, n in reference(rs, k).items() if n >= 2}
    seen = collections.Counter()
    for seq in u.sequences:
        for i in range(len(seq) - k + 1):
            seen[canon(seq[i:i + k])] += 1
    assert set(seen) == solid and max(seen.values()) == 1
    assert len(u) == len(u.kmer_counts) == len(u.circular)
    assert np.array_equal(u.kmers, [len(s) - k + 1 for s in u.sequences])
    assert u.links.shape[1] == 4
    assert u.stats["solid"] == len(solid)
    fa = (tmp_path / "u.fa").read_text().splitlines()
    assert fa[0].startswith(">0 LN:i:") and " KC:i:" in fa[0]
    assert (tmp_path / "g.gfa").read_text().startswith("H\tVN:Z:1.0\n")
    assert np.all(u.mean_counts >= 2)


def test_errors_like_the_python_peers(tmp_path):
    p = tmp_path / "r.fa"
    p.write_text(">a\nACGTACGT\n")
    with pytest.raises(ValueError, match="reverse complement"):
        warpath.count_kmers(p, 4)
    with pytest.raises(ValueError, match="between 3 and 63"):
        warpath.assemble(p, 65)
    with pytest.raises(FileNotFoundError, match="missing.fa"):
        warpath.count_kmers(tmp_path / "missing.fa", 5)
    bad = tmp_path / "bad.fq"
    bad.write_text("@r1\nACGT\n+\nII\n")
    with pytest.raises(ValueError, match="bad.fq: record 1"):
        warpath.count_kmers(bad, 3)
    with pytest.raises(ValueError, match="at least one"):
        warpath.count_kmers([], 5)


def test_eulertigs_hold_the_unitigs_kmers_once_in_fewer_strings(tmp_path, rng):
    # substitution errors kept (min_count 1): a graph with many branches
    genome = "".join(rng.choice(list("ACGT"), 2000))
    rs = []
    for _ in range(300):
        s = int(rng.integers(0, len(genome) - 80))
        rs.append("".join(c if rng.random() > 0.01 else "ACGT"[int(rng.integers(0, 4))]
                          for c in genome[s:s + 80]))
    p = tmp_path / "r.fa"
    p.write_text("".join(f">r{i}\n{r}\n" for i, r in enumerate(rs)))
    k = 21
    u = warpath.assemble(p, k, min_count=1, eulertigs=tmp_path / "e.fa")
    assert u.eulertigs is not None and len(u.eulertigs) < len(u.sequences)

    def kmers(strings):
        return collections.Counter(canon(s[i:i + k]) for s in strings for i in range(len(s) - k + 1))

    ku, ke = kmers(u.sequences), kmers(u.eulertigs)
    assert ke == ku and max(ke.values()) == 1
    # k - 1 bases fewer per join
    assert sum(map(len, u.eulertigs)) == len(ke) + len(u.eulertigs) * (k - 1)
    written = [l for l in (tmp_path / "e.fa").read_text().splitlines() if not l.startswith(">")]
    assert written == u.eulertigs


def test_a_memory_bound_gives_the_same_unitigs_and_cleans_up(reads, tmp_path):
    _, _, p = reads
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    free = warpath.assemble(p, 21)
    bounded = warpath.assemble(p, 21, max_memory=64_000_000, temp_dir=tmp, threads=1)
    assert bounded.sequences == free.sequences
    assert np.array_equal(bounded.links, free.links)
    assert bounded.stats["temp_disk_bytes"] > 0 and bounded.stats["max_memory"] == 64_000_000
    assert free.stats["temp_disk_bytes"] == 0
    assert list(tmp.iterdir()) == []
    with pytest.raises(MemoryError, match="too small"):
        warpath.assemble(p, 21, max_memory=1_000_000, temp_dir=tmp)
    assert list(tmp.iterdir()) == []


def test_colored_graph_matches_a_brute_force_oracle(tmp_path, rng):
    k = 15
    base = "".join(rng.choice(list("ACGT"), 2000))
    paths, holders = [], collections.defaultdict(set)
    for g in range(4):
        s = list(base)
        for i in rng.integers(0, len(s), 15):
            s[i] = "ACGT"[(("ACGT".index(s[i])) + 1) % 4]
        s = "".join(s)
        if g == 3:
            s = s[:700] + s[900:]  # a deletion
        p = tmp_path / f"g{g}.fa"
        p.write_text(f">g{g}\n{s}\n")
        paths.append(p)
        for i in range(len(s) - k + 1):
            holders[canon(s[i:i + k])].add(f"g{g}.fa")
    sets_path = tmp_path / "sets.jsonl"
    u = warpath.assemble(paths, k, colors="file", color_sets=sets_path, fasta=tmp_path / "u.fa")
    assert u.color_names == [p.name for p in paths]
    seen = 0
    for i, seq in enumerate(u.sequences):
        at = 0
        for names, n in u.color_runs(i):
            for j in range(at, at + n):
                assert holders[canon(seq[j:j + k])] == set(names)
                seen += 1
            at += n
        assert at == len(seq) - k + 1
    assert seen == len(holders)
    lines = sets_path.read_text().splitlines()
    import json
    assert json.loads(lines[0]) == {"colors": u.color_names}
    assert [json.loads(x)["id"] for x in lines[1:]] == list(range(len(u.color_sets)))
    assert " C:0:" in (tmp_path / "u.fa").read_text()
    # by number: each set's colors expand to the names' numbers
    numbered = tmp_path / "numbers.jsonl"
    warpath.assemble(paths, k, colors="file", color_sets=numbered, color_sets_format="numbers")
    by_number = numbered.read_text().splitlines()
    assert by_number[0] == lines[0]
    for id_, line in enumerate(by_number[1:]):
        row = json.loads(line)
        expanded = [c for x in row["colors"] for c in (range(x[0], x[1] + 1) if isinstance(x, list) else [x])]
        assert row["id"] == id_ and expanded == list(u.color_sets[id_])
    # temporary files in LZ4 blocks: the same graph
    packed = warpath.assemble(paths, k, colors="file", max_memory=64 << 20, temp_dir=tmp_path,
                              compress_temp=True)
    assert packed.sequences == u.sequences and packed.color_sets == u.color_sets
    with pytest.raises(ValueError, match="'names' or 'numbers'"):
        warpath.assemble(paths, k, colors="file", color_sets=numbered, color_sets_format="ids")
    # names given per path: repeats share a color
    v = warpath.assemble(paths, k, colors=["a", "a", "b", "b"])
    assert v.color_names == ["a", "b"]
    assert v.sequences == u.sequences


def test_colored_graph_errors(tmp_path):
    p = tmp_path / "r.fa"
    p.write_text(">a\nACGTACGTTGCA\n")
    with pytest.raises(ValueError, match="2 color names for 1 paths"):
        warpath.assemble(p, 5, colors=["a", "b"])
    with pytest.raises(ValueError, match="'file', 'record'"):
        warpath.assemble(p, 5, colors="files")
    with pytest.raises(ValueError, match="color_sets needs a colored graph"):
        warpath.assemble(p, 5, color_sets=tmp_path / "s.jsonl")
    with pytest.raises(ValueError, match="uncolored graph"):
        warpath.assemble(p, 5, min_count=1).color_runs(0)
    r = warpath.assemble(p, 5, colors="record")
    assert r.color_names == ["a"]


def test_query_counts_what_the_colored_graph_holds(tmp_path, rng):
    k = 21
    base = "".join(rng.choice(list("ACGT"), 3000))
    genomes = [base, base[:1500] + "".join(rng.choice(list("ACGT"), 400)) + base[1500:], base[500:]]
    paths = []
    for i, g in enumerate(genomes):
        p = tmp_path / f"g{i}.fa"
        p.write_text(f">g{i}\n{g}\n")
        paths.append(p)
    warpath.assemble(paths, k, colors="file", fasta=tmp_path / "u.fa", color_sets=tmp_path / "s.jsonl")
    pieces = [genomes[1][1400:1700], base[:200], "".join(rng.choice(list("ACGT"), 200))]
    q = tmp_path / "q.fa"
    q.write_text("".join(f">q{i}\n{s}\n" for i, s in enumerate(pieces)))
    m = warpath.query(tmp_path / "u.fa", tmp_path / "s.jsonl", k, q)
    assert list(m.colors) == ["g0.fa", "g1.fa", "g2.fa"]
    # the sets by number answer the same
    warpath.assemble(paths, k, colors="file", color_sets=tmp_path / "n.jsonl", color_sets_format="numbers")
    n = warpath.query(tmp_path / "u.fa", tmp_path / "n.jsonl", k, q)
    assert np.array_equal(n.matches, m.matches) and np.array_equal(n.kmers, m.kmers)
    held = [{canon(g[i:i + k]) for i in range(len(g) - k + 1)} for g in genomes]
    for row, s in enumerate(pieces):
        kmers = [canon(s[i:i + k]) for i in range(len(s) - k + 1)]
        assert m.kmers[row] == len(kmers)
        assert [int(x) for x in m.matches[row]] == [sum(x in h for x in kmers) for h in held]
