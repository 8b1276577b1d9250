#!/usr/bin/env python3
"""Prints the unitigs of a FASTA file (BCALM2, GGCAT or warpath output) one per line in a
canonical spelling, so that two tools' outputs compare with `sort | cmp` in little memory:

- a unitig is read on the strand whose spelling is smaller (it or its reverse complement);
- a unitig whose first k-1 bases equal its last k-1 bases may be a cycle, which each tool
  may start anywhere: it is spelled from its smallest rotation (of either strand), the k-1
  repeated bases put back at the end. The rule is applied to both files alike, so a linear
  unitig that happens to have equal ends is spelled the same way in both.

Usage: canonical_unitigs.py K FILE.fa  (then `sort -S 1G`; crates/assembly/scripts/scale.sh
compares 250 Mbp outputs this way, where `examples/compare_unitigs` would need > 20 GB)
"""
import sys

COMP = bytes.maketrans(b"ACGTacgt", b"TGCAtgca")


def rc(s: bytes) -> bytes:
    return s.translate(COMP)[::-1]


def least_rotation(s: bytes) -> int:
    """Start of the lexicographically least rotation of `s` (Booth's algorithm, linear time: a
    cycle of a plasmid's length would take minutes by comparing every rotation)."""
    d = s + s
    f = [-1] * len(d)
    k = 0
    for j in range(1, len(d)):
        c = d[j]
        i = f[j - k - 1]
        while i != -1 and c != d[k + i + 1]:
            if c < d[k + i + 1]:
                k = j - i - 1
            i = f[i]
        if c != d[k + i + 1]:
            if c < d[k]:
                k = j
            f[j - k] = -1
        else:
            f[j - k] = i + 1
    return k


def canonical(s: bytes, k: int) -> bytes:
    s = s.upper()
    o = k - 1
    if len(s) > o and s[:o] == s[-o:]:
        best = None
        for strand in (s, rc(s)):
            core = strand[: len(strand) - o]
            i = least_rotation(core)
            r = core[i:] + core[:i]
            cand = r + r[:o]
            if best is None or cand < best:
                best = cand
        return best
    r = rc(s)
    return r if r < s else s


def main():
    k = int(sys.argv[1])
    out = sys.stdout.buffer
    seq = []
    with open(sys.argv[2], "rb") as f:
        for line in f:
            if line.startswith(b">"):
                if seq:
                    out.write(canonical(b"".join(seq), k) + b"\n")
                    seq = []
            else:
                seq.append(line.strip())
    if seq:
        out.write(canonical(b"".join(seq), k) + b"\n")


if __name__ == "__main__":
    main()
