"""Shared fixtures of the warpath pytest suite (run by ../ci.sh against an installed wheel)."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    """A seeded generator: every test sees the same inputs on every run."""
    return np.random.default_rng(20261124)


# Sizes around the primitives' block and threshold boundaries (radix sort: 4096 keys go to
# the comparison sort; rayon paths from 2^16).
EDGE_SIZES = [0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 65537]
