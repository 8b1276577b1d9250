"""``warpath.dask.KMeans``: k-means over a dask array, on a Dask cluster, that survives workers
leaving and joining (needs ``pip install "warpath[dask]"``: dask, distributed, scikit-learn).

The estimator has scikit-learn's (and dask-ml's) interface. Each Lloyd iteration is one round
of Dask tasks: every chunk of rows computes its partial sums against the current centres in
warpath's native code (``Σ_k``, ``κ_k`` and its inertia share; the GIL released), the partials
are added along a tree fixed by the chunks' order, and the client computes the new centres and
decides whether to stop with ``warpath.KMeans``'s own Lloyd loop (``_native.KMeansLloydRun``).

What is kept where, and what a failure costs
--------------------------------------------
- **The data** lives in the workers' memory, chunk by chunk (``X`` is persisted; a chunk's
  sample weights are persisted with it, as one task result); it never passes through the
  client (only the ``init_sample`` rows that k-means++ and random initialisation draw from). A chunk is a Dask task with a recipe (read a ``.npy`` file, a
  zarr or HDF5 slice, generate it, ...): when the worker that holds it dies, the scheduler
  recomputes it from that recipe on another worker. Nothing is dropped.
- **Per-iteration state** is only the centres (``k x d`` floats), held by the client; the
  partial sums of an iteration are small task results. A worker that dies mid-iteration costs
  the re-execution of its tasks (its chunks' recipes and their partial sums), nothing else.
- **Determinism**: a chunk's partial sums depend only on the chunk and the centres, and the
  reduction tree depends only on the number of chunks, so which worker ran what does not
  change a bit: a fit during which a worker died gives bit-identical centres and the same
  ``n_iter_`` as an undisturbed one (on ``backend="cpu"``; on the GPU, sums of few dimensions
  or clusters are added with atomics and may differ in the last bits from run to run).
- **Joining workers** are used from the next iteration: every chunk task is sent to the worker
  its chunk is placed on (a loose restriction: any worker when that one is gone); when the
  set of workers grew, chunks are re-placed from the busiest workers onto the new ones, and
  their next tasks carry them there (one transfer per moved chunk; the scheduler's active
  memory manager then drops the old copy).
- **What is lost**: a chunk that exists *only* in a dead worker's memory (scattered data with no
  recipe, ``Client.scatter``) cannot be recomputed: the fit stops with :class:`ChunkLostError`
  naming the chunk and its rows, never a silent drop. The client (the process calling ``fit``)
  and the scheduler are not replicated: if either dies, the fit is lost. A task whose workers
  keep dying (``distributed.scheduler.allowed-failures``, 3 by default) stops the fit with
  Dask's ``KilledWorker``.

Without a ``distributed.Client`` the fit runs on a thread pool in this process (each chunk is
computed once with the local scheduler), with the same results.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import dask
import dask.array as da
import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from . import _native
from ._kmeans import check_params, integral, set_labels, sklearn_draws

__all__ = ["ChunkLostError", "KMeans"]

#: Rows of the fixed subsample that k-means++ and random initialisation draw from.
INIT_SAMPLE_ROWS = 1 << 16

#: Partial results added by one reduction task.
REDUCE_FAN_IN = 8


class ChunkLostError(RuntimeError):
    """A chunk of ``X`` existed only in the memory of a worker that died and has no recipe to
    recompute it from (e.g. it was scattered with ``Client.scatter``); the message names the
    chunk and its rows."""


# -- task functions (module level: workers import them) -----------------------------------


def _where():
    """Which thread of which process runs this task."""
    return f"{os.getpid()}:{threading.get_ident()}"


def _name_chunk(e, i, start, stop):
    return type(e)(f"chunk {i} (rows {start}:{stop}) of X: {e}") if isinstance(e, ValueError) else e


def _pair(x, w):
    """A chunk of rows with its weights: one task result, so they always sit together."""
    return np.ascontiguousarray(x), np.ascontiguousarray(w, dtype=np.asarray(x).dtype)


def _xw(c):
    """A chunk's rows and weights (``None`` when unweighted)."""
    return c if isinstance(c, tuple) else (c, None)


def _chunk_stats(c, centers, i, start, backend):
    """Statistics of chunk ``i`` (rows ``start``...): flat array, seconds, thread."""
    x, w = _xw(c)
    t = time.perf_counter()
    try:
        s = _native.kmeans_chunk_stats(x, centers, start, backend, w)
    except ValueError as e:
        raise _name_chunk(e, i, start, start + x.shape[0]) from None
    return s, time.perf_counter() - t, _where()


