"""Small worlds shared by the vertical protocol's tests (d = 10, K = 8, three parties)."""
from __future__ import annotations

import numpy as np
import pytest

from privbandit.envs.vertical import VerticalSplit, seed003_environment

DIM, ITEMS, WIDTHS = 10, 8, (4, 3, 3)


@pytest.fixture
def world():
    """Seed 003's synthetic world at small scale (fresh for each test)."""
    return seed003_environment(DIM, ITEMS, rng=np.random.default_rng(2024))


@pytest.fixture
def split_world(world):
    return VerticalSplit(world, WIDTHS)
