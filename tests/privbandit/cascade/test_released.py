"""cdp-fedc3ucb-sets: records built from the public list, their Gram released exactly, and an
audit that catches a release whose 'public' part depends on the click."""
from dataclasses import replace

import numpy as np
import pytest

from privbandit.accounting.statement import Relation
from privbandit.auditing.end_to_end import audit_entry
from privbandit.auditing.target import AuditTarget
from privbandit.cascade.released import CascadeReleasePlan, ReleasedSetCascade
from privbandit.cascade.study import world_keywords
from privbandit.envs import seed001_environment
from privbandit.errors import ConfigError, NormBoundError
from privbandit.runtime import play_setup, run

NAME = "cdp-fedc3ucb-sets"
WORLD = {"users": 6, "clusters": 2, "dim": 3, "items": 12, "list_len": 3}


def _policy(horizon, world=WORLD, **plan):
    env = seed001_environment(np.random.default_rng(2), **world_keywords(world))
    plan = CascadeReleasePlan(**{"epsilon": 4.0, "delta": 1e-5, "sampler": "fast", **plan},
                              horizon=horizon)
    return ReleasedSetCascade(env.dim, env.n_users, env.n_items, env.list_len, horizon,
                              plan), env


@pytest.mark.parametrize("record, per_round, sensitivity", [("displayed", 3, 2.0),
                                                            ("first", 1, 1.0)])
def test_each_round_releases_its_records_with_an_exact_gram_and_noisy_clicks(
        record, per_round, sensitivity):
    policy, env = _policy(600, record=record)
    result = run(policy, env, 600, 1)
    st = policy.streams
    assert st.counts.sum() + st.pending() == per_round * 600  # every round's records
    np.testing.assert_allclose(np.trace(st.gram, axis1=1, axis2=2), st.counts)  # unit items
    assert st.streams[0].l2_sensitivity == pytest.approx(sensitivity)
    statement = result.privacy
    assert statement.relation is Relation.INTERACTIVE and statement.epsilon == 4.0
    assert f"its {record} records" in statement.summary
    for ledger in result.ledgers:
        assert ledger["epsilon_spent"] == pytest.approx(4.0, rel=1e-6)
    assert len(result.ledgers) == WORLD["users"]


def test_with_little_noise_it_finds_the_clusters():
    policy, env = _policy(4000, epsilon=1e6)
    result = run(policy, env, 4000, 1)
    assert result.cluster_error[-1] == 0.0 and result.cluster_mixing[-1] == 0.0
    assert policy.params()["record"] == "displayed"


def test_refused_items_release_nothing():
    policy, env = _policy(100)
    items = np.full((env.n_items, env.dim), 1.0)  # norm sqrt(3) > item_bound = 1
    action = policy.select(items, 0, 0, np.random.default_rng(1))
    with pytest.raises(NormBoundError, match="item_bound=1"):
        policy.update(items, 0, action, env.list_len, 0)  # no click: every item examined
    assert policy.streams.pending() == 0 and policy.streams.releases == 0


@pytest.mark.parametrize("kwargs, match", [
    ({"record": "examined"}, "record must be one of"),
    ({"failure": 1.5}, "failure must be"),
])
def test_bad_plans_are_named(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        CascadeReleasePlan(epsilon=1.0, delta=1e-5, horizon=100, **kwargs)


def test_a_plan_for_another_horizon_is_refused():
    plan = CascadeReleasePlan(epsilon=1.0, delta=1e-5, horizon=50)
    with pytest.raises(ConfigError, match="plan must be a CascadeReleasePlan for horizon 100"):
        ReleasedSetCascade(3, 6, 12, 3, 100, plan)


class _ExaminedAsPublic(ReleasedSetCascade):
    """A control: releases the EXAMINED items as if their features were public."""

    def update(self, items, user, action, feedback, t):
        observed, clicked = self._observed(items, action, feedback)
        rewards = np.zeros(observed.shape[0])
        if clicked is not None:
            rewards[clicked] = 1.0
        self.streams.observe(user, self.streams.public(user, observed, "wrongly"), rewards)
        if self.schedule.is_release(t):
            self._release(t)


def _variant(cls):
    def build(built):
        p = built.protocol
        return replace(built, protocol=cls(p.dim, p.n_users, p.n_items, p.list_len,
                                           built.horizon, p.plan, detection=p.sets.clustering))
    return build


def test_the_audit_catches_examined_items_released_as_public_and_passes_displayed_ones():
    """Which items a user examined depends on the click: their Gram matrix is not public.
    The forced replay finds the public part different (an unbounded loss); the displayed
    items' Gram, computed from the list alone, is equal in both neighbours."""
    flips = (40, 200, 400)
    honest = audit_entry(NAME, flips=flips, variant=_variant(ReleasedSetCascade))
    assert honest.verdict == "consistent" and honest.worst.public > 0, honest.describe()
    leaky = audit_entry(NAME, flips=flips, variant=_variant(_ExaminedAsPublic))
    assert leaky.verdict == "violation", leaky.describe()
    assert "public part of a reward-only release" in leaky.worst.diverged


def test_the_audit_world_moves_splits_and_merges():
    """The profile's world takes every public decision of the entry at the audit's seed and
    epsilon 1 and 8: releases, unit moves, splits and merges (each published)."""
    for epsilon in (1.0, 8.0):
        built, streams = AuditTarget.of(NAME, epsilon=epsilon).setup(3)
        play_setup(built, streams, 3)
        made = built.protocol.decisions
        assert min(made["unit_moves"], made["splits"], made["merges"]) > 0, made
