"""The package as a whole: info, the type stub, the docstring examples, the GIL."""

import ast
import doctest
import pathlib
import threading
import time

import numpy as np
import pytest

import warpath
from warpath import _arrays, _kmeans, _native, fhn


def test_info():
    i = warpath.info()
    assert set(i) == {"version", "cuda", "device", "reason", "threads", "warpath_backend"}
    assert i["version"] == warpath.__version__
    assert isinstance(i["cuda"], bool) and i["threads"] >= 1
    assert (i["device"] is None) == (i["reason"] is not None) == (not i["cuda"])


def test_public_names():
    for name in warpath.__all__:
        assert getattr(warpath, name) is not None
    with pytest.raises(AttributeError):
        warpath.no_such_function  # noqa: B018
    assert set(warpath.__all__) <= set(dir(warpath))  # KMeans included, for completion


def test_stub_lists_exactly_the_native_module():
    stub = pathlib.Path(_native.__file__).with_name("_native.pyi")
    if not stub.exists():  # the wheel installs it beside the extension
        stub = pathlib.Path(warpath.__file__).with_name("_native.pyi")
    tree = ast.parse(stub.read_text())
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    actual = {n for n in dir(_native) if not n.startswith("_")} | {"__version__"}
    assert declared == actual


@pytest.mark.parametrize("module", [warpath, fhn, _kmeans, _arrays])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    if module is not _arrays:
        assert result.attempted > 0


def test_every_public_function_has_a_numpydoc_docstring():
    for name in warpath.__all__:
        obj = getattr(warpath, name)
        if callable(obj) and not isinstance(obj, type):
            doc = obj.__doc__ or ""
            assert "Parameters" in doc or "Returns" in doc, name
            assert "Examples" in doc, name


def test_the_gil_is_released_during_computation():
    # a sort of 2e7 keys takes long enough for another Python thread to run many times
    x = np.random.default_rng(0).random(20_000_000)
    ticks = 0
    done = threading.Event()

    def work():
        warpath.sort(x, backend="cpu")
        done.set()

    t = threading.Thread(target=work)
    start = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.0005)
    t.join()
    elapsed = time.perf_counter() - start
    assert elapsed > 0.05, "too fast to tell"
    assert ticks >= 10, f"the main thread ran {ticks} times in {elapsed:.3f} s"


def test_read_only_and_memory_mapped_inputs(tmp_path):
    a = np.array([[4.0, 1.0], [2.0, 0.0]])
    a.setflags(write=False)
    assert warpath.linear_sum_assignment(a)[1].tolist() == [1, 0]
    path = tmp_path / "x.npy"
    np.save(path, np.array([3, 1, 2], dtype=np.int64))
    m = np.load(path, mmap_mode="r")
    np.testing.assert_array_equal(warpath.sort(m), [1, 2, 3])
    np.testing.assert_array_equal(warpath.unique(m), [1, 2, 3])


@pytest.mark.parametrize(
    "call, output",
    [
        (lambda x: warpath.linear_sum_assignment(x.reshape(1000, 800)), 0),
        (lambda x: warpath.sort(x), 1),
        (lambda x: warpath.argsort(x), 1),
        (lambda x: warpath.unique(x), 0),
        (lambda x: warpath.KMeans(3, init=np.eye(3, 4), max_iter=2).fit(x.reshape(-1, 4)), 0),
        (lambda x: warpath.linear_sum_assignment_batch(x.reshape(100, 80, 100)), 0),
    ],
    ids=["linear_sum_assignment", "sort", "argsort", "unique", "KMeans.fit", "batch"],
)
def test_contiguous_inputs_of_the_right_dtype_are_not_copied(call, output):
    # numpy allocations show up in tracemalloc, the Rust side's do not: a copy of the input
    # made on the Python side (np.asarray, astype, validate_data) would be seen here. sort
    # and argsort allocate their result as numpy arrays (`output` of them, the input's size).
    import tracemalloc

    x = np.random.default_rng(0).random(800_000)  # 6.4 MB, C-contiguous float64
    call(x)  # warm up (imports, caches)
    tracemalloc.start()
    try:
        call(x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < output * x.nbytes + x.nbytes // 10, f"{peak} bytes traced"


def test_warpath_backend_variable(monkeypatch):
    x = np.array([3, 1, 2])
    monkeypatch.setenv("WARPATH_BACKEND", "cpu")
    np.testing.assert_array_equal(warpath.sort(x), [1, 2, 3])
    assert warpath.info()["warpath_backend"] == "cpu"
    monkeypatch.setenv("WARPATH_BACKEND", "tpu")
    with pytest.raises(ValueError, match="WARPATH_BACKEND"):
        warpath.sort(x)
    np.testing.assert_array_equal(warpath.sort(x, backend="cpu"), [1, 2, 3])  # explicit wins


def test_concurrent_calls_from_python_threads():
    # the GIL is released, so these run at the same time on the shared rayon pool
    from concurrent.futures import ThreadPoolExecutor

    import scipy.optimize

    rng = np.random.default_rng(5)
    costs = [rng.random((60, 60)) for _ in range(8)]
    keys = [rng.standard_normal(100_000) for _ in range(8)]

    def work(i):
        r, c = warpath.linear_sum_assignment(costs[i])
        return costs[i][r, c].sum(), warpath.sort(keys[i])

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(8)))
    for i, (cost, sorted_keys) in enumerate(results):
        sr, sc = scipy.optimize.linear_sum_assignment(costs[i])
        assert cost == pytest.approx(costs[i][sr, sc].sum(), rel=1e-12)
        np.testing.assert_array_equal(sorted_keys, np.sort(keys[i]))
