"""warpath.sort / argsort / unique against numpy."""

import numpy as np
import pytest
from conftest import EDGE_SIZES

import warpath

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_DTYPES = [np.float16, np.float32, np.float64]
ALL_DTYPES = [np.bool_, *INT_DTYPES, *FLOAT_DTYPES]



def values(rng, dtype, n, special=True):
    """n values of dtype: random over the full range (integers) or with NaN, +-0.0, +-inf and
    repeats (floats)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    x = (rng.standard_normal(n) * 1e3).astype(dt)
    if special and n:
        x[rng.random(n) < 0.1] = np.nan
        x[rng.random(n) < 0.05] = np.inf
        x[rng.random(n) < 0.05] = -np.inf
        x[rng.random(n) < 0.05] = 0.0
        x[rng.random(n) < 0.1] = x[0]  # repeats
    return x


def same(a, b):
    """Equal values, NaNs in the same places, same dtype and shape."""
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", EDGE_SIZES)
def test_sort_matches_numpy(rng, dtype, n):
    x = values(rng, dtype, n)
    same(warpath.sort(x), np.sort(x))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", EDGE_SIZES)
def test_argsort_is_numpys_stable_argsort(rng, dtype, n):
    # -0.0 and NaNs of one sign only: numpy's order and warpath's agree exactly there
    x = values(rng, dtype, n)
    if x.dtype.kind == "f":
        x[x == 0] = 0.0
    got = warpath.argsort(x)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))


def test_nan_last_and_signed_zeros():
    x = np.array([np.nan, 1.0, -np.inf, -0.0, np.inf, 0.0, -1.0, -np.nan])
    s = warpath.sort(x)
    np.testing.assert_array_equal(s[:6], [-np.inf, -1.0, 0.0, 0.0, 1.0, np.inf])
    assert np.isnan(s[6:]).all()
    assert np.signbit(s[2]) and not np.signbit(s[3])


def test_argsort_keeps_equal_zeros_in_index_order():
    x = np.array([0.0, -0.0, 0.0, -0.0])
    np.testing.assert_array_equal(warpath.argsort(x), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("shape, axis", [((4, 5), -1), ((4, 5), 0), ((4, 5), None), ((3, 4, 5), 1), ((3, 0, 2), 1), ((0,), 0), ((2, 3), 1)])
def test_axes(rng, shape, axis):
    x = rng.standard_normal(shape)
    same(warpath.sort(x, axis=axis), np.sort(x, axis=axis))
    np.testing.assert_array_equal(warpath.argsort(x, axis=axis), np.argsort(x, axis=axis, kind="stable"))
    assert warpath.sort(x, axis=axis).flags.c_contiguous


def test_inputs_other_than_contiguous_native_arrays(rng):
    x = rng.integers(-100, 100, size=(30, 40))
    same(warpath.sort(x[::3, ::2]), np.sort(x[::3, ::2]))
    same(warpath.sort(x.T), np.sort(x.T))
    same(warpath.sort(x.tolist()), np.sort(x.tolist()))
    big = x.astype(">i8")
    np.testing.assert_array_equal(warpath.sort(big), np.sort(big))
    original = x.copy()
    warpath.sort(x)
    np.testing.assert_array_equal(x, original)  # input untouched


def test_one_dimensional_fast_path(rng):
    # 1-D native arrays skip _by_rows: strided, reversed, big-endian, one key, float NaNs
    v = rng.standard_normal(1001)
    v[::7] = np.nan
    for a in (v, v[::3], v[::-1], v[:1], v.astype(np.float32)):
        for axis in (-1, 0, None):
            same(warpath.sort(a, axis=axis), np.sort(a, axis=axis))
    np.testing.assert_array_equal(warpath.sort(v.astype(">f8")), np.sort(v))  # native order out
    original = v.copy()
    out = warpath.sort(v)
    assert out.shape == v.shape and not np.shares_memory(out, v)
    np.testing.assert_array_equal(v, original)
    assert warpath.sort(np.array([], dtype=np.uint32)).dtype == np.uint32


def test_sort_options_and_errors():
    x = np.array([3, 1, 2])
    for kind in (None, "quicksort", "mergesort", "heapsort", "stable"):
        same(warpath.sort(x, kind=kind), np.sort(x))
    with pytest.raises(ValueError):
        warpath.sort(x, kind="bogo")
    with pytest.raises(ValueError, match="structured"):
        warpath.sort(x, order="f0")
    with pytest.raises(np.exceptions.AxisError):
        warpath.sort(x, axis=1)
    with pytest.raises(np.exceptions.AxisError):
        warpath.sort(np.float64(1.0))
    for bad in (np.array([1 + 1j]), np.array(["a"]), np.array([1.0], dtype=np.longdouble), np.array([object()])):
        with pytest.raises(TypeError, match="supports"):
            warpath.sort(bad)
        with pytest.raises(TypeError, match="supports"):
            warpath.unique(bad)
    with pytest.raises(ValueError, match="backend"):
        warpath.sort(x, backend="tpu")


def test_cuda_backend_without_gpu():
    if warpath.info()["cuda"]:
        pytest.skip("a GPU is present")
    with pytest.raises(warpath.GpuError):
        warpath.sort(np.arange(10), backend="cuda")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", EDGE_SIZES)
def test_unique_matches_numpy(rng, dtype, n):
    x = values(rng, dtype, n)
    if x.dtype.kind == "f":
        x[x == 0] = 0.0  # one zero sign, one NaN bit pattern: see the xfail tests
        x[np.isnan(x)] = np.nan
    got = warpath.unique(x, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    same(got[0], want[0])
    for g, w in zip(got[1:], want[1:], strict=True):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, w)
    same(warpath.unique(x), np.unique(x))


def test_unique_small_range_and_sorted_inputs(rng):
    # the dense-table path (small range) and the already-sorted path
    for x in (rng.integers(0, 50, 100_000), np.sort(rng.integers(0, 1 << 40, 100_000)), np.repeat(7, 70_000)):
        got = warpath.unique(x, return_index=True, return_inverse=True, return_counts=True)
        want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)


def test_unique_flags_and_shapes(rng):
    x = rng.integers(0, 5, size=(3, 4))
    got = warpath.unique(x, return_inverse=True)
    want = np.unique(x, return_inverse=True)
    assert isinstance(got, tuple) and len(got) == 2
    assert got[1].shape == want[1].shape == x.shape
    np.testing.assert_array_equal(got[0][got[1]], x)
    v, c = warpath.unique(x, return_counts=True)
    assert c.sum() == x.size
    with pytest.raises(NotImplementedError, match="axis"):
        warpath.unique(x, axis=0)
    with pytest.raises(NotImplementedError, match="equal_nan"):
        warpath.unique(x, equal_nan=False)


def test_unique_zeros_are_one_value():
    x = np.array([0.0, -0.0, 1.0, -0.0])
    np.testing.assert_array_equal(warpath.unique(x), np.unique(x))
    assert len(warpath.unique(x)) == 2


def test_unique_nans_are_one_value():
    x = np.array([np.nan, -np.nan, 1.0, np.float64("nan") * 0])
    x[3] = np.frombuffer(np.array([0x7FF8000000000001], dtype=np.uint64).tobytes(), dtype=np.float64)[0]
    assert len(np.unique(x)) == 2
    assert len(warpath.unique(x)) == 2


# The 1-D entry points (one native call for a 1-D ndarray of a native key dtype): every key
# dtype, both sides of the size below which the GIL is kept (2^14) and of the parallel sort
# (2^17), network sizes, strided and read-only inputs, and what they hand back to the
# general path (subclasses, other byte orders).
ONE_D_SIZES = [0, 1, 2, 15, 16, 17, 127, 128, 129, 511, 512, 513, 16383, 16384, 16385, (1 << 17) + 1]
KEY_DTYPES = [np.uint32, np.uint64, np.int32, np.int64, np.float32, np.float64, np.longlong, np.ulonglong]


@pytest.mark.parametrize("dtype", KEY_DTYPES)
@pytest.mark.parametrize("n", ONE_D_SIZES)
def test_one_dimensional_entry_points(rng, dtype, n):
    x = values(rng, dtype, n)
    if x.dtype.kind == "f":
        x[x == 0] = 0.0  # one zero sign and one NaN pattern: numpy's order is then exact
        x[np.isnan(x)] = np.nan
    same(warpath.sort(x), np.sort(x))
    np.testing.assert_array_equal(warpath.argsort(x), np.argsort(x, kind="stable"))
    assert warpath.argsort(x).dtype == np.int64
    same(warpath.unique(x), np.unique(x))
    for flags in [(True, False, False), (False, True, False), (False, False, True), (True, True, True)]:
        got = warpath.unique(x, *flags)
        want = np.unique(x, *flags)
        assert isinstance(got, tuple) and len(got) == len(want)
        same(got[0], want[0])
        for g, w in zip(got[1:], want[1:], strict=True):
            assert g.dtype == np.int64 and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", [np.uint32, np.int64, np.float32, np.float64])
def test_one_dimensional_strided_and_read_only(rng, dtype):
    for n in (1000, 40_000):
        v = values(rng, dtype, 3 * n)
        if v.dtype.kind == "f":
            v[v == 0] = 0.0
            v[np.isnan(v)] = np.nan
        frozen = v.copy()
        frozen.flags.writeable = False
        for a in (v[::3], v[::-3], v[1::2], frozen):
            same(warpath.sort(a), np.sort(a))
            np.testing.assert_array_equal(warpath.argsort(a), np.argsort(a, kind="stable"))
            same(warpath.unique(a), np.unique(a))
            got = warpath.unique(a, return_inverse=True, return_counts=True)
            want = np.unique(a, return_inverse=True, return_counts=True)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g, w)


def test_one_dimensional_argsort_of_keys_equal_in_their_high_bits(rng):
    # 64-bit keys are argsorted as words holding their top differing bits above the index;
    # keys that agree there are sorted again by their low bits (runs, here long and many)
    n = 200_003
    cases = [
        (rng.integers(0, 4, n, dtype=np.uint64) << np.uint64(60)) | rng.integers(0, 1 << 18, n, dtype=np.uint64),
        rng.integers(0, 1 << 18, n, dtype=np.uint64),
        np.repeat(np.arange(7, dtype=np.uint64) << np.uint64(58), n // 7 + 1)[:n],
    ]
    cases[1][n // 2] = np.iinfo(np.uint64).max  # one outlier: the rest agree in the top bits
    for x in cases:
        for a in (x, x.view(np.int64), (x >> np.uint64(1)).view(np.float64)):
            np.testing.assert_array_equal(warpath.argsort(a), np.argsort(a, kind="stable"))


def test_one_dimensional_inputs_the_general_path_takes(rng):
    class Sub(np.ndarray):
        pass

    x = rng.integers(0, 100, 50).astype(np.int64)
    sub = x.view(Sub)
    same(np.asarray(warpath.sort(sub)), np.sort(x))
    np.testing.assert_array_equal(warpath.argsort(sub), np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(warpath.unique(sub), np.unique(x))
    for other in (x.astype(">i8"), x.astype(np.int16), x.astype(np.float16), x.astype(bool)):
        np.testing.assert_array_equal(warpath.sort(other), np.sort(other))
        np.testing.assert_array_equal(warpath.argsort(other), np.argsort(other, kind="stable"))
        np.testing.assert_array_equal(warpath.unique(other), np.unique(other))
    with pytest.raises(ValueError, match="backend"):
        warpath.argsort(x, backend="tpu")
    with pytest.raises(ValueError, match="backend"):
        warpath.unique(x, backend="tpu")
