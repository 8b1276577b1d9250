"""Array-likes to the dtypes the native module takes (private)."""

from __future__ import annotations

import numpy as np

try:  # numpy >= 1.25
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover - older numpy
    AxisError = np.AxisError  # type: ignore[attr-defined,misc]

# Key types gpu-primitives sorts natively (4- and 8-byte integers and floats).
_SORT_NATIVE = tuple(np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.uint64, np.uint32))
# Cost types the assignment solvers take without conversion.
_COST_NATIVE = tuple(np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32))
_F64 = np.dtype(np.float64)
_SORT_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def normalize_axis(axis: int, ndim: int) -> int:
    """``axis`` in ``0..ndim``, or numpy's ``AxisError``."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim)
    return axis % ndim


def sort_keys(a: np.ndarray, what: str) -> tuple[np.ndarray, np.dtype | None]:
    """``a`` as a dtype gpu-primitives sorts, and the dtype to cast results back to (``None``
    when no conversion happened). Narrow types widen exactly and keep their order: bool and
    8/16-bit unsigned to uint32, 8/16-bit signed to int32, float16 to float32."""
    dt = a.dtype
    if dt.isnative and dt in _SORT_NATIVE:
        return a, None
    if dt.kind in "iuf" and dt.itemsize in (4, 8) and not dt.isnative:
        return a.astype(dt.newbyteorder("=")), None
    if dt.kind == "b" or (dt.kind == "u" and dt.itemsize < 4):
        return a.astype(np.uint32), dt
    if dt.kind == "i" and dt.itemsize < 4:
        return a.astype(np.int32), dt
    if dt.kind == "f" and dt.itemsize == 2:
        return a.astype(np.float32), dt
    raise TypeError(
        f"warpath.{what} supports bool, integer and floating-point dtypes of at most 64 bits, not {dt}"
    )


def check_sort_options(kind, order) -> None:
    """numpy's ``kind`` (every kind gives warpath's one stable order) and ``order`` (structured
    arrays, which warpath does not sort)."""
    if kind not in _SORT_KINDS:
        raise ValueError(f"sort kind must be one of {_SORT_KINDS[1:]} or None, not {kind!r}")
    if order is not None:
        raise ValueError("order is for structured arrays; warpath sorts numeric arrays only")


def cost_matrix(a, ndim: int) -> np.ndarray:
    """A cost matrix (or stack) as scipy's ``linear_sum_assignment`` takes it: any array-like
    whose dtype casts safely to float64; float64, float32, int64 and int32 pass through as they
    are (each is solved in its own type); narrower integers and bool become int32, uint32
    int64, float16 float32, other byte orders the native one."""
    a = np.asarray(a)
    if a.ndim != ndim:
        what = "a matrix (2-D array)" if ndim == 2 else "a stack of matrices (3-D array)"
        raise ValueError(f"expected {what}, got a {a.shape!r} array")
    dt = a.dtype
    if dt in _COST_NATIVE:  # native byte order (dtype equality includes it)
        return a
    if dt.kind in "iuf" and not dt.isnative:
        a = a.astype(dt.newbyteorder("="))
        dt = a.dtype
        if dt in _COST_NATIVE:
            return a
    if not np.can_cast(dt, _F64, "safe"):
        raise TypeError(f"Cannot cast array data from {dt!r} to dtype('float64') according to the rule 'safe'")
    if dt.kind == "b" or (dt.kind in "iu" and dt.itemsize < 4):
        return a.astype(np.int32)  # exact, solved in integer arithmetic
    if dt.kind in "iu" and dt.itemsize < 8:
        return a.astype(np.int64)  # uint32: exact, solved in integer arithmetic
    if dt.kind == "f" and dt.itemsize == 2:
        return a.astype(np.float32)  # float16: exact
    return a.astype(np.float64)
