"""The guarded private algorithms: never looser than going alone, charged before release,
record-level statements, named errors."""
from __future__ import annotations

import numpy as np
import pytest

from privbandit.accounting.statement import Relation
from privbandit.cascade.guarded import GuardedPrivateCascade
from privbandit.envs.clustered import seed000_environment
from privbandit.errors import ConfigError
from privbandit.fclub.baselines import PerServer
from privbandit.fclub.config import FclubConfig
from privbandit.fclub.guarded import GuardedFederatedClub
from privbandit.policies.club import CLUB
from privbandit.private import GuardPlan
from privbandit.registry import get_algorithm
from privbandit.runtime import run


def _world(seed: int = 3):
    return seed000_environment(np.random.default_rng(seed), n_users=8, n_clusters=2, dim=4,
                               n_items=6)


def _guarded(epsilon: float, horizon: int, **plan) -> GuardedFederatedClub:
    config = FclubConfig(4, 8, 4)  # two users per server: clusters span servers
    return GuardedFederatedClub(config, GuardPlan(epsilon, 1e-5, horizon, batch=100, **plan))


def test_without_merges_it_plays_exactly_club_per_server():
    """At an epsilon where no cluster survives the noise, the federated model never turns on
    and, with (almost) no shared rounds, the choices are CLUB's on each server's own data
    (its confidence share)."""
    horizon = 1_500
    guarded = _guarded(1e-3, horizon, rate=1e-9)
    alone = PerServer(lambda m: CLUB(4, m, alpha=1.5, confidence=0.9 * 0.1), 8, 4, "club")
    a = run(guarded, _world(), horizon, 11)
    b = run(alone, _world(), horizon, 11)
    assert not guarded.active.any()
    np.testing.assert_array_equal(a.regret, b.regret)
    assert guarded.billboard.shared_rounds == 0


def test_only_shared_rounds_reach_the_streams():
    horizon = 1_000
    policy = _guarded(1.0, horizon, rate=0.3, cap=None)
    run(policy, _world(), horizon, 4)
    shared = policy.billboard.shared_rounds
    assert 200 < shared < 400  # about rate * horizon, by a public coin
    assert int(policy.streams.counts.sum() + policy.streams._pending_counts.sum()) == shared


def test_a_record_the_billboard_did_not_choose_is_refused():
    from privbandit.private import BillboardError

    policy = _guarded(1.0, 100)
    items = np.eye(4)[:3]
    with pytest.raises(BillboardError, match="only the action the billboard chose"):
        policy.billboard.record(0, 0, 1, np.outer(items[1], items[1]))


def test_at_a_large_epsilon_it_finds_the_clusters_and_uses_them():
    horizon = 6_000
    policy = _guarded(1e6, horizon, resolution=0.5, rate=0.5, cap=None)
    result = run(policy, _world(), horizon, 5)
    truth = _world().true_clusters()
    same = truth[:, None] == truth[None, :]
    found = policy.labels[:, None] == policy.labels[None, :]
    assert np.array_equal(same, found)
    assert policy.active.all()
    sent = result.comm["messages_by_direction"]
    assert sent["upload"] > 0 and sent["download"] > 0
    assert set(result.comm["messages_by_party"]) <= {"server", *(f"server {s}" for s in range(4))}


def test_every_ledger_is_charged_before_the_first_release_and_never_again():
    policy = _guarded(2.0, 1_000)
    before = [led.spent()[0] for led in policy.ledgers()]
    assert all(0 < e <= 2.0 for e in before)
    run(policy, _world(), 1_000, 1)
    assert [led.spent()[0] for led in policy.ledgers()] == before


def test_statement_is_interactive_with_the_plan_budget_and_sampler_safety():
    policy = _guarded(2.0, 500, sampler="exact")
    statement = policy.privacy()
    assert statement.relation is Relation.INTERACTIVE and statement.holds_interactively
    assert (statement.epsilon, statement.delta) == (2.0, 1e-5)
    assert statement.float_safe
    assert _guarded(2.0, 500, sampler="fast").privacy().float_safe is False


@pytest.mark.parametrize("bad, message", [
    ({"mechanism": "binary"}, "mechanism"), ({"schedule": "weekly"}, "schedule"),
    ({"share": 1.5}, "share"), ({"batch": 0}, "batch"), ({"sampler": "gauss"}, "sampler"),
])
def test_bad_plans_are_refused_by_name(bad, message):
    with pytest.raises(ConfigError, match=message):
        GuardPlan(1.0, 1e-5, 1_000, **bad)


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-5])
def test_a_gaussian_plan_needs_a_delta_in_the_open_interval(delta):
    with pytest.raises((ConfigError, ValueError), match="delta"):
        GuardPlan(1.0, delta, 1_000)


def test_cascade_refuses_a_plan_for_another_horizon():
    with pytest.raises(ConfigError, match="plan"):
        GuardedPrivateCascade(4, 6, 10, 2, 500, GuardPlan(1.0, 1e-5, 600))


def test_cascade_without_merges_plays_exactly_fedind():
    from privbandit.cascade.algorithm import fed_ind
    from privbandit.envs import seed001_environment

    def world():
        return seed001_environment(np.random.default_rng(2), n_users=6, n_clusters=2, dim=4,
                                   n_items=12, list_len=2)

    horizon = 800
    guarded = GuardedPrivateCascade.from_settings(4, 6, 12, 2, horizon, epsilon=1e-3,
                                                  delta=1e-5, batch=100, beta=0.3, rate=1e-9)
    alone = fed_ind(4, 6, 12, 2, horizon, beta=0.3)
    a, b = run(guarded, world(), horizon, 4), run(alone, world(), horizon, 4)
    assert not guarded.active.any() and guarded.billboard.shared_rounds == 0
    np.testing.assert_array_equal(a.regret, b.regret)
    assert guarded.privacy().relation is Relation.INTERACTIVE


@pytest.mark.parametrize("name", ["cdp-fclub-dc+", "cdp-fedc3ucb-h+"])
def test_registered_with_deployment_privacy_defaults(name):
    entry = get_algorithm(name)
    assert entry.private and entry.needs_delta
    assert entry.defaults["delta"] == 1e-5 and entry.defaults["mechanism"] == "mf"
