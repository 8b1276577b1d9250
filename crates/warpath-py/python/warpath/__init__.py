"""warpath: GPU-accelerated algorithms that also run well on CPUs, with numpy arrays in and out.

The functions follow the interface of the Python peer their users already call:

==============================================  =============================================
warpath                                         peer
==============================================  =============================================
:func:`linear_sum_assignment`                   ``scipy.optimize.linear_sum_assignment``
:func:`linear_sum_assignment_batch`             (none: a 3-D stack of problems at once)
:func:`min_weight_full_bipartite_matching`      ``scipy.sparse.csgraph`` ``min_weight_full_bipartite_matching``
:class:`KMeans`                                 ``sklearn.cluster.KMeans`` (needs scikit-learn)
:func:`sort`, :func:`argsort`, :func:`unique`   ``numpy.sort``, ``numpy.argsort``, ``numpy.unique``
:func:`euler_circuit`                           ``networkx.eulerian_circuit`` / ``eulerian_path``
:func:`permutations`                            ``itertools.permutations(range(n))`` as an array
:func:`de_bruijn_sequence`                      ``sympy.combinatorics`` ``de_bruijn``
:func:`fhn.simulate`                            (none: FitzHugh-Nagumo simulations)
==============================================  =============================================

Every function takes ``backend="auto" | "cpu" | "cuda"``: ``"auto"`` uses an NVIDIA GPU when
one is present and the input is large enough to pay for it, ``"cuda"`` makes a missing GPU an
error (:class:`GpuError`), never a silent fallback. The GIL is released during every
computation (but the assignment problems of at most 2,048 entries, which are solved in less
time than releasing it takes); errors are Python exceptions carrying the library's message.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import numpy as np

import dataclasses
import os

from . import _arrays, _native, fhn
from ._native import GpuError, NotEulerianError

if TYPE_CHECKING:  # pragma: no cover
    from ._kmeans import KMeans

__version__: str = _native.__version__

__all__ = [
    "ColorMatches",
    "GpuError",
    "KMeans",
    "NotEulerianError",
    "Unitigs",
    "argsort",
    "assemble",
    "count_kmers",
    "de_bruijn_sequence",
    "euler_circuit",
    "fhn",
    "info",
    "linear_sum_assignment",
    "linear_sum_assignment_batch",
    "min_weight_full_bipartite_matching",
    "permutations",
    "query",
    "rank_permutation",
    "sort",
    "unique",
    "unrank_permutation",
]

_NUMPY2 = int(np.__version__.split(".")[0]) >= 2


def __getattr__(name: str) -> Any:
    # KMeans is a scikit-learn estimator: import scikit-learn only when it is asked for.
    if name == "KMeans":
        try:
            from ._kmeans import KMeans
        except ImportError as e:  # pragma: no cover - exercised without scikit-learn only
            raise ImportError(
                "warpath.KMeans is a scikit-learn estimator and needs scikit-learn: "
                "pip install scikit-learn"
            ) from e
        return KMeans
    raise AttributeError(f"module 'warpath' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


# --------------------------------------------------------------------------- assignment


# The native function itself, with its numpydoc docstring: it reads float64, float32, int64 and
# int32 arrays as they are and converts anything else with ``_arrays.cost_matrix`` (scipy's
# rules). A Python wrapper around it would cost as much as solving a 3 x 3 problem.
linear_sum_assignment = _native.linear_sum_assignment
linear_sum_assignment.__module__ = __name__  # help(), doctest and Sphinx show it as warpath's


# The native function itself, as linear_sum_assignment.
linear_sum_assignment_batch = _native.linear_sum_assignment_batch
linear_sum_assignment_batch.__module__ = __name__


def min_weight_full_bipartite_matching(biadjacency, maximize: bool = False):
    """Minimum weight full matching of a bipartite graph given as a sparse matrix (scipy's
    ``scipy.sparse.csgraph.min_weight_full_bipartite_matching``, same contract).

    Parameters
    ----------
    biadjacency : scipy sparse array or matrix, CSR, CSC or COO
        Rows are one side of the graph, columns the other; a stored entry is an edge of that
        weight. As in scipy: explicit zeros are removed before matching, with a
        ``UserWarning`` (to keep zero-weight edges, add a constant to every weight, as
        scipy's documentation suggests); ``+inf`` (``-inf`` under ``maximize=True``) is no
        edge. Bool, integer and floating-point dtypes; float32, int32 and int64 entries are
        solved in their own type (integers in exact integer arithmetic), CSR and CSC arrays
        are read in place.
    maximize : bool, optional
        Find the matching of greatest weight instead.

    Returns
    -------
    row_ind, col_ind : ndarray
        The matched pairs, sorted by row, covering every row when there are no more rows
        than columns, else every column: ``biadjacency[row_ind, col_ind].sum()`` is the
        optimal weight. As scipy returns them: when rows <= columns ``row_ind`` is
        ``arange(rows)`` (int64) and ``col_ind`` int32; else ``row_ind`` int32 and
        ``col_ind`` int64.

    Raises
    ------
    ValueError
        No full matching exists ("no full matching exists", scipy's words), an entry is NaN
        or the other infinity, or the dtype is not numeric.
    TypeError
        Not a sparse matrix, or a format other than CSR, CSC and COO.
    MemoryError
        A copy the problem needs (to transpose or negate the entries) does not fit.

    Notes
    -----
    LAPJVsp (Jonker and Volgenant's shortest augmenting paths for sparse matrices, the
    algorithm scipy ports) with a binary heap in the searches and no reset of untouched
    columns between them; a free row that reaches no free column proves there is no full
    matching. Square problems of at least 2048 rows start from the prices of an auction
    (epsilon scaling, after a Hopcroft-Karp check) and finish with the same exact searches:
    the result is optimal either way.

    See Also
    --------
    scipy.sparse.csgraph.min_weight_full_bipartite_matching, linear_sum_assignment

    Examples
    --------
    >>> import numpy as np, warpath
    >>> from scipy.sparse import csr_array
    >>> biadjacency = csr_array([[3, 3, 6], [4, 3, 5], [10, 1, 8]])
    >>> row_ind, col_ind = warpath.min_weight_full_bipartite_matching(biadjacency)
    >>> col_ind
    array([0, 2, 1], dtype=int32)
    >>> int(biadjacency[row_ind, col_ind].sum())
    9
    """
    import warnings

    try:
        import scipy.sparse as sp
    except ImportError as e:  # pragma: no cover - scipy missing
        raise ImportError("min_weight_full_bipartite_matching takes scipy sparse matrices: pip install scipy") from e
    if hasattr(biadjacency, "to_scipy_sparse") and not sp.issparse(biadjacency):
        biadjacency = biadjacency.to_scipy_sparse()  # pydata/sparse, as scipy converts it
    if not sp.issparse(biadjacency):
        raise TypeError("graph must be sparse")
    if biadjacency.format not in ("csr", "csc", "coo"):
        raise TypeError("graph must be in CSC, CSR, or COO format.")
    m = biadjacency
    if not (np.issubdtype(m.dtype, np.number) or m.dtype == np.dtype(np.bool_)):
        raise ValueError("expected a matrix containing numerical entries, got %s" % (m.dtype,))
    rows, cols = m.shape
    if m.format == "coo":
        m = m.tocsc() if cols < rows else m.tocsr()
    data = _arrays.cost_matrix(m.data, 1)
    if data.size and not np.all(data):
        warnings.warn("explicit zero weights are removed before matching", stacklevel=2)
        m = m.copy()
        m.eliminate_zeros()
        data = _arrays.cost_matrix(m.data, 1)
    indptr, indices = m.indptr, m.indices
    if indptr.dtype != indices.dtype or indptr.dtype not in (np.int32, np.int64):
        indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
    row_ind, col_ind = _native.min_weight_full_bipartite_matching(
        rows, cols, np.ascontiguousarray(indptr), np.ascontiguousarray(indices),
        np.ascontiguousarray(data), m.format == "csc", bool(maximize))
    if cols >= rows:
        return row_ind, col_ind.astype(np.int32)
    return row_ind.astype(np.int32), col_ind


# --------------------------------------------------------------------------- sort / unique

# the native 1-D entry points, bound once (a module attribute lookup less per call)
_sort_1d = _native.sort_1d
_unique_1d = _native.unique_1d


def _by_rows(a: np.ndarray, axis, native, what: str, cast_back: bool):
    """Applies a row-wise native kernel along ``axis`` of ``a`` (``None``: the flattened
    array), as numpy's sort functions do."""
    if axis is None:
        a = a.reshape(-1)
        axis = -1
    if a.ndim == 0:
        raise _arrays.AxisError(axis, 0)
    axis = _arrays.normalize_axis(axis, a.ndim)
    keys, back = _arrays.sort_keys(a, what)
    moved = np.moveaxis(keys, axis, -1)
    shape = moved.shape
    if moved.size == 0:
        out = moved.copy() if cast_back else np.zeros(shape, dtype=np.int64)
    else:
        out = native(moved.reshape(-1, shape[-1])).reshape(shape)
    if axis != a.ndim - 1:
        out = np.ascontiguousarray(np.moveaxis(out, -1, axis))
    if cast_back and back is not None:
        out = out.astype(back)
    return out


def sort(a, axis: int | None = -1, kind: str | None = None, order=None, *, stable: bool | None = None, backend: str = "auto") -> np.ndarray:
    """Return a sorted copy of an array (numpy's ``sort``).

    On the CPU a vectorized quicksort (AVX-512, or AVX2) where the CPU has one, else a radix
    sort; a 1-D array of a 4- or 8-byte numeric dtype is sorted in one native call.

    Parameters
    ----------
    a : array_like
        Bool, integer or floating-point values (at most 64 bits).
    axis : int or None, optional
        Axis to sort along (default the last); ``None`` sorts the flattened array.
    kind, stable : optional
        Accepted for compatibility: warpath's sort is always stable.
    order : None
        Structured arrays are not supported.
    backend : {"auto", "cpu", "cuda"}, optional
        Where to run.

    Returns
    -------
    ndarray
        Same shape and dtype as ``a``. Floats in numpy's order: NaNs last; ``-0.0`` sorts
        before ``+0.0`` (numpy treats them as equal and may keep either order).

    Raises
    ------
    TypeError
        Unsupported dtype (complex, strings, objects, longdouble).
    numpy.exceptions.AxisError
        ``axis`` out of range (or a 0-d array).
    GpuError
        ``backend="cuda"`` without a usable GPU.

    See Also
    --------
    numpy.sort, argsort, unique

    Examples
    --------
    >>> import numpy as np, warpath
    >>> warpath.sort(np.array([3.0, np.nan, -1.0, 2.0]))
    array([-1.,  2.,  3., nan])
    >>> warpath.sort(np.array([[3, 1], [0, 2]]), axis=0)
    array([[0, 1],
           [3, 2]])
    """
    if kind is not None or order is not None:
        _arrays.check_sort_options(kind, order)
    if axis == -1 or axis is None or axis == 0:
        # the common call (a 1-D ndarray of a native key dtype) in one native call, which
        # checks the array itself; None for anything else
        out = _sort_1d(a, False, backend)
        if out is not None:
            return out
    return _by_rows(np.asarray(a), axis, lambda x: _native.sort_rows(x, False, backend), "sort", True)


def argsort(a, axis: int | None = -1, kind: str | None = None, order=None, *, stable: bool | None = None, backend: str = "auto") -> np.ndarray:
    """Return the indices that sort an array (numpy's ``argsort``), stable.

    Parameters
    ----------
    a : array_like
        Bool, integer or floating-point values (at most 64 bits).
    axis : int or None, optional
        Axis to sort along (default the last); ``None`` uses the flattened array.
    kind, stable : optional
        Accepted for compatibility: warpath's argsort is always stable (equal keys keep their
        index order, as ``kind="stable"``).
    order : None
        Structured arrays are not supported.
    backend : {"auto", "cpu", "cuda"}, optional
        Where to run.

    Returns
    -------
    ndarray of int64
        Same shape as ``a`` (flattened for ``axis=None``).

    Raises
    ------
    TypeError, numpy.exceptions.AxisError, GpuError
        As :func:`sort`; ``ValueError`` above 2**32 - 1 elements per sorted row.

    See Also
    --------
    numpy.argsort, sort

    Examples
    --------
    >>> import numpy as np, warpath
    >>> warpath.argsort(np.array([30, -5, 30, 0]))
    array([1, 3, 0, 2])
    """
    if kind is not None or order is not None:
        _arrays.check_sort_options(kind, order)
    if axis == -1 or axis is None or axis == 0:
        out = _sort_1d(a, True, backend)  # as in sort
        if out is not None:
            return out
    return _by_rows(np.asarray(a), axis, lambda x: _native.sort_rows(x, True, backend), "argsort", False)


def unique(ar, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False, axis=None, *, equal_nan: bool = True, sorted: bool = True, backend: str = "auto"):  # noqa: A002 - numpy's name
    """Find the unique elements of an array (numpy's ``unique``).

    Parameters
    ----------
    ar : array_like
        Bool, integer or floating-point values (at most 64 bits); flattened.
    return_index : bool, optional
        Also return the index of each unique value's first occurrence.
    return_inverse : bool, optional
        Also return the indices that rebuild ``ar`` from the unique values.
    return_counts : bool, optional
        Also return how often each unique value occurs.
    axis : None
        Only ``None`` (the flattened array) is supported.
    equal_nan : bool, optional
        Only ``True``: all NaNs are one value, as numpy's default.
    sorted : bool, optional
        Accepted for compatibility: the values are always sorted.
    backend : {"auto", "cpu", "cuda"}, optional
        Where to run.

    Returns
    -------
    unique : ndarray
        The sorted unique values, in ``ar``'s dtype (NaN last).
    unique_indices : ndarray of int64, optional
        First occurrences (``return_index``).
    unique_inverse : ndarray of int64, optional
        ``unique[unique_inverse]`` rebuilds ``ar``; shaped like ``ar`` under numpy 2, flat
        under numpy 1 (``return_inverse``).
    unique_counts : ndarray of int64, optional
        Occurrences (``return_counts``).

    Raises
    ------
    TypeError, GpuError
        As :func:`sort`.
    NotImplementedError
        ``axis`` other than ``None`` or ``equal_nan=False``.

    See Also
    --------
    numpy.unique, sort

    Examples
    --------
    >>> import numpy as np, warpath
    >>> warpath.unique(np.array([5, 1, 5, 3, 1]), return_counts=True)
    (array([1, 3, 5]), array([2, 1, 2]))
    """
    if axis is None and equal_nan:
        # the common call (a 1-D ndarray of a native key dtype) in one native call, which
        # checks the array itself and returns numpy's result shape; None for anything else
        out = _unique_1d(ar, bool(return_index), bool(return_inverse), bool(return_counts), backend)
        if out is not None:
            return out
    if axis is not None:
        raise NotImplementedError("warpath.unique supports axis=None only (the flattened array)")
    if not equal_nan:
        raise NotImplementedError("warpath.unique supports equal_nan=True only (numpy's default)")
    a = np.asarray(ar)
    keys, back = _arrays.sort_keys(a.reshape(-1), "unique")
    # keys is a 1-D array of a native key dtype, which the native call always takes
    out = _unique_1d(keys, bool(return_index), bool(return_inverse), bool(return_counts), backend)
    if not (return_index or return_inverse or return_counts):
        return out if back is None else out.astype(back)
    out = list(out)
    if back is not None:
        out[0] = out[0].astype(back)
    if return_inverse and _NUMPY2:
        k = 1 + bool(return_index)
        out[k] = out[k].reshape(a.shape)
    return tuple(out)


# --------------------------------------------------------------------------- Euler circuits


def _is_networkx_graph(g) -> bool:
    return hasattr(g, "is_directed") and hasattr(g, "is_multigraph") and hasattr(g, "nodes")


def euler_circuit(edges, *, path: bool = False, directed: bool | None = None, keys: bool = False, return_index: bool = False, backend: str = "auto"):
    """An Euler circuit (or path) of a multigraph: every edge exactly once.

    Parameters
    ----------
    edges : array_like of shape (m, 2), or a NetworkX graph
        Edge ``i`` joins ``edges[i, 0]`` to ``edges[i, 1]`` (non-negative integer vertex ids
        below 2**32 - 1; parallel edges and self-loops allowed). A NetworkX ``Graph``,
        ``MultiGraph``, ``DiGraph`` or ``MultiDiGraph`` is read with its node labels.
    path : bool, optional
        Allow an Euler path (open trail), as ``networkx.eulerian_path``; a graph that has a
        circuit gives a circuit.
    directed : bool or None, optional
        ``None`` (default): directed for arrays, the graph's own kind for NetworkX graphs.
        ``False`` treats the edges as undirected (NetworkX's ``MultiGraph`` semantics: a
        self-loop adds 2 to its vertex's degree; every degree even for a circuit, exactly two
        odd vertices or none for a path).
    keys : bool, optional
        NetworkX multigraphs: yield ``(u, v, key)`` triples, as NetworkX's ``keys=True``.
    return_index : bool, optional
        Arrays: also return the input position of every walked edge.
    backend : {"auto", "cpu", "cuda"}, optional
        Where to run.

    Returns
    -------
    ndarray of int64, shape (m, 2), or list of tuples
        The edges in walk order, each as walked (consecutive edges meet; a circuit ends where
        it starts; an undirected edge may appear reversed). For array input an array, plus
        the int64 input positions when ``return_index``; for a
        NetworkX graph a list of ``(u, v)`` (or ``(u, v, key)``) tuples, as
        ``list(networkx.eulerian_circuit(G))`` gives.

    Raises
    ------
    NotEulerianError
        Array input without an Euler circuit/path; the message names the first unbalanced
        vertex or the number of components. A subclass of ``ValueError``.
    networkx.NetworkXError
        The same for NetworkX input (NetworkX's own exception type).
    ValueError
        Malformed edges (not ``(m, 2)``, negative or too large ids).

    Notes
    -----
    Isolated vertices (without edges) are allowed: only the edges must be connected.
    NetworkX's ``is_eulerian`` is ``False`` for a graph with isolated nodes; warpath follows
    graph-core and ignores them.

    See Also
    --------
    networkx.eulerian_circuit, networkx.eulerian_path

    Examples
    --------
    >>> import numpy as np, warpath
    >>> warpath.euler_circuit(np.array([[0, 1], [1, 2], [2, 0]]))
    array([[0, 1],
           [1, 2],
           [2, 0]])
    """
    if _is_networkx_graph(edges):
        return _euler_networkx(edges, path, directed, keys, backend)
    e = np.asarray(edges)
    if e.size == 0:
        e = np.zeros((0, 2), dtype=np.int64)
    if e.ndim != 2 or e.shape[1] != 2:
        raise ValueError(f"edges must be an (m, 2) array of vertex ids, got shape {e.shape!r}")
    if e.dtype.kind not in "iu":
        raise ValueError(f"edges must hold integer vertex ids, got dtype {e.dtype}")
    directed = True if directed is None else bool(directed)
    index, vertices = _euler_arrays(e, path, directed, backend)
    walk = np.column_stack((vertices[:-1], vertices[1:])) if len(index) else np.zeros((0, 2), np.int64)
    return (walk, index) if return_index else walk


def _euler_arrays(e: np.ndarray, path: bool, directed: bool, backend: str):
    if e.shape[0] and (e.min() < 0 or e.max() >= np.iinfo(np.uint32).max):
        raise ValueError(f"vertex ids must be in 0..{np.iinfo(np.uint32).max - 1}")
    n = int(e.max()) + 1 if e.shape[0] else 0
    sources = np.ascontiguousarray(e[:, 0], dtype=np.uint32)
    targets = np.ascontiguousarray(e[:, 1], dtype=np.uint32)
    return _native.euler_trail(sources, targets, n, bool(path), bool(directed), backend)


def _euler_networkx(g, path: bool, directed: bool | None, keys: bool, backend: str):
    import networkx as nx

    nodes = list(g.nodes)
    ids = {v: i for i, v in enumerate(nodes)}
    if g.is_multigraph():
        listed = list(g.edges(keys=True))
    else:
        listed = [(u, v, None) for u, v in g.edges()]
    e = np.array([(ids[u], ids[v]) for u, v, _ in listed], dtype=np.int64).reshape(-1, 2)
    directed = g.is_directed() if directed is None else bool(directed)
    try:
        index, vertices = _euler_arrays(e, path, directed, backend)
    except NotEulerianError as err:
        raise nx.NetworkXError(str(err)) from err
    # each edge as walked (an undirected edge may be walked against its listed direction)
    walk = [nodes[v] for v in vertices.tolist()]
    if keys and g.is_multigraph():
        return [(walk[i], walk[i + 1], listed[j][2]) for i, j in enumerate(index.tolist())]
    return list(zip(walk[:-1], walk[1:]))


# --------------------------------------------------------------------------- combinatorics


def permutations(n: int, start: int = 0, count: int | None = None, *, backend: str = "auto") -> np.ndarray:
    """The permutations of ``range(n)`` in lexicographic order, as one array.

    Parameters
    ----------
    n : int
        Number of elements, ``0 <= n <= 20`` (ranks fit 64 bits).
    start : int, optional
        Rank of the first permutation.
    count : int or None, optional
        How many; ``None`` means all from ``start`` to ``n! - 1``.
    backend : {"auto", "cpu", "cuda"}, optional
        Where to run.

    Returns
    -------
    ndarray of uint8, shape (count, n)
        Row ``i`` is the permutation of rank ``start + i`` (the order of
        ``itertools.permutations(range(n))``).

    Raises
    ------
    ValueError
        ``n > 20``, a negative argument, or a range past ``n!``.
    MemoryError
        The result does not fit in memory.

    Examples
    --------
    >>> import warpath
    >>> warpath.permutations(3, start=2, count=2)
    array([[1, 0, 2],
           [1, 2, 0]], dtype=uint8)
    """
    n, start = operator.index(n), operator.index(start)
    if count is not None:
        count = operator.index(count)
    for name, v in (("n", n), ("start", start), ("count", count)):
        if v is not None and v < 0:
            raise ValueError(f"{name} must be >= 0, not {v}")
    return _native.permutations(n, start, count, backend)


def rank_permutation(perm) -> int:
    """The lexicographic rank of a permutation of distinct integers.

    Parameters
    ----------
    perm : array_like of int, shape (n,)
        Distinct values (only their relative order matters), ``n <= 34``.

    Returns
    -------
    int
        The rank, in ``range(factorial(n))``.

    Raises
    ------
    ValueError
        Repeated values or ``n > 34``.
    TypeError
        Non-integer values.

    Examples
    --------
    >>> import warpath
    >>> warpath.rank_permutation([2, 1, 0])
    5
    """
    p = np.asarray(perm)
    if p.ndim != 1:
        raise ValueError(f"perm must be 1-D, got shape {p.shape!r}")
    if p.size and p.dtype.kind not in "iub":
        raise TypeError(f"perm must hold integers, got dtype {p.dtype}")
    if p.dtype.kind == "u" and p.size and p.max() > np.iinfo(np.int64).max:
        raise ValueError("perm values must fit int64")
    return _native.rank_permutation(np.ascontiguousarray(p, dtype=np.int64))


def unrank_permutation(n: int, rank: int) -> np.ndarray:
    """The permutation of ``range(n)`` with a given lexicographic rank.

    Parameters
    ----------
    n : int
        Number of elements, ``0 <= n <= 34``.
    rank : int
        In ``range(factorial(n))``.

    Returns
    -------
    ndarray of int64, shape (n,)

    Raises
    ------
    ValueError
        ``rank`` out of range or ``n > 34``.

    Examples
    --------
    >>> import warpath
    >>> warpath.unrank_permutation(3, 3)
    array([1, 2, 0])
    """
    n, rank = operator.index(n), operator.index(rank)
    if n < 0 or rank < 0:
        raise ValueError(f"n and rank must be >= 0, not n = {n}, rank = {rank}")
    if rank >= 1 << 128:
        raise ValueError(f"rank {rank} is out of range: there are only {n}! permutations of {n} elements")
    return _native.unrank_permutation(n, rank)


def de_bruijn_sequence(k, n: int, *, construction: str = "fkm", linear: bool = False, backend: str = "auto"):
    """A De Bruijn sequence: every word of length ``n`` over ``k`` symbols exactly once.

    Parameters
    ----------
    k : int or str
        Alphabet size (``1..256``; symbols ``0..k-1``), or the alphabet itself as a string of
        distinct characters.
    n : int
        Word length, ``>= 1``.
    construction : {"fkm", "euler"}, optional
        ``"fkm"``: Lyndon words (the lexicographically smallest sequence, CPU);
        ``"euler"``: an Euler circuit of the De Bruijn graph (CPU or GPU).
    linear : bool, optional
        Append the first ``n - 1`` symbols, so every word appears as a plain (not cyclic)
        window.
    backend : {"auto", "cpu", "cuda"}, optional
        Where the Euler construction runs.

    Returns
    -------
    ndarray of uint8 or str
        ``k**n`` symbols (``+ n - 1`` when ``linear``); a string over the alphabet when ``k``
        is a string.

    Raises
    ------
    ValueError
        ``k`` or ``n`` out of range, a repeated alphabet character, or ``k**n`` too large.

    Examples
    --------
    >>> import warpath
    >>> warpath.de_bruijn_sequence(2, 3)
    array([0, 0, 0, 1, 0, 1, 1, 1], dtype=uint8)
    >>> warpath.de_bruijn_sequence("ab", 2, linear=True)
    'aabba'
    """
    n = operator.index(n)
    if isinstance(k, str):
        return _native.de_bruijn_text(k, n, construction, bool(linear), backend)
    k = operator.index(k)
    if k < 0 or n < 0:
        raise ValueError(f"k and n must be >= 0, not k = {k}, n = {n}")
    return _native.de_bruijn_sequence(k, n, construction, bool(linear), backend)


# --------------------------------------------------------------------------- assembly


def _read_paths(paths) -> list[str]:
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    out = [os.fsdecode(p) for p in paths]
    if not out:
        raise ValueError("give at least one reads file")
    return out


def count_kmers(paths, k: int, min_count: int = 2, *, max_count: int | None = None, backend: str = "auto"):
    """Count the canonical k-mers of FASTA/FASTQ reads (as ``jellyfish count -C`` or KMC).

    A k-mer and its reverse complement are counted as one, the *canonical* k-mer (the smaller
    of the two in ``A < C < G < T`` order). Reads are split at ``N`` and other IUPAC codes;
    lowercase letters are bases.

    Parameters
    ----------
    paths : str, path-like or sequence of them
        FASTA or FASTQ files, plain or gzip, read one after the other.
    k : int
        The k-mer length: odd, from 3 to 63.
    min_count : int, optional
        Drop k-mers seen fewer times (2 by default: k-mers seen once are mostly errors).
    max_count : int, optional
        Drop k-mers seen more times.
    backend : {"auto", "cpu", "cuda"}, optional
        Where the counting sorts run (``"cuda"`` needs ``k <= 31``).

    Returns
    -------
    kmers : ndarray of uint64
        The canonical k-mers, sorted, 2-bit packed (``A=0, C=1, G=2, T=3``, the first base in
        the highest bits). Shape ``(n,)`` for ``k <= 31``; ``(n, 2)`` (high and low words of
        128 bits) above.
    counts : ndarray of uint32, shape (n,)
        How often each k-mer was seen, on either strand.

    Raises
    ------
    ValueError
        An even ``k`` (a k-mer could be its own reverse complement), ``k`` outside 3..63, bad
        counts, or a file that is not reads (the message names the file and the record).
    FileNotFoundError, OSError
        A file that cannot be read.

    See Also
    --------
    assemble

    Examples
    --------
    >>> import pathlib, tempfile, warpath
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.fa"
    >>> _ = p.write_text(">a\\nACGTTGCA\\n>b\\nTGCAACGT\\n")  # b is a's reverse complement
    >>> kmers, counts = warpath.count_kmers(p, 5)
    >>> len(kmers), counts.tolist()
    (4, [2, 2, 2, 2])
    """
    return _native.count_kmers(_read_paths(paths), operator.index(k), operator.index(min_count),
                               None if max_count is None else operator.index(max_count), backend)


@dataclasses.dataclass(frozen=True)
class Unitigs:
    """The maximal unitigs of a compacted De Bruijn graph, as :func:`assemble` returns them.

    Attributes
    ----------
    sequences : list of str
        Each unitig's bases; unitig ``i`` holds ``len(sequences[i]) - k + 1`` k-mers.
    kmer_counts : ndarray of uint64
        The sum of the counts of each unitig's k-mers (BCALM2's ``KC``).
    kmers : ndarray of uint64
        The number of k-mers of each unitig.
    circular : ndarray of bool
        Whether the unitig closes on itself.
    links : ndarray of int64, shape (m, 4)
        ``[from, from_rev, to, to_rev]``: leaving unitig ``from`` at its end (``from_rev`` 0)
        or its start read backwards (1) enters unitig ``to`` at its start (``to_rev`` 0) or its
        end read backwards (1), overlapping by k-1 bases; each edge once.
    stats : dict
        ``reads``, ``kmers_seen``, ``distinct``, ``solid``, ``backend`` (where counting ran),
        ``compaction_backend`` (where compaction ran), ``buckets``, ``pieces`` (what the
        buckets compacted into before the glue), ``temp_disk_bytes`` (the temporary files at
        their largest, 0 in memory) and ``max_memory`` (the bound the run sized itself to, or
        None).
    eulertigs : list of str or None
        With ``eulertigs=True``: the fewest strings that hold every solid k-mer exactly once
        (Schmidt & Alanko's eulertigs), else None.
    color_names : list of str or None
        A colored graph's colors (``colors=`` in :func:`assemble`), by color number.
    color_sets : list of list of int or None
        Each color set's color numbers, ascending, by set id.
    color_run_offsets, color_run_sets, color_run_kmers : ndarray or None
        Every unitig's color runs in CSR form: unitig ``i``'s runs are
        ``color_run_offsets[i]:color_run_offsets[i + 1]``, each ``color_run_kmers[j]``
        consecutive k-mers held by exactly the colors of set ``color_run_sets[j]`` (GGCAT's
        ``C:<set>:<k-mers>``); a unitig's runs cover its k-mers left to right.
    """

    sequences: list
    kmer_counts: np.ndarray
    kmers: np.ndarray
    circular: np.ndarray
    links: np.ndarray
    stats: dict
    eulertigs: list | None = None
    color_names: list | None = None
    color_sets: list | None = None
    color_run_offsets: np.ndarray | None = None
    color_run_sets: np.ndarray | None = None
    color_run_kmers: np.ndarray | None = None

    def color_runs(self, i: int) -> list:
        """Unitig ``i``'s color runs: ``(color names, k-mers)`` pairs, left to right.

        Raises
        ------
        ValueError
            For an uncolored graph.
        """
        if self.color_run_offsets is None:
            raise ValueError("an uncolored graph has no color runs: assemble with colors=")
        lo, hi = int(self.color_run_offsets[i]), int(self.color_run_offsets[i + 1])
        return [([self.color_names[c] for c in self.color_sets[int(s)]], int(n))
                for s, n in zip(self.color_run_sets[lo:hi], self.color_run_kmers[lo:hi])]

    @property
    def mean_counts(self) -> np.ndarray:
        """The mean count of each unitig's k-mers (BCALM2's ``km``)."""
        return self.kmer_counts / np.maximum(self.kmers, 1)

    def __len__(self) -> int:
        return len(self.sequences)


def assemble(paths, k: int, min_count: int | None = None, *, max_count: int | None = None,
             backend: str = "auto", fasta=None, gfa=None, eulertigs=False, max_memory: int | None = None,
             temp_dir=None, threads: int | None = None, colors=None, color_sets=None,
             color_sets_format: str = "names", compress_temp: bool = False) -> Unitigs:
    """Assemble reads into the maximal unitigs of their De Bruijn graph (as BCALM2).

    Counts canonical k-mers, keeps those seen at least ``min_count`` times, and compacts them
    into the maximal unitigs of the bidirected De Bruijn graph (the set BCALM2, Cuttlefish and
    GGCAT output, circular unitigs included). The k-mers are bucketed by minimizer, each
    bucket compacted on its own and the pieces glued across buckets; the unitigs are checked
    before they are returned (their k-mers counted again: each solid k-mer once).

    Parameters
    ----------
    paths : str, path-like or sequence of them
        FASTA or FASTQ files, plain or gzip.
    k : int
        The k-mer length: odd, from 3 to 63.
    min_count : int, optional
        The solid k-mers' smallest count: 2 by default; 1 for a colored graph, where it
        applies to each color's inputs alone (a k-mer is solid when some color holds it that
        often).
    max_count : int, optional
        Drop k-mers seen more times.
    backend : {"auto", "cpu", "cuda"}, optional
        Where the counting and compaction sorts run: ``"cuda"`` on the GPU (k <= 31; a
        colored graph counts on the CPU),
        ``"auto"`` the GPU for large inputs when one is present. The unitigs are the same,
        unitig for unitig, on either.
    fasta, gfa : str or path-like, optional
        Also write the unitigs as FASTA with BCALM2's headers, and the graph as GFA 1.0
        (each written under a temporary name and renamed when complete).
    eulertigs : bool or str or path-like, optional
        ``True``: also return the eulertigs (``Unitigs.eulertigs``); a path: write them there
        as FASTA too.
    max_memory : int, optional
        A bound on the resident memory of the run, in bytes. With a bound (or a ``temp_dir``)
        the buckets go to temporary files and every array is sized to fit; without, they stay
        in memory. The returned sequences are in memory either way.
    temp_dir : str or path-like, optional
        Where the temporary files go (default: the system's temporary folder); they are
        removed when the call returns or fails.
    threads : int, optional
        Worker threads (default: rayon's, ``RAYON_NUM_THREADS``).
    colors : {"file", "record"} or sequence of str, optional
        Build a colored graph (a pangenome): ``"file"`` makes each path one color named by
        its file name, ``"record"`` each record one color named by its header's first word,
        and a sequence of names (one per path, repeats allowed) gives each path the color of
        its name. The result then has ``color_names``, ``color_sets`` and the unitigs' color
        runs, and the FASTA and GFA written carry them (GGCAT's ``C:`` runs, a ``CR:Z:`` tag).
    color_sets : str or path-like, optional
        Also write the color sets as JSON lines (what ``warpath query`` reads).
    color_sets_format : {"names", "numbers"}, optional
        How ``color_sets`` lists each set's colors: by name (``{"id": 4, "colors": ["g0",
        "g1", "g2", "g7"]}``), or by number in the first line's order with runs of three or
        more as ``[first, last]`` (``{"id": 4, "colors": [[0, 2], 7]}``: a pangenome's file
        many times smaller). :func:`query` reads both.
    compress_temp : bool, optional
        Store the temporary files that shrink as LZ4 blocks (``warpath assemble
        --compress-temp``): a pangenome of related genomes needs about a quarter less
        temporary disk, for a few percent more time.

    Returns
    -------
    Unitigs

    Raises
    ------
    ValueError, FileNotFoundError, OSError
        As :func:`count_kmers`; a bound too small, or a full disk (the message says which);
        ``colors`` names that do not match the paths one to one.

    Examples
    --------
    >>> import pathlib, tempfile, warpath
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.fa"
    >>> _ = p.write_text(">a\\nACCGTATGGC\\n>b\\nCGTATGGCTA\\n" * 2)
    >>> u = warpath.assemble(p, 5, eulertigs=True)
    >>> u.sequences in (["ACCGTATGGCTA"], ["TAGCCATACGGT"])
    True
    >>> u.eulertigs[0] in ("ACCGTATGGCTA", "TAGCCATACGGT")  # one string, either strand
    True
    >>> q = p.with_name("q.fa")
    >>> _ = q.write_text(">q\\nACCGTATGGC\\n")
    >>> g = warpath.assemble([p, q], 5, colors="file")
    >>> g.color_names
    ['r.fa', 'q.fa']
    >>> sorted(g.color_runs(0), key=lambda r: -r[1])  # 6 k-mers in both, 2 in r.fa alone
    [(['r.fa', 'q.fa'], 6), (['r.fa'], 2)]
    """
    paths = _read_paths(paths)
    names, per_record = None, False
    if isinstance(colors, str):
        if colors == "file":
            names = [os.path.basename(p) for p in paths]
        elif colors == "record":
            per_record = True
        else:
            raise ValueError(f"colors must be 'file', 'record' or a sequence of names, not {colors!r}")
    elif colors is not None:
        names = [str(c) for c in colors]
        if len(names) != len(paths):
            raise ValueError(f"{len(names)} color names for {len(paths)} paths: give each path one")
    if min_count is None:
        min_count = 2 if colors is None else 1
    eulertigs_path = None
    if eulertigs is not None and not isinstance(eulertigs, bool):
        eulertigs_path = os.fsdecode(eulertigs)
    out = _native.assemble(paths, operator.index(k), operator.index(min_count),
                           None if max_count is None else operator.index(max_count), backend,
                           None if fasta is None else os.fsdecode(fasta),
                           None if gfa is None else os.fsdecode(gfa),
                           eulertigs is True or eulertigs_path is not None, eulertigs_path,
                           None if max_memory is None else operator.index(max_memory),
                           None if temp_dir is None else os.fsdecode(temp_dir),
                           None if threads is None else operator.index(threads),
                           names, per_record, None if color_sets is None else os.fsdecode(color_sets),
                           str(color_sets_format), bool(compress_temp))
    *plain, painted = out
    if painted is None:
        return Unitigs(*plain)
    names, sets, offsets, run_sets, run_kmers = painted
    return Unitigs(*plain, color_names=names, color_sets=sets, color_run_offsets=offsets,
                   color_run_sets=run_sets, color_run_kmers=run_kmers)


@dataclasses.dataclass(frozen=True)
class ColorMatches:
    """Which colors hold the k-mers of each query record, as :func:`query` returns them.

    Attributes
    ----------
    names : list of str
        Each query record's name (its header's first word), in input order.
    kmers : ndarray of uint64, shape (n,)
        Each record's k-mers: its windows of ``k`` bases that are all ``A``, ``C``, ``G`` or
        ``T`` (a window across an ``N`` is not counted).
    matches : ndarray of uint32, shape (n, colors)
        ``matches[i, c]``: how many of record ``i``'s k-mers color ``c`` holds (GGCAT's
        ``query --colors`` counts).
    colors : list of str
        The colors' names, by column.
    """

    names: list
    kmers: np.ndarray
    matches: np.ndarray
    colors: list

    def present(self, ratio: float = 0.8) -> np.ndarray:
        """Bifrost's answer: a bool ``(n, colors)`` array, True where the color holds at least
        ``ratio`` of the record's k-mers (False for a record without k-mers)."""
        need = ratio * self.kmers.astype(np.float64)
        return (self.matches >= need[:, None]) & (self.kmers[:, None] > 0)

    def __len__(self) -> int:
        return len(self.names)


def query(unitigs, color_sets, k: int, queries, max_memory: int | None = None) -> ColorMatches:
    """Count, for each query record, how many of its k-mers each color of a colored graph holds.

    Joins the query records' k-mers with a colored compacted De Bruijn graph (the unitigs
    FASTA whose headers carry GGCAT's color runs ``C:<set id in hex>:<k-mers>``, and its
    color-sets JSON lines, as ``warpath assemble --colors`` writes them): the records are read
    in passes that fit ``max_memory``, each pass streams the unitigs once and reads only the
    color sets its k-mers reach, so the graph is never loaded whole (the GIL is released
    throughout).

    Parameters
    ----------
    unitigs : str or path-like
        The graph's unitigs: FASTA, plain or gzip.
    color_sets : str or path-like
        The color sets: JSON lines ``{"id": N, "colors": [name, ...]}``, plain or gzip, after
        an optional header line ``{"colors": [every color]}``; after that line a set may also
        list colors by number and runs as ``[first, last]`` (``warpath assemble
        --color-sets-format numbers``).
    k : int
        The graph's k-mer length: odd, from 3 to 63.
    queries : str, path-like or sequence of them
        FASTA or FASTQ files of query sequences, plain or gzip, read one after the other.
    max_memory : int, optional
        A bound in bytes on a pass (the table of the queries' k-mers, their records and the
        color sets they reach); more queries take more passes over the graph. Default: half
        of the memory available. The returned ``matches`` come on top.

    Returns
    -------
    ColorMatches
        ``matches`` is dense: ``4 * records * colors`` bytes.

    Raises
    ------
    ValueError
        An even ``k`` or one outside 3..63, or a malformed graph (the message names the line
        of the sets file, or the record and unitig of the FASTA) or query file.
    FileNotFoundError, OSError
        A file that cannot be read.

    Examples
    --------
    >>> import pathlib, tempfile, warpath
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "g.fa").write_text(">0 LN:i:7 C:0:2 C:1:1\\nACGTTGC\\n")
    >>> _ = (d / "g.jsonl").write_text('{"id": 0, "colors": ["A", "B"]}\\n{"id": 1, "colors": ["B"]}\\n')
    >>> _ = (d / "q.fa").write_text(">q1\\nACGTTGCA\\n>q2\\nGCAAC\\n")
    >>> m = warpath.query(d / "g.fa", d / "g.jsonl", 5, d / "q.fa")
    >>> m.names, m.colors, m.kmers.tolist(), m.matches.tolist()
    (['q1', 'q2'], ['A', 'B'], [4, 1], [[2, 3], [0, 1]])
    >>> m.present(0.5).tolist()
    [[True, True], [False, True]]
    """
    out = _native.query(os.fsdecode(unitigs), os.fsdecode(color_sets), operator.index(k),
                        _read_paths(queries),
                        None if max_memory is None else operator.index(max_memory))
    return ColorMatches(*out)


# --------------------------------------------------------------------------- device


def info() -> dict:
    """What warpath runs on, as ``warpath info --json`` reports it.

    Returns
    -------
    dict
        ``version``; ``cuda`` (bool); ``device`` (name, compute capability, memory, ... or
        ``None``); ``reason`` (why there is no device, or ``None``); ``warpath_backend`` (the
        ``WARPATH_BACKEND`` override); ``threads`` (CPU threads of the parallel paths).

    Examples
    --------
    >>> import warpath
    >>> sorted(warpath.info())
    ['cuda', 'device', 'reason', 'threads', 'version', 'warpath_backend']
    """
    return _native.info()
