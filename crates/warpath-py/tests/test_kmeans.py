"""warpath.KMeans against sklearn.cluster.KMeans, and scikit-learn's own estimator checks."""

import numpy as np
import pytest
import sklearn.cluster
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import warpath

from warpath import KMeans


def expected_failed_checks(estimator):
    # exactly the checks scikit-learn expects its own KMeans to fail
    reason = "sample_weight is not equivalent to removing/repeating samples."
    return {
        "check_sample_weight_equivalence_on_dense_data": reason,
        "check_sample_weight_equivalence_on_sparse_data": reason,
    }


@parametrize_with_checks([KMeans(), KMeans(init="random", n_init=2, backend="cpu")], expected_failed_checks=expected_failed_checks)
def test_sklearn_check_estimator(estimator, check):
    check(estimator)


def blobs(rng, n=600, d=4, k=5, dtype=np.float64):
    centres = rng.uniform(-10, 10, (k, d))
    X = centres[rng.integers(0, k, n)] + rng.standard_normal((n, d))
    return X.astype(dtype), centres


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_lloyd_as_sklearn_from_given_centres(rng, dtype):
    X, _ = blobs(rng, dtype=dtype)
    init = X[:5].astype(np.float64)
    ours = KMeans(5, init=init, max_iter=100, tol=1e-6).fit(X)
    theirs = sklearn.cluster.KMeans(5, init=init.astype(dtype), n_init=1, max_iter=100, tol=1e-6, algorithm="lloyd").fit(X)
    assert ours.cluster_centers_.dtype == dtype and ours.labels_.dtype == np.int32
    np.testing.assert_array_equal(ours.labels_, theirs.labels_)
    rtol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(ours.cluster_centers_, theirs.cluster_centers_, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(ours.inertia_, theirs.inertia_, rtol=rtol)
    assert abs(ours.n_iter_ - theirs.n_iter_) <= 1
    assert ours.n_features_in_ == 4


FAR = [0.0, 0.13, 0.21, 0.37, 0.9, 100.0]
DUPLICATES = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize(
    "X, init",
    [
        # clusters 2 and 3 empty; the farthest point, 100, is cluster 1's only point, which
        # scikit-learn takes anyway and then puts cluster 1 on the biggest cluster's mean
        (FAR, [0.25, 90.0, 1000.0, -1000.0]),
        # the same with the lone point's cluster first: scikit-learn puts it on the biggest
        # cluster's sum of the centred data
        (FAR, [90.0, 0.25, 1000.0, -1000.0]),
        # every point on its centroid: nothing to move, the empty clusters go to the biggest
        (DUPLICATES, [5.0, 1.0, 2.0, 7.0]),
    ],
)
@pytest.mark.parametrize("max_iter", [1, 2, 3, 5])
def test_empty_clusters_are_relocated_as_sklearn_relocates_them(X, init, max_iter):
    X = np.array(X)[:, None]
    init = np.array(init)[:, None]
    ours = KMeans(4, init=init, max_iter=max_iter, tol=0.0).fit(X)
    theirs = sklearn.cluster.KMeans(4, init=init, n_init=1, max_iter=max_iter, tol=0.0, algorithm="lloyd").fit(X)
    np.testing.assert_allclose(ours.cluster_centers_, theirs.cluster_centers_, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(ours.labels_, theirs.labels_)
    assert ours.n_iter_ == theirs.n_iter_


def test_quality_close_to_sklearn_from_kmeans_plus_plus(rng):
    X, _ = blobs(rng, n=2000, k=8)
    ours = KMeans(8, n_init=5, random_state=0).fit(X)
    theirs = sklearn.cluster.KMeans(8, n_init=5, random_state=0).fit(X)
    assert ours.inertia_ <= theirs.inertia_ * 1.02


@pytest.mark.parametrize("init,n_init", [("k-means++", 1), ("k-means++", 3), ("random", "auto")])
def test_same_random_state_same_fit_as_sklearn(rng, init, n_init):
    # warpath draws scikit-learn's random numbers: the same starts, the same fit (float64)
    X, _ = blobs(rng, n=3000, k=6)
    U = rng.random((2000, 5))
    W = rng.random(3000)
    for data, k, w in [(X, 6, None), (U, 12, None), (X, 6, W)]:
        for seed in range(3):
            ours = KMeans(k, init=init, n_init=n_init, random_state=seed).fit(data, sample_weight=w)
            theirs = sklearn.cluster.KMeans(k, init=init, n_init=n_init, random_state=seed).fit(data, sample_weight=w)
            np.testing.assert_allclose(ours.inertia_, theirs.inertia_, rtol=1e-10)
            np.testing.assert_allclose(ours.cluster_centers_, theirs.cluster_centers_, rtol=1e-9, atol=1e-9)
            np.testing.assert_array_equal(ours.labels_, theirs.labels_)
            assert ours.n_iter_ == theirs.n_iter_


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_equal_choice_is_numpys_choice(dtype):
    # k-means++'s first row with equal weights: numpy's choice(n, p=w / w.sum()) from its one
    # uniform number, without the passes over p; uniforms at and beside every kind of boundary
    from warpath import _native

    gen = np.random.default_rng(5)
    sizes = [1, 2, 3, 7, 10, 100, 127, 128, 129, 1000, 4095, 4096, 4097, 10**4, 65537, 10**5, 99991, 10**6, 1234567]
    for n in sizes:
        w = np.ones(n, dtype=dtype)
        p = w / w.sum()
        c = float(p[0])
        cdf = np.cumsum(p.astype(np.float64))
        cdf /= cdf[-1]
        picks = np.unique(np.concatenate([[0, n - 1, n // 2, n // 3], gen.integers(0, n, 200)]))
        us = np.concatenate([gen.random(300), cdf[picks], np.nextafter(cdf[picks], 0), np.nextafter(cdf[picks], 1), [0.0, np.nextafter(1, 0)]])
        us = us[(us >= 0) & (us < 1)]
        want = np.minimum(cdf.searchsorted(us, side="right"), n - 1)
        got = np.array([_native.kmeans_equal_choice(n, c, float(u)) for u in us])
        np.testing.assert_array_equal(got, want, err_msg=f"n={n}")
        for seed in range(3):
            a, b = np.random.RandomState(seed), np.random.RandomState(seed)
            assert _native.kmeans_equal_choice(n, c, a.random_sample()) == b.choice(n, p=p)
    with pytest.raises(ValueError):
        _native.kmeans_equal_choice(0, 1.0, 0.5)
    with pytest.raises(ValueError):
        _native.kmeans_equal_choice(3, 0.3, 1.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_random_rows_are_numpys_choice(dtype):
    # init="random": numpy's choice(n, size=k, replace=False, p=w / w.sum()), the same rows in
    # the same order and the stream left in the same place, with and without repeated draws
    from warpath._kmeans import random_rows

    for n, k in [(1, 1), (5, 5), (20, 10), (1000, 8), (10**5, 256), (10**6, 3)]:
        w = np.ones(n, dtype=dtype)
        p = w / w.sum()
        for seed in range(5):
            a, b = np.random.RandomState(seed), np.random.RandomState(seed)
            got = random_rows(a, n, k, float(p[0]), None, dtype)
            np.testing.assert_array_equal(got, b.choice(n, size=k, replace=False, p=p))
            assert a.randint(1 << 30) == b.randint(1 << 30)


def test_random_state_advances_as_sklearns(rng):
    X, _ = blobs(rng, n=1000, k=4)
    for init in ["k-means++", "random", X[:4]]:
        a, b = np.random.RandomState(7), np.random.RandomState(7)
        KMeans(4, init=init, n_init=1, random_state=a).fit(X)
        sklearn.cluster.KMeans(4, init=init, n_init=1, random_state=b).fit(X)
        assert a.randint(1 << 30) == b.randint(1 << 30)
    # random_state=None draws from numpy's global stream, as scikit-learn's does
    np.random.seed(11)
    ours = KMeans(4).fit(X)
    np.random.seed(11)
    theirs = sklearn.cluster.KMeans(4).fit(X)
    np.testing.assert_allclose(ours.inertia_, theirs.inertia_, rtol=1e-10)


def test_predict_transform_score_agree_with_sklearn(rng):
    X, _ = blobs(rng)
    ours = KMeans(5, random_state=1).fit(X)
    theirs = sklearn.cluster.KMeans(5, init=ours.cluster_centers_, n_init=1, max_iter=1).fit(X)
    theirs.cluster_centers_ = ours.cluster_centers_.copy()  # same centres: compare the maps
    Y = rng.standard_normal((50, 4)) * 10
    np.testing.assert_array_equal(ours.predict(Y), theirs.predict(Y))
    np.testing.assert_allclose(ours.transform(Y), theirs.transform(Y), rtol=1e-12)
    np.testing.assert_allclose(ours.score(Y), theirs.score(Y), rtol=1e-12)
    w = rng.random(50)
    np.testing.assert_allclose(ours.score(Y, sample_weight=w), theirs.score(Y, sample_weight=w), rtol=1e-12)
    np.testing.assert_array_equal(ours.fit_predict(X), ours.labels_)
    assert ours.fit_transform(X).shape == (len(X), 5)


def test_reproducible_and_seeded(rng):
    X, _ = blobs(rng)
    a = KMeans(5, random_state=3).fit(X)
    b = KMeans(5, random_state=3).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    c = KMeans(5, random_state=np.random.RandomState(3)).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, c.cluster_centers_)


def test_unit_weights_equal_no_weights(rng):
    X, _ = blobs(rng)
    a = KMeans(5, random_state=2).fit(X)
    b = KMeans(5, random_state=2).fit(X, sample_weight=np.ones(len(X)))
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.inertia_ == b.inertia_


def test_integer_weights_weigh_points(rng):
    X = np.array([[0.0], [1.0], [10.0]])
    km = KMeans(2, init=np.array([[0.0], [10.0]])).fit(X, sample_weight=[3, 1, 1])
    assert km.cluster_centers_[0, 0] == 0.25


def test_pipeline_clone_and_grid_search(rng):
    X, _ = blobs(rng, n=300)
    pipe = make_pipeline(StandardScaler(), KMeans(3, random_state=0))
    assert pipe.fit_predict(X).shape == (300,)
    est = clone(KMeans(4, tol=1e-3, backend="cpu"))
    assert est.get_params()["tol"] == 1e-3 and est.get_params()["backend"] == "cpu"
    grid = GridSearchCV(KMeans(random_state=0), {"n_clusters": [2, 5]}, cv=3).fit(X)
    assert grid.best_params_["n_clusters"] == 5
    assert list(KMeans(3).fit(X).get_feature_names_out()) == ["kmeans0", "kmeans1", "kmeans2"]


def test_errors(rng):
    X, _ = blobs(rng, n=20)
    with pytest.raises(ValueError, match="n_samples=20 should be >= n_clusters=30"):
        KMeans(30).fit(X)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KMeans(2).fit(Xn)
    with pytest.raises(ValueError, match="n_clusters"):
        KMeans(0).fit(X)
    with pytest.raises(ValueError, match="init"):
        KMeans(2, init="kmeans||").fit(X)
    with pytest.raises(ValueError, match="shape of the initial centers"):
        KMeans(2, init=np.zeros((3, 4))).fit(X)
    with pytest.raises(ValueError, match="sample weights"):
        KMeans(2).fit(X, sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match="backend"):
        KMeans(2, backend="tpu").fit(X)
    with pytest.warns(RuntimeWarning, match="only one init"):
        KMeans(2, init=X[:2], n_init=3).fit(X)
    with pytest.raises(ValueError, match="features"):
        KMeans(2).fit(X).predict(np.zeros((2, 3)))


def test_cuda_backend_without_gpu(rng):
    if warpath.info()["cuda"]:
        pytest.skip("a GPU is present")
    X, _ = blobs(rng, n=20)
    with pytest.raises(warpath.GpuError):
        KMeans(2, backend="cuda").fit(X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_algorithm_gives_lloyds_result(rng, dtype):
    # embedding-like: many clusters in 40 dimensions (the product path), and d = 3 (direct)
    for d, k in [(40, 60), (3, 20)]:
        X, _ = blobs(rng, n=3000, d=d, k=k, dtype=dtype)
        init = X[:k].astype(np.float64)
        fits = {
            a: KMeans(k, init=init, max_iter=15, tol=0, algorithm=a, backend="cpu").fit(X)
            for a in ["lloyd", "elkan", "hamerly", "yinyang", "auto"]
        }
        base = fits["lloyd"]
        for a, f in fits.items():
            np.testing.assert_array_equal(f.labels_, base.labels_, err_msg=a)
            np.testing.assert_array_equal(f.cluster_centers_, base.cluster_centers_, err_msg=a)
            assert f.inertia_ == base.inertia_ and f.n_iter_ == base.n_iter_, a
    with pytest.raises(ValueError, match="algorithm"):
        KMeans(3, algorithm="fast").fit(X)


def test_float32_is_read_without_a_copy_and_k_means_parallel_init(rng):
    X, _ = blobs(rng, n=4000, d=16, k=30, dtype=np.float32)
    km = KMeans(30, init="k-means||", random_state=3, backend="cpu").fit(X)
    assert km.cluster_centers_.dtype == np.float32
    again = KMeans(30, init="k-means||", random_state=3, backend="cpu").fit(X)
    np.testing.assert_array_equal(km.cluster_centers_, again.cluster_centers_)
    # the distances of transform are those of scikit-learn (both widen float32 to float64)
    theirs = sklearn.cluster.KMeans(30, init=km.cluster_centers_, n_init=1).fit(X)
    theirs.cluster_centers_ = km.cluster_centers_
    np.testing.assert_allclose(km.transform(X[:500]), theirs.transform(X[:500]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compute_labels_false_gives_the_centres_only(rng, dtype):
    # as scikit-learn's MiniBatchKMeans(compute_labels=False) and FAISS's train: the same
    # centres as a fit with labels, no labels_, the last iteration's inertia
    X, _ = blobs(rng, n=3000, d=20, k=40, dtype=dtype)
    init = X[:40].astype(np.float64)
    for max_iter in [1, 5]:
        full = KMeans(40, init=init, max_iter=max_iter, tol=0, backend="cpu").fit(X)
        bare = KMeans(40, init=init, max_iter=max_iter, tol=0, backend="cpu", compute_labels=False).fit(X)
        np.testing.assert_array_equal(bare.cluster_centers_, full.cluster_centers_)
        assert bare.n_iter_ == full.n_iter_ == max_iter
        assert not hasattr(bare, "labels_")
        assert bare.inertia_ > full.inertia_  # against the centres the last iteration started from
        np.testing.assert_array_equal(bare.predict(X), full.labels_)
        np.testing.assert_array_equal(
            KMeans(40, init=init, max_iter=max_iter, tol=0, compute_labels=False).fit_predict(X), full.labels_
        )
    # a refit without labels does not leave an earlier fit's labels behind
    km = KMeans(40, init=init, max_iter=2, tol=0).fit(X)
    assert hasattr(km, "labels_")
    km.set_params(compute_labels=False).fit(X)
    assert not hasattr(km, "labels_")
    with pytest.raises(ValueError, match="compute_labels"):
        KMeans(3, compute_labels="yes").fit(X)
