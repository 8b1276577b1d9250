#!/usr/bin/env python3
"""Contig quality against a reference from minimap2's PAF (run `minimap2 -c REF CONTIGS`):
the share of the reference covered by primary alignments, the share of contigs whose best
alignment has at least 99% identity over at least 99% of the contig, contig N50 and count.

Usage: contig_quality.py CONTIGS.fa REF.fa ALIGNMENTS.paf
"""
import sys


def lengths(path):
    out, name, n = {}, None, 0
    with open(path) as f:
        for line in f:
            if line.startswith(">"):
                if name is not None:
                    out[name] = n
                name, n = line[1:].split()[0], 0
            else:
                n += len(line.strip())
    if name is not None:
        out[name] = n
    return out


def n50(ls):
    ls = sorted(ls, reverse=True)
    total, acc = sum(ls), 0
    for x in ls:
        acc += x
        if 2 * acc >= total:
            return x
    return 0


def main():
    contigs, ref, paf = sys.argv[1:4]
    clen = lengths(contigs)
    rlen = sum(lengths(ref).values())
    intervals = {}
    best = {}
    with open(paf) as f:
        for line in f:
            c = line.rstrip("\n").split("\t")
            q, qlen, qs, qe, t, ts, te, match, block = c[0], int(c[1]), int(c[2]), int(c[3]), c[5], int(c[7]), int(c[8]), int(c[9]), int(c[10])
            if "tp:A:P" not in line:
                continue
            intervals.setdefault(t, []).append((ts, te))
            ident = match / block
            span = (qe - qs) / qlen
            if q not in best or span * ident > best[q][0] * best[q][1]:
                best[q] = (span, ident)
    covered = 0
    for ivs in intervals.values():
        ivs.sort()
        cur_s, cur_e = None, None
        for s, e in ivs:
            if cur_e is None or s > cur_e:
                if cur_e is not None:
                    covered += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        if cur_e is not None:
            covered += cur_e - cur_s
    good = sum(1 for q in clen if q in best and best[q][0] >= 0.99 and best[q][1] >= 0.99)
    print(f"contigs {len(clen)}  total {sum(clen.values())}  N50 {n50(list(clen.values()))}  "
          f"longest {max(clen.values(), default=0)}  reference covered {100 * covered / rlen:.2f}%  "
          f"contigs aligned at >=99% identity over >=99% of their length {good}/{len(clen)} "
          f"({100 * good / max(len(clen), 1):.2f}%)")


if __name__ == "__main__":
    main()
