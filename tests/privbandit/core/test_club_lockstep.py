"""CLUB and SCLUB replicates in lockstep (`BatchedCLUB`, `BatchedSCLUB`): each is its seed's
separate run."""
import numpy as np
import pytest

from privbandit.envs import seed000_environment
from privbandit.kernels import UserGraph
from privbandit.policies import CLUB, SCLUB
from privbandit.registry import get_algorithm
from privbandit.runtime import run, seed_streams
from privbandit.runtime.lockstep import run_lockstep

SEEDS = [np.random.SeedSequence(21, spawn_key=(i,)) for i in range(4)]


def worlds(clusters=4):
    return [seed000_environment(seed_streams(s)["world"], n_users=8, n_clusters=clusters,
                                block=128) for s in SEEDS]


@pytest.mark.parametrize("make", [
    lambda s: CLUB(10, 8),
    lambda s: CLUB(10, 8, alpha=0.8, beta=0.4, lam=2.0),
    # a sparse random start graph, different in every replicate
    lambda s: CLUB(10, 8, graph=UserGraph.random(8, 0.4, np.random.default_rng(s.spawn_key))),
])
def test_each_club_replicate_is_its_separate_run(make):
    horizon = 900  # edges are deleted and components split in every replicate
    alone = [make(s) for s in SEEDS]
    separate = [run(p, e, horizon, s) for p, e, s in zip(alone, worlds(), SEEDS, strict=True)]
    policies = [make(s) for s in SEEDS]
    together = run_lockstep(policies, worlds(), horizon, SEEDS)
    for a, b, single, p in zip(separate, together, alone, policies, strict=True):
        np.testing.assert_array_equal(b.regret, a.regret)
        np.testing.assert_array_equal(b.reward, a.reward)
        np.testing.assert_array_equal(b.cluster_error, a.cluster_error)
        assert b.params == a.params and b.timings["lockstep_replicates"] == len(SEEDS)
        assert p.graph.n_components > 1
        np.testing.assert_array_equal(p.cluster_labels(), single.cluster_labels())
        np.testing.assert_array_equal(p.graph.adjacency, single.graph.adjacency)
        for models in ("users", "clusters"):
            for name in ("inv", "gram", "b", "theta", "logdet", "count"):
                np.testing.assert_allclose(getattr(getattr(p, models), name),
                                           getattr(getattr(single, models), name),
                                           rtol=1e-12, atol=1e-12, err_msg=f"{models}.{name}")


@pytest.mark.parametrize("name", ["club", "sclub"])
def test_club_studies_run_their_seeds_in_lockstep(name):
    entry = get_algorithm(name)
    config = {**entry.defaults, "horizon": 400, "environment": {"setting": "seed000"}}
    together = entry.run_seeds(config, SEEDS)
    for seed, b in zip(SEEDS, together, strict=True):
        a = entry.run(config, seed)
        np.testing.assert_array_equal(b.regret, a.regret)
        np.testing.assert_array_equal(b.cluster_error, a.cluster_error)
        assert b.timings["lockstep_replicates"] == len(SEEDS)


@pytest.mark.parametrize("make", [
    lambda: SCLUB(10, 8),
    lambda: SCLUB(10, 8, alpha=3.0, beta=0.4),  # merges too (in 2-cluster worlds)
    lambda: SCLUB(10, 8, alpha=1.0, alpha_p=0.5, beta=0.4),
])
def test_each_sclub_replicate_is_its_separate_run(make):
    horizon = 1500  # several stages; splits (and merges) in the replicates
    alone = [make() for _ in SEEDS]
    separate = [run(p, e, horizon, s) for p, e, s in zip(alone, worlds(2), SEEDS, strict=True)]
    policies = [make() for _ in SEEDS]
    together = run_lockstep(policies, worlds(2), horizon, SEEDS)
    for a, b, single, p in zip(separate, together, alone, policies, strict=True):
        np.testing.assert_array_equal(b.regret, a.regret)
        np.testing.assert_array_equal(b.cluster_error, a.cluster_error)
        assert b.timings["lockstep_replicates"] == len(SEEDS)
        assert p.stage == single.stage > 5
        for name in ("label", "size", "user_checked", "ref_count"):
            np.testing.assert_array_equal(getattr(p, name), getattr(single, name), err_msg=name)
        np.testing.assert_allclose(p.ref_theta, single.ref_theta, rtol=1e-12, atol=1e-12)
        for models in ("users", "clusters"):
            for name in ("inv", "gram", "b", "theta", "logdet", "count"):
                np.testing.assert_allclose(getattr(getattr(p, models), name),
                                           getattr(getattr(single, models), name),
                                           rtol=1e-12, atol=1e-12, err_msg=f"{models}.{name}")


def test_sclub_splits_and_merges_in_lockstep():
    """The batched tests fire: replicates split, and merge back (their labels join)."""
    policies = [SCLUB(10, 8, alpha=3.0, beta=0.4) for _ in SEEDS]
    splits, merges = [], []
    for p in policies:
        split, merge = p.split, p.merge
        p.split = lambda u, f=split: (splits.append(u), f(u))[1]

        def counted(c, n, f=merge, p=p):
            before = np.unique(p.label).size
            f(c, n)
            merges.append(before - np.unique(p.label).size)

        p.merge = counted
    run_lockstep(policies, worlds(2), 1500, SEEDS)
    assert splits and sum(merges) > 0
