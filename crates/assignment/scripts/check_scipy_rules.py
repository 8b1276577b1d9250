#!/usr/bin/env python3
"""Record what scipy.optimize.linear_sum_assignment does with infinities, NaNs, infeasible
matrices and huge entries, under both senses, so that warpath's solvers can be checked against
it without scipy (tests/scipy_rules.rs reads the record).

Set-up (scipy is never a build dependency of warpath):

    python3 -m venv /tmp/venv-conv && /tmp/venv-conv/bin/pip install numpy scipy
    /tmp/venv-conv/bin/python crates/assignment/scripts/check_scipy_rules.py \
        > crates/assignment/tests/data/scipy_rules.txt

Matrices are small (at most 5 x 5) and seeded: small integers, uniform floats, huge values
(multiples of 2^1019, near f64::MAX), mixtures of huge and tiny values (multiples of 2^-960)
on exact grids, and matrices whose every complete assignment overflows f64; entries are replaced at random by +inf, -inf or
NaN. Each is solved by scipy with maximize=False and True, and by an exact brute force over
all assignments in rational arithmetic (fractions.Fraction, so huge sums do not overflow).

Output, one case per three lines:

    case <id> <rows> <cols> <minimize|maximize>
    <the entries, row-major, as Python writes floats: 1.5, 8.98846567431158e+307, inf, nan>
    scipy ok <cost> <col of each row, -1 when unassigned> | scipy error <invalid|infeasible>
    brute ok <cost> | brute overflow | brute error <invalid|infeasible>

where scipy's cost is the sum numpy computes (inf when it overflows) and brute's is the exact
optimum rounded to the nearest float ("overflow" when that is beyond f64). The summary on
stderr counts the cases where scipy and the brute force disagree.
"""
import itertools
import sys
from fractions import Fraction

import numpy as np
from scipy.optimize import linear_sum_assignment


def brute(c, maximize):
    """Exact optimum over all complete assignments: ('ok', Fraction) / ('error', kind)."""
    r, k = c.shape
    forbidden = -np.inf if maximize else np.inf
    flat = c.ravel()
    if np.isnan(flat).any() or (flat == -forbidden).any():
        return ("error", "invalid")
    best = None
    rows, cols = (range(r), range(k))
    if r <= k:
        choices = ((list(rows), list(p)) for p in itertools.permutations(cols, r))
    else:
        choices = ((list(p), list(cols)) for p in itertools.permutations(rows, k))
    for rs, cs in choices:
        vals = [c[i, j] for i, j in zip(rs, cs)]
        if any(v == forbidden for v in vals):
            continue
        total = sum((Fraction(float(v)) for v in vals), Fraction(0))
        if best is None or (total > best if maximize else total < best):
            best = total
    if best is None:
        return ("error", "infeasible")
    return ("ok", best)


def scipy_result(c, maximize):
    try:
        r, k = linear_sum_assignment(c, maximize=maximize)
    except ValueError as e:
        msg = str(e)
        if "infeasible" in msg:
            return ("error", "infeasible")
        if "invalid" in msg:
            return ("error", "invalid")
        raise
    with np.errstate(over="ignore"):
        cost = float(c[r, k].sum())
    cols = [-1] * c.shape[0]
    for i, j in zip(r, k):
        cols[i] = int(j)
    return ("ok", cost, cols)


def matrix(rng, kind, r, k):
    if kind == "int":
        c = rng.integers(-9, 10, size=(r, k)).astype(float)
    elif kind == "float":
        c = rng.uniform(-1, 1, size=(r, k))
    elif kind == "huge":
        c = rng.integers(-7, 8, size=(r, k)) * 2.0**1019
    elif kind == "overflow":  # every complete assignment of two or more pairs overflows
        c = rng.integers(4, 8, size=(r, k)) * 2.0**1021 * rng.choice([-1.0, 1.0])
    else:  # mixed: huge, tiny and moderate entries on exact grids
        pick = rng.integers(0, 3, size=(r, k))
        huge = rng.integers(1, 8, size=(r, k)) * 2.0**1017
        tiny = rng.integers(1, 100, size=(r, k)) * 2.0**-960
        moderate = rng.integers(-50, 50, size=(r, k)).astype(float)
        c = np.where(pick == 0, huge, np.where(pick == 1, tiny, moderate))
    return c


def main():
    rng = np.random.default_rng(20261122)
    out = sys.stdout
    disagree = 0
    case = 0
    for kind in ["int", "float", "huge", "mixed", "overflow"]:
        for _ in range(10 if kind == "overflow" else 40):
            r, k = (int(x) for x in rng.integers(1, 6, size=2))
            c = matrix(rng, kind, r, k)
            # specials: none, the minimising forbidden value, the maximising one, or any
            special = rng.integers(0, 4)
            density = rng.choice([0.1, 0.3, 0.6])
            mask = rng.random((r, k)) < density
            if special == 1:
                c[mask] = np.inf
            elif special == 2:
                c[mask] = -np.inf
            elif special == 3:
                choice = rng.integers(0, 3, size=(r, k))
                c = np.where(mask & (choice == 0), np.inf, c)
                c = np.where(mask & (choice == 1), -np.inf, c)
                c = np.where(mask & (choice == 2), np.nan, c)
            for maximize in (False, True):
                case += 1
                sense = "maximize" if maximize else "minimize"
                print(f"case {case} {r} {k} {sense}", file=out)
                print(" ".join(repr(float(v)) for v in c.ravel()), file=out)
                s = scipy_result(c, maximize)
                if s[0] == "ok":
                    print(f"scipy ok {s[1]!r} " + " ".join(map(str, s[2])), file=out)
                else:
                    print(f"scipy error {s[1]}", file=out)
                b = brute(c, maximize)
                if b[0] == "ok":
                    try:
                        v = float(b[1])
                        line = f"brute ok {v!r}"
                    except OverflowError:
                        v = float("inf") if b[1] > 0 else float("-inf")
                        line = "brute overflow"
                    print(line, file=out)
                    same = s[0] == "ok" and (s[1] == v or abs(s[1] - v) <= 1e-12 * max(1.0, abs(v)))
                else:
                    print(f"brute error {b[1]}", file=out)
                    same = s[0] == "error" and s[1] == b[1]
                if not same:
                    disagree += 1
                    print(f"case {case} ({kind}, {sense}): scipy {s} vs exact {b}", file=sys.stderr)
    print(f"{case} cases, scipy and the exact brute force disagree on {disagree}", file=sys.stderr)


if __name__ == "__main__":
    main()
