"""Permutations, ranks and De Bruijn sequences against itertools and brute force."""

import itertools
import math

import numpy as np
import pytest

import warpath


@pytest.mark.parametrize("n", range(0, 8))
def test_all_permutations_match_itertools(n):
    got = warpath.permutations(n)
    assert got.dtype == np.uint8 and got.shape == (math.factorial(n), n)
    np.testing.assert_array_equal(got, np.array(list(itertools.permutations(range(n))), dtype=np.uint8).reshape(math.factorial(n), n))


def test_ranges():
    want = np.array(list(itertools.permutations(range(6))), dtype=np.uint8)
    for start, count in [(0, 1), (5, 31), (700, 20), (719, 1), (0, 0), (720, 0), (100, None)]:
        got = warpath.permutations(6, start=start, count=count)
        stop = 720 if count is None else start + count
        np.testing.assert_array_equal(got, want[start:stop])


def test_permutation_errors():
    with pytest.raises(ValueError, match="reach past"):
        warpath.permutations(4, start=20, count=5)
    with pytest.raises(ValueError, match="too large"):
        warpath.permutations(21, count=1)
    with pytest.raises(ValueError, match=">= 0"):
        warpath.permutations(3, start=-1)
    with pytest.raises(TypeError):
        warpath.permutations(3.5)
    with pytest.raises(MemoryError, match="could not allocate"):
        warpath.permutations(20)  # 20! rows: refused up front, not attempted


def test_rank_unrank_roundtrip():
    for rank, p in enumerate(itertools.permutations(range(5))):
        assert warpath.rank_permutation(p) == rank
        np.testing.assert_array_equal(warpath.unrank_permutation(5, rank), p)
    assert warpath.rank_permutation([30, -5, 7]) == warpath.rank_permutation([2, 0, 1]) == 4
    big = list(range(34))[::-1]
    assert warpath.rank_permutation(big) == math.factorial(34) - 1
    np.testing.assert_array_equal(warpath.unrank_permutation(34, math.factorial(34) - 1), big)
    assert warpath.rank_permutation([]) == 0
    assert warpath.unrank_permutation(0, 0).shape == (0,)


def test_rank_unrank_errors():
    with pytest.raises(ValueError, match="equal"):
        warpath.rank_permutation([1, 2, 1])
    with pytest.raises(ValueError, match="too large"):
        warpath.rank_permutation(list(range(35)))
    with pytest.raises(TypeError, match="integers"):
        warpath.rank_permutation([0.5, 1.5])
    with pytest.raises(ValueError, match="out of range"):
        warpath.unrank_permutation(3, 6)
    with pytest.raises(ValueError, match=">= 0"):
        warpath.unrank_permutation(3, -1)
    with pytest.raises(ValueError, match="out of range"):
        warpath.unrank_permutation(3, 1 << 200)


def is_de_bruijn(seq, k, n):
    """Every word of length n over k symbols exactly once as a cyclic window."""
    seq = list(seq)
    if len(seq) != k**n:
        return False
    ext = seq + seq[: n - 1]
    words = {tuple(ext[i : i + n]) for i in range(len(seq))}
    return len(words) == k**n and all(0 <= s < k for s in seq)


@pytest.mark.parametrize("k, n", [(1, 1), (1, 4), (2, 1), (2, 3), (2, 10), (3, 4), (4, 3), (10, 3), (256, 1), (256, 2)])
@pytest.mark.parametrize("construction", ["fkm", "euler"])
def test_de_bruijn(k, n, construction):
    seq = warpath.de_bruijn_sequence(k, n, construction=construction)
    assert seq.dtype == np.uint8
    assert is_de_bruijn(seq.tolist(), k, n)


def test_de_bruijn_fkm_is_the_smallest_and_linear():
    np.testing.assert_array_equal(warpath.de_bruijn_sequence(2, 3), [0, 0, 0, 1, 0, 1, 1, 1])
    lin = warpath.de_bruijn_sequence(3, 2, linear=True)
    assert len(lin) == 9 + 1
    windows = {tuple(lin[i : i + 2]) for i in range(len(lin) - 1)}
    assert len(windows) == 9
    assert warpath.de_bruijn_sequence("ACGT", 1) == "ACGT"
    s = warpath.de_bruijn_sequence("xyz", 3, construction="euler")
    assert is_de_bruijn(["xyz".index(c) for c in s], 3, 3)


def test_de_bruijn_errors():
    with pytest.raises(ValueError, match="empty"):
        warpath.de_bruijn_sequence(0, 3)
    with pytest.raises(ValueError, match="at least 1"):
        warpath.de_bruijn_sequence(2, 0)
    with pytest.raises(ValueError, match="256"):
        warpath.de_bruijn_sequence(257, 1)
    with pytest.raises(ValueError, match="repeats"):
        warpath.de_bruijn_sequence("aba", 2)
    with pytest.raises(ValueError, match="construction"):
        warpath.de_bruijn_sequence(2, 2, construction="magic")
    with pytest.raises(ValueError, match="CPU only"):
        warpath.de_bruijn_sequence(2, 2, backend="cuda")
    with pytest.raises((ValueError, MemoryError)):
        warpath.de_bruijn_sequence(256, 8)
