"""warpath.dask.KMeans on real LocalClusters (worker processes with nannies): the same result as
warpath.KMeans, bit-identical fits when a worker dies or joins mid-fit, errors naming chunks."""

import os
import signal
import threading
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

import warpath  # noqa: E402
from warpath import _native  # noqa: E402
from warpath.dask import ChunkLostError, KMeans  # noqa: E402


def blobs(n=6000, d=3, k=5, seed=7, dtype=np.float64):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-10, 10, (k, d))
    X = centres[rng.integers(0, k, n)] + rng.standard_normal((n, d)) * 1.5
    return X.astype(dtype)


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes with one thread each, as in the benchmark. The tests kill workers;
    a LocalCluster closes the nanny of a worker that is still missing ``lost-worker-timeout``
    (15 s) after *any* earlier loss of a worker of that name, which two kills 15 s apart can
    hit while the nanny restarts the second: the timeout is raised past the tests' length."""
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "1h"}):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
            yield c


@pytest.fixture
def client(cluster):
    with distributed.Client(cluster) as c:
        c.wait_for_workers(2, timeout=60)
        yield c


def same_fit(a, b):
    assert a.n_iter_ == b.n_iter_
    assert np.array_equal(a.cluster_centers_, b.cluster_centers_), "centres differ in some bit"
    assert a.inertia_ == b.inertia_


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_lloyd_as_warpath_kmeans(client, dtype):
    X = blobs(dtype=dtype)
    init = X[:5].astype(np.float64)
    one = warpath.KMeans(5, init=init, tol=1e-6, backend="cpu").fit(X)
    km = KMeans(5, init=init, tol=1e-6).fit(da.from_array(X, chunks=1000))
    assert km.n_iter_ == one.n_iter_
    assert km.cluster_centers_.dtype == dtype
    rtol = 1e-10 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(km.cluster_centers_, one.cluster_centers_, rtol=rtol, atol=rtol)
    assert km.inertia_ == pytest.approx(one.inertia_, rel=rtol)
    labels = km.labels_
    assert isinstance(labels, da.Array) and labels.dtype == np.int32
    np.testing.assert_array_equal(labels.compute(), one.labels_)
    np.testing.assert_array_equal(km.predict(X[:100]), one.predict(X[:100]))
    np.testing.assert_allclose(km.transform(da.from_array(X[:50], chunks=20)).compute(), one.transform(X[:50]), rtol=rtol)
    assert km.score(X) == pytest.approx(-km.inertia_, rel=rtol)


def test_kmeanspp_on_small_data_is_warpath_kmeans(client):
    # fewer rows than init_sample: the subsample is the data, so k-means++ picks the same
    X = blobs(n=3000)
    one = warpath.KMeans(5, random_state=3, backend="cpu").fit(X)
    km = KMeans(5, random_state=3).fit(da.from_array(X, chunks=700))
    assert km.n_iter_ == one.n_iter_
    np.testing.assert_allclose(km.cluster_centers_, one.cluster_centers_, rtol=1e-10)


def test_deterministic_and_same_without_a_client(client):
    X = da.from_array(blobs(), chunks=900)
    a = KMeans(5, init="random", n_init=2, random_state=1).fit(X)
    b = KMeans(5, init="random", n_init=2, random_state=1).fit(X)
    same_fit(a, b)
    # the local thread pool runs the same tasks and the same tree
    with _no_default_client():
        c = KMeans(5, init="random", n_init=2, random_state=1).fit(X)
    same_fit(a, c)
    assert {m["run"] for m in a.metrics_} == {0, 1}
    m = a.metrics_[0]
    assert {"wall_s", "compute_s", "reduce_s", "schedule_s", "threads", "workers"} <= set(m)
    assert m["tasks"] == X.numblocks[0] and m["threads"] == 2


class _no_default_client:
    """Hides the active client from ``distributed.get_client``."""

    def __enter__(self):
        import warpath.dask as wd

        self._saved = wd._client
        wd._client = lambda: None

    def __exit__(self, *exc):
        import warpath.dask as wd

        wd._client = self._saved


