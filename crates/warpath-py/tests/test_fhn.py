"""warpath.fhn.simulate against the exact Nagumo front."""

import numpy as np
import pytest

from warpath import fhn


def test_front_speed_matches_the_exact_speed():
    r = fhn.simulate("front", t_end=60.0, snapshots=60, backend="cpu")
    exact = (1 - 2 * 0.01) / np.sqrt(2)  # the seed's a = 0.01, the default
    assert abs(r.speed - exact) < 0.02 * exact
    assert r.x.shape == (401,) and r.t.shape == (61,)
    assert r.v.shape == r.w.shape == (61, 401)
    assert r.t[0] == 0.0 and r.t[-1] == pytest.approx(60.0)
    assert r.backend == "cpu" and r.steps == 1200 and r.dx == 0.5 and r.dt == 0.05
    assert r.seconds > 0
    # the initial snapshot is the exact front, v = 1/2 at x = L/4
    v0 = np.interp(50.0, r.x, r.v[0])
    assert v0 == pytest.approx(0.5, abs=1e-12)
    np.testing.assert_array_equal(r.w, 0.0)  # eps = 0: w stays at rest


@pytest.mark.parametrize("scheme", ["explicit", "adaptive", "implicit"])
def test_schemes_agree_on_the_pulse(scheme):
    r = fhn.simulate("gaussian", scheme=scheme, t_end=20.0, snapshots=4, n=201, backend="cpu")
    ref = fhn.simulate("gaussian", t_end=20.0, snapshots=4, n=201, backend="cpu")
    assert np.isfinite(r.v).all()
    np.testing.assert_allclose(r.v[-1], ref.v[-1], atol=0.05)


def test_dx_overrides_n_and_pulse_train():
    r = fhn.simulate("pulse-train", dx=1.0, dt=0.05, t_end=5.0, snapshots=2)
    assert r.x.shape == (201,) and r.v[0, -1] == 1.0


def test_errors():
    with pytest.raises(ValueError, match="stability limit"):
        fhn.simulate(dt=1.0, t_end=1.0)
    with pytest.raises(ValueError, match="scenario"):
        fhn.simulate("spiral")
    with pytest.raises(ValueError, match="scheme"):
        fhn.simulate(scheme="rk4")
    with pytest.raises(ValueError, match="n"):
        fhn.simulate(n=1)
    with pytest.raises(ValueError, match="dx"):
        fhn.simulate(dx=-1.0)
    with pytest.raises(ValueError, match=">= 0"):
        fhn.simulate(snapshots=-1)
