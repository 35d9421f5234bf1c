"""One-run (canary) audits: the count bounds, the protocol, the ready protocols."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits import Claim
from privbandit.audits.broken import NoiseScaleSampler
from privbandit.audits.one_run import (
    CanaryProtocol,
    OneRunReport,
    format_one_run_table,
    guess,
    one_run_audit,
)
from privbandit.audits.one_run_bounds import gdp_epsilon, gdp_mu, snj_epsilon, snj_p_value
from privbandit.audits.one_run_protocols import sum_canaries, user_round_canaries
from privbandit.mechanisms import GaussianVector
from privbandit.mechanisms.samplers import GRID

counts = st.integers(1, 300).flatmap(
    lambda r: st.tuples(st.just(r), st.integers(0, r), st.integers(0, r)))
deltas = st.sampled_from([0.0, 1e-6, 1e-5, 1e-3])


def reference_p_value(m, r, v, eps, delta):
    """The theorem's bound written out term by term (an independent reference)."""
    q = math.exp(eps) / (1 + math.exp(eps))
    tail = sum(binom.pmf(j, r, q) for j in range(v, r + 1))
    spread = max((sum(binom.pmf(j, r, q) for j in range(v - i, v)) / i
                  for i in range(1, v + 1)), default=0.0)
    return min(tail + 2 * m * delta * spread, 1.0)


@pytest.mark.parametrize("m,r,v,eps,delta", [(100, 20, 17, 1.0, 1e-5), (1000, 50, 45, 2.0, 1e-4),
                                             (10, 10, 3, 0.3, 0.0), (500, 30, 30, 3.0, 1e-3)])