def _chunk_farthest(c, centers, m, i, start):
    x, w = _xw(c)
    try:
        return _native.kmeans_chunk_farthest(x, centers, m, start, w)
    except ValueError as e:
        raise _name_chunk(e, i, start, start + x.shape[0]) from None


def _chunk_moments(c, mean, i, start):
    """Column sums (``mean`` None) or sums of squared deviations of chunk ``i``, in float64;
    a non-finite value is an error naming the chunk and its global row."""
    x = np.asarray(_xw(c)[0])
    if mean is None:
        bad = ~np.isfinite(x)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise ValueError(
                f"chunk {i} (rows {start}:{start + x.shape[0]}) of X: data value at row {start + r}, "
                f"column {c} is not finite ({x[r, c]}); Input X contains NaN or infinity."
            )
        return x.sum(axis=0, dtype=np.float64)
    dev = x.astype(np.float64, copy=False) - mean
    return np.einsum("ij,ij->j", dev, dev)


def _add(*parts):
    """Element-wise sum in the order given (the tree fixes it, not the scheduler)."""
    t = time.perf_counter()
    out = np.array(parts[0][0], dtype=np.float64, copy=True)
    for p in parts[1:]:
        out += p[0]
    meta = [m for p in parts for m in p[1]]
    return out, meta + [("reduce", time.perf_counter() - t)]


def _leaf(result):
    """A chunk task's result as a reduction input: (values, [(thread, seconds)])."""
    s, t, where = result
    return s, [(where, t)]


def _leaf_add(*results):
    return _add(*[_leaf(r) for r in results])


def _warm():
    """Run once on a worker that joined: importing this module (to unpickle the task) loads
    warpath's native code and scikit-learn before any chunk is sent there."""
    return os.getpid()


def _take_rows(c, rows):
    """Rows of a chunk (with their weights, for a weighted chunk)."""
    x, w = _xw(c)
    return (np.asarray(x)[rows], None if w is None else np.asarray(w)[rows])


def _predict_block(x, centers, backend):
    x = np.ascontiguousarray(x, dtype=centers.dtype)
    return _native.kmeans_predict(centers, x, backend)


def _transform_block(x, centers):
    from sklearn.metrics.pairwise import euclidean_distances

    return euclidean_distances(np.asarray(x, dtype=centers.dtype), centers)


def _inertia_block(x, centers, backend, w=None):
    x = np.ascontiguousarray(x)
    w = None if w is None else np.ascontiguousarray(w, dtype=x.dtype)
    s = _native.kmeans_chunk_stats(x, centers, 0, backend, w)
    return np.array([s[-1]])


# -- where the tasks run -------------------------------------------------------------------


