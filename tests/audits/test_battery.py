"""The default battery, its testers (event search, classifier, float reachability, timing),
the Gaussian-shape check, and the entry points' shared defaults."""
from __future__ import annotations

import numpy as np
import pytest

from privbandit.accounting.errors import InvalidParameterError, MissingExtraError
from privbandit.audits import (
    Battery,
    Claim,
    ClassifierTester,
    EventSearchTester,
    FloatTester,
    GaussianDPTester,
    GridModel,
    NeighbouringPair,
    NumpyLaplaceModel,
    ReleaseAdapter,
    TesterAssumptionError,
    ThresholdTester,
    TimingTester,
    run_audit,
)
from privbandit.audits import classifier as classifier_module
from privbandit.audits.assertions import ClaimRefuted, assert_consistent
from privbandit.audits.cases import means_pair
from privbandit.audits.events import lowest_bit
from privbandit.mechanisms import GaussianVector, LaplaceMeans
from privbandit.mechanisms.laplace import pairwise_mean
from privbandit.mechanisms.samplers import FAST, GRID

PAIR = NeighbouringPair(0.0, 1.0, "scalars at distance 1", "0 vs 1")


def grid_laplace(scale):
    def mechanism(x, rng, n):
        return GRID.add_laplace(np.full(n, float(x)), scale, rng)
    return mechanism


def randomized_response(epsilon, bit, n, rng):
    keep = rng.random(n) < np.exp(epsilon) / (1 + np.exp(epsilon))
    return np.where(keep, bit, 1 - bit).astype(float)


# -- one set of defaults ----------------------------------------------------------------------
def test_run_audit_takes_a_float_claim_an_int_seed_and_no_tester():
    r = run_audit(grid_laplace(1.0), PAIR, 1.0, samples=5000, rng=4)
    assert r.verdict == "consistent" and r.confidence == 0.99
    assert r.details["found_by"] == r.tester
    same = run_audit(grid_laplace(1.0), PAIR, Claim(1.0), samples=5000,
                     rng=np.random.default_rng(4))
    assert same.epsilon_lower_bound == r.epsilon_lower_bound


def test_explicit_tester_forms_still_work():
    a = run_audit(grid_laplace(1.0), PAIR, ThresholdTester(), Claim(1.0), samples=3000, rng=1)
    b = run_audit(grid_laplace(1.0), PAIR, (1.0, 0.0), tester=ThresholdTester(), samples=3000,
                  rng=1)
    assert a.tester == b.tester == "threshold" and a.epsilon_lower_bound == b.epsilon_lower_bound
    with pytest.raises(InvalidParameterError, match="claim must be given"):
        run_audit(grid_laplace(1.0), PAIR, tester=ThresholdTester())
    with pytest.raises(InvalidParameterError, match="float_model must be None when an explicit"):
        run_audit(grid_laplace(1.0), PAIR, 1.0, tester=ThresholdTester(), float_model=GridModel(0))


def test_gaussian_dp_evidence_shows_its_mu_bound():
    rng = np.random.default_rng(6)
    b = GaussianDPTester().bound(rng.normal(0, 1, 20000), rng.normal(1, 1, 20000), delta=1e-5,
                                 confidence=0.99)
    assert "mu >= " in b.details["evidence"] and f"{b.details['mu_lower']:.4g}" in \
        b.details["evidence"]


# -- the Gaussian-shape check ---------------------------------------------------------------
def test_gaussian_dp_tester_refuses_a_laplace_mechanism():
    # diffprivlib's correct Laplace is where an unchecked GDP bound reported eps >= 4.21
    from diffprivlib.mechanisms import Laplace

    from privbandit.audits import DiffprivlibMechanism

    mech = DiffprivlibMechanism(Laplace, "lap", {"epsilon": 1.0, "sensitivity": 1.0})
    r = run_audit(mech, PAIR, GaussianDPTester(), Claim(1.0, 1e-5), samples=20000, rng=2)
    assert r.verdict == "consistent" and r.tester == "threshold (gaussian-dp fallback)"
    assert "not normal" in r.details["fallback"]
    rng = np.random.default_rng(0)
    with pytest.raises(TesterAssumptionError, match="GaussianDPTester refuses: .*not normal"):
        GaussianDPTester(on_mismatch="raise").bound(
            rng.laplace(0, 1, 10000), rng.laplace(1, 1, 10000), delta=1e-5, confidence=0.99)


