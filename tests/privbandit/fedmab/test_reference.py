"""The epoch-level engine against the round-by-round reference: same seed, same pulls."""
import numpy as np
import pytest

from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.fedmab import (
    CDPMAB,
    DDPMAB,
    HDPMAB,
    disjoint_union,
    fully_connected,
    random_connected,
    ring,
    star,
)

from . import round_reference as ref
from .runs import simulate

HYBRID = disjoint_union([ring(4), star(3), fully_connected(1), fully_connected(2)])
CASES = [
    ("cdp", dict(), CDPMAB, {}),
    ("cdp", dict(participation=0.5), CDPMAB, {"participation": 0.5}),
    ("cdp", dict(rounds=3), CDPMAB, {"rounds": 3}),
    ("cdp", dict(rounds=1, participation=0.3), CDPMAB, {"rounds": 1, "participation": 0.3}),
    ("ddp", dict(graph=ring(10)), DDPMAB, {"graph": ring(10)}),
    ("ddp", dict(graph=star(10)), DDPMAB, {"graph": star(10)}),
    ("ddp", dict(graph=random_connected(10, 0.1, np.random.default_rng(3)), rounds=2), DDPMAB,
     {"graph": random_connected(10, 0.1, np.random.default_rng(3)), "rounds": 2}),
    ("hdp", dict(graph=HYBRID), HDPMAB, {"graph": HYBRID}),
    ("hdp", dict(graph=HYBRID, rounds=2), HDPMAB, {"graph": HYBRID, "rounds": 2}),
]


@pytest.mark.parametrize("heterogeneous", [False, True])
@pytest.mark.parametrize("kind, ref_kwargs, cls, kwargs", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_engine_plays_the_reference_arms(kind, ref_kwargs, cls, kwargs, heterogeneous, seed):
    env = MultiAgentBernoulliMAB.uniform(10, 4, np.random.default_rng(50 + seed),
                                         heterogeneous=heterogeneous)
    horizon, eps = 3000, 2.0
    algo = cls(eps, horizon, **kwargs)
    run = simulate(algo, env, np.random.default_rng(seed))
    arms, regret, cost, committed = ref.reference_run(
        env, kind, epsilon=eps, horizon=horizon, rng=np.random.default_rng(seed),
        sampler=algo.sampler, server_cost=getattr(algo, "server_cost", 0.0), **ref_kwargs,
    )
    np.testing.assert_array_equal(run.round_arms(), arms)
    np.testing.assert_array_equal(run.result.regret, regret)
    assert run.pulls.sum(axis=1).tolist() == [horizon] * env.n_users
    np.testing.assert_array_equal(run.pulls, [np.bincount(a, minlength=4) for a in arms.T])
    assert run.result.comm["cost"] == pytest.approx(cost)
    assert run.committed == committed


def test_horizon_ending_inside_an_epoch_matches_the_reference():
    env = MultiAgentBernoulliMAB.uniform(3, 5, np.random.default_rng(9))
    run = simulate(CDPMAB(0.5, 97), env, np.random.default_rng(4))
    arms, regret, _, committed = ref.reference_run(
        env, "cdp", epsilon=0.5, horizon=97, rng=np.random.default_rng(4),
        sampler=CDPMAB(0.5, 97).sampler,
    )
    assert committed is None and run.committed is None
    np.testing.assert_array_equal(run.round_arms(), arms)
    np.testing.assert_array_equal(run.result.regret, regret)


@pytest.mark.parametrize("graph", [ring(7), star(6), fully_connected(5),
                                   random_connected(12, 0.15, np.random.default_rng(1))])
def test_gis_trace_matches_the_set_based_protocol(graph):
    from privbandit.fedmab.protocols import gis_trace

    slots, links, messages = ref.gis_round(graph.adjacency)
    trace = gis_trace(graph)
    assert (trace.slots, trace.link_uses, trace.messages) == (slots, links, messages)


@pytest.mark.parametrize("graph", [HYBRID, disjoint_union([ring(9), star(5)]), ring(8)])
def test_sac_trace_matches_the_set_based_protocol(graph):
    from privbandit.fedmab.protocols import sac_trace

    slots, links = ref.sac_round(graph.adjacency, graph)
    trace, _ = sac_trace(graph)
    assert (trace.slots, trace.link_uses) == (slots, links)
