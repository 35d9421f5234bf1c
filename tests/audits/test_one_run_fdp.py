"""The f-DP one-run bound (Gaussian trade-off curves) against its references and rivals."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.special import ndtr, ndtri

from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits import Claim
from privbandit.audits.one_run import one_run_audit
from privbandit.audits.one_run_bounds import gdp_epsilon, gdp_mu, snj_epsilon
from privbandit.audits.one_run_fdp import (
    fdp_epsilon,
    fdp_mu,
    fdp_refutes,
    fdp_tail_bound,
)
from privbandit.audits.one_run_protocols import sum_canaries
from privbandit.mechanisms import GaussianVector


def convex_program_tail(m, r, v, mu, starts=6):
    """The largest P[W >= v] over distributions of W meeting the f-DP constraints
    H_t >= g(R_{t+1}) (the module docstring), by a generic solver: a reference that
    shares nothing with the recursion."""
    i = np.arange(r + 1)

    def tail(p, t, weight):
        return np.sum((weight * p)[t:]) / m

    cons = [{"type": "eq", "fun": lambda p: p.sum() - 1.0}]
    for t in range(r):
        cons.append({"type": "ineq", "fun": lambda p, t=t: tail(p, t, r - i) - ndtr(
            ndtri(np.clip(tail(p, t + 1, i), 1e-300, 1.0)) - mu)})
    best, rng = 0.0, np.random.default_rng(0)
    for _ in range(starts):
        res = minimize(lambda p: -p[v:].sum(), rng.dirichlet(np.ones(r + 1)),
                       bounds=[(0, 1)] * (r + 1), constraints=cons, method="SLSQP",
                       options={"maxiter": 500, "ftol": 1e-12})
        feasible = all(c["fun"](res.x) > -1e-9 for c in cons[1:])
        if res.success and feasible:
            best = max(best, -res.fun)
    return best


@pytest.mark.parametrize("m,r,v,mu", [(20, 10, 8, 1.0), (20, 10, 10, 1.0), (30, 6, 5, 0.5),
                                      (20, 10, 7, 0.3)])
def test_the_recursion_is_the_optimum_of_the_constraints(m, r, v, mu):
    assert fdp_tail_bound(m, r, v, mu) == pytest.approx(convex_program_tail(m, r, v, mu),
                                                        abs=2e-4)


GRID = [(m, r, round(f * r)) for m in (100, 1000, 10_000) for r in (10, 40, 100)
        for f in (0.8, 0.9, 1.0)]


@pytest.mark.parametrize("m,r,v", GRID)
def test_tighter_than_gdp_and_snj_wherever_the_guesses_carry_signal(m, r, v):
    """The relation that must hold for Gaussian pipelines: the f-DP test refutes every mu
    the Steinke-Nasr-Jagielski test along the Gaussian curve refutes (so also every
    (eps, delta) read from it), once the bound is off chance."""
    g = gdp_mu(m, r, v, 0.95)
    if g < 0.1:
        pytest.skip("near chance the binomial tail may win (the 'fdp' method takes the max)")
    assert fdp_mu(m, r, v, 0.95) >= g
    assert fdp_epsilon(m, r, v, 1e-5, 0.95) >= gdp_epsilon(m, r, v, 1e-5, 0.95)
    assert fdp_epsilon(m, r, v, 1e-5, 0.95) >= snj_epsilon(m, r, v, 1e-5, 0.95)


counts = st.integers(1, 300).flatmap(
    lambda r: st.tuples(st.just(r), st.integers(0, r), st.integers(0, r)))


@settings(max_examples=60, deadline=None)
@given(counts, st.sampled_from([1, 2, 3, 10, 100]), st.sampled_from([0.9, 0.95, 0.99]))
def test_monotone_in_right_guesses_and_never_above_the_ideal(c, scale, confidence):
    r, a, b = c
    lo, hi = sorted((a, b))
    m = scale * r
    mu_lo, mu_hi = (fdp_mu(m, r, v, confidence) for v in (lo, hi))
    assert 0.0 <= mu_lo <= mu_hi + 1e-9 <= fdp_mu(m, r, r, confidence) + 2e-9


@pytest.mark.parametrize("m,r", [(64, 40), (128, 40), (40, 40), (1000, 40)])
def test_one_wrong_guess_lies_between_none_and_a_few(m, r):
    """A partial sum that lands exactly on the budget must not stop the recursion early."""
    few, one, none = (fdp_mu(m, r, v, 0.95) for v in (r - 5, r - 1, r))
    assert 0.0 < few <= one <= none


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 400), st.sampled_from([1, 10, 100]))
def test_chance_level_gives_nothing(r, scale):
    assert fdp_mu(scale * r, r, r // 2, 0.95) == 0.0
    assert fdp_epsilon(scale * r, r, r // 2, 1e-5, 0.95) == 0.0


@settings(max_examples=30, deadline=None)
@given(counts, st.floats(0.0, 3.0))
def test_tail_bound_is_a_probability_growing_with_mu_and_falling_with_correct(c, mu):
    r, a, b = c
    lo, hi = sorted((a, b))
    m = 5 * r
    p_lo, p_hi = fdp_tail_bound(m, r, lo, mu), fdp_tail_bound(m, r, hi, mu)
    assert 0.0 <= p_hi <= p_lo + 1e-12 <= 1.0 + 1e-12
    assert p_hi <= fdp_tail_bound(m, r, hi, mu + 0.5) + 1e-12


def test_the_bound_stays_below_a_known_mu_in_simulation():
    """A Gaussian canary game with known mu: scores N(mu, 1) in, N(0, 1) out, the k highest
    guessed in and the k lowest out.  The 95% bound must stay below mu in >= 95% of runs."""
    mu, m, k, reps = 0.5, 1000, 25, 200
    rng = np.random.default_rng(7)
    bounds = []
    for _ in range(reps):
        coins = rng.random(m) < 0.5
        order = np.argsort(rng.standard_normal(m) + mu * coins)
        right = int(coins[order[-k:]].sum() + (~coins[order[:k]]).sum())
        bounds.append(fdp_mu(m, 2 * k, right, 0.95))
    assert np.mean(np.array(bounds) > mu) <= 0.05
    assert fdp_mu(m, 2 * k, 2 * k, 0.95) > 1.5 * mu and np.mean(bounds) > 0.1  # not vacuous


def test_refutes_checks_its_counts():
    with pytest.raises(InvalidParameterError, match="correct"):
        fdp_refutes(10, 5, 6, 1.0, 0.05)
    with pytest.raises(InvalidParameterError, match="f-DP"):
        fdp_epsilon(100, 10, 10, 0.0, 0.95)


def test_the_audit_reports_the_best_method_and_every_ideal():
    mech = GaussianVector.from_privacy(2.0, 1e-5, l2_sensitivity=1.0)
    protocol = sum_canaries(mech.release, 2000, 2000)
    claim = Claim.from_event(mech.event, 1e-5)
    r = one_run_audit(protocol, claim, rng=1, confidence=0.95, method="fdp", guesses=(20, 20))
    d = r.details
    assert set(d["bounds"]) == set(d["ideals"]) == {"snj", "gdp", "fdp"}
    assert r.epsilon_lower_bound == max(d["bounds"].values()) == d["bounds"][d["bound_from"]]
    assert r.ideal_epsilon == d["ideals"]["fdp"] > d["ideals"]["gdp"] > d["ideals"]["snj"]
    assert r.verdict == "consistent"
    with pytest.raises(InvalidParameterError, match="fdp"):
        one_run_audit(protocol, Claim(1.0), method="fdp")
