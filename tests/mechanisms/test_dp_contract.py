"""The contract every DP mechanism of `mechanisms/` keeps, checked on each of them.

A mechanism is validated at construction, immutable, reports an event that a
DP accountant accepts, releases without touching its input, returns the
documented shape, is reproducible from a seed with the fast sampler and the
float-safe default (grid) one, and is not seedable (fresh CSPRNG noise) with
the exact one.
"""
from __future__ import annotations

import numpy as np
import pytest

from privbandit.accounting import ExactGaussianAccountant, PureDPAccountant
from privbandit.accounting.events import PrivacyEvent
from privbandit.mechanisms.continual import continual_release
from privbandit.mechanisms.gaussian import GaussianVector, SymmetricGaussianMatrix
from privbandit.mechanisms.laplace import LaplaceMeans
from privbandit.mechanisms.samplers import EXACT, FAST
from privbandit.mechanisms.tree import TreePrivatizer

SYM = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.25], [0.0, 0.25, 3.0]]) / 10


def laplace(sampler):
    mech = LaplaceMeans(1.0, 0.0, 1.0, 4, sampler=sampler)
    return mech, np.linspace(0, 1, 12).reshape(3, 4), (3,), PureDPAccountant, mech.release


def vector(sampler):
    mech = GaussianVector.from_privacy(1.0, 1e-5, 1.0, sampler=sampler)
    return mech, np.arange(6.0).reshape(2, 3), (2, 3), ExactGaussianAccountant, mech.release


def matrix(sampler):
    mech = SymmetricGaussianMatrix(2.0, 1.0, sampler=sampler)
    return mech, SYM.copy(), (3, 3), ExactGaussianAccountant, mech.release


def tree(sampler):
    mech = TreePrivatizer((3, 3), 16, epsilon=1.0, delta=1e-5, symmetric=True, sampler=sampler)
    return mech, SYM.copy(), (3, 3), ExactGaussianAccountant, mech.add


def honaker(sampler):
    mech = continual_release("honaker", (3, 3), 16, epsilon=1.0, delta=1e-5, symmetric=True,
                             sampler=sampler)
    return mech, SYM.copy(), (3, 3), ExactGaussianAccountant, mech.add


def factorization(sampler):
    mech = continual_release("mf", (3, 3), 16, epsilon=1.0, delta=1e-5, symmetric=True,
                             sampler=sampler)
    return mech, SYM.copy(), (3, 3), ExactGaussianAccountant, mech.add


FACTORIES = [laplace, vector, matrix, tree, honaker, factorization]


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize("sampler", [FAST, None, EXACT], ids=["fast", "default", "exact"])
def test_contract(factory, sampler):
    mech, value, shape, accountant, release = factory(sampler)
    assert isinstance(mech.event, PrivacyEvent)
    assert accountant().supports(mech.event)
    assert accountant().compose(mech.event).epsilon(1e-5) > 0
    before = value.copy()
    out = release(value, np.random.default_rng(0))
    assert out.shape == shape and out.dtype == np.float64
    assert np.array_equal(value, before)  # the input is never modified
    assert mech.sampler.float_safe == (sampler is not FAST)
    assert mech.sampler.exact == (sampler is EXACT)


def first_release(factory, sampler, seed):
    _, value, _, _, release = factory(sampler)
    return release(value, np.random.default_rng(seed))


@pytest.mark.parametrize("factory", FACTORIES)
def test_fast_and_default_samplers_reproducible_exact_sampler_not_seedable(factory):
    for sampler in (FAST, None):
        assert np.array_equal(first_release(factory, sampler, 4),
                              first_release(factory, sampler, 4))
    assert not np.array_equal(first_release(factory, EXACT, 4), first_release(factory, EXACT, 4))


@pytest.mark.parametrize("factory", [laplace, vector, matrix])
def test_frozen(factory):
    mech = factory(FAST)[0]
    with pytest.raises(AttributeError):
        mech.extra = 1
