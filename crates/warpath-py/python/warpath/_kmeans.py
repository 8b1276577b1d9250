"""``warpath.KMeans``: a scikit-learn estimator over clustering's k-means (private module;
import it as ``warpath.KMeans``)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import _native

__all__ = ["KMeans"]

ALGORITHMS = ("auto", "lloyd", "elkan", "hamerly", "yinyang")



def integral(name, value, low):
    """``value`` as an int of at least ``low``, or scikit-learn's ValueError for parameter ``name``."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
        raise ValueError(f"The '{name}' parameter of KMeans must be an int in the range [{low}, inf). Got {value!r} instead.")
    return int(value)


def set_labels(est, labels):
    """``est.labels_`` becomes ``labels``; ``None`` (``compute_labels=False``) removes the
    labels of an earlier fit."""
    if labels is not None:
        est.labels_ = labels
    elif hasattr(est, "labels_"):
        del est.labels_


def check_params(est, n, d, as_array):
    """The parameters of a k-means estimator (``warpath.KMeans``, ``warpath.dask.KMeans``) on
    ``n`` points of ``d`` features, checked with scikit-learn's messages: returns ``(k, init,
    n_init, max_iter, tol)``; ``as_array`` converts an array-like ``init``."""
    k = integral("n_clusters", est.n_clusters, 1)
    max_iter = integral("max_iter", est.max_iter, 1)
    if not isinstance(est.compute_labels, (bool, np.bool_)):
        raise ValueError(
            f"The 'compute_labels' parameter of KMeans must be an instance of 'bool'. Got {est.compute_labels!r} instead."
        )
    if not isinstance(est.tol, numbers.Real) or isinstance(est.tol, bool) or not est.tol >= 0:
        raise ValueError(f"The 'tol' parameter of KMeans must be a float in the range [0.0, inf). Got {est.tol!r} instead.")
    if n < k:
        # scikit-learn's wording (its estimator checks look for "n_samples=1")
        raise ValueError(f"n_samples={n} should be >= n_clusters={k}.")
    if isinstance(est.init, str):
        if est.init not in ("k-means++", "k-means||", "random"):
            raise ValueError(f"The 'init' parameter of KMeans must be 'k-means++', 'k-means||', 'random' or an array-like. Got {est.init!r} instead.")
        init = est.init
    else:
        init = as_array(est.init)
        if init.shape != (k, d):
            raise ValueError(f"The shape of the initial centers {init.shape} does not match the number of clusters {k} and features {d}.")
    if isinstance(est.n_init, str) and est.n_init == "auto":
        n_init = 10 if isinstance(init, str) and init == "random" else 1
    else:
        n_init = integral("n_init", est.n_init, 1)
    if not isinstance(init, str) and n_init != 1:
        warnings.warn(
            f"Explicit initial center position passed: performing only one init in {type(est).__name__} instead of n_init={n_init}.",
            RuntimeWarning,
            stacklevel=4,
        )
        n_init = 1
    return k, init, n_init, max_iter, float(est.tol)

def sklearn_draws(random_state, X, k, init, n_init, sample_weight):
    """The random draws scikit-learn's ``KMeans.fit`` makes from ``random_state`` (a
    ``RandomState``) for ``n_init`` runs of ``init``, in its order: returns ``(init, seed)``,
    ``init`` now one run's draws per run for the native fit (k-means++: the first centre's row
    and the candidates' uniform numbers; random: the rows), so that the same ``random_state``
    gives scikit-learn's starts and leaves the ``RandomState`` where scikit-learn's fit leaves
    it. k-means|| (not scikit-learn's) takes a seed drawn from it; given centres draw nothing.
    Weights that are not valid draw nothing either: the native fit says what is wrong."""
    if not isinstance(init, str):
        return init, 0
    if init == "k-means||":
        return init, int(random_state.randint(np.iinfo(np.int32).max))
    n = X.shape[0]
    # With equal weights k-means++'s first row comes from its one uniform number without
    # numpy's passes over p (`kmeans_equal_choice`; in float32 `w.sum()` is n exactly up to
    # 2^24 rows); otherwise scikit-learn's weights, ones of the data's dtype when none are given.
    equal = sample_weight is None and n <= 1 << 24
    c = float(np.float32(1) / np.float32(n)) if X.dtype == np.float32 else 1.0 / n
    p = None
    if not equal:
        total = sample_weight.sum()
        if not (np.isfinite(total) and total > 0 and (sample_weight >= 0).all()):
            return init, 0
        p = sample_weight / total

    if init == "random":
        return [random_rows(random_state, n, k, c if equal else None, p, X.dtype) for _ in range(n_init)], 0
    # k-means++: one choice for the first centre, then 2 + ln k uniform numbers per further
    # centre (one call of `uniform` reads the same numbers as k - 1 calls).
    trials = 2 + int(np.log(k))

    def first():
        if equal:
            return _native.kmeans_equal_choice(n, c, random_state.random_sample())
        return int(random_state.choice(n, p=p))

    return [(first(), random_state.uniform(size=(k - 1) * trials)) for _ in range(n_init)], 0


