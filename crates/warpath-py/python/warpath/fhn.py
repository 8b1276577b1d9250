"""FitzHugh-Nagumo simulations: ``warpath.fhn.simulate``.

The system ``v_t = v_xx + v (1 - v)(v - a) - w``, ``w_t = eps (v - gamma w)`` on
``[0, length]``, solved by pde's explicit, adaptive or Crank-Nicolson schemes.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from . import _native

__all__ = ["FhnResult", "simulate"]


@dataclass(frozen=True)
class FhnResult:
    """A finished simulation.

    Attributes
    ----------
    x : ndarray, shape (n,)
        Node positions.
    t : ndarray, shape (s,)
        Snapshot times (the first is 0, the last the end time).
    v, w : ndarray, shape (s, n)
        The fields at each snapshot.
    speed : float or None
        Measured speed of the tracked front or pulse (positive to the right), ``None`` when
        it could not be fitted.
    backend : str
        ``"cpu"`` or ``"cuda"``: where it ran.
    steps : int
        Time steps taken.
    dx, dt : float
        Grid spacing and time step.
    seconds : float
        Wall time of the run.
    """

    x: np.ndarray
    t: np.ndarray
    v: np.ndarray
    w: np.ndarray
    speed: float | None
    backend: str
    steps: int
    dx: float
    dt: float
    seconds: float


def simulate(
    scenario: str = "gaussian",
    *,
    scheme: str = "explicit",
    solver: str = "thomas",
    n: int = 401,
    dx: float | None = None,
    dt: float = 0.05,
    t_end: float = 100.0,
    length: float = 200.0,
    a: float = 0.01,
    eps: float = 0.01,
    gamma: float = 2.0,
    snapshots: int = 100,
    backend: str = "auto",
) -> FhnResult:
    """Run a FitzHugh-Nagumo scenario and record snapshots (as ``warpath fhn``).

    Parameters
    ----------
    scenario : {"gaussian", "pulse-train", "front"}, optional
        ``"gaussian"``: an impulse in the middle, two pulses travel apart; ``"pulse-train"``:
        a periodic stimulus at ``x = L`` (``v(L, t) = 1`` for 5 of every 100 time units)
        sends a train of pulses to the left; ``"front"``: the Nagumo equation
        (``eps = 0``) from its exact travelling front, which moves at ``(1 - 2a) / sqrt(2)``.
    scheme : {"explicit", "adaptive", "implicit"}, optional
        Forward Euler (``dt`` must be below the stability limit, which the error states),
        forward Euler on an adaptive grid, or Crank-Nicolson with Newton.
    solver : {"thomas", "cr", "pcr"}, optional
        Tridiagonal solver of the implicit scheme.
    n : int, optional
        Grid nodes including both ends (``dx = length / (n - 1)``).
    dx : float, optional
        Grid spacing; overrides ``n``.
    dt, t_end, length, a, eps, gamma : float, optional
        Time step, end time, domain length and model parameters; the defaults are the seed's
        set-up (``a = 0.01``, ``eps = 0.01``, ``gamma = 2``, ``n = 401``, ``dx = 0.5``), as in
        the library and ``warpath fhn``.
    snapshots : int, optional
        Snapshots over the run (plus the initial state).
    backend : {"auto", "cpu", "cuda"}, optional
        Where to run.

    Returns
    -------
    FhnResult

    Raises
    ------
    ValueError
        A parameter out of its domain, or an explicit ``dt`` above the stability limit.
    RuntimeError
        Newton's method did not converge, or the solution became non-finite.

    Examples
    --------
    >>> import numpy as np
    >>> from warpath import fhn
    >>> r = fhn.simulate("front", t_end=60.0, snapshots=60, backend="cpu")
    >>> bool(abs(r.speed - (1 - 2 * 0.01) / np.sqrt(2)) < 0.02)
    True
    """
    n, snapshots = operator.index(n), operator.index(snapshots)
    if n < 0 or snapshots < 0:
        raise ValueError(f"n and snapshots must be >= 0, not n = {n}, snapshots = {snapshots}")
    d = _native.fhn_simulate(
        scenario, scheme, solver, n, None if dx is None else float(dx), float(dt),
        float(t_end), float(length), float(a), float(eps), float(gamma), snapshots, backend,
    )
    return FhnResult(**d)
