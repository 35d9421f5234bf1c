"""Golden regression: fixed seeds give the same numbers, bit for bit, run after run of changes.

For every registered algorithm (through the study parser, as a study runs it)
and for the run functions of every family, small fixed runs are reduced to a
fingerprint -- regret and reward (their sums and a hash of the per-round
arrays), communication counts, every ledger's spend, the cluster-error curve
-- and compared with `golden.json`.  A refactor that leaves an algorithm
alone must leave its fingerprint unchanged; a deliberate change of an
algorithm regenerates the file (`python tests/privbandit/test_golden.py`)
and says why in its commit.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

GOLDEN = Path(__file__).with_name("golden.json")

# one small study per family: every registered algorithm of the family, fixed seeds
STUDIES: dict[str, dict[str, Any]] = {
    "core": {
        "horizon": 300, "seeds": [0, 1],
        "environment": {"dim": 5, "users": 8, "clusters": 2, "items": 6},
        "algorithm": [{"name": n} for n in ("linucb", "linucb-shared", "lints", "club", "sclub")],
    },
    "fclub": {
        "horizon": 400, "seeds": [0, 1],
        "environment": {"dim": 5, "users": 8, "clusters": 2, "items": 6, "servers": 2},
        "algorithm": [
            *({"name": n} for n in ("fclub", "fclub-dc", "homo", "homo-dc", "club-per-server",
                                    "sclub-per-server", "linucb-per-user")),
            {"name": "cdp-fclub-dc", "grid": {"epsilon": [1.0, 8.0], "delta": [0.1],
                                              "calibration": ["tight", "paper"]}},
            {"name": "cdp-fclub-dc+", "params": {"batch": 50},
             "grid": {"epsilon": [1.0, 1e4]}},
        ],
    },
    "cascade": {
        "horizon": 400, "seeds": [0, 1],
        "environment": {"users": 8, "clusters": 2, "dim": 5, "items": 12, "list_len": 3},
        "algorithm": [
            *({"name": n, "params": {"cluster_points": 5}}
              for n in ("fedc3ucb-h", "forcecomm", "noauxiliary", "fedlinucb", "fedind")),
            {"name": "cdp-fedc3ucb-h", "params": {"cluster_points": 5},
             "grid": {"epsilon": [1.0, 8.0], "delta": [0.1], "calibration": ["tight", "paper"]}},
            {"name": "cdp-fedc3ucb-h+", "params": {"cluster_points": 5, "batch": 50},
             "grid": {"epsilon": [1.0, 1e4]}},
        ],
    },
    "fedmab": {
        "horizon": 20000, "seeds": [0, 1],
        "environment": {"users": 6, "arms": 5},
        "algorithm": [{"name": n, "params": p, "grid": {"epsilon": [0.5, 4.0]}}
                      for n, p in (("cdp-mab", {}), ("ddp-mab", {"graph": "ring"}),
                                   ("hdp-mab", {"components": 2}))],
    },
    "vertical": {
        "horizon": 200, "seeds": [0, 1],
        "environment": {"dim": 10, "items": 5, "parties": 2},
        "algorithm": [{"name": n} for n in ("vfucb", "vfts", "partial-linucb", "partial-lints")],
    },
    "anonymous": {
        "horizon": 20000, "seeds": [0, 1],
        "environment": {"users": 30, "arms": 3, "threshold": 2, "cluster_size": 5},
        "algorithm": [
            *({"name": n} for n in ("anonymous-base-lp", "anonymous-base-randomized",
                                    "anonymous-base-greedy", "anonymous-etc")),
            {"name": "anonymous-base-laplace", "grid": {"epsilon": [1.0]}},
        ],
    },
}


def _sha(values: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(values, dtype=np.float64).tobytes()).hexdigest()[:16]


def fingerprint(result: Any) -> dict[str, Any]:
    """The numbers of a `RunResult` that a refactor must not change."""
    comm = result.comm or {}
    return {
        "horizon": result.horizon,
        "regret": float(result.regret.sum()),
        "reward": float(result.reward.sum()),
        "regret_sha": _sha(result.regret),
        "reward_sha": _sha(result.reward),
        "comm": [comm.get("messages"), comm.get("bytes"), comm.get("rounds")],
        "comm_rounds": None if result.comm_rounds is None else _sha(result.comm_rounds),
        "ledgers": [[led["epsilon_spent"], led["releases"]] for led in result.ledgers],
        "cluster_error": None if result.cluster_error is None else result.cluster_error.tolist(),
    }


def _study_runs(family: str):
    from privbandit.studies.spec import study_from_dict

    spec = study_from_dict({"name": f"golden-{family}", **STUDIES[family]})
    for run in spec.runs():
        yield run.run_id.rsplit("__", 1)[0], run


def _study_case(family: str, case: str):
    from privbandit.registry import get_algorithm
    from privbandit.studies.runner import run_seed

    run = dict(_study_runs(family))[case]
    return get_algorithm(run.algorithm).run(run.config(), run_seed(run))


# -- the run functions of each family, called directly ---------------------------------
def _core_run():
    from privbandit.envs import clustered_linear_environment
    from privbandit.policies import LinTS
    from privbandit.runtime import run

    env = clustered_linear_environment(6, 2, 4, 5, np.random.default_rng(3), reward="gaussian")
    return run(LinTS(4, 6, v=0.2), env, 250, 11)


def _fclub_raw_detection():
    from privbandit.envs import seed000_environment
    from privbandit.fclub import make_policy
    from privbandit.runtime import run

    env = seed000_environment(np.random.default_rng(5), n_users=8, n_clusters=2, dim=4,
                              n_items=5)
    policy = make_policy("cdp-fclub-dc", dim=4, n_users=8, n_servers=2, horizon=300,
                         epsilon=2.0, delta=0.1, detection="raw")
    return run(policy, env, 300, 7)


def _cascade_prefetch():
    from privbandit.cascade.study import run_cascade

    config = {"horizon": 300, "environment": {"users": 6, "clusters": 2, "dim": 4,
                                              "items": 10, "list_len": 2}}
    return run_cascade("fedc3ucb-h", config, np.random.SeedSequence(4), prefetch=True)


def _fedmab_participation():
    from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
    from privbandit.fedmab import CDPMAB

    env = MultiAgentBernoulliMAB.uniform(5, 4, np.random.default_rng(8), heterogeneous=True)
    return CDPMAB(1.0, 30000, participation=0.6, rounds=4).run(env, np.random.default_rng(9))


def _vertical_runs(kind: str):
    from privbandit.envs.vertical import VerticalSplit, seed003_environment
    from privbandit.policies import LinUCB
    from privbandit.vertical import run_centralized, run_vertical

    world = seed003_environment(8, 6, rng=np.random.default_rng(1))
    if kind == "centralized":
        return run_centralized(LinUCB(8, beta=0.5), world, 150, 3)
    return run_vertical(LinUCB(8, beta=0.5), VerticalSplit(world, (3, 3, 2)), 150, 3,
                        seal_traffic=False)


def _anonymous_etc_laplace():
    from privbandit.anonymous import AnonymousExploreThenCommit
    from privbandit.envs.anonymous import AnonymousBanditEnv, clustered_means

    means = clustered_means(20, 3, 4, np.random.default_rng(2))
    env = AnonymousBanditEnv(means, 2, laplace_epsilon=1.0)
    return AnonymousExploreThenCommit(20, 3, 2, 5000, explore_constant=0.3).run(
        env, np.random.default_rng(6))


DIRECT = {
    "run/lints-gaussian": _core_run,
    "fclub/cdp-raw-detection": _fclub_raw_detection,
    "cascade/run-cascade-prefetch": _cascade_prefetch,
    "fedmab/cdp-participation": _fedmab_participation,
    "vertical/run-vertical-plain": lambda: _vertical_runs("vertical"),
    "vertical/run-centralized": lambda: _vertical_runs("centralized"),
    "anonymous/etc-laplace": _anonymous_etc_laplace,
}


def all_cases() -> dict[str, Any]:
    """Every case name -> a function computing its `RunResult`."""
    cases: dict[str, Any] = {}
    for family in STUDIES:
        for case, _ in _study_runs(family):
            cases[f"{family}/{case}"] = lambda f=family, c=case: _study_case(f, c)
    cases.update(DIRECT)
    return cases


def _expected() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_every_registered_algorithm_is_pinned():
    from privbandit.registry import algorithms

    ours = {name for name, entry in algorithms().items()
            if getattr(entry.run, "func", entry.run).__module__.startswith("privbandit.")}
    assert ours <= set(_pinned_algorithms())
    assert set(all_cases()) == set(_expected())


def _pinned_algorithms():
    for family in STUDIES:
        for _, run in _study_runs(family):
            yield run.algorithm


@pytest.mark.parametrize("case", sorted(_expected()))
def test_fingerprint_is_unchanged(case):
    assert fingerprint(all_cases()[case]()) == _expected()[case]


if __name__ == "__main__":  # regenerate: only when an algorithm changed on purpose
    names = sys.argv[1:] or sorted(all_cases())
    data = _expected() if GOLDEN.exists() else {}
    for name in names:
        data[name] = fingerprint(all_cases()[name]())
    GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(names)} fingerprints to {GOLDEN}")
