"""warpath.query against a plain Python count over a hand-made colored graph."""

import gzip
import json

import numpy as np
import pytest

import warpath

COMP = str.maketrans("ACGT", "TGCA")


def rc(s):
    return s.translate(COMP)[::-1]


def canon(s):
    return min(s, rc(s))


def graph(tmp_path, rng, k):
    """Three genomes as colors, each k-mer written as its own unitig (odd ones reverse
    complemented) with its set's run; the sets numbered by first use, after the header line."""
    base = "".join(rng.choice(list("ACGT"), 400))
    genomes = [base, base[:150] + "".join(rng.choice(list("ACGT"), 60)), rc(base[100:])]
    colors = ["g0", "g1", "g2"]
    sets = {}
    for c, g in enumerate(genomes):
        for i in range(len(g) - k + 1):
            sets.setdefault(canon(g[i:i + k]), set()).add(c)
    ids = {}
    fa = []
    for n, (x, s) in enumerate(sets.items()):
        sid = ids.setdefault(frozenset(s), len(ids))
        fa.append(f">{n} LN:i:{k} KC:i:1 km:f:1.0 C:{sid:x}:1\n{rc(x) if n % 2 else x}\n")
    (tmp_path / "g.fa.gz").write_bytes(gzip.compress("".join(fa).encode()))
    lines = [json.dumps({"colors": colors})]
    for s, sid in sorted(ids.items(), key=lambda p: p[1]):
        lines.append(json.dumps({"id": sid, "colors": [colors[c] for c in sorted(s)]}))
    (tmp_path / "g.jsonl").write_text("\n".join(lines) + "\n")
    return genomes, sets


@pytest.mark.parametrize("k", [15, 35])
def test_query_counts_match_a_direct_count(tmp_path, rng, k):
    genomes, sets = graph(tmp_path, rng, k)
    queries = [""]
    for _ in range(300):
        g = genomes[int(rng.integers(0, 3))]
        n = int(rng.integers(1, 3 * k))
        s = int(rng.integers(0, len(g) - n))
        q = list(g[s:s + n] if rng.random() < 0.8 else "".join(rng.choice(list("ACGT"), n)))
        for _ in range(int(rng.integers(0, 2))):
            q[int(rng.integers(0, n))] = "N"
        queries.append("".join(q))
    (tmp_path / "q.fq").write_text("".join(f"@q{i} x\n{q}\n+\n{'I' * len(q)}\n" for i, q in enumerate(queries)))
    m = warpath.query(tmp_path / "g.fa.gz", str(tmp_path / "g.jsonl"), k, [tmp_path / "q.fq"])
    assert m.colors == ["g0", "g1", "g2"] and len(m) == len(queries)
    assert m.kmers.dtype == np.uint64 and m.matches.dtype == np.uint32
    assert m.matches.shape == (len(queries), 3)
    for i, q in enumerate(queries):
        windows = [q[j:j + k] for j in range(len(q) - k + 1) if "N" not in q[j:j + k]]
        want = [sum(c in sets.get(canon(w), ()) for w in windows) for c in range(3)]
        assert m.names[i] == f"q{i}"
        assert m.kmers[i] == len(windows)
        assert m.matches[i].tolist() == want, i
    present = m.present(0.8)
    assert present.dtype == bool and not present[0].any()
    # a bound of a few KB: many passes over the graph, the same counts
    small = warpath.query(tmp_path / "g.fa.gz", tmp_path / "g.jsonl", k, tmp_path / "q.fq",
                          max_memory=1 << 14)
    assert small.names == m.names and (small.matches == m.matches).all()
    with pytest.raises(MemoryError, match="too small"):
        warpath.query(tmp_path / "g.fa.gz", tmp_path / "g.jsonl", k, tmp_path / "q.fq",
                      max_memory=1000)


def test_query_errors(tmp_path, rng):
    graph(tmp_path, rng, 15)
    (tmp_path / "q.fa").write_text(">q\nACGT\n")
    (tmp_path / "bad.jsonl").write_text('{"id": 3, "colors": []}\n')
    with pytest.raises(ValueError, match="bad.jsonl: line 1: id 3: expected 0"):
        warpath.query(tmp_path / "g.fa.gz", tmp_path / "bad.jsonl", 15, tmp_path / "q.fa")
    with pytest.raises(ValueError, match="k = 14"):
        warpath.query(tmp_path / "g.fa.gz", tmp_path / "g.jsonl", 14, tmp_path / "q.fa")
    with pytest.raises(ValueError, match="record 1: unitig 0"):
        warpath.query(tmp_path / "g.fa.gz", tmp_path / "g.jsonl", 13, tmp_path / "q.fa")
    with pytest.raises(FileNotFoundError):
        warpath.query(tmp_path / "none.fa", tmp_path / "g.jsonl", 15, tmp_path / "q.fa")
