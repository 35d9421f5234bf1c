"""Algorithms 1 and 2 on small instances: correctness, determinism, privacy, bad input."""
import numpy as np
import pytest

from privbandit.accounting.errors import InvalidParameterError
from privbandit.anonymous import AnonymousBaSE, AnonymousExploreThenCommit
from privbandit.anonymous.errors import AssumptionError, HorizonTooShortError
from privbandit.envs.anonymous import AnonymousBanditEnv
from privbandit.errors import ConfigError
from privbandit.mechanisms.anonymous import KAnonymousAggregator
from privbandit.result import RunResult
from privbandit.runtime import play_algorithm

N, K, C, U, T = 24, 3, 2, 6, 3000


def easy_means(n=N, k=K, u=U):
    """Each arm optimal (0.9 vs 0.1) for u users (the rest on arm 0)."""
    best = np.r_[np.repeat(np.arange(k), u), np.zeros(n - k * u, int)]
    means = np.full((n, k), 0.1)
    means[np.arange(n), best] = 0.9
    return means


@pytest.mark.parametrize("decomposition", ["lp", "randomized", "greedy"])
def test_algorithm1_learns_every_users_arm(decomposition):
    alg = AnonymousBaSE(N, K, C, U, T, decomposition=decomposition)
    result = play_algorithm(alg, AnonymousBanditEnv(easy_means(), C), np.random.default_rng(0),
                            seed=0)
    assert isinstance(result, RunResult) and result.horizon == T
    assert result.cluster_error[-1] == 0.0
    assert result.cluster_error_rounds[-1] == T - 1  # 0-based: measured after the last round
    assert np.all(result.regret >= 0) and np.all(result.regret <= N * 0.8 + 1e-12)
    assert result.regret[-1] == 0.0  # committed to the optimal arms
    assert result.params["diagnostics"]["aborted_batch"] is None
    assert result.comm["rounds"] > 0 and result.privacy.summary.startswith("C-anonymity")
    np.testing.assert_allclose(result.regret + result.reward, 0.9 * N)


def test_algorithm1_is_reproducible_bit_for_bit():
    alg = AnonymousBaSE(N, K, C, U, T, decomposition="randomized")
    means = np.random.default_rng(3).random((N, K))
    runs = [play_algorithm(alg, AnonymousBanditEnv(means, C), np.random.default_rng(7))
            for _ in range(2)]
    assert np.array_equal(runs[0].regret, runs[1].regret)


def test_algorithm1_aborts_when_the_cluster_assumption_fails():
    means = np.tile([1.0, 1.0, 0.0], (N, 1))
    means[:2] = [0.0, 0.0, 1.0]  # arm 2 is optimal for 2 users only, not U = 6
    alg = AnonymousBaSE(N, K, C, U, T)
    result = play_algorithm(alg, AnonymousBanditEnv(means, C), np.random.default_rng(0))
    assert result.params["diagnostics"]["aborted_batch"] == 1
    assert result.horizon == T


def test_laplace_variant_charges_its_ledger_per_round():
    env = AnonymousBanditEnv(easy_means(), C, laplace_epsilon=2.0)
    result = play_algorithm(AnonymousBaSE(N, K, C, U, T), env, np.random.default_rng(0))
    (ledger,) = result.ledgers
    rounds = result.comm["rounds"]
    assert rounds % (2 * C + 2) == 0 and ledger["releases"] == rounds // (2 * C + 2)
    assert ledger["epsilon_spent"] == pytest.approx(2.0 * rounds)
    assert result.privacy.details["record_epsilon"] == pytest.approx(2.0)
    assert result.privacy.details["user_epsilon"] == pytest.approx(2.0 * rounds)
    assert result.privacy.holds_interactively and result.privacy.epsilon == pytest.approx(2.0)


def test_algorithm2_explores_then_commits():
    alg = AnonymousExploreThenCommit(N, K, C, T, explore_constant=0.2)
    result = play_algorithm(alg, AnonymousBanditEnv(easy_means(), C), np.random.default_rng(0))
    explore = alg.phases * (2 * C + 2)
    assert 0 < explore < T and result.comm["rounds"] == explore
    assert np.all(result.regret[explore:] == 0.0)
    assert result.cluster_error.tolist() == [0.0]
    assert result.regret[:explore].sum() > 0


def test_algorithm2_paper_constant_can_fill_the_horizon():
    alg = AnonymousExploreThenCommit(N, K, C, T)
    assert alg.phases == T // (2 * C + 2)


@pytest.mark.parametrize("make, error, match", [
    (lambda: AnonymousBaSE(N, K, 0, U, T), AssumptionError, r"anonymity parameter C >= 1"),
    (lambda: AnonymousBaSE(2, 1, 2, 3, T), AssumptionError, r"Algorithm 1 assumes N > C"),
    (lambda: AnonymousBaSE(N, K, C, 2, T), AssumptionError, r"U >= C \+ 1.*got 2"),
    (lambda: AnonymousBaSE(N, K, C, 9, T), AssumptionError, r"U distinct users.*got 9"),
    (lambda: AnonymousBaSE(N, K, C, U, 60), HorizonTooShortError,
     r"horizon T=60 too short for one batch.*need T of about"),
    (lambda: AnonymousBaSE(N, K, C, U, T, decomposition="exact"), ConfigError,
     "decomposition must be one of"),
    (lambda: AnonymousBaSE(N, K, C, U, T, grid="linear"), ConfigError, "grid must be one of"),
    (lambda: AnonymousBaSE(N, K, C, U, T, fill="worst"), ConfigError, "fill must be one of"),
    (lambda: AnonymousBaSE(N, K, C, U, T, gamma=0), InvalidParameterError,
     "gamma must be a finite number > 0; got 0"),
    (lambda: AnonymousExploreThenCommit(N, K, 0, T), AssumptionError, r"C >= 1"),
    (lambda: AnonymousExploreThenCommit(3, K, 3, T), AssumptionError,
     r"Algorithm 2 assumes N > C.*got 3"),
    (lambda: AnonymousExploreThenCommit(N, K, C, 5), HorizonTooShortError,
     r"too short for one batch: one elicitation takes 2C \+ 2 = 6 rounds"),
])
def test_bad_input_names_the_failing_assumption(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_environment_must_match_the_algorithm():
    alg = AnonymousBaSE(N, K, C, U, T)
    with pytest.raises(ConfigError, match=r"\(N, K, C\)"):
        play_algorithm(alg, AnonymousBanditEnv(easy_means(), C + 1), np.random.default_rng(0))


def test_every_release_covers_more_than_c_users(monkeypatch):
    env = AnonymousBanditEnv(np.random.default_rng(1).random((N, K)), C)
    sizes = []
    original = KAnonymousAggregator.aggregate

    def spy(self, members, arms, rng, **kw):
        sizes.append(int((np.asarray(members) >= 0).sum(axis=-1).min()))
        return original(self, members, arms, rng, **kw)

    monkeypatch.setattr(KAnonymousAggregator, "aggregate", spy)
    play_algorithm(AnonymousBaSE(N, K, C, U, T), env, np.random.default_rng(0))
    assert sizes and min(sizes) >= C


def test_study_entries_run():
    from privbandit.registry import get_algorithm

    config = {"horizon": T,
              "environment": {"users": N, "arms": K, "threshold": C, "cluster_size": U}}
    for name, extra in (("anonymous-base-lp", {}), ("anonymous-base-laplace", {"epsilon": 1.0}),
                        ("anonymous-etc", {})):
        result = get_algorithm(name).run({**config, **extra}, np.random.SeedSequence(0))
        assert result.horizon == T
        assert result.algorithm == name
