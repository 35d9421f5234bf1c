"""Adapters: our release(value, rng), OpenDP measurements, diffprivlib mechanisms."""
import numpy as np
import opendp.prelude as dp
import pytest
from diffprivlib.mechanisms import GaussianAnalytic, Laplace

from privbandit.accounting.errors import InvalidParameterError, UnsupportedEventError
from privbandit.audits import (
    Claim,
    DiffprivlibMechanism,
    NeighbouringPair,
    OpenDPMechanism,
    ReleaseAdapter,
    ThresholdTester,
    run_audit,
)

dp.enable_features("contrib")
SCALAR = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)


def test_release_adapter_batched_and_looped_agree_in_shape():
    release = lambda value, rng: value + rng.normal(size=np.shape(value))
    batched = ReleaseAdapter(release, "vec")(np.zeros(3), np.random.default_rng(0), 5)
    looped = ReleaseAdapter(release, "vec", batched=False)(np.zeros(3), np.random.default_rng(0), 5)
    assert batched.shape == looped.shape == (5, 3)
    # same generator, same draws in the same order
    assert np.array_equal(batched, looped)


def test_release_adapter_needs_a_callable():
    with pytest.raises(InvalidParameterError, match="release must be a callable"):
        ReleaseAdapter(3)


def test_opendp_claims_from_its_privacy_map():
    lap = OpenDPMechanism(dp.m.make_laplace(*SCALAR, scale=2.0), "lap")
    assert lap.claim(1.0) == Claim(0.5, 0.0, lap.claim(1.0).source)
    gauss = OpenDPMechanism(dp.m.make_gaussian(*SCALAR, scale=1.0), "gauss")
    c = gauss.claim(1.0, 1e-5)
    profile = dp.c.make_zCDP_to_approxDP(gauss.measurement).map(1.0)
    assert (c.epsilon, c.delta) == (pytest.approx(profile.epsilon(1e-5)), 1e-5)
    fixed = OpenDPMechanism(dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(
        dp.m.make_gaussian(*SCALAR, scale=1.0)), 1e-6), "fixed")
    assert fixed.claim(1.0).delta == 1e-6


def test_opendp_outputs_and_unknown_measures():
    m = OpenDPMechanism(dp.m.make_laplace(*SCALAR, scale=1.0), "lap")
    out = m(0.0, np.random.default_rng(0), 7)
    assert out.shape == (7,) and len(set(out.tolist())) == 7

    class Fake:
        output_measure = "something else"

        def __call__(self, x):
            return x

        def map(self, d_in):
            return 1.0

    with pytest.raises(UnsupportedEventError, match="no \\(epsilon, delta\\) reading"):
        OpenDPMechanism(Fake(), "fake").claim(1.0)
    with pytest.raises(InvalidParameterError, match="measurement must be an opendp Measurement"):
        OpenDPMechanism(len)


def test_diffprivlib_is_seeded_from_rng_and_claims_its_parameters():
    m = DiffprivlibMechanism(Laplace, "lap", {"epsilon": 0.5, "sensitivity": 1.0})
    a = m(0.0, np.random.default_rng(1), 50)
    assert np.array_equal(a, m(0.0, np.random.default_rng(1), 50))
    assert not np.array_equal(a, m(0.0, np.random.default_rng(2), 50))
    assert (m.claim().epsilon, m.claim().delta) == (0.5, 0.0)
    g = DiffprivlibMechanism(GaussianAnalytic, "g", {"epsilon": 1.0, "delta": 1e-5,
                                                     "sensitivity": 1.0})
    assert (g.claim().epsilon, g.claim().delta) == (1.0, 1e-5)


def test_diffprivlib_bad_parameters():
    with pytest.raises(InvalidParameterError, match="mechanism_class must be a diffprivlib"):
        DiffprivlibMechanism(Laplace, "lap", {"epsilon": 1.0, "sensitivity": 1.0, "bogus": 1})
    with pytest.raises(ValueError, match="Epsilon must be non-negative"):
        DiffprivlibMechanism(Laplace, "lap", {"epsilon": -1.0, "sensitivity": 1.0})


def test_foreign_laplaces_pass_and_are_nearly_tight():
    pair = NeighbouringPair(0.0, 1.0, "scalar at distance 1")
    m = DiffprivlibMechanism(Laplace, "lap", {"epsilon": 1.0, "sensitivity": 1.0})
    r = run_audit(m, pair, ThresholdTester(), m.claim(), samples=20000,
                  rng=np.random.default_rng(0))
    assert r.verdict == "consistent" and r.epsilon_lower_bound > 0.85
