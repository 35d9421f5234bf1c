"""The broken samplers and trees behave as documented; the stream adapter is exact."""
import numpy as np
import pytest

from privbandit.audits.broken import (
    DropNoiseSampler,
    NoiseScaleSampler,
    RedrawingTree,
    VarianceAsStdSampler,
)
from privbandit.audits.streams import StreamAdapter, tree_factory
from privbandit.mechanisms.errors import OutOfBoundsError, ShapeError
from privbandit.mechanisms.samplers import FAST, Sampler
from privbandit.mechanisms.tree import TreePrivatizer

N = 40000


def test_samplers_are_samplers():
    for s in (NoiseScaleSampler(FAST, 0.5), VarianceAsStdSampler(FAST), DropNoiseSampler(FAST, 1)):
        assert isinstance(s, Sampler) and not s.exact


def test_noise_scale_sampler_scales_every_kind():
    rng = np.random.default_rng(0)
    s = NoiseScaleSampler(FAST, 0.5)
    assert np.std(s.laplace(2.0, (N,), rng)) == pytest.approx(np.sqrt(2) * 1.0, rel=0.03)
    assert np.std(s.gaussian(2.0, (N,), rng)) == pytest.approx(1.0, rel=0.03)


def test_variance_as_std_squares_sigma():
    rng = np.random.default_rng(1)
    assert np.std(VarianceAsStdSampler(FAST).gaussian(0.5, (N,), rng)) == pytest.approx(
        0.25, rel=0.03)
    assert np.std(VarianceAsStdSampler(FAST).gaussian(3.0, (N,), rng)) == pytest.approx(
        9.0, rel=0.03)  # above 1 the confusion adds noise


def test_drop_sampler_drops_exactly_one_call():
    s = DropNoiseSampler(FAST, 2)
    rng = np.random.default_rng(2)
    draws = [s.add_gaussian(np.zeros(5), 1.0, rng) for _ in range(3)]
    assert [bool(np.any(d)) for d in draws] == [True, False, True]


def _per_step_std(out):
    return out.std(axis=0)[:, 0]


def test_batched_tree_has_the_trees_noise():
    sigma = 2.0
    mech = StreamAdapter(tree_factory((2,), 8, sigma, clip_norm=1.0, sampler=FAST))
    out = mech(np.zeros((8, 2)), np.random.default_rng(3), N)
    assert out.shape == (N, 8, 2)
    pop = np.array([bin(t).count("1") for t in range(1, 9)])
    assert np.allclose(_per_step_std(out), sigma * np.sqrt(pop), rtol=0.03)
    # prefix 2 and prefix 3 share the node [1, 2]: strongly correlated
    assert np.corrcoef(out[:, 1, 0], out[:, 2, 0])[0, 1] > 0.6


def test_redrawing_tree_has_independent_releases():
    mech = RedrawingTree(tree_factory((1,), 4, 1.0, clip_norm=1.0, sampler=FAST))
    out = mech(np.zeros((4, 1)), np.random.default_rng(4), N)
    assert abs(np.corrcoef(out[:, 1, 0], out[:, 2, 0])[0, 1]) < 0.03


def test_batched_tree_refuses_a_run_over_the_clip_norm():
    mech = StreamAdapter(tree_factory((2,), 4, 1.0, clip_norm=1.0, sampler=FAST))
    stream = np.zeros((4, 2))
    stream[1] = [1.0, 1.0]
    with pytest.raises(OutOfBoundsError, match=r"norm <= clip_norm = 1 per run; got 1.41421"):
        mech(stream, np.random.default_rng(5), 10)
    with pytest.raises(ShapeError, match=r"a stream must be an array \(T, \*shape\)"):
        mech(np.zeros(0), np.random.default_rng(5), 10)


def test_tree_factory_uses_the_real_tree():
    tree = tree_factory((3,), 8, 1.5, clip_norm=1.0, sampler=FAST)(10).tree
    assert isinstance(tree, TreePrivatizer)
    assert (tree.sigma, tree.horizon, tree.shape) == (1.5, 8, (10, 3))