def test_gaussian_dp_tester_refuses_discrete_outputs_and_small_samples():
    rng = np.random.default_rng(1)
    x0, x1 = randomized_response(1.0, 0, 10000, rng), randomized_response(1.0, 1, 10000, rng)
    b = GaussianDPTester().bound(x0, x1, delta=1e-5, confidence=0.99)
    assert "repeated values" in b.details["fallback"] and b.epsilon <= 1.0
    small = GaussianDPTester().bound(rng.normal(0, 1, 500), rng.normal(1, 1, 500), delta=1e-5,
                                     confidence=0.99)
    assert "fewer than the 400" in small.details["fallback"]


# -- event search -----------------------------------------------------------------------------
def test_lowest_bit():
    x = np.array([[1.0], [0.5], [3.0], [2.0**-60], [0.1], [0.0]])
    assert lowest_bit(x).tolist() == [0, -1, 0, -60, -55, np.inf]
    assert lowest_bit(np.array([[0.5, 0.75]])).tolist() == [-2]


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 2.0])
def test_event_search_is_sound_on_a_discrete_mechanism(epsilon):
    rng = np.random.default_rng(int(epsilon * 10))
    for _ in range(3):
        x0 = randomized_response(epsilon, 0, 20000, rng)
        x1 = randomized_response(epsilon, 1, 20000, rng)
        b = EventSearchTester().bound(x0, x1, delta=0.0, confidence=0.99)
        assert 0.5 * epsilon < b.epsilon <= epsilon


def test_event_search_finds_an_atom_the_threshold_misses():
    def leak(x, rng, n):
        out = GRID.add_laplace(np.full(n, float(x)), 1.0, rng)
        out[rng.random(n) < 2e-3] = x
        return out

    rng = np.random.default_rng(3)
    x0, x1 = leak(0.0, rng, 60000), leak(1.0, rng, 60000)
    atom = EventSearchTester().bound(x0, x1, delta=0.0, confidence=0.99)
    assert atom.epsilon > 1.0 and atom.details["event_kind"] in ("atom", "bin")
    assert ThresholdTester().bound(x0, x1, delta=0.0, confidence=0.99).epsilon <= 1.0


def test_event_search_catches_the_textbook_float_laplace():
    rng = np.random.default_rng(5)
    b = EventSearchTester().bound(rng.laplace(0, 1, 10000), 1.0 + rng.laplace(0, 1, 10000),
                                  delta=0.0, confidence=0.99)
    assert b.epsilon > 3 and "lowest bit" in b.details["event"]
    safe = EventSearchTester().bound(GRID.add_laplace(np.zeros(10000), 1.0, rng),
                                     GRID.add_laplace(np.ones(10000), 1.0, rng), delta=0.0,
                                     confidence=0.99)
    assert safe.epsilon <= 1.0


# -- floating-point reachability ----------------------------------------------------------------
def test_numpy_laplace_model_reproduces_numpys_doubles():
    rng = np.random.default_rng(7)
    value = np.array([0.3, -2.5, 1e3])
    outputs = value + rng.laplace(0.0, 0.7, (4000, 3))
    assert NumpyLaplaceModel(0.7).reachable(outputs, value).all()
    assert not NumpyLaplaceModel(0.7).reachable(outputs, value + [0.1, 0, 0]).all()


def test_float_tester_on_the_textbook_laplace_means():
    mech = LaplaceMeans(1.0, 0.0, 1.0, 10, sampler=FAST)
    tester = FloatTester(NumpyLaplaceModel(mech.scale), pairwise_mean)
    r = run_audit(ReleaseAdapter(mech.release), means_pair(), tester, mech.event, samples=5000,
                  rng=0)
    assert r.verdict == "violation" and r.epsilon_lower_bound > 5
    assert r.details["unreachable_from_own_input"] == [0, 0]
    with pytest.raises(InvalidParameterError, match="inputs must be the pair"):
        tester.bound(np.zeros(10), np.zeros(10), delta=0.0, confidence=0.9)


def _default_mechanisms():
    from privbandit.audits.cases import (
        gaussian_vector_case,
        laplace_means_case,
        symmetric_matrix_case,
        tree_case,
    )

    return [build(GRID, "grid") for build in (laplace_means_case, gaussian_vector_case,
                                              symmetric_matrix_case, tree_case)]