@pytest.mark.parametrize(
    "n, d, k, rows, tol, dtype, empty",
    [
        (3000, 2, 4, 700, 1e-4, np.float64, False),
        (2500, 5, 7, 600, 1e-3, np.float32, False),
        (4000, 3, 6, 900, 1e-4, np.float64, True),
        (1500, 4, 5, 1500, 0.0, np.float64, True),
    ],
)
def test_local_threads_stop_where_warpath_kmeans_stops(n, d, k, rows, tol, dtype, empty):
    # no cluster: the thread pool of this process; the Rust loop's rules decide when to stop,
    # so the iterations are warpath.KMeans's ("empty": two equal start centres, so one
    # cluster is empty after the first assignment and is relocated)
    X = blobs(n=n, d=d, k=k, seed=n, dtype=dtype)
    init = X[:k].astype(np.float64)
    if empty:
        init[-1] = init[0]
    one = warpath.KMeans(k, init=init, tol=tol, backend="cpu", algorithm="lloyd").fit(X)
    with _no_default_client():
        km = KMeans(k, init=init, tol=tol).fit(da.from_array(X, chunks=rows))
    assert km.n_iter_ == one.n_iter_
    rtol = 1e-10 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(km.cluster_centers_, one.cluster_centers_, rtol=rtol, atol=rtol)
    assert km.inertia_ == pytest.approx(one.inertia_, rel=rtol)
    assert len(km.metrics_) == km.n_iter_


def test_the_native_loop_refuses_a_stopped_run():
    run = _native.KMeansLloydRun(np.zeros((2, 1)), 1, 0.0, 0.0, True)
    stats = np.array([0.0, 3.0, 1.0, 2.0, 0.5])
    assert run.running and run.far_points_needed(stats) == 0
    assert run.update(stats, np.zeros((0, 5))) == 2.25
    assert not run.running and run.iterations == 1 and run.needs_final_pass
    with pytest.raises(ValueError, match="stopped"):
        run.update(stats, np.zeros((0, 5)))
    run.final_pass(stats)
    assert run.inertia == 0.5


def kill_worker(client, addr):
    """SIGKILLs the worker process at ``addr`` (a LocalCluster's workers run on this machine;
    the nanny starts a new one)."""
    pid = client.run(os.getpid, workers=[addr])[addr]
    os.kill(pid, signal.SIGKILL)
    return addr


def kill_one_worker(client):
    return kill_worker(client, sorted(client.nthreads())[0])


def npy_chunks(tmp_path, X, rows):
    """X as a dask array over .npy files, one per chunk: every chunk has a recipe (np.load)."""
    parts = []
    for i in range(0, X.shape[0], rows):
        p = tmp_path / f"part{i:06d}.npy"
        np.save(p, X[i : i + rows])
        parts.append(da.from_delayed(dask.delayed(np.load)(str(p)), shape=X[i : i + rows].shape, dtype=X.dtype))
    return da.concatenate(parts)


