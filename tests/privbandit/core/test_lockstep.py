"""Replicates in lockstep: each replicate is the separate run of its seed."""
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from privbandit.envs import LinearUsersEnv, PoolItems, SphereItems, seed000_environment
from privbandit.errors import ConfigError, NormBoundError
from privbandit.fclub import make_policy
from privbandit.policies import LinTS, LinUCB
from privbandit.policies.lockstep import BatchedLinUCB
from privbandit.registry import get_algorithm
from privbandit.runtime import lockstep, run, seed_streams
from privbandit.runtime.lockstep import can_lockstep, register_batched, run_lockstep, run_replicates
from privbandit.studies import parse_study, run_study
from privbandit.studies.runner import cell_tasks

SEEDS = [np.random.SeedSequence(11, spawn_key=(i,)) for i in range(4)]

def build_run(name: str, cfg: dict, seed) -> tuple:
    """(policy, world, horizon) of entry `name`'s run on `seed`."""
    built = get_algorithm(name).setup(cfg, seed)
    return built.protocol, built.env, built.horizon



def worlds(seeds=SEEDS, **kw):
    return [seed000_environment(seed_streams(s)["world"], **kw) for s in seeds]


def assert_same(separate, together):
    for a, b in zip(separate, together, strict=True):
        np.testing.assert_allclose(b.regret, a.regret, rtol=1e-12, atol=0)
        np.testing.assert_allclose(b.reward, a.reward, rtol=1e-12, atol=0)
        assert (b.seed, b.params, b.ledgers, b.environment) == (a.seed, a.params, a.ledgers,
                                                                 a.environment)
        assert b.timings["lockstep_replicates"] == len(together)


@pytest.mark.parametrize("make", [
    lambda e: LinUCB(e.dim, e.n_users),
    lambda e: LinUCB(e.dim, e.n_users, shared=True, beta=0.3),
    lambda e: LinTS(e.dim, e.n_users, v=0.2),
])
@pytest.mark.parametrize("horizon", [1, 700])
def test_each_replicate_is_its_separate_run(make, horizon):
    envs = worlds(block=128)  # several blocks, a partial last one
    separate = [run(make(e), e, horizon, s) for e, s in zip(envs, SEEDS, strict=True)]
    envs = worlds(block=128)
    policies = [make(e) for e in envs]
    together = run_lockstep(policies, envs, horizon, SEEDS)
    assert_same(separate, together)
    # the replicates' own models hold the state a separate run ends with
    alone = make(envs[0])
    run(alone, worlds(block=128)[0], horizon, SEEDS[0])
    for name in ("inv", "b", "theta", "logdet", "count"):
        np.testing.assert_allclose(getattr(policies[0].models, name),
                                   getattr(alone.models, name), rtol=1e-9, atol=1e-12)


def test_gaussian_rewards_and_prefetch_give_the_separate_runs():
    def world(seed, prefetch):
        env = LinearUsersEnv(seed_streams(seed)["world"].normal(size=(3, 5)) / 4,
                             SphereItems(5, 7), reward="gaussian", noise_sd=0.3, block=50)
        env.prefetch = prefetch
        return env

    separate = [run(LinUCB(5, 3), world(s, False), 260, s) for s in SEEDS]
    envs = [world(s, True) for s in SEEDS]
    assert_same(separate, run_lockstep([LinUCB(5, 3) for _ in envs], envs, 260, SEEDS))


def test_items_the_policy_refuses_are_refused_in_lockstep():
    pool = np.eye(4) * 2.0  # norm 2 > the policy's item_bound 1
    envs = [LinearUsersEnv(np.full((1, 4), 0.1), PoolItems(pool, 3)) for _ in SEEDS]
    with pytest.raises(NormBoundError, match="item_bound"):
        run_lockstep([LinUCB(4) for _ in envs], envs, 10, SEEDS)


@pytest.mark.parametrize("policies, message", [
    ([LinUCB(10, 20), LinTS(10, 20), LinUCB(10, 20), LinUCB(10, 20)], "LinUCB policies"),
    ([LinUCB(10, 20, beta=0.1)] + [LinUCB(10, 20)] * 3, "equal parameters"),
    # SCLUB on servers of unequal size: no batched version
    ([make_policy("sclub-per-server", dim=10, n_users=20, n_servers=3)] * 4,
     "batched twin"),
])
def test_mixed_or_unsupported_replicates_are_refused(policies, message):
    with pytest.raises(ConfigError, match=message):
        run_lockstep(policies, worlds(), 10, SEEDS)


def test_worlds_of_different_shapes_are_refused():
    envs = worlds()[:3] + worlds(SEEDS[3:], n_items=5)
    assert not can_lockstep([LinUCB(10, 20)] * 4, envs)
    with pytest.raises(ConfigError, match="one shape"):
        run_lockstep([LinUCB(10, 20) for _ in envs], envs, 10, SEEDS)


