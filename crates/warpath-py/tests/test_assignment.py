"""warpath.linear_sum_assignment against scipy.optimize.linear_sum_assignment."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
import scipy.optimize

import warpath




def check_optimal(cost, maximize=False, **kw):
    """warpath's answer is a valid assignment with scipy's optimal cost."""
    r, c = warpath.linear_sum_assignment(cost, maximize, **kw)
    sr, sc = scipy.optimize.linear_sum_assignment(cost, maximize)
    a = np.asarray(cost, dtype=np.float64)
    assert r.dtype == np.int64 and c.dtype == np.int64
    assert len(r) == len(sr) == min(a.shape)
    assert np.all(np.diff(r) > 0), "rows sorted and distinct"
    assert len(set(c.tolist())) == len(c), "columns distinct"
    np.testing.assert_allclose(a[r, c].sum(), a[sr, sc].sum(), rtol=1e-12, atol=1e-9)
    return r, c


@pytest.mark.parametrize("shape", [(1, 1), (1, 5), (5, 1), (2, 2), (3, 7), (7, 3), (31, 32), (32, 32), (33, 32), (50, 50)])
@pytest.mark.parametrize("maximize", [False, True])
def test_random_float_matches_scipy(rng, shape, maximize):
    for _ in range(5):
        check_optimal(rng.random(shape), maximize)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16, np.float32, np.float64])
def test_every_numeric_dtype(rng, dtype):
    cost = rng.integers(0, 2 if dtype == np.bool_ else 100, size=(9, 12)).astype(dtype)
    check_optimal(cost)
    check_optimal(cost.T, maximize=True)


def test_lists_and_non_contiguous(rng):
    check_optimal([[4, 1, 3], [2, 0, 5], [3, 2, 2]])
    check_optimal([[4.5, 1.0], [2.0, 0.0], [3.0, 2.0]])
    big = rng.random((40, 60))
    check_optimal(big[::2, ::3])  # strided
    check_optimal(big.T)  # Fortran order
    check_optimal(np.asfortranarray(big))
    check_optimal(big.astype(">f8"))  # big-endian


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0)])
def test_empty(shape):
    r, c = warpath.linear_sum_assignment(np.zeros(shape))
    assert r.shape == c.shape == (0,) and r.dtype == np.int64


def test_ties_are_deterministic():
    cost = np.ones((6, 6))
    first = warpath.linear_sum_assignment(cost)
    for _ in range(5):
        again = warpath.linear_sum_assignment(cost)
        np.testing.assert_array_equal(first[0], again[0])
        np.testing.assert_array_equal(first[1], again[1])
    check_optimal(cost)


def test_integer_costs_are_exact():
    cost = np.array([[2**52, 1], [1, 2**52]], dtype=np.int64)
    r, c = warpath.linear_sum_assignment(cost)
    assert c.tolist() == [1, 0]


def test_forbidden_pairs(rng):
    for _ in range(10):
        cost = rng.random((8, 8))
        cost[rng.random((8, 8)) < 0.3] = np.inf
        np.fill_diagonal(cost, rng.random(8))  # keeps a full matching
        check_optimal(cost)


@pytest.mark.parametrize(
    "cost, message",
    [
        (np.array([[np.nan, 1.0], [1.0, 2.0]]), "invalid numeric entries: NaN at \\(0, 0\\)"),
        (np.array([[-np.inf, 1.0], [1.0, 2.0]]), "invalid numeric entries: -inf at \\(0, 0\\)"),
        (np.array([[np.inf, np.inf], [1.0, 2.0]]), "infeasible"),
    ],
)
def test_invalid_entries_raise_value_error_like_scipy(cost, message):
    with pytest.raises(ValueError):
        scipy.optimize.linear_sum_assignment(cost)
    with pytest.raises(ValueError, match=message):
        warpath.linear_sum_assignment(cost)


def test_maximize_minus_inf_forbids_a_pair():
    cost = np.array([[-np.inf, 1.0], [2.0, 3.0]])
    r, c = warpath.linear_sum_assignment(cost, maximize=True)
    assert c.tolist() == [1, 0]


def test_maximize_plus_inf_is_invalid():
    with pytest.raises(ValueError):
        scipy.optimize.linear_sum_assignment(np.array([[np.inf, 1.0], [2.0, 3.0]]), maximize=True)
    with pytest.raises(ValueError):
        warpath.linear_sum_assignment(np.array([[np.inf, 1.0], [2.0, 3.0]]), maximize=True)


def test_bad_shapes_and_types():
    with pytest.raises(ValueError, match="2-D"):
        warpath.linear_sum_assignment(np.zeros(3))
    with pytest.raises(ValueError, match="2-D"):
        warpath.linear_sum_assignment(np.zeros((2, 2, 2)))
    for bad in (np.array([["a"]]), np.array([[1 + 2j]]), np.array([[1.0]], dtype=np.longdouble)):
        with pytest.raises(TypeError):
            scipy.optimize.linear_sum_assignment(bad)
        with pytest.raises(TypeError, match="Cannot cast"):
            warpath.linear_sum_assignment(bad)


def test_solvers_agree(rng):
    cost = rng.integers(0, 50, size=(8, 8))
    best = check_optimal(cost)
    for solver in ("hungarian", "auction", "brute"):
        r, c = warpath.linear_sum_assignment(cost, solver=solver)
        assert cost[r, c].sum() == cost[best].sum()
    r, c = warpath.linear_sum_assignment(cost, solver="greedy")
    assert cost[r, c].sum() >= cost[best].sum()


def test_options_are_checked():
    with pytest.raises(ValueError, match="solver"):
        warpath.linear_sum_assignment(np.eye(2), solver="simplex")
    with pytest.raises(ValueError, match="backend"):
        warpath.linear_sum_assignment(np.eye(2), backend="tpu")
    with pytest.raises(ValueError, match="CPU only"):
        warpath.linear_sum_assignment(np.eye(2), backend="cuda")


def test_cuda_backend_without_gpu_is_a_clear_error():
    if warpath.info()["cuda"]:
        pytest.skip("a GPU is present")
    with pytest.raises(warpath.GpuError, match="CUDA"):
        warpath.linear_sum_assignment(np.eye(3), solver="auction", backend="cuda")
    assert issubclass(warpath.GpuError, RuntimeError)


@pytest.mark.parametrize("shape", [(0, 3, 3), (1, 4, 4), (6, 5, 5), (4, 3, 6), (4, 6, 3)])
def test_batch_matches_scipy(rng, shape):
    costs = rng.random(shape)
    rows, cols = warpath.linear_sum_assignment_batch(costs)
    assert rows.shape == cols.shape == (shape[0], min(shape[1:]))
    for k in range(shape[0]):
        sr, sc = scipy.optimize.linear_sum_assignment(costs[k])
        np.testing.assert_allclose(costs[k][rows[k], cols[k]].sum(), costs[k][sr, sc].sum(), rtol=1e-12)
        assert np.all(np.diff(rows[k]) > 0)


def test_batch_integer_auction_and_maximize(rng):
    costs = rng.integers(0, 100, size=(10, 7, 7))
    for solver in ("jv", "auction"):
        rows, cols = warpath.linear_sum_assignment_batch(costs, maximize=True, solver=solver)
        for k in range(10):
            sr, sc = scipy.optimize.linear_sum_assignment(costs[k], maximize=True)
            assert costs[k][rows[k], cols[k]].sum() == costs[k][sr, sc].sum()


def test_batch_error_names_the_problem():
    costs = np.ones((3, 2, 2))
    costs[2, 0, 0] = np.nan
    with pytest.raises(ValueError, match="problem 2"):
        warpath.linear_sum_assignment_batch(costs)
    with pytest.raises(ValueError, match="3-D"):
        warpath.linear_sum_assignment_batch(np.ones((2, 2)))


def test_huge_finite_costs_like_scipy():
    cost = np.array([[1e308, 1.0], [1.0, 1e308]])
    assert scipy.optimize.linear_sum_assignment(cost)[1].tolist() == [1, 0]
    assert warpath.linear_sum_assignment(cost)[1].tolist() == [1, 0]


# --------------------------------------------------------------------------- issue 35


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
@pytest.mark.parametrize("shape", [(40, 40), (30, 50), (50, 30)])
def test_native_dtypes_with_ties_match_scipy(rng, dtype, shape):
    for high in (3, 100, 10**6):
        if dtype == np.float32 and high > 2**24:
            continue
        cost = rng.integers(0, high, size=shape).astype(dtype)
        check_optimal(cost)
        check_optimal(cost, maximize=True)


def test_int32_extremes_when_maximising():
    cost = np.array([[np.iinfo(np.int32).min, np.iinfo(np.int32).max, 0], [5, -7, 3], [0, 0, 1]], dtype=np.int32)
    check_optimal(cost, maximize=True)
    check_optimal(cost)


@pytest.mark.parametrize("solver", ["auto", "sparse"])
def test_auto_and_sparse_solvers_on_forbidden_heavy_matrices(rng, solver):
    cost = np.full((300, 300), np.inf)
    mask = rng.random((300, 300)) < 0.05
    cost[mask] = rng.random(mask.sum())
    np.fill_diagonal(cost, rng.random(300))
    r, c = warpath.linear_sum_assignment(cost, solver=solver)
    sr, sc = scipy.optimize.linear_sum_assignment(cost)
    np.testing.assert_allclose(cost[r, c].sum(), cost[sr, sc].sum(), rtol=1e-12)


def _random_sparse(rng, shape, density, fmt, dtype=np.float64):
    import scipy.sparse as sp

    m = sp.random(*shape, density=density, format="coo", random_state=int(rng.integers(1 << 30)))
    m.data = (1 + 99 * m.data).astype(dtype)
    k = min(shape)
    diag = sp.coo_matrix((np.full(k, 50, dtype=dtype), (np.arange(k), np.arange(k))), shape=shape)
    return (m + diag).asformat(fmt)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("shape", [(60, 60), (40, 70), (70, 40)])
@pytest.mark.parametrize("maximize", [False, True])
def test_sparse_matching_matches_scipy(rng, fmt, shape, maximize):
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm

    for dtype in (np.float64, np.int64, np.float32, np.int32):
        m = _random_sparse(rng, shape, 0.1, fmt, dtype)
        r, c = warpath.min_weight_full_bipartite_matching(m, maximize)
        sr, sc = scipy_mwfbm(m, maximize)
        dense = m.toarray()
        assert len(r) == len(sr) == min(shape)
        assert np.all(np.diff(r) > 0) and len(set(c.tolist())) == len(c)
        assert r.dtype == sr.dtype and c.dtype == sc.dtype
        np.testing.assert_allclose(dense[r, c].sum(), dense[sr, sc].sum(), rtol=1e-6)


def test_sparse_matching_contract_errors_and_warnings():
    import scipy.sparse as sp

    with pytest.raises(ValueError, match="no full matching exists"):
        warpath.min_weight_full_bipartite_matching(sp.csr_array([[1, 1], [0, 0]]))
    with pytest.raises(TypeError, match="graph must be sparse"):
        warpath.min_weight_full_bipartite_matching(np.eye(2))
    with pytest.raises(TypeError, match="CSC, CSR, or COO"):
        warpath.min_weight_full_bipartite_matching(sp.lil_array(np.eye(2)))
    with pytest.raises(ValueError, match="invalid numeric entries"):
        warpath.min_weight_full_bipartite_matching(sp.csr_array([[np.nan, 1.0], [1.0, 1.0]]))
    explicit = sp.csr_array((np.array([0.0, 5.0, 5.0, 0.0]), np.array([0, 1, 0, 1]), np.array([0, 2, 4])), shape=(2, 2))
    with pytest.warns(UserWarning, match="explicit zero"):
        r, c = warpath.min_weight_full_bipartite_matching(explicit)
    assert c.tolist() == [1, 0]  # the zeros are not edges, as in scipy
    r, c = warpath.min_weight_full_bipartite_matching(sp.csr_array((0, 3)))
    assert len(r) == len(c) == 0


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.float32])
@pytest.mark.parametrize("shape", [(200, 5, 5), (50, 30, 30), (20, 12, 25), (20, 25, 12)])
def test_batch_dtypes_and_shapes_match_scipy(rng, dtype, shape):
    costs = rng.integers(0, 100, size=shape).astype(dtype)
    rows, cols = warpath.linear_sum_assignment_batch(costs)
    for k in range(shape[0]):
        sr, sc = scipy.optimize.linear_sum_assignment(costs[k])
        assert costs[k][rows[k], cols[k]].sum() == costs[k][sr, sc].sum()
        assert np.all(np.diff(rows[k]) > 0)


# --------------------------------------------------------------------------- issue 48

HUGE = float(np.finfo(np.float64).max)
I64 = np.iinfo(np.int64)


def exact_totals(cost):
    """Every assignment's total in exact arithmetic (Python ints for integer matrices,
    Fractions of the floats otherwise), by brute force over the shorter side."""
    a = np.asarray(cost)
    b = a.T if a.shape[0] > a.shape[1] else a
    exact = int if a.dtype.kind in "iu" else (lambda v: Fraction(float(v)))
    vals = [[exact(v) for v in row] for row in b]
    return [sum(vals[i][j] for i, j in enumerate(cols)) for cols in itertools.permutations(range(b.shape[1]), b.shape[0])]


def exact_total(cost, r, c):
    a = np.asarray(cost)
    exact = int if a.dtype.kind in "iu" else (lambda v: Fraction(float(v)))
    assert len(set(c.tolist())) == len(c) and np.all(np.diff(r) > 0)
    assert len(r) == min(a.shape)
    return sum(exact(a[i, j]) for i, j in zip(r.tolist(), c.tolist()))


def test_the_public_functions_are_the_native_ones_with_scipys_signature():
    import inspect

    for f in (warpath.linear_sum_assignment, warpath.linear_sum_assignment_batch):
        assert f.__module__ == "warpath"
        params = list(inspect.signature(f).parameters.values())
        assert [p.name for p in params][1:] == ["maximize", "solver", "backend"]
        assert params[1].default is False and params[2].kind is inspect.Parameter.KEYWORD_ONLY
    # scipy's parameters, by name too
    assert list(inspect.signature(warpath.linear_sum_assignment).parameters)[:2] == ["cost_matrix", "maximize"]
    cost = np.array([[4.0, 1.0], [2.0, 0.0]])
    for maximize in (1, np.True_, "yes", 0, None, np.False_, ""):
        w = warpath.linear_sum_assignment(cost, maximize)
        s = scipy.optimize.linear_sum_assignment(cost, bool(maximize))
        assert w[1].tolist() == s[1].tolist(), maximize
        assert warpath.linear_sum_assignment(cost, maximize=maximize)[1].tolist() == s[1].tolist()


@pytest.mark.parametrize("maximize", [False, True])
def test_costs_near_the_largest_float_as_scipy_answers_them(maximize):
    # the matrix: scipy returns rows [0, 1], cols [0, 1] (minimising)
    r, c = warpath.linear_sum_assignment(np.array([[1e308, 1e308], [1e308, -1e308]]))
    assert (r.tolist(), c.tolist()) == ([0, 1], [0, 1])
    cases = [
        [[1e308, 1e308], [1e308, -1e308]],
        [[1e308, 1e308], [1e308, 1e308]],  # every total overflows
        [[HUGE, HUGE], [HUGE, -HUGE]],
        [[-HUGE, -HUGE], [-HUGE, -HUGE]],
        [[HUGE, 0.0], [0.0, HUGE]],
        [[1e308, 5e307], [5e307, 1e308]],
        [[1.7e308, 1.7e308, 0.0], [1.7e308, 0.0, 1.7e308], [0.0, 1.7e308, 1.7e308]],
        [[1e308, 2e307], [3e307, 1e308], [1e308, 1e308]],
        [[1e308, 1e308, 1e308], [1e308, 1e308, 1e308]],
        [[HUGE, 1.0, -HUGE, 3.0]],
    ]
    for cost in cases:
        cost = np.array(cost)
        r, c = warpath.linear_sum_assignment(cost, maximize)
        sr, sc = scipy.optimize.linear_sum_assignment(cost, maximize)
        totals = sorted(exact_totals(cost), reverse=maximize)
        assert exact_total(cost, r, c) == exact_total(cost, sr, sc) == totals[0]
        if len(totals) == 1 or totals[1] != totals[0]:  # ties may be broken otherwise
            assert (r.tolist(), c.tolist()) == (sr.tolist(), sc.tolist()), (cost, maximize)
        # the batch returns the same pairs (its total is +-inf, not an error)
        br, bc = warpath.linear_sum_assignment_batch(cost[None], maximize)
        assert (br[0].tolist(), bc[0].tolist()) == (r.tolist(), c.tolist())


def test_random_huge_costs_are_solved_exactly_and_match_scipy_where_it_is_optimal(rng):
    # Entries near +-1.8e308 with small ones: warpath's total is the exact optimum up to the
    # rounding step of the largest entry (totals closer than that are ties to any float
    # solver). Where scipy's answer is optimal too and the optimum is unique, the pairs are
    # scipy's; scipy's own answer is not always optimal here (its reduced costs overflow).
    vals = [1e308, -1e308, HUGE, -HUGE, 1.7e308, -1.7e308, 5e307, 0.0, 1.0, -2.5, 1e300]
    same = 0
    for _ in range(400):
        shape = tuple(rng.integers(1, 5, 2))
        cost = rng.choice(vals, size=shape)
        for maximize in (False, True):
            totals = sorted(exact_totals(cost), reverse=maximize)
            tol = Fraction(float(np.spacing(np.abs(cost).max() / 2))) * 4 * min(shape)
            r, c = warpath.linear_sum_assignment(cost, maximize)
            assert abs(exact_total(cost, r, c) - totals[0]) <= tol, (cost, maximize)
            sr, sc = scipy.optimize.linear_sum_assignment(cost, maximize)
            unique = len(totals) == 1 or abs(totals[1] - totals[0]) > tol
            if unique and abs(exact_total(cost, sr, sc) - totals[0]) <= tol:
                assert (r.tolist(), c.tolist()) == (sr.tolist(), sc.tolist()), (cost, maximize)
                same += 1
    assert same > 300


def test_int64_extremes_are_solved_exactly(rng):
    # scipy converts int64 to float64 (rounding beyond 2**53) and solves; warpath solves the
    # integers exactly over the whole int64 range
    vals = [I64.min, I64.max, I64.min + 1, I64.max - 1, 2**62, -(2**62), 2**53 + 1, -(2**53) - 1, 0, 1, -1]
    for _ in range(150):
        shape = tuple(rng.integers(1, 6, 2))
        cost = rng.choice(np.array(vals, dtype=np.int64), size=shape)
        for maximize in (False, True):
            best = (max if maximize else min)(exact_totals(cost))
            r, c = warpath.linear_sum_assignment(cost, maximize)
            assert exact_total(cost, r, c) == best, (cost, maximize)
            br, bc = warpath.linear_sum_assignment_batch(np.stack([cost, cost]), maximize)
            assert br[1].tolist() == r.tolist() and bc[1].tolist() == c.tolist()
    # the values the issue names, which used to raise "out of the supported range"
    for v in (2**62, I64.max, I64.min):
        cost = np.array([[v, 0], [0, v]], dtype=np.int64)
        assert warpath.linear_sum_assignment(cost)[1].tolist() == scipy.optimize.linear_sum_assignment(cost)[1].tolist()
    # where float64 rounding hides the optimum from scipy, warpath finds it: 2**62 + 1 is
    # 2**62 as a float64, so every assignment ties for scipy
    cost = np.array([[2**62 + 1, 2**62], [2**62, 2**62]], dtype=np.int64)
    assert scipy.optimize.linear_sum_assignment(cost)[1].tolist() == [0, 1]
    assert warpath.linear_sum_assignment(cost)[1].tolist() == [1, 0]


@pytest.mark.parametrize("shape", [(40, 25), (25, 40), (10, 7), (7, 10), (45, 30), (30, 45), (1, 30), (30, 1), (64, 2), (2, 64)])
@pytest.mark.parametrize("maximize", [False, True])
def test_tall_and_wide_shapes_match_scipy(rng, shape, maximize):
    for _ in range(5):
        check_optimal(rng.random(shape), maximize)
        check_optimal(rng.integers(0, 10, size=shape), maximize)  # many ties
        check_optimal(rng.integers(-(10**6), 10**6, size=shape).astype(np.int32), maximize)


def test_large_problems_release_the_gil_and_agree_with_small_ones(rng):
    # above 2,048 entries the solve runs with the GIL released, through rust-numpy's borrow
    # checking; below, in the calling thread: same answers
    for shape in ((45, 45), (46, 46), (2048, 1), (2049, 1), (100, 80)):
        check_optimal(rng.random(shape))
        check_optimal(rng.integers(0, 100, size=shape))


@pytest.mark.parametrize(
    "shape", [(0, 3, 3), (3, 0, 4), (3, 4, 0), (1, 1, 1), (300, 3, 3), (3000, 3, 3), (7, 40, 25), (7, 25, 40)]
)
def test_batch_shapes_at_the_edges(rng, shape):
    costs = rng.random(shape)
    rows, cols = warpath.linear_sum_assignment_batch(costs)
    assert rows.shape == cols.shape == (shape[0], min(shape[1:])) and rows.dtype == np.int64
    for k in range(shape[0]):
        r, c = warpath.linear_sum_assignment(costs[k])
        assert rows[k].tolist() == r.tolist() and cols[k].tolist() == c.tolist()


def test_batch_input_forms(rng):
    ints = rng.integers(0, 100, size=(20, 6, 6))
    want = warpath.linear_sum_assignment_batch(ints)
    for form in (
        ints.tolist(),
        ints.astype(np.uint8),
        ints.astype(np.int16),
        ints.astype(np.float16),
        ints.astype(">i8"),
        np.ascontiguousarray(ints.transpose(0, 2, 1)).transpose(0, 2, 1),  # strided
    ):
        got = warpath.linear_sum_assignment_batch(form)
        for k in range(len(ints)):
            assert ints[k][got[0][k], got[1][k]].sum() == ints[k][want[0][k], want[1][k]].sum()
    got = warpath.linear_sum_assignment_batch(ints > 50, maximize=1)
    assert got[0].shape == (20, 6)
    with pytest.raises(ValueError, match="3-D"):
        warpath.linear_sum_assignment_batch(np.ones((2, 2, 2, 2)))
    with pytest.raises(TypeError, match="Cannot cast"):
        warpath.linear_sum_assignment_batch(np.ones((2, 2, 2), dtype=complex))


def test_batch_errors_name_the_first_failing_problem_small_and_large():
    for b in (5, 5000):  # solved in the calling thread, and on the thread pool
        costs = np.ones((b, 3, 3))
        costs[b - 1, 0, 0] = np.nan
        costs[b - 2, 2, 1] = -np.inf
        with pytest.raises(ValueError, match=f"problem {b - 2}: .*-inf at \\(2, 1\\)"):
            warpath.linear_sum_assignment_batch(costs)
        costs[b - 2] = np.inf
        costs[b - 1] = 1.0
        with pytest.raises(ValueError, match=f"problem {b - 2}: cost matrix is infeasible"):
            warpath.linear_sum_assignment_batch(costs)


def test_single_call_input_forms_match_scipy(rng):
    a = rng.integers(0, 50, size=(5, 7))
    for form in (
        a.tolist(),
        [[float(v) for v in row] for row in a.tolist()],
        a.astype(np.bool_),
        a.astype(np.uint8),
        a.astype(np.int8),
        a.astype(np.uint16),
        a.astype(np.int16),
        a.astype(np.uint32),
        a.astype(np.float16),
        a.astype(">f8"),
        a.astype("<i4")[:, ::-1],
        np.asfortranarray(a),
    ):
        for maximize in (False, True):
            check_optimal(form, maximize)
    with pytest.raises(ValueError):
        warpath.linear_sum_assignment([[1.0, 2.0], [3.0]])  # ragged, as numpy refuses it