@pytest.mark.parametrize("store", ["zarr", "hdf5"])
def test_fits_from_chunked_stores_on_disk(client, tmp_path, store):
    """Data that never passes through the client: zarr and HDF5 chunks, read by the workers
    (a worker killed mid-fit would read them again from the store)."""
    data = blobs(n=12000, d=3, k=4, seed=11)
    init = data[:4]
    want = KMeans(4, init=init, tol=0, max_iter=30).fit(da.from_array(data, chunks=3000))
    if store == "zarr":
        zarr = pytest.importorskip("zarr")
        z = zarr.open_array(str(tmp_path / "x.zarr"), mode="w", shape=data.shape, chunks=(3000, 3), dtype=data.dtype)
        z[:] = data
        X = da.from_zarr(str(tmp_path / "x.zarr"))
    else:
        h5py = pytest.importorskip("h5py")
        path = str(tmp_path / "x.h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("x", data=data, chunks=(3000, 3))

        def load(i):
            with h5py.File(path, "r") as f:
                return f["x"][i : i + 3000]

        X = da.concatenate(
            [da.from_delayed(dask.delayed(load)(i), shape=(3000, 3), dtype=data.dtype) for i in range(0, 12000, 3000)]
        )
    got = KMeans(4, init=init, tol=0, max_iter=30).fit(X)
    same_fit(want, got)


@pytest.mark.parametrize("delay", [0.0, 0.02], ids=["between-iterations", "during-an-iteration"])
def test_worker_killed_mid_fit_gives_the_same_result(client, tmp_path, delay):
    data = blobs(n=20000, d=4, k=6, seed=3)
    X = npy_chunks(tmp_path, data, 2500)
    params = dict(init=data[:6], tol=0, max_iter=40)
    calm = KMeans(6, **params).fit(X)
    assert calm.n_iter_ >= 8, "needs iterations after the kill"
    killed, threads = [], []

    def kill_at_3(est, m):
        if m["iteration"] == 3:
            # delay 0: before iteration 4 is submitted; 0.02 s: while its tasks run
            t = threading.Timer(delay, lambda: killed.append(kill_one_worker(client)))
            t.start()
            threads.append(t)
            if delay == 0.0:
                t.join()

    before = set(client.nthreads())
    hit = KMeans(6, **params).fit(X, callback=kill_at_3)
    threads[0].join()
    assert killed
    same_fit(calm, hit)
    np.testing.assert_array_equal(hit.labels_.compute(), calm.labels_.compute())
    client.wait_for_workers(2, timeout=60)
    assert killed[0] not in set(client.nthreads()) and set(client.nthreads()) != before


def test_worker_added_mid_fit_is_used_and_changes_nothing():
    # uniform points: Lloyd takes 56 iterations from these centres, time for the worker to join
    data = np.random.default_rng(2).random((20000, 4))
    X = da.from_array(data, chunks=2000)
    params = dict(init=data[:8], tol=0, max_iter=300)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as client:
            calm = KMeans(8, **params).fit(X)

            def add_at_2(est, m):
                if m["iteration"] == 2:
                    cluster.scale(2)
                    client.wait_for_workers(2, timeout=60)
                    # let the new worker import warpath before the fit goes on, so that its
                    # warm-up task (which the fit does not wait for) ends within a few iterations
                    client.run(__import__, "warpath.dask")
                    time.sleep(0.5)

            grown = KMeans(8, **params).fit(X, callback=add_at_2)
    same_fit(calm, grown)
    assert all(m["threads"] == 1 for m in calm.metrics_)
    joined_at = [m["iteration"] for m in grown.metrics_ if m["joined"]]
    assert len(joined_at) == 1 and 3 <= joined_at[0] < calm.n_iter_ - 5, (joined_at, calm.n_iter_)
    assert all(m["threads"] == 2 for m in grown.metrics_[joined_at[0] - 1 :]), "the new worker runs chunk tasks from then on"


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_value_names_its_chunk(client, bad):
    X = blobs(n=4000)
    X[2345, 1] = bad
    with pytest.raises(ValueError, match=r"chunk 2 \(rows 2000:3000\) of X: .*row 2345, column 1"):
        KMeans(5, random_state=0).fit(da.from_array(X, chunks=1000))
    # with tol=0 the variance pass is skipped: the native partial sums find it
    with pytest.raises(ValueError, match=r"chunk 2 \(rows 2000:3000\) of X: .*row 2345, column 1"):
        KMeans(5, init=X[:5] * 0, tol=0).fit(da.from_array(X, chunks=1000))


def test_more_clusters_than_points_is_sklearns_error(client):
    import sklearn.cluster

    X = blobs(n=5)
    with pytest.raises(ValueError, match="n_samples=5 should be >= n_clusters=6") as ours:
        KMeans(6).fit(da.from_array(X, chunks=2))
    with pytest.raises(ValueError) as theirs:
        sklearn.cluster.KMeans(6).fit(X)
    assert str(ours.value) == str(theirs.value)


def test_sample_weights(client):
    X = blobs(n=5000)
    init = X[:5]
    plain = KMeans(5, init=init, tol=0).fit(da.from_array(X, chunks=800))
    ones = KMeans(5, init=init, tol=0).fit(da.from_array(X, chunks=800), sample_weight=np.ones(5000))
    same_fit(plain, ones)
    w = np.random.default_rng(2).uniform(0.1, 3, 5000)
    one = warpath.KMeans(5, init=init, tol=0, backend="cpu").fit(X, sample_weight=w)
    km = KMeans(5, init=init, tol=0).fit(da.from_array(X, chunks=800), sample_weight=da.from_array(w, chunks=1000))
    assert km.n_iter_ == one.n_iter_
    np.testing.assert_allclose(km.cluster_centers_, one.cluster_centers_, rtol=1e-10)
    assert km.score(X, sample_weight=w) == pytest.approx(-km.inertia_, rel=1e-10)
    # each chunk travels with its weights; the local thread pool gives the same bits
    with _no_default_client():
        local = KMeans(5, init=init, tol=0).fit(da.from_array(X, chunks=800), sample_weight=w)
    same_fit(km, local)
    # weighted k-means++ from the whole data (fewer rows than init_sample) is warpath.KMeans's
    one = warpath.KMeans(5, random_state=4, backend="cpu").fit(X, sample_weight=w)
    km = KMeans(5, random_state=4).fit(da.from_array(X, chunks=800), sample_weight=w)
    assert km.n_iter_ == one.n_iter_
    np.testing.assert_allclose(km.cluster_centers_, one.cluster_centers_, rtol=1e-10)


def test_empty_cluster_is_relocated_as_warpath_kmeans(client):
    X = np.array([[0.0], [0.5], [1.0], [20.0], [21.0], [50.0]] * 3)
    init = np.array([[0.0], [20.0], [0.0]])
    one = warpath.KMeans(3, init=init, tol=0, backend="cpu").fit(X)
    km = KMeans(3, init=init, tol=0).fit(da.from_array(X, chunks=4))
    assert km.n_iter_ == one.n_iter_
    np.testing.assert_array_equal(km.cluster_centers_, one.cluster_centers_)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("init", [[0.25, 90.0, 1000.0, -1000.0], [90.0, 0.25, 1000.0, -1000.0]])
def test_empty_clusters_are_relocated_as_sklearn_relocates_them(client, init):
    # the far points come from different chunks; one is the last point of its cluster
    # (test_kmeans.py has the same case for warpath.KMeans)
    import sklearn.cluster

    X = np.array([0.0, 0.13, 0.21, 0.37, 0.9, 100.0])[:, None]
    init = np.array(init)[:, None]
    km = KMeans(4, init=init, tol=0, max_iter=5).fit(da.from_array(X, chunks=2))
    theirs = sklearn.cluster.KMeans(4, init=init, n_init=1, tol=0, max_iter=5, algorithm="lloyd").fit(X)
    np.testing.assert_allclose(km.cluster_centers_, theirs.cluster_centers_, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(km.labels_.compute(), theirs.labels_)


def test_scattered_chunk_lost_with_its_worker_is_an_error(client):
    X = blobs(n=8000, d=2, k=4)
    addr = sorted(client.nthreads())[0]
    fut = client.scatter(X[4000:], workers=[addr])
    A = da.concatenate([da.from_array(X[:4000], chunks=2000), da.from_delayed(fut, shape=(4000, 2), dtype=X.dtype)])

    def kill_at_2(est, m):
        if m["iteration"] == 2:
            kill_worker(client, addr)

    with pytest.raises(ChunkLostError, match=r"chunk 2 of X \(rows 4000:8000"):
        KMeans(4, init=X[:4], tol=0, max_iter=50).fit(A, callback=kill_at_2)
    client.wait_for_workers(2, timeout=60)


def test_progress_bar(client, capsys):
    KMeans(3, random_state=0, progress=True, max_iter=5).fit(da.from_array(blobs(n=600), chunks=200))
    err = capsys.readouterr().err
    assert "iteration 1/5" in err and "done after" in err


def test_bad_parameters(client):
    X = da.from_array(blobs(n=100), chunks=50)
    with pytest.raises(ValueError, match="n_clusters"):
        KMeans(0).fit(X)
    with pytest.raises(ValueError, match="shape of the initial centers"):
        KMeans(2, init=np.zeros((3, 3))).fit(X)
    with pytest.raises(ValueError, match="'init' parameter"):
        KMeans(2, init="kmeans||").fit(X)
    with pytest.raises(ValueError, match="stateless chunk tasks"):
        KMeans(2, algorithm="yinyang").fit(X)


def test_k_means_parallel_init_and_auto_algorithm(client):
    X = da.from_array(blobs(n=3000), chunks=700)
    a = KMeans(4, init="k-means||", random_state=1, algorithm="auto").fit(X)
    b = KMeans(4, init="k-means||", random_state=1).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


def test_compute_labels_false_skips_the_final_pass(client):
    # as warpath.KMeans(compute_labels=False): the same centres, no labels_, the last
    # iteration's inertia (one pass over the chunks fewer)
    X = da.from_array(blobs(n=3000), chunks=700)
    init = blobs(n=3000)[:4]
    full = KMeans(4, init=init, max_iter=3, tol=0).fit(X)
    bare = KMeans(4, init=init, max_iter=3, tol=0, compute_labels=False).fit(X)
    np.testing.assert_array_equal(bare.cluster_centers_, full.cluster_centers_)
    assert not hasattr(bare, "labels_")
    assert bare.inertia_ == bare.metrics_[-1]["inertia"] > full.inertia_
    one = warpath.KMeans(4, init=init, max_iter=3, tol=0, backend="cpu", compute_labels=False).fit(X.compute())
    assert bare.inertia_ == pytest.approx(one.inertia_, rel=1e-12)
    np.testing.assert_array_equal(
        KMeans(4, init=init, max_iter=3, tol=0, compute_labels=False).fit_predict(X).compute(), full.labels_.compute()
    )
    with pytest.raises(ValueError, match="compute_labels"):
        KMeans(4, compute_labels=None).fit(X)