class _Distributed:
    """Tasks on a ``distributed`` cluster; the chunks are persisted futures."""

    def __init__(self, client, X, w):
        self.client = client
        if w is None:
            Xp = client.persist(X)
            keys = [k for row in Xp.__dask_keys__() for k in row]
        else:
            # each chunk persisted with its weights, so that both always sit on one worker
            Xp = client.persist([dask.delayed(_pair)(xb, wb) for xb, wb in zip(X.to_delayed().ravel(), w.to_delayed().ravel())])
            keys = [p.key for p in Xp]
        self.X = Xp
        futs = {f.key: f for f in client.futures_of(Xp)}
        self.chunks = [futs[k] for k in keys]
        self.known = set(client.nthreads())
        self.warming = {}

        self.place = [None] * len(self.chunks)
        from distributed import wait

        wait(self.chunks)
        self._locate()
        # Persisting may leave the chunks unevenly spread: even them out once (the first
        # tasks carry the moved chunks).
        self._balance(self.known)

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False)

    def submit_chunk(self, fn, i, *args):
        """``fn(chunk i, *args)`` on the worker the chunk is placed on (any worker when that
        one is gone: then the scheduler recomputes the chunk where it runs the task)."""
        w = self.place[i]
        if w is None:
            return self.client.submit(fn, self.chunks[i], *args, pure=False)
        return self.client.submit(fn, self.chunks[i], *args, pure=False, workers=[w], allow_other_workers=True)

    def reduce(self, leaves):
        """Tree of ``_add`` tasks over chunk results, fan-in ``REDUCE_FAN_IN``, in order."""
        level = [self.submit(_leaf_add, *leaves[i : i + REDUCE_FAN_IN]) for i in range(0, len(leaves), REDUCE_FAN_IN)]
        while len(level) > 1:
            level = [self.submit(_add, *level[i : i + REDUCE_FAN_IN]) for i in range(0, len(level), REDUCE_FAN_IN)]
        return self.result(level[0])

    def result(self, fut):
        try:
            return fut.result()
        except Exception as e:
            self.check_lost(e)
            raise

    def gather(self, futs):
        try:
            return self.client.gather(futs)
        except Exception as e:
            self.check_lost(e)
            raise

    def check_lost(self, cause):
        """A chunk the scheduler lost for good is a ChunkLostError naming it (a chunk it is
        recomputing has status "lost"; one it cannot recompute is "cancelled")."""
        for i, f in enumerate(self.chunks):
            if f.status == "cancelled":
                raise ChunkLostError(
                    f"chunk {i} of X (rows {self.offsets[i]}:{self.offsets[i + 1]}, key {f.key!r}) existed only "
                    f"in the memory of a worker that died and cannot be recomputed from a source; "
                    f"persist or load X from a recomputable source (files, zarr, HDF5) instead of scattering it ({cause!r})"
                ) from cause

    def workers(self):
        return set(self.client.nthreads())

    def _locate(self, which=None):
        """Where the chunks ``which`` (all by default) are held now."""
        which = range(len(self.chunks)) if which is None else which
        which = [i for i in which]
        if not which:
            return
        who = self.client.who_has([self.chunks[i] for i in which])
        for i in which:
            held = sorted(who.get(self.chunks[i].key, ()))
            self.place[i] = held[0] if held else None

    def _balance(self, receivers):
        """Moves chunks (their future tasks) from the workers holding the most onto
        ``receivers`` until each of these holds ``n // workers``; deterministic for a given
        placement."""
        n, workers = len(self.chunks), sorted(self.known)
        low = n // len(workers)
        held = {w: [i for i, p in enumerate(self.place) if p == w] for w in workers}
        for w in sorted(receivers):
            while len(held[w]) < low:
                donor = max(workers, key=lambda v: (len(held[v]), v))
                if len(held[donor]) <= low:
                    break
                i = held[donor].pop()
                held[w].append(i)
                self.place[i] = w

    def grew(self):
        """Tracks the workers before an iteration: chunks whose worker left are located again
        (they were recomputed elsewhere); a worker that joined first imports warpath (a
        warm-up task, which the fit does not wait for), and once it has, chunks move to it
        from the busiest workers until every worker holds about as many (the transfers happen
        in the next tasks). Returns the workers that became ready for chunks."""
        now = self.workers()
        for w in sorted(now - self.known - set(self.warming)):
            self.warming[w] = self.client.submit(_warm, pure=False, workers=[w], allow_other_workers=False)
        ready = {w for w, f in self.warming.items() if f.done() and w in now}
        for w in list(self.warming):
            if w in ready or w not in now:
                del self.warming[w]
        self.known = (self.known & now) | ready
        self._locate([i for i, p in enumerate(self.place) if p is None or p not in now])
        if ready:
            self._balance(ready)
        return ready

    def release(self):
        # Dropping the references lets the scheduler free the persisted copy (unless the
        # caller holds one: then the same futures stay alive).
        self.X = None
        self.chunks = []


class _Local:
    """Tasks on a thread pool of this process (no ``distributed.Client``)."""

    def __init__(self, X, w):
        self.chunks = [np.ascontiguousarray(b) for b in dask.compute(*X.to_delayed().ravel().tolist(), scheduler="threads")]
        if w is not None:
            ws = dask.compute(*w.to_delayed().ravel().tolist(), scheduler="threads")
            self.chunks = [_pair(x, wb) for x, wb in zip(self.chunks, ws)]
        self.pool = ThreadPoolExecutor(os.cpu_count() or 1)

    def submit(self, fn, *args):
        return self.pool.submit(fn, *args)

    def submit_chunk(self, fn, i, *args):
        return self.pool.submit(fn, self.chunks[i], *args)

    def reduce(self, leaves):
        level = [_leaf_add(*[f.result() for f in leaves[i : i + REDUCE_FAN_IN]]) for i in range(0, len(leaves), REDUCE_FAN_IN)]
        while len(level) > 1:
            level = [_add(*level[i : i + REDUCE_FAN_IN]) for i in range(0, len(level), REDUCE_FAN_IN)]
        return level[0]

    def result(self, fut):
        return fut.result()

    def gather(self, futs):
        return [f.result() for f in futs]

    def workers(self):
        return {"local"}

    def grew(self):
        return set()

    def release(self):
        self.pool.shutdown()


