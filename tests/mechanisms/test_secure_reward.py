"""Reward-only continual release over secure sums: public Gram over every party, one noise."""
from __future__ import annotations

import numpy as np
import pytest

from privbandit.mechanisms import (
    InvalidParameterError,
    OutOfBoundsError,
    Publication,
    SecureRewardOnlyRelease,
)

PUB = [Publication("party 0"), Publication("party 1")]


def _public(party: int, x) -> object:
    return PUB[party].features(np.asarray(x, dtype=float), why="test: public")


def test_the_release_sums_every_partys_records_with_one_streams_noise():
    stream = SecureRewardOnlyRelease(2, 2, 8, sigma=1e-3, records_per_step=3)
    rng = np.random.default_rng(0)
    x0, x1 = np.array([[0.6, 0.8], [1.0, 0.0]]), np.array([[0.0, 1.0]])
    y0, y1 = np.array([1.0, 0.25]), np.array([0.5])
    out = stream.add([_public(0, x0), _public(1, x1)], [y0, y1], rng)
    np.testing.assert_allclose(out.gram, x0.T @ x0 + x1.T @ x1)
    np.testing.assert_allclose(out.features, x0.sum(axis=0) + x1.sum(axis=0))
    assert out.count == 3 and out.step == 1 and out.shares.shape == (2, 2)
    np.testing.assert_allclose(out.moments, y0 @ x0 + y1 @ x1, atol=0.02)
    assert out.variance == pytest.approx(stream.prefix_variance())


def test_a_dropped_partys_records_wait_for_its_next_step():
    stream = SecureRewardOnlyRelease(2, 2, 8, sigma=1e-3, min_survivors=1, records_per_step=2)
    rng = np.random.default_rng(1)
    x = np.array([[0.0, 1.0]])
    first = stream.add([_public(0, x), _public(1, x)], [[1.0], [1.0]], rng, dropped=[1])
    assert first.count == 1 and first.survivors.tolist() == [True, False]
    empty = _public(0, np.zeros((0, 2)))
    second = stream.add([empty, _public(1, np.zeros((0, 2)))], [[], []], rng)
    assert second.count == 2  # party 1's waiting record entered with its next step
    np.testing.assert_allclose(second.moments, [0.0, 2.0], atol=0.02)


def test_bad_records_are_refused_and_change_nothing():
    stream = SecureRewardOnlyRelease(2, 2, 8, sigma=1.0)
    rng = np.random.default_rng(2)
    x = np.array([[0.0, 1.0]])
    with pytest.raises(InvalidParameterError, match="PublicFeatures"):
        stream.add([x, _public(1, x)], [[1.0], [1.0]], rng)
    with pytest.raises(OutOfBoundsError, match="feature_bound"):
        stream.add([_public(0, 2 * x), _public(1, x)], [[1.0], [1.0]], rng)
    with pytest.raises(InvalidParameterError, match="records_per_step"):
        stream.add([_public(0, np.vstack((x, x))), _public(1, x)], [[1.0, 1.0], [1.0]], rng)
    assert stream.steps == 0
    assert stream.add([_public(0, x), _public(1, x)], [[1.0], [1.0]], rng).count == 2
