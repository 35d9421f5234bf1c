"""Study registrations of the anonymous-bandit family (seed 004).

- anonymous-base-lp / -randomized / -greedy: Algorithm 1 with that decomposition;
- anonymous-base-laplace: Algorithm 1 (LP) on Laplace-noised aggregates, private:
  `epsilon` is the per-round (record-level) epsilon of each release;
- anonymous-etc: Algorithm 2 (`explore_constant`, default 0.3 here, not the
  paper's 10; see `algorithm2`).

Environment settings (`[environment]`, declared in `ENVIRONMENT`): `users` (N,
default 100), `arms` (K, 5), `threshold` (C, 5), `cluster_size` (U, 20).
Parameters: `grid`, `batches`, `gamma`, `fill` (Algorithm 1, `ALGORITHM1`),
`explore_constant` (Algorithm 2, `ETC`).  The users' means come from the run seed's
"world" stream, so every algorithm of a seed index plays the same users; the
runner plays the algorithm with the "policy" stream.
"""
from __future__ import annotations

from typing import Any

from ..envs.anonymous import AnonymousBanditEnv, clustered_means
from ..envs.neighbours import DRAW, Flip
from ..registry import AlgorithmEntry, AuditProfile, AuditWorld, register_algorithm
from ..runtime import Setup
from ..schema import Param, fill
from .algorithm1 import FILLS, AnonymousBaSE
from .algorithm2 import AnonymousExploreThenCommit
from .audit import anonymous_protocol
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


def _world(config: dict[str, Any], streams: dict[str, Any], epsilon: float | None):
    """The users' clustered means from the "world" stream, and (N, K, C, U)."""
    s = fill(config.get("environment", {}), ENVIRONMENT)
    n, k, c, u = s["users"], s["arms"], s["threshold"], s["cluster_size"]
    means = clustered_means(n, k, u, streams["world"])
    return AnonymousBanditEnv(means, c, laplace_epsilon=epsilon), (n, k, c, u)


def _algorithm1(decomposition: str, private: bool):
    def build(config: dict[str, Any], streams: dict[str, Any]) -> Setup:
        env, (n, k, c, u) = _world(config, streams, config["epsilon"] if private else None)
        alg = AnonymousBaSE(n, k, c, u, config["horizon"], decomposition=decomposition,
                            **fill(config, ALGORITHM1))
        name = "anonymous-base-laplace" if private else f"anonymous-base-{decomposition}"
        return Setup(alg.protocol(env), env, alg.horizon, algorithm=name)

    return build


def build_etc(config: dict[str, Any], streams: dict[str, Any]) -> Setup:
    env, (n, k, c, _) = _world(config, streams, None)
    alg = AnonymousExploreThenCommit(n, k, c, config["horizon"],
                                     explore_constant=fill(config, ETC)["explore_constant"])
    return Setup(alg.protocol(env), env, alg.horizon)


# how the private entry is audited (`privbandit.auditing`): rewards are drawn when a group sum
# is released, so the neighbours flip a user's drawn reward; one run: the group sums' canaries
AUDIT = AuditProfile(worlds=(AuditWorld(2000),),
                     flips=tuple(Flip(d, u, DRAW) for d in (0, 5) for u in (0, 7)),
                     black_box=(2000, Flip(0, 0, DRAW)), canaries=anonymous_protocol)

for _name, _build, _private, _text in (
    ("anonymous-base-lp", _algorithm1("lp", False), False,
     "Algorithm 1, LP anonymity-polytope decomposition (seed 004)"),
    ("anonymous-base-randomized", _algorithm1("randomized", False), False,
     "Algorithm 1, randomized-matching decomposition (seed 004)"),
    ("anonymous-base-greedy", _algorithm1("greedy", False), False,
     "Algorithm 1, greedy decomposition (seed 004)"),
    ("anonymous-base-laplace", _algorithm1("lp", True), True,
     "Algorithm 1 (LP) on Laplace-noised aggregates; epsilon per round (seed 004)"),
    ("anonymous-etc", build_etc, False, "Algorithm 2, explore-then-commit (seed 004)"),
):
    register_algorithm(AlgorithmEntry(_name, _build, private=_private,
                                      params=ETC if _build is build_etc else ALGORITHM1,
                                      environment=ENVIRONMENT, description=_text,
                                      audit=AUDIT if _private else None))