def _client():
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        return None


class _Progress:
    """One line, rewritten after every iteration, on standard error (terminals and
    notebooks)."""

    def __init__(self, enabled, max_iter, runs):
        self.enabled, self.max_iter, self.runs = enabled, max_iter, runs

    def update(self, run, it, m):
        if not self.enabled:
            return
        width = 24
        filled = int(width * it / self.max_iter)
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(
            f"\rwarpath.dask.KMeans run {run + 1}/{self.runs} [{bar}] iteration {it}/{self.max_iter} "
            f"inertia {m['inertia']:.6g} shift {m['shift']:.3g} {m['wall_s'] * 1e3:.0f} ms"
        )
        sys.stderr.flush()

    def close(self, n_iter):
        if self.enabled:
            sys.stderr.write(f"\rwarpath.dask.KMeans done after {n_iter} iterations{' ' * 40}\n")
            sys.stderr.flush()


class KMeans(TransformerMixin, ClusterMixin, BaseEstimator):
    """K-means on a Dask cluster (scikit-learn's and dask-ml's ``KMeans`` interface).

    Lloyd's algorithm over a dask array, chunk by chunk on the workers, with the parameters,
    attributes and convergence rule of ``sklearn.cluster.KMeans`` (``tol`` relative to the
    mean per-feature variance). The fit survives workers dying (their tasks are re-run, the
    result is bit-identical) and uses workers that join from the next iteration; see the
    module documentation for what is kept where.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters.
    init : {"k-means++", "k-means||", "random"} or array-like of shape (n_clusters, n_features), default="k-means++"
        Greedy k-means++, k-means|| (rounds of D^2 draws, see ``warpath.KMeans``) or random
        distinct rows, drawn from a fixed subsample of
        ``init_sample`` rows (rows ``i n / s``; all rows when there are fewer, and then the
        choice is ``warpath.KMeans``'s for the same ``random_state``), or these centres.
    n_init : "auto" or int, default="auto"
        Runs from different initial centres; the lowest inertia wins. ``"auto"``: 1 for
        k-means++ and given centres, 10 for random.
    max_iter : int, default=300
        Most Lloyd iterations per run.
    tol : float, default=1e-4
        Convergence when the summed squared centre shift is at most ``tol`` times the mean
        per-feature variance of ``X``. The centre update and the stopping rules are
        ``warpath.KMeans``'s own (its Rust loop), so both stop at the same iteration.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisation.
    backend : {"cpu", "auto", "cuda"}, default="cpu"
        Where each chunk's partial sums are computed on its worker: ``"auto"`` and ``"cuda"``
        use the worker's GPU (results agree with the CPU's up to rounding; for few dimensions
        or clusters the GPU adds with atomics, and a re-run task may differ in the last bits).
    init_sample : int, default=65536
        Rows of the subsample that k-means++ and random initialisation use.
    algorithm : {"lloyd", "auto"}, default="lloyd"
        Every chunk task computes every distance of its rows (the tiled matrix products of
        ``warpath.KMeans``, settled exactly: the same labels). The pruned algorithms of
        ``warpath.KMeans`` keep bounds per point from one iteration to the next; chunk tasks
        here keep nothing, so that a task lost with its worker is recomputed anywhere with
        the same result, and ``"hamerly"``, ``"yinyang"`` and ``"elkan"`` are refused.
        ``"auto"`` is ``"lloyd"`` (as dask-ml's only ``"full"``).
    progress : bool, default=False
        Show a one-line progress bar on standard error.
    compute_labels : bool, default=True
        As ``warpath.KMeans``'s: ``False`` skips the pass over the chunks that computes the
        inertia of the final centres (``inertia_`` is then the last iteration's, against the
        centres it started from; runs of ``n_init`` are compared by it) and sets no
        ``labels_``; ``predict`` labels any points later.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Final centres, in ``X``'s dtype.
    labels_ : dask array of shape (n_samples,), int32
        Index of the nearest final centre of every training point (lazy: computed from
        ``X``'s chunks when asked for; not set with ``compute_labels=False``).
    inertia_ : float
        Sum over points of weight times squared distance to the nearest final centre (with
        ``compute_labels=False``: the last iteration's).
    n_iter_ : int
        Lloyd iterations of the best run.
    n_features_in_ : int
        Number of features seen in ``fit``.
    metrics_ : list of dict
        One entry per iteration of every run: ``run``, ``iteration``, ``wall_s`` (the whole
        iteration as the client saw it), ``compute_s`` (native time of the busiest worker
        thread), ``reduce_s`` (the reduction tasks and the client's centre update),
        ``schedule_s`` (the rest: scheduling, transfers, recomputing lost chunks), ``tasks``,
        ``threads`` (worker threads that ran chunk tasks), ``workers`` (workers known),
        ``joined`` (workers that joined before it), ``inertia`` and ``shift``.

    See Also
    --------
    warpath.KMeans : the same algorithm in one process.
    sklearn.cluster.KMeans, dask_ml.cluster.KMeans

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from warpath.dask import KMeans
    >>> X = da.from_array(np.array([[1, 2], [1, 4], [1, 0], [10, 2], [10, 4], [10, 0]], dtype=float), chunks=3)
    >>> km = KMeans(n_clusters=2, random_state=0).fit(X)
    >>> sorted(km.cluster_centers_.tolist())
    [[1.0, 2.0], [10.0, 2.0]]
    """

    def __init__(
        self,
        n_clusters=8,
        *,
        init="k-means++",
        n_init="auto",
        max_iter=300,
        tol=1e-4,
        random_state=None,
        backend="cpu",
        init_sample=INIT_SAMPLE_ROWS,
        algorithm="lloyd",
        progress=False,
        compute_labels=True,
    ):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.backend = backend
        self.init_sample = init_sample
        self.algorithm = algorithm
        self.progress = progress
        self.compute_labels = compute_labels

    # -- parameters ---------------------------------------------------------------------

    def _check_params(self, n, d):
        integral("init_sample", self.init_sample, 1)
        if self.algorithm not in ("lloyd", "auto"):
            raise ValueError(
                f"The 'algorithm' parameter of warpath.dask.KMeans must be 'lloyd' or 'auto', not {self.algorithm!r}: "
                "the pruned algorithms keep bounds per point across iterations, which stateless chunk tasks cannot "
                "(use warpath.KMeans for them)."
            )

        def as_array(a):
            init = np.array(a, dtype=np.float64, copy=True, order="C")
            if init.ndim == 2 and not np.isfinite(init).all():
                raise ValueError("The initial centers contain NaN or infinity.")
            return init

        return check_params(self, n, d, as_array)

    @staticmethod
    def _as_dask(X):
        if not isinstance(X, da.Array):
            X = np.asarray(X)
            if X.ndim == 2 and X.dtype not in (np.float64, np.float32):
                X = X.astype(np.float64)
            X = da.from_array(X)
        if X.ndim != 2:
            raise ValueError(f"Expected 2D array, got {X.ndim}D array instead.")
        if X.dtype not in (np.float64, np.float32):
            X = X.astype(np.float64)
        if X.numblocks[1] > 1:
            X = X.rechunk({1: -1})
        if any(np.isnan(c) for c in X.chunks[0]):
            X = X.compute_chunk_sizes()
        return X

    # -- fitting ------------------------------------------------------------------------

    def fit(self, X, y=None, sample_weight=None, callback=None):
        """Compute k-means clustering on the chunks of ``X``.

        Parameters
        ----------
        X : dask array or array-like of shape (n_samples, n_features)
            Training data, chunked along rows (columns are merged into one chunk). float64
            and float32 are used as they are; other dtypes become float64.
        y : Ignored
            Present for API consistency.
        sample_weight : dask array or array-like of shape (n_samples,), default=None
            Non-negative weights (chunked as ``X``'s rows).
        callback : callable, optional
            Called on the client after every iteration as ``callback(estimator, metrics)``
            (``metrics`` is the iteration's entry of ``metrics_``, with ``centers``).

        Returns
        -------
        self : KMeans
            Fitted estimator.

        Raises
        ------
        ValueError
            A non-finite value (naming its chunk and row), ``n_samples < n_clusters``, bad
            parameters or weights.
        ChunkLostError
            A chunk that cannot be recomputed was lost with its worker.
        """
        X = self._as_dask(X)
        n, d = X.shape
        k, init, n_init, max_iter, tol = self._check_params(n, d)
        w = None
        if sample_weight is not None:
            w = sample_weight if isinstance(sample_weight, da.Array) else da.from_array(np.asarray(sample_weight, dtype=X.dtype))
            if w.shape != (n,):
                raise ValueError(f"sample_weight.shape == {w.shape}, expected {(n,)}!")
            w = w.astype(X.dtype).rechunk((X.chunks[0],))
        random_state = check_random_state(self.random_state)
        # k-means|| takes one seed for every run, as in warpath.KMeans; k-means++ and random
        # draw each run's numbers from `random_state` as scikit-learn does (`_initial`).
        seed = int(random_state.randint(np.iinfo(np.int32).max)) if isinstance(init, str) and init == "k-means||" else 0
        client = _client()
        ex = _Distributed(client, X, w) if client is not None else _Local(X, w)
        offsets = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        ex.offsets = offsets
        self.metrics_ = []
        try:
            # the variance takes two passes over the chunks: only when tol needs it
            variance = self._mean_variance(ex, n, d) if tol > 0 else 0.0
            best = None
            progress = _Progress(self.progress, max_iter, n_init)
            for run in range(n_init):
                start = init if not isinstance(init, str) else self._initial(ex, n, k, init, random_state, seed, run)
                start = np.ascontiguousarray(start, dtype=np.float64)
                lloyd = _native.KMeansLloydRun(start, max_iter, tol, variance, bool(self.compute_labels))
                out = self._lloyd(ex, lloyd, run, progress, callback)
                if best is None or out[1] < best[1]:
                    best = out
                progress.close(out[2])
        finally:
            ex.release()
        centers, inertia, n_iter = best
        self.cluster_centers_ = centers.astype(X.dtype)
        self.inertia_ = float(inertia)
        self.n_iter_ = int(n_iter)
        self.n_features_in_ = d
        set_labels(self, self._labels(X) if self.compute_labels else None)
        return self

    def _mean_variance(self, ex, n, d):
        """Mean per-column variance (two passes over the chunks, sums in chunk order); the
        first pass also checks that every value is finite."""
        mean = None
        for _ in range(2):
            futs = [ex.submit_chunk(_chunk_moments, i, mean, i, int(ex.offsets[i])) for i in range(len(ex.chunks))]
            total = np.zeros(d)
            for part in ex.gather(futs):
                total += part
            mean = total / n if mean is None else mean
        return float(total.sum() / n / d)

    def _initial(self, ex, n, k, init, random_state, seed, run):
        """k-means++, random or k-means|| centres from rows ``i n / s`` of ``X`` (and their
        weights), the draws of k-means++ and random made from ``random_state`` as
        ``warpath.KMeans`` makes them."""
        s = min(n, max(int(self.init_sample), k))
        rows = (np.arange(s, dtype=np.int64) * n) // s
        futs = []
        for i in range(len(ex.chunks)):
            a, b = ex.offsets[i], ex.offsets[i + 1]
            local = rows[(rows >= a) & (rows < b)] - a
            if local.size:
                futs.append(ex.submit_chunk(_take_rows, i, local))
        parts = ex.gather(futs)
        sample = np.ascontiguousarray(np.concatenate([x for x, _ in parts]))
        sw = None if parts[0][1] is None else np.ascontiguousarray(np.concatenate([w for _, w in parts]))
        drawn, _ = sklearn_draws(random_state, sample, k, init, 1, sw) if init != "k-means||" else (init, seed)
        # this run's draws are the list's only run; k-means|| is run `run` of one seed
        return _native.kmeans_sample_centroids(sample, k, drawn, seed, 0 if isinstance(drawn, list) else run, sw)

    def _stats(self, ex, centers):
        leaves = [ex.submit_chunk(_chunk_stats, i, centers, i, int(ex.offsets[i]), self.backend) for i in range(len(ex.chunks))]
        return ex.reduce(leaves)

    def _lloyd(self, ex, lloyd, run, progress, callback):
        """One run: the chunks compute the statistics of every iteration, ``lloyd`` (the Rust
        loop's rules, ``clustering::chunked::LloydRun``) the next centres and when to stop."""
        d = lloyd.centers.shape[1]
        while lloyd.running:
            t0 = time.perf_counter()
            joined = ex.grew()
            centers = lloyd.centers
            stats, meta = self._stats(ex, centers)
            t_update = time.perf_counter()
            far = np.zeros((0, 4 + d))
            m = lloyd.far_points_needed(stats)
            if m:
                futs = [ex.submit_chunk(_chunk_farthest, i, centers, m, i, int(ex.offsets[i])) for i in range(len(ex.chunks))]
                far = np.concatenate(ex.gather(futs))
            shift = lloyd.update(stats, far)
            wall = time.perf_counter() - t0
            busy = {}
            for where, t in meta:
                if where != "reduce":
                    busy[where] = busy.get(where, 0.0) + t
            compute = max(busy.values())
            reduce = sum(t for where, t in meta if where == "reduce") + (time.perf_counter() - t_update)
            m = {
                "run": run,
                "iteration": lloyd.iterations,
                "wall_s": wall,
                "compute_s": compute,
                "reduce_s": reduce,
                "schedule_s": max(wall - compute - reduce, 0.0),
                "tasks": len(ex.chunks),
                "threads": len(busy),
                "workers": len(ex.known) if hasattr(ex, "known") else 1,
                "joined": sorted(joined),
                "inertia": float(stats[-1]),
                "shift": shift,
            }
            self.metrics_.append(m)
            progress.update(run, lloyd.iterations, m)
            if callback is not None:
                callback(self, dict(m, centers=lloyd.centers))
        if lloyd.needs_final_pass:
            lloyd.final_pass(self._stats(ex, lloyd.centers)[0])
        return lloyd.centers, lloyd.inertia, lloyd.iterations

    def _labels(self, X):
        return X.map_blocks(_predict_block, self.cluster_centers_, self.backend, dtype=np.int32, drop_axis=1)

    def fit_predict(self, X, y=None, sample_weight=None):
        """Fit and return the training labels (``fit(X).labels_``, a dask array; with
        ``compute_labels=False`` the same labels, from the fitted centres)."""
        self.fit(X, sample_weight=sample_weight)
        if not self.compute_labels:
            return self._labels(self._as_dask(X))
        return self.labels_

    # -- using a fit --------------------------------------------------------------------

    def _test_data(self, X):
        check_is_fitted(self)
        dask_in = isinstance(X, da.Array)
        X = self._as_dask(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but KMeans is expecting {self.n_features_in_} features as input.")
        return X, dask_in

    def predict(self, X):
        """The index of the nearest centre of every point (ties to the lower index): a dask
        array for a dask array, a numpy array otherwise.

        Parameters
        ----------
        X : dask array or array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : array of shape (n_samples,), int32
        """
        X, dask_in = self._test_data(X)
        labels = self._labels(X)
        return labels if dask_in else labels.compute()

    def transform(self, X):
        """Distances of every point to every centre (a dask array for a dask array).

        Parameters
        ----------
        X : dask array or array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : array of shape (n_samples, n_clusters)
        """
        X, dask_in = self._test_data(X)
        k = self.cluster_centers_.shape[0]
        out = X.map_blocks(_transform_block, self.cluster_centers_, dtype=self.cluster_centers_.dtype, chunks=(X.chunks[0], (k,)))
        return out if dask_in else out.compute()

    def score(self, X, y=None, sample_weight=None):
        """Opposite of the inertia of ``X`` against the centres (higher is better).

        Parameters
        ----------
        X : dask array or array-like of shape (n_samples, n_features)
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        X, _ = self._test_data(X)
        centers = self.cluster_centers_.astype(np.float64)
        blocks = X.to_delayed().ravel().tolist()
        if sample_weight is None:
            wblocks = [None] * len(blocks)
        else:
            w = sample_weight if isinstance(sample_weight, da.Array) else da.from_array(np.asarray(sample_weight))
            if w.shape != (X.shape[0],):
                raise ValueError(f"sample_weight.shape == {w.shape}, expected {(X.shape[0],)}!")
            wblocks = w.astype(X.dtype).rechunk((X.chunks[0],)).to_delayed().ravel().tolist()
        part = dask.delayed(_inertia_block, pure=True)
        parts = dask.compute(*[part(b, centers, self.backend, wb) for b, wb in zip(blocks, wblocks)])
        return -float(np.sum(np.concatenate(parts)))