def test_p_value_matches_the_theorem_term_by_term(m, r, v, eps, delta):
    assert snj_p_value(m, r, v, eps, delta) == pytest.approx(
        reference_p_value(m, r, v, eps, delta), rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(counts, deltas)
def test_bound_is_monotone_in_right_guesses_and_below_the_ideal(c, delta):
    r, a, b = c
    lo, hi = sorted((a, b))
    m = 10 * r
    e_lo, e_hi = (snj_epsilon(m, r, v, delta, 0.95) for v in (lo, hi))
    ideal = snj_epsilon(m, r, r, delta, 0.95)
    assert 0.0 <= e_lo <= e_hi + 1e-9 and e_hi <= ideal + 1e-9


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 400), deltas)
def test_chance_level_gives_nothing(r, delta):
    assert snj_epsilon(10 * r, r, r // 2, delta, 0.95) == 0.0


@settings(max_examples=25, deadline=None)
@given(counts, st.sampled_from([1e-6, 1e-5, 1e-3]))
def test_gdp_bound_is_monotone_and_never_below_the_assumption_free_one(c, delta):
    r, a, b = c
    lo, hi = sorted((a, b))
    m = 10 * r
    g_lo, g_hi = (gdp_epsilon(m, r, v, delta, 0.95) for v in (lo, hi))
    assert g_lo >= snj_epsilon(m, r, lo, delta, 0.95)
    assert g_lo <= g_hi + 1e-6 <= gdp_epsilon(m, r, r, delta, 0.95) + 2e-6


def test_more_confidence_gives_a_smaller_bound():
    assert snj_epsilon(1000, 100, 90, 1e-5, 0.99) < snj_epsilon(1000, 100, 90, 1e-5, 0.9)
    assert gdp_mu(1000, 100, 90, 0.99) < gdp_mu(1000, 100, 90, 0.9)


@pytest.mark.parametrize("args", [(10, 5, 6), (10, 11, 3), (0, 0, 0)])
def test_inconsistent_counts_are_refused(args):
    with pytest.raises(InvalidParameterError, match="correct|canaries"):
        snj_epsilon(*args, 0.0, 0.95)


def test_guess_takes_the_extremes_and_breaks_ties_at_random():
    scores = np.array([5.0, 1.0, 3.0, 3.0, 3.0, -2.0])
    g = guess(scores, 1, 2, np.random.default_rng(0))
    assert g.tolist() == [1, -1, 0, 0, 0, -1]
    picked = {int(np.flatnonzero(guess(np.zeros(4), 1, 0, np.random.default_rng(s)))[0])
              for s in range(40)}
    assert picked == {0, 1, 2, 3}


def gaussian_sum(factor=1.0, m=2000):
    sampler = GRID if factor == 1.0 else NoiseScaleSampler(GRID, factor)
    mech = GaussianVector.from_privacy(2.0, 1e-5, 1.0, sampler=sampler)
    return sum_canaries(mech.release, m, m), Claim.from_event(mech.event, 1e-5)


@pytest.mark.parametrize("method", ["snj", "gdp"])
def test_a_correct_gaussian_sum_is_never_flagged(method):
    protocol, claim = gaussian_sum()
    for seed in range(6):
        r = one_run_audit(protocol, claim, rng=seed, confidence=0.95, method=method,
                          guesses=(40, 40))
        assert r.verdict == "consistent" and 0.0 <= r.epsilon_lower_bound <= r.ideal_epsilon
        assert r.guesses == 80 and 40 <= r.correct <= 80


def test_half_the_noise_is_caught_in_one_run():
    protocol, claim = gaussian_sum(0.5, m=10_000)
    for method in ("snj", "gdp"):
        r = one_run_audit(protocol, claim, rng=3, confidence=0.95, method=method,
                          guesses=(100, 100))
        assert r.violation and r.epsilon_lower_bound > 2.0, r
        assert "guesses right" in r.details["evidence"]


def test_laplace_counts_and_a_pure_claim():
    """Pure epsilon-DP (Laplace on each coordinate of a count vector), L1 canaries."""
    eps = 1.0

    def release(total, rng):
        return total + rng.laplace(0.0, 1.0 / eps, total.shape)

    protocol = sum_canaries(release, 3000, 3000, name="laplace counts")
    r = one_run_audit(protocol, Claim(eps), rng=1, guesses=(30, 30), confidence=0.95)
    assert r.verdict == "consistent" and r.epsilon_lower_bound > 0.1


def test_report_round_trip_and_table():
    protocol, claim = gaussian_sum(m=500)
    r = one_run_audit(protocol, claim, rng=0, guesses=(5, 5))
    data = r.to_dict()
    assert data["verdict"] == r.verdict and OneRunReport.from_dict(data) == r
    assert r.details["guesses_in"] == 5 and r.details["right_in"] + r.details["right_out"] \
        == r.correct
    assert "noisy sum of vectors" in format_one_run_table([r])


def test_same_seed_same_report():
    protocol, claim = gaussian_sum(m=500)
    a, b = (one_run_audit(protocol, claim, rng=11, guesses=(5, 5)) for _ in range(2))
    assert (a.correct, a.epsilon_lower_bound) == (b.correct, b.epsilon_lower_bound)


def test_user_round_contract_plants_rewards_by_coin():
    seen = {}

    def run(rewards, rng):
        seen["rewards"] = rewards
        return rewards + rng.laplace(0.0, 1.0, rewards.shape)  # a 1-DP view per user-round

    protocol = user_round_canaries(run, lambda view: view, 400, name="toy bandit")
    r = one_run_audit(protocol, Claim(1.0), rng=2, guesses=(10, 10))
    assert set(np.unique(seen["rewards"])) <= {0.0, 1.0}
    assert r.relation.startswith("interactive") and r.verdict == "consistent"


@pytest.mark.parametrize("kwargs,match", [
    ({"guesses": (0, 0)}, "guesses"), ({"guesses": (300, 300)}, "guesses"),
    ({"guesses": [1, 1]}, "guesses"), ({"method": "f-dp"}, "method"),
])
def test_bad_settings_are_refused(kwargs, match):
    protocol, claim = gaussian_sum(m=500)
    with pytest.raises(InvalidParameterError, match=match):
        one_run_audit(protocol, claim, **kwargs)


def test_gdp_needs_a_delta_and_scores_need_one_per_canary():
    protocol, _ = gaussian_sum(m=500)
    with pytest.raises(InvalidParameterError, match="gdp"):
        one_run_audit(protocol, Claim(1.0), method="gdp")
    short = CanaryProtocol(10, lambda inc: inc, lambda d, rng: d, lambda out: out[:5], "x")
    with pytest.raises(InvalidParameterError, match="one score per canary"):
        one_run_audit(short, Claim(1.0), guesses=(1, 1))


@pytest.mark.parametrize("m,k", [(400, 20), (10_000, 100), (30, 15), (1, 0)])
def test_default_guesses_keep_the_ideal_reachable(m, k):
    protocol = CanaryProtocol(m, lambda inc: inc.astype(float), lambda d, rng: d,
                              lambda out: out, "toy: the output is the coins")
    r = one_run_audit(protocol, Claim(1.0), rng=0)
    assert (r.details["guesses_in"], r.details["guesses_out"]) == ((k, k) if k else (1, 0))
    if k:  # a noiseless pipeline: every guess right reaches the ideal
        assert r.correct == r.guesses and r.epsilon_lower_bound == r.ideal_epsilon
