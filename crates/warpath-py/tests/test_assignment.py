"""warpath.linear_sum_assignment against scipy.optimize.linear_sum_assignment."""

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