def random_rows(random_state, n, k, c, p, dtype):
    """numpy's ``random_state.choice(n, size=k, replace=False, p=p)`` as an int64 array. With
    equal weights (``c`` the probability of each row) its first round of ``k`` uniform numbers
    is searched without numpy's passes over ``p``; when two of them fall on one row numpy
    draws again, and so does this, replaying the round through numpy itself. Below 2^14 rows
    numpy's passes cost less than saving the stream's state."""
    if c is not None and n >= 1 << 14:
        state = random_state.get_state()
        rows = np.array([_native.kmeans_equal_choice(n, c, u) for u in random_state.random_sample(k).tolist()], dtype=np.int64)
        if np.unique(rows).size == k:
            return rows
        random_state.set_state(state)
    if p is None:
        p = np.ones(n, dtype=dtype)
        p = p / p.sum()
    return random_state.choice(n, size=k, replace=False, p=p).astype(np.int64)


class KMeans(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """K-means clustering on one core, many cores or a GPU (scikit-learn's ``KMeans``).

    Lloyd's algorithm from k-means++ (or random, or given) centres, as scikit-learn's
    ``KMeans(algorithm="lloyd")``: the same parameters, attributes and convergence rule
    (``tol`` relative to the mean per-feature variance), so it works in pipelines, ``clone``
    and grid search. Empty clusters are moved to the farthest points as scikit-learn moves
    them (farthest first, a cluster's last point included), so from the same initial centres
    the labels are scikit-learn's (on float64 data; scikit-learn's float32 distances round
    differently). scikit-learn pairs the empty clusters with the far points in
    ``np.argpartition``'s order, farthest first for a few of them but not always: a step that
    empties many clusters at once can go its own way.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters.
    init : {"k-means++", "k-means||", "random"} or array-like of shape (n_clusters, n_features), default="k-means++"
        Greedy k-means++ (``2 + ln k`` candidates per centre; one pass over ``X`` per centre),
        k-means|| (64 rounds each drawing ``n_clusters / 64`` centres at once with
        probability proportional to the squared distance, about one iteration of work: for
        large ``n_clusters``), ``n_clusters`` distinct points drawn with probability
        proportional to ``sample_weight``, or these initial centres (then one run).
    n_init : "auto" or int, default="auto"
        Runs from different initial centres; the lowest inertia wins. ``"auto"``: 1 for
        k-means++ and given centres, 10 for random.
    max_iter : int, default=300
        Most Lloyd iterations per run.
    tol : float, default=1e-4
        Convergence when the summed squared centre shift is at most ``tol`` times the mean
        per-feature variance of ``X``.
    random_state : int, RandomState instance or None, default=None
        The random stream of the initialisation, drawn as scikit-learn draws it (``None``:
        numpy's global ``RandomState``), so that ``random_state=s`` starts from the centres
        scikit-learn's ``KMeans(random_state=s)`` starts from and fits the same clusters on
        float64 data (the same inertia to rounding, unless a point lies exactly as far from
        two centres, as on integer-valued data, where scikit-learn's rounding picks either).
        On float32 data scikit-learn adds k-means++'s potentials in float32, so its draws part
        from the exact ones; warpath's float32 start is then the one scikit-learn picks from
        the same data in float64. Equal seeds give equal results (bit-identical on the CPU
        whatever the number of threads).
    backend : {"auto", "cpu", "cuda"}, default="auto"
        Where to run: ``"auto"`` uses the GPU when present and the work is large enough.
    algorithm : {"auto", "lloyd", "elkan", "hamerly", "yinyang"}, default="auto"
        How points are assigned; every choice gives the same result from the same start (the
        exact nearest centre of every point at every iteration), they differ in speed and
        memory. ``"lloyd"`` computes every distance (as scikit-learn's ``"lloyd"``);
        ``"hamerly"`` keeps one lower bound per point, ``"yinyang"`` one per point and group
        of about 16 centres (8 groups at least, of 8 or more), ``"elkan"`` one per point and centre (``4 n k`` bytes, refused
        with ``MemoryError`` when that does not fit), and skip the distances the bounds
        settle. ``"auto"``: Lloyd for a single pass (``max_iter=1`` with
        ``compute_labels=False``), for ``max_iter=1`` while ``n_clusters * n_features <
        2**20`` and below 128 clusters; from 128 clusters it decides from what the bounds
        prune as the run goes (plain Lloyd steps until at most one label in 20 changes and
        a forecast from a sample of points says a pruned step would compute at most 30% of
        the distances, then Yinyang's bounds, or Hamerly's where the forecast says so, while
        pruned steps take less than 0.9 of the shortest plain step's time; after two in a
        row that do not, plain steps, and the bounds again when a forecast says they prune
        far more, Hamerly's and Yinyang's in turns).
        (scikit-learn's default is ``"lloyd"``; ``"auto"`` gives the same labels and
        centres, faster.)
    compute_labels : bool, default=True
        End the fit with the labels of the final centres (``labels_``, and ``inertia_``
        against them), as scikit-learn's ``KMeans``. Lloyd's last iteration moves the centres
        after assigning the points, so this takes one more assignment pass (a whole pass
        after one iteration, pruned by the bounds later). ``False``, as scikit-learn's
        ``MiniBatchKMeans(compute_labels=False)`` and FAISS's ``Kmeans.train``, skips it:
        ``labels_`` is not set, ``inertia_`` is the last iteration's (against the centres it
        started from, from its sums; runs of ``n_init`` are compared by it). For the centres
        alone, e.g. training a vector index; ``predict`` labels any points later.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Final centres, in ``X``'s dtype (float64 or float32).
    labels_ : ndarray of shape (n_samples,), int32
        Index of the nearest final centre of every training point (not set with
        ``compute_labels=False``).
    inertia_ : float
        Sum over points of weight times squared distance to the nearest centre (with
        ``compute_labels=False``: the last iteration's).
    n_iter_ : int
        Lloyd iterations of the best run.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Feature names, when ``X`` had string column names.
    backend_ : str
        ``"cpu"`` or ``"cuda"``: where ``fit`` ran.

    See Also
    --------
    sklearn.cluster.KMeans

    Notes
    -----
    Complexity ``O(n k d)`` per iteration for Lloyd (products in the data's dtype, a few
    points at a time against every centre in registers, settled exactly), far less once the bounds of the pruned algorithms hold; divided
    among the CPU threads (rayon) or run on the GPU. Data of dtype float64 or float32 in C
    order is read without a copy; float32 stays float32 (centre sums are accumulated in
    float64). ``predict`` and ``transform`` use the same tiles.

    Examples
    --------
    >>> import numpy as np
    >>> from warpath import KMeans
    >>> X = np.array([[1, 2], [1, 4], [1, 0], [10, 2], [10, 4], [10, 0]], dtype=float)
    >>> km = KMeans(n_clusters=2, random_state=0).fit(X)
    >>> sorted(km.cluster_centers_.tolist())
    [[1.0, 2.0], [10.0, 2.0]]
    >>> bool(km.predict([[0, 0], [12, 3]])[0] != km.predict([[0, 0], [12, 3]])[1])
    True
    """

    def __init__(self, n_clusters=8, *, init="k-means++", n_init="auto", max_iter=300, tol=1e-4, random_state=None, backend="auto", algorithm="auto", compute_labels=True):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.backend = backend
        self.algorithm = algorithm
        self.compute_labels = compute_labels

    # -- parameters ---------------------------------------------------------------------

    def _check_params(self, X):
        return check_params(
            self, X.shape[0], X.shape[1], lambda a: check_array(a, dtype=np.float64, copy=True, order="C")
        )

    # -- fitting ------------------------------------------------------------------------

    def fit(self, X, y=None, sample_weight=None):
        """Compute k-means clustering.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (float64 or float32 are used as they are; other dtypes become
            float64).
        y : Ignored
            Present for API consistency.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; every point counts ``weight`` times. ``None`` weighs all
            points equally.

        Returns
        -------
        self : KMeans
            Fitted estimator.

        Raises
        ------
        ValueError
            Non-finite data, ``n_samples < n_clusters``, bad parameters or weights.
        GpuError
            ``backend="cuda"`` without a usable GPU.
        """
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", accept_large_sparse=False)
        k, init, n_init, max_iter, tol = self._check_params(X)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=X.dtype)
        if self.algorithm not in ALGORITHMS:
            raise ValueError(
                f"The 'algorithm' parameter of KMeans must be a str among {sorted(ALGORITHMS)}. Got {self.algorithm!r} instead."
            )
        init, seed = sklearn_draws(check_random_state(self.random_state), X, k, init, n_init, sample_weight)
        centers, labels, inertia, n_iter, backend = _native.kmeans_fit(
            X, k, init, n_init, max_iter, tol, seed, self.backend, sample_weight, self.algorithm,
            bool(self.compute_labels),
        )
        self.cluster_centers_ = centers
        set_labels(self, labels)
        self.inertia_ = float(inertia)
        self.n_iter_ = int(n_iter)
        self.backend_ = backend
        self._n_features_out = k
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        """Fit and return the training labels (``fit(X).labels_``; with
        ``compute_labels=False``, ``predict(X)`` after the fit).

        Parameters
        ----------
        X, y, sample_weight
            As in :meth:`fit`.

        Returns
        -------
        labels : ndarray of shape (n_samples,), int32
        """
        self.fit(X, sample_weight=sample_weight)
        if not self.compute_labels:
            return self.predict(X)
        return self.labels_

    def fit_transform(self, X, y=None, sample_weight=None):
        """Fit and return the distances of every point to every centre.

        Parameters
        ----------
        X, y, sample_weight
            As in :meth:`fit`.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_clusters)
        """
        return self.fit(X, sample_weight=sample_weight).transform(X)

    # -- using a fit --------------------------------------------------------------------

    def _test_data(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False, accept_large_sparse=False)
        return np.ascontiguousarray(X, dtype=self.cluster_centers_.dtype)

    def predict(self, X):
        """The index of the nearest centre of every point (ties to the lower index).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data.

        Returns
        -------
        labels : ndarray of shape (n_samples,), int32
        """
        X = self._test_data(X)
        return _native.kmeans_predict(self.cluster_centers_, X, self.backend)

    def transform(self, X):
        """Distances of every point to every centre (the cluster-distance space).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_clusters)
        """
        X = self._test_data(X)
        return _native.kmeans_transform(self.cluster_centers_, X)

    def score(self, X, y=None, sample_weight=None):
        """Opposite of the inertia of ``X`` against the centres (higher is better).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data.
        y : Ignored
            Present for API consistency.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.

        Returns
        -------
        score : float
        """
        X = self._test_data(X)
        w = _check_sample_weight(sample_weight, X, dtype=X.dtype)
        labels = _native.kmeans_predict(self.cluster_centers_, X, self.backend)
        diff = X - self.cluster_centers_[labels]
        return -float(np.dot(w.astype(np.float64), np.einsum("ij,ij->i", diff, diff, dtype=np.float64)))
