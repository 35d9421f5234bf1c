"""Study registrations of the anonymous-bandit family (seed 004).

- anonymous-base-lp / -randomized / -greedy: Algorithm 1 with that decomposition;
- anonymous-base-laplace: Algorithm 1 (LP) on Laplace-noised aggregates, private:
  `epsilon` is the per-round (record-level) epsilon of each release;
- anonymous-etc: Algorithm 2 (`explore_constant`, default 0.3 here, not the
  paper's 10; see `algorithm2`).

Environment settings (`[environment]`, declared in `ENVIRONMENT`): `users` (N,
default 100), `arms` (K, 5), `threshold` (C, 5), `cluster_size` (U, 20).
Parameters: `grid`, `batches`, `gamma`, `fill` (Algorithm 1, `ALGORITHM1`),
`explore_constant` (Algorithm 2, `ETC`).  The environment's and the algorithm's streams
are the first and second children of the run's seed, so every algorithm of a
seed index plays the same users.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..envs.anonymous import AnonymousBanditEnv, clustered_means
from ..registry import AlgorithmEntry, register_algorithm
from ..schema import Param, fill
from .algorithm1 import FILLS, AnonymousBaSE
from .algorithm2 import AnonymousExploreThenCommit
from .grids import GRIDS

ENVIRONMENT = (
    Param("users", int, 100, "number of users N", range="[1, inf)"),
    Param("arms", int, 5, "number of arms K", range="[2, inf)"),
    Param("threshold", int, 5, "anonymity threshold C: the least users an aggregate covers",
          range="[1, inf)"),
    Param("cluster_size", int, 20, "users per cluster U", range="[1, inf)"),
)
ALGORITHM1 = (
    Param("grid", str, "minimax", "BaSE's batch grid", choices=GRIDS),
    Param("batches", int, None, "number of batches B (default: ceil(log2 log2 T), >= 2)",
          range="[2, inf)"),
    Param("gamma", float, 0.25, "BaSE's elimination constant", range="(0, inf)"),
    Param("fill", str, "random", "how an anonymity set is topped up", choices=FILLS),
)
ETC = (Param("explore_constant", float, 0.3, "exploration constant (the paper's is 10)",
             range="(0, inf)"),)


def _setup(config: dict[str, Any], seed: np.random.SeedSequence, epsilon: float | None):
    env_seed, alg_seed = seed.spawn(2)
    s = fill(config.get("environment", {}), ENVIRONMENT)
    n, k, c, u = s["users"], s["arms"], s["threshold"], s["cluster_size"]
    means = clustered_means(n, k, u, np.random.default_rng(env_seed))
    env = AnonymousBanditEnv(means, c, laplace_epsilon=epsilon)
    return env, (n, k, c, u), np.random.default_rng(alg_seed)


def _algorithm1(decomposition: str, private: bool):
    def run(config: dict[str, Any], seed: np.random.SeedSequence):
        env, (n, k, c, u), rng = _setup(config, seed, config["epsilon"] if private else None)
        alg = AnonymousBaSE(n, k, c, u, config["horizon"], decomposition=decomposition,
                            **fill(config, ALGORITHM1))
        return alg.run(env, rng)

    return run


def run_etc(config: dict[str, Any], seed: np.random.SeedSequence):
    env, (n, k, c, _), rng = _setup(config, seed, None)
    alg = AnonymousExploreThenCommit(n, k, c, config["horizon"],
                                     explore_constant=fill(config, ETC)["explore_constant"])
    return alg.run(env, rng)


for _name, _run, _private, _text in (
    ("anonymous-base-lp", _algorithm1("lp", False), False,
     "Algorithm 1, LP anonymity-polytope decomposition (seed 004)"),
    ("anonymous-base-randomized", _algorithm1("randomized", False), False,
     "Algorithm 1, randomized-matching decomposition (seed 004)"),
    ("anonymous-base-greedy", _algorithm1("greedy", False), False,
     "Algorithm 1, greedy decomposition (seed 004)"),
    ("anonymous-base-laplace", _algorithm1("lp", True), True,
     "Algorithm 1 (LP) on Laplace-noised aggregates; epsilon per round (seed 004)"),
    ("anonymous-etc", run_etc, False, "Algorithm 2, explore-then-commit (seed 004)"),
):
    register_algorithm(AlgorithmEntry(_name, _run, private=_private,
                                      params=ETC if _run is run_etc else ALGORITHM1,
                                      environment=ENVIRONMENT, description=_text))
