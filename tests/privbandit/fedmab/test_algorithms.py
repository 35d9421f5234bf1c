"""CDP/DDP/HDP-MAB: bad input, determinism, accounting, and the run's invariants."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting.errors import BudgetExceededError, InvalidParameterError
from privbandit.accounting.events import LaplaceEvent
from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.errors import ConfigError, RewardError
from privbandit.fedmab import (
    CDPMAB,
    DDPMAB,
    HDPMAB,
    DisconnectedGraphError,
    disjoint_union,
    fully_connected,
    ring,
    star,
)
from privbandit.private import ReleasePlan
from privbandit.result import RunResult
from privbandit.runtime import play_algorithm

from .runs import simulate

T = 10**6


def small_env(m=6, k=5, seed=0, heterogeneous=False):
    return MultiAgentBernoulliMAB.uniform(m, k, np.random.default_rng(seed),
                                          heterogeneous=heterogeneous)


ALGOS = [
    lambda eps, t: CDPMAB(eps, t),
    lambda eps, t: CDPMAB(eps, t, participation=0.5, rounds=3),
    lambda eps, t: DDPMAB(eps, t, ring(6)),
    lambda eps, t: HDPMAB(eps, t, disjoint_union([star(3), ring(3)])),
]


@pytest.mark.parametrize("make", ALGOS)
@given(eps=st.floats(0.05, 4.0), horizon=st.integers(1, 4000), seed=st.integers(0, 2**32 - 1),
       het=st.booleans())
def test_run_invariants(make, eps, horizon, seed, het):
    env = small_env(seed=seed % 97, heterogeneous=het)
    algo = make(eps, horizon)
    run = simulate(algo, env, np.random.default_rng(seed))
    res = run.result
    assert isinstance(res, RunResult) and res.horizon == horizon
    assert run.pulls.sum(axis=1).tolist() == [horizon] * env.n_users
    # the per-round curve rebuilt from epochs agrees with the pull counts
    assert res.total_regret == pytest.approx(float((run.pulls * env.gaps).sum()), rel=1e-9,
                                             abs=1e-9)
    assert res.regret.min() >= 0.0
    # every agent: pure epsilon-DP, never more, one release per epoch ledger
    assert res.privacy.details["per_agent_epsilon"] == pytest.approx([eps] * env.n_users) or (
        not run.epochs and res.privacy.details["max_agent_epsilon"] in (0.0, pytest.approx(eps)))
    for ledger in res.ledgers:
        assert ledger["epsilon_spent"] <= eps * (1 + 1e-9)
        assert all(e["releases"] == 1 for e in ledger["epochs"])
        assert len(ledger["epochs"]) >= len(run.epochs)
    again = simulate(algo, env, np.random.default_rng(seed)).result
    np.testing.assert_array_equal(res.regret, again.regret)
    assert res.comm == again.comm


def test_the_paper_scale_run_is_fast_and_finds_the_best_arm():
    env = MultiAgentBernoulliMAB.uniform(50, 100, np.random.default_rng(1))
    run = simulate(CDPMAB(1.0, T), env, np.random.default_rng(2))
    assert run.committed == env.best_arm
    assert run.result.regret.size == T
    assert run.result.timings["simulate"] < 5.0  # ~0.05 s idle; generous for a shared machine
    assert run.result.comm["cost"] == 25.0 * 50 * len(run.epochs)
    assert run.result.comm["messages_by_direction"]["upload"] == 50 * len(run.epochs)


def test_partial_participation_uploads_ceil_pm_means_per_epoch():
    env = small_env(m=50, k=10)
    run = simulate(CDPMAB(1.0, 20000, participation=0.6), env, np.random.default_rng(0))
    assert run.result.comm["uploaders"] == 30
    assert run.result.comm["messages_by_direction"]["upload"] == 30 * len(run.epochs)


def test_r_round_variant_releases_and_communicates_at_most_r_times():
    env = small_env(m=10, k=20)
    for rounds in (1, 2, 3, 5):
        run = simulate(CDPMAB(1.0, 50000, rounds=rounds), env, np.random.default_rng(rounds))
        assert len(run.epochs) <= rounds
        assert all(len(led["epochs"]) <= rounds for led in run.result.ledgers)
        if run.committed is None:  # epoch R ran to the horizon (sized for S = T/K)
            assert run.result.ledgers[0]["epochs"][-1]["unit"].endswith(f"epoch {rounds}")


def test_decentralized_rounds_last_diameter_slots_and_cost_links():
    env = small_env(m=8, k=4)
    run = simulate(DDPMAB(1.0, 20000, ring(8), agent_cost=2.0), env, np.random.default_rng(0))
    assert all(e.delay == 4 for e in run.epochs)
    assert run.result.comm["cost"] == 2.0 * 8 * 4 * len(run.epochs)  # every edge, every slot


def test_hybrid_cost_counts_sink_uploads_and_tree_links():
    env = small_env(m=7, k=4)
    g = disjoint_union([star(4), fully_connected(1), fully_connected(2)])
    run = simulate(HDPMAB(1.0, 20000, g, server_cost=10.0), env, np.random.default_rng(0))
    per_round = 10.0 * 3 + 1.0 * (3 + 0 + 1)
    assert run.result.comm["cost"] == per_round * len(run.epochs)
    assert all(e.delay == 1 for e in run.epochs)


def test_the_ledger_refuses_before_any_noise_is_drawn(monkeypatch):
    released = []

    class OverBudget:
        event = LaplaceEvent(scale=0.5, l1_sensitivity=1.0)  # epsilon 2 > budget 1

        def release_means(self, means, rng):
            released.append(means)
            return means

    monkeypatch.setattr(ReleasePlan, "laplace_means", lambda *a, **k: OverBudget())
    with pytest.raises(BudgetExceededError, match="over the budget epsilon=1"):
        play_algorithm(CDPMAB(1.0, 1000), small_env(), np.random.default_rng(0))
    assert released == []


@pytest.mark.parametrize(
    "build, error, match",
    [
        (lambda: CDPMAB(0.0, 100), InvalidParameterError,
         "epsilon must be a finite number > 0; got 0.0"),
        (lambda: CDPMAB(-0.5, 100), InvalidParameterError, "epsilon must be .* got -0.5"),
        (lambda: DDPMAB(float("nan"), 100, ring(3)), InvalidParameterError, "epsilon must be"),
        (lambda: CDPMAB(1.0, 0), InvalidParameterError, "horizon must be an integer >= 1; got 0"),
        (lambda: CDPMAB(1.0, 100, participation=0.0), ConfigError,
         r"participation must be a rate p in \(0, 1\]; got 0.0"),
        (lambda: CDPMAB(1.0, 100, participation=1.5), ConfigError, r"got 1.5"),
        (lambda: CDPMAB(1.0, 100, rounds=0), ConfigError,
         r"rounds must be None \(no limit\) or an integer R >= 1; got 0"),
        (lambda: HDPMAB(1.0, 100, ring(3), rounds=2.5), ConfigError, "rounds must be .* got 2.5"),
        (lambda: CDPMAB(1.0, 100, server_cost=-1), InvalidParameterError,
         "server_cost must be a finite number >= 0; got -1"),
        (lambda: DDPMAB(1.0, 100, disjoint_union([ring(3), ring(3)])), DisconnectedGraphError,
         r"graph must be connected; got .*2 components of sizes \[3, 3\]"),
        (lambda: DDPMAB(1.0, 100, "ring"), ConfigError, "graph must be a Graph; got 'ring'"),
        (lambda: HDPMAB(1.0, 100, None), ConfigError, "graph must be a Graph whose components"),
        (lambda: CDPMAB(1.0, 100, sampler="numpy"), InvalidParameterError,
         "sampler must be a Sampler"),
        (lambda: MultiAgentBernoulliMAB([0.5, 1.2], n_users=3), RewardError,
         r"means must be Bernoulli reward means in \[0, 1\]; got values \[1.2\]"),
        (lambda: play_algorithm(CDPMAB(1.0, 100), small_env(), 7), ConfigError,
         "rng must be a numpy.random.Generator; got 7"),
        (lambda: play_algorithm(DDPMAB(1.0, 100, ring(3)), small_env(), np.random.default_rng(0)),
         ConfigError, "env must be an environment with 3 agents"),
        (lambda: play_algorithm(CDPMAB(1.0, 100), [0.5, 0.2], np.random.default_rng(0)),
         ConfigError, "env must be a MultiAgentBernoulliMAB"),
    ],
)
def test_bad_input_raises_named_errors(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_exact_sampler_run_charges_epsilon_per_agent():
    run = simulate(CDPMAB(1.0, 3000, sampler="exact"), small_env(m=3, k=4),
                                                      np.random.default_rng(0))
    assert run.result.params["sampler"] == "exact" and run.result.privacy.float_safe
    grid = simulate(CDPMAB(1.0, 3000), small_env(m=3, k=4), np.random.default_rng(0))
    assert grid.result.params["sampler"] == "grid" and grid.result.privacy.float_safe
    fast = simulate(CDPMAB(1.0, 3000, sampler="fast"), small_env(m=3, k=4),
                                                      np.random.default_rng(0))
    assert fast.result.params["sampler"] == "fast" and fast.result.privacy.float_safe is False
    assert run.result.privacy.details["per_agent_epsilon"] == pytest.approx([1.0] * 3)


def test_result_is_json_serialisable():
    import json

    g = disjoint_union([star(3), ring(3)])
    for algo in (CDPMAB(1.0, 5000, participation=0.5), DDPMAB(1.0, 5000, ring(6)),
                 HDPMAB(1.0, 5000, g)):
        data = play_algorithm(algo, small_env(), np.random.default_rng(0)).to_dict(max_points=20)
        text = json.dumps(data, allow_nan=False)
        assert json.loads(text)["algorithm"] == algo.name
