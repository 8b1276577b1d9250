"""Type stubs of the native module ``warpath._native`` (PyO3). Call the documented functions of
``warpath`` instead: they convert array-likes and dtypes before calling these."""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__version__: str

class GpuError(RuntimeError): ...
class NotEulerianError(ValueError): ...

def linear_sum_assignment(
    cost_matrix: ArrayLike, maximize: bool = False, *, solver: str = "auto", backend: str = "auto"
) -> tuple[NDArray[np.int64], NDArray[np.int64]]: ...
def linear_sum_assignment_batch(
    costs: ArrayLike, maximize: bool = False, *, solver: str = "auto", backend: str = "auto"
) -> tuple[NDArray[np.int64], NDArray[np.int64]]: ...
def min_weight_full_bipartite_matching(
    rows: int,
    cols: int,
    indptr: NDArray[np.integer[Any]],
    indices: NDArray[np.integer[Any]],
    data: NDArray[Any],
    csc: bool,
    maximize: bool,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]: ...
# One run's random draws (scikit-learn's stream): k-means++ ``(first_row, uniforms)`` or the
# rows of ``init="random"``.
Draws = tuple[int, NDArray[np.float64]] | NDArray[np.int64]

def kmeans_equal_choice(n: int, c: float, u: float) -> int: ...
def kmeans_fit(
    x: NDArray[np.floating[Any]],
    n_clusters: int,
    init: str | NDArray[np.float64] | list[Draws],
    n_init: int,
    max_iter: int,
    tol: float,
    seed: int,
    backend: str,
    sample_weight: NDArray[np.floating[Any]] | None = None,
    algorithm: str = "auto",
    compute_labels: bool = True,
) -> tuple[NDArray[np.floating[Any]], NDArray[np.int32] | None, float, int, str]: ...
def kmeans_predict(
    centers: NDArray[np.floating[Any]], x: NDArray[np.floating[Any]], backend: str
) -> NDArray[np.int32]: ...
def kmeans_transform(
    centers: NDArray[np.floating[Any]], x: NDArray[np.floating[Any]]
) -> NDArray[np.floating[Any]]: ...
def kmeans_chunk_stats(
    x: NDArray[np.floating[Any]],
    centers: NDArray[np.float64],
    row_offset: int,
    backend: str,
    sample_weight: NDArray[np.floating[Any]] | None = None,
) -> NDArray[np.float64]: ...
def kmeans_chunk_farthest(
    x: NDArray[np.floating[Any]],
    centers: NDArray[np.float64],
    m: int,
    row_offset: int,
    sample_weight: NDArray[np.floating[Any]] | None = None,
) -> NDArray[np.float64]: ...

class KMeansLloydRun:
    def __init__(
        self, centers: NDArray[np.float64], max_iter: int, tol: float, variance: float, final_labels: bool
    ) -> None: ...
    @property
    def centers(self) -> NDArray[np.float64]: ...
    @property
    def running(self) -> bool: ...
    @property
    def iterations(self) -> int: ...
    @property
    def converged(self) -> bool: ...
    @property
    def inertia(self) -> float: ...
    @property
    def needs_final_pass(self) -> bool: ...
    def far_points_needed(self, stats: NDArray[np.float64]) -> int: ...
    def update(self, stats: NDArray[np.float64], far: NDArray[np.float64]) -> float: ...
    def final_pass(self, stats: NDArray[np.float64]) -> None: ...

def kmeans_sample_centroids(
    sample: NDArray[np.floating[Any]],
    k: int,
    init: str | list[Draws],
    seed: int,
    run: int,
    sample_weight: NDArray[np.floating[Any]] | None = None,
) -> NDArray[np.float64]: ...
def sort_rows(a: NDArray[Any], indices: bool, backend: str) -> NDArray[Any]: ...
def sort_1d(a: object, indices: bool, backend: str) -> NDArray[Any] | None: ...
def unique_1d(
    a: object, return_index: bool, return_inverse: bool, return_counts: bool, backend: str
) -> NDArray[Any] | tuple[NDArray[Any], ...] | None: ...
def euler_trail(
    sources: NDArray[np.uint32],
    targets: NDArray[np.uint32],
    n_vertices: int,
    path: bool,
    directed: bool,
    backend: str,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]: ...
def permutations(n: int, start: int, count: int | None, backend: str) -> NDArray[np.uint8]: ...
def rank_permutation(perm: NDArray[np.int64]) -> int: ...
def unrank_permutation(n: int, rank: int) -> NDArray[np.int64]: ...
def de_bruijn_sequence(k: int, n: int, construction: str, linear: bool, backend: str) -> NDArray[np.uint8]: ...
def de_bruijn_text(alphabet: str, n: int, construction: str, linear: bool, backend: str) -> str: ...
def fhn_simulate(
    scenario: str,
    scheme: str,
    solver: str,
    n: int,
    dx: float | None,
    dt: float,
    t_end: float,
    length: float,
    a: float,
    eps: float,
    gamma: float,
    snapshots: int,
    backend: str,
) -> dict[str, Any]: ...
def info() -> dict[str, Any]: ...
def query(
    unitigs: str, color_sets: str, k: int, queries: list[str]
) -> tuple[list[str], NDArray[np.uint64], NDArray[np.uint32], list[str]]: ...
def count_kmers(
    paths: list[str], k: int, min_count: int, max_count: int | None, backend: str
) -> tuple[NDArray[np.uint64], NDArray[np.uint32]]: ...
def assemble(
    paths: list[str],
    k: int,
    min_count: int,
    max_count: int | None,
    backend: str,
    fasta: str | None,
    gfa: str | None,
    eulertigs: bool,
    eulertigs_path: str | None,
    max_memory: int | None,
    temp_dir: str | None,
    threads: int | None,
) -> tuple[
    list[str],
    NDArray[np.uint64],
    NDArray[np.uint64],
    NDArray[np.bool_],
    NDArray[np.int64],
    dict[str, Any],
    list[str] | None,
]: ...