def study(algorithm: str) -> str:
    return textwrap.dedent(f"""
        name = "ls"
        horizon = 300
        seeds = 3
        max_points = 300
        [environment]
        setting = "seed000"
        [[algorithm]]
        name = "{algorithm}"
        [algorithm.grid]
        beta = [0.2, 0.5]
    """)


@pytest.mark.parametrize("algorithm", ["linucb", "linucb-shared"])
def test_studies_run_a_cells_seeds_in_lockstep_with_the_same_records(tmp_path, algorithm):
    spec = parse_study(study(algorithm))
    pending = list(spec.runs())
    assert sorted(len(task) for task in cell_tasks(pending)) == [3, 3]
    assert all(len(task) == 1 for task in cell_tasks(pending, lockstep=False))
    for width, sizes in ((4, [1, 1, 2, 2]), (9, [1] * 6)):
        split = cell_tasks(pending, width=width)  # every worker gets a task
        assert sorted(map(len, split)) == sizes
        assert sorted(run.run_id for task in split for run in task) == sorted(
            run.run_id for run in pending)
    with ThreadPoolExecutor(1) as pool:
        together = run_study(spec, tmp_path / "a", executor=pool, progress=False)
        separate = run_study(spec, tmp_path / "b", executor=pool, progress=False,
                             lockstep=False)
    for a, b in zip(separate.records, together.records, strict=True):
        assert b["run_id"] == a["run_id"]
        np.testing.assert_allclose(b["cumulative_regret"], a["cumulative_regret"], rtol=1e-12)
        assert b["timings"]["lockstep_replicates"] == 3


def test_replicates_without_a_lockstep_version_run_one_after_the_other():
    def make():  # SCLUB on servers of unequal size (7, 7, 6 users): no batched version
        return make_policy("sclub-per-server", dim=10, n_users=20, n_servers=3)

    envs = worlds()[:2]
    assert not can_lockstep([make() for _ in envs], envs)
    together = run_replicates([make() for _ in envs], envs, 50, SEEDS[:2])
    separate = [run(make(), e, 50, s) for e, s in zip(worlds()[:2], SEEDS, strict=False)]
    for a, b in zip(separate, together, strict=True):
        np.testing.assert_array_equal(a.regret, b.regret)
        np.testing.assert_array_equal(a.cluster_error, b.cluster_error)
        assert "lockstep_replicates" not in b.timings


FCLUB_CONFIG = {**get_algorithm("fclub-dc").defaults, "horizon": 700,
                "environment": {"setting": "seed000", "servers": 5}}


def test_fclub_dc_replicates_are_their_separate_runs():
    entry = get_algorithm("fclub-dc")
    separate = [entry.run(FCLUB_CONFIG, s) for s in SEEDS]
    together = entry.run_seeds(FCLUB_CONFIG, SEEDS)
    assert_same(separate, together)
    for a, b in zip(separate, together, strict=True):
        np.testing.assert_array_equal(b.cluster_error, a.cluster_error)
        np.testing.assert_array_equal(b.comm_rounds, a.comm_rounds)
        assert b.comm == a.comm and a.comm["messages"] > 0


def test_private_fclub_schedules_without_a_batched_version_run_their_seeds_separately():
    def config(name):
        return {**get_algorithm(name).defaults, "horizon": 100, "epsilon": 1.0,
                "environment": FCLUB_CONFIG["environment"]}

    raw = {**config("cdp-fclub-dc-paper"), "mechanism": "tree",  # the paper's buffers: the
           "schedule": "every-round"}                            # every-round twin plays them
    policy, env, _ = build_run("cdp-fclub-dc-paper", raw, SEEDS[0])
    assert can_lockstep([policy], [env])
    for name, other in (("cdp-fclub-dc-paper", {**raw, "schedule": "fixed"}),  # batches
                        ("cdp-fclub-dc", config("cdp-fclub-dc"))):  # acting on released data
        policy, env, _ = build_run(name, other, SEEDS[0])
        assert not can_lockstep([policy], [env])


def test_twins_are_registered_by_exact_class(monkeypatch):
    class Tuned(LinUCB):  # a subclass is not its parent: it has no twin until registered
        pass

    monkeypatch.setattr(lockstep, "_BATCHED", dict(lockstep._BATCHED))  # left as found
    envs = worlds(SEEDS[:2])
    assert can_lockstep([LinUCB(10, 20) for _ in envs], envs)
    assert not can_lockstep([Tuned(10, 20) for _ in envs], envs)
    with pytest.raises(ConfigError, match="a subclass of policies.base.Policy"):
        register_batched(int, BatchedLinUCB)
    with pytest.raises(ConfigError, match="a callable"):
        register_batched(Tuned, None)
    register_batched(Tuned, lambda policies: BatchedLinUCB(policies))
    # the twin checks its replicates' class: LinUCB's twin refuses a subclass
    with pytest.raises(ConfigError, match="LinUCB policies"):
        run_lockstep([Tuned(10, 20) for _ in envs], envs, 10, SEEDS[:2])