@pytest.mark.parametrize("case", _default_mechanisms(), ids=lambda c: c.name)
def test_reachability_attack_finds_nothing_on_the_default_mechanisms(case):
    r = run_audit(case.mechanism, case.pair, FloatTester(GridModel(GRID.k)), case.claim,
                  samples=3000, rng=1)
    assert r.details["hits_favoured"] == 0 and r.details["unreachable_from_own_input"] == [0, 0]
    assert r.epsilon_lower_bound <= r.claimed_epsilon


def test_the_numpy_laplace_attack_no_longer_applies_to_laplace_means():
    # the attack that gave eps >= 9.76 against the old default (NumPy floats)
    mech = LaplaceMeans(1.0, 0.0, 1.0, 10)
    r = run_audit(ReleaseAdapter(mech.release), means_pair(),
                  FloatTester(NumpyLaplaceModel(mech.scale), pairwise_mean), mech.event,
                  samples=5000, rng=2)
    assert r.epsilon_lower_bound <= 1.0


# -- classifier, timing, battery notes --------------------------------------------------------
def test_classifier_finds_a_mis_scaled_coordinate():
    rng = np.random.default_rng(8)
    x0 = rng.normal(0, 1, (20000, 10))
    x1 = rng.normal(0, 1, (20000, 10))
    x1[:, 3] = rng.normal(1.0, 0.25, 20000)
    b = ClassifierTester().bound(x0, x1, delta=1e-5, confidence=0.99)
    assert b.epsilon > 2 and b.details["statistic"] == "classifier"
    with pytest.raises(InvalidParameterError, match="model must be one of 'logistic'"):
        classifier_module.ClassifierStatistic("svm")


def test_battery_skips_the_classifier_without_scikit_learn(monkeypatch):
    def missing(module, extra, feature):
        raise MissingExtraError(f"{feature} needs sklearn, which the '{extra}' extra installs")

    monkeypatch.setattr(classifier_module, "require_extra", missing)
    mech = GaussianVector.from_privacy(1.0, 1e-5, 1.0)
    r = run_audit(ReleaseAdapter(mech.release), NeighbouringPair(np.zeros(2), [0.6, 0.8], "r"),
                  mech.event, delta=1e-5, samples=5000, rng=0)
    assert r.verdict == "consistent"
    assert r.details["notes"] == ["classifier skipped: the classifier tester needs sklearn, "
                                  "which the 'audit' extra installs"]


def test_timing_tester_sees_a_data_dependent_schedule():
    def schedule(data, rng, n):  # syncs at step 3 when the secret is 1, else rarely
        out = (rng.random((n, 8)) < 0.2).astype(float)
        out[:, 3] = np.maximum(out[:, 3], rng.random(n) < 0.9 * float(data))
        return out

    pair = NeighbouringPair(0.0, 1.0, "one record", "secret bit 0 vs 1")
    r = run_audit(schedule, pair, TimingTester(), 1.0, samples=5000, rng=0)
    assert r.verdict == "violation" and "release schedule" in r.details["evidence"]
    fixed = run_audit(lambda d, rng, n: (rng.random((n, 8)) < 0.2).astype(float), pair,
                      TimingTester(), 0.1, samples=5000, rng=0)
    assert fixed.verdict == "consistent"


def test_battery_members_follow_the_output_shape_and_delta():
    names = lambda outs, d, **kw: [t.name for t in Battery(**kw).members(outs, d)]  # noqa: E731
    assert names(np.zeros((5,)), 0.0) == ["threshold", "event-search"]
    assert names(np.zeros((5, 3)), 1e-5) == ["threshold", "event-search", "gaussian-dp",
                                              "classifier"]
    assert names(np.zeros(5), 0.0, float_model=GridModel(0))[-1] == "float-reachability"


# -- targets at CI scale ------------------------------------------------------------------------
def test_under_declared_gaussian_is_refuted_by_assert_consistent_defaults():
    # sensitivity 2 declared as 1: true eps 1.6 against a claim of 1 (bench: 100 seeds)
    mech = GaussianVector.from_privacy(1.0, 1e-5, 1.0)
    pair = NeighbouringPair(0.0, 2.0, "scalars at distance 2", "0 vs 2")
    for seed in range(3):
        with pytest.raises(ClaimRefuted):
            assert_consistent(ReleaseAdapter(mech.release), pair, (1.0, 1e-5), samples=10_000,
                              rng=seed)
