"""Study registrations of the federated MAB family (seed 002): cdp-mab, ddp-mab, hdp-mab.

Environment settings (`[environment]` of a study): `agents` (M, default 50),
`arms` (K, default 100), `heterogeneous` (default false), and for the graph
algorithms `graph` ("fully-connected", "star", "ring", "random"; default
"ring"), `edge_prob` (random graphs, default 0.1) and `components` (HDP-MAB:
the agents are split into this many equal rings of >= 3 agents; default
min(10, agents // 3)).  Parameters:
`participation` and `rounds` (CDP-MAB), `rounds` (DDP/HDP-MAB), costs.
The environment's stream and the algorithm's stream are the first and second
children of the run's seed, so every algorithm of a seed index sees the same
arms.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..envs.multi_agent_mab import MultiAgentBernoulliMAB
from ..errors import config_error
from ..registry import AlgorithmEntry, register_algorithm
from .algorithms import CDPMAB, DDPMAB, HDPMAB
from .graphs import disjoint_union, fully_connected, random_connected, ring, star

_GRAPHS = ("fully-connected", "star", "ring", "random")


def _setup(config: dict[str, Any], seed: np.random.SeedSequence):
    env_seed, alg_seed, graph_seed = seed.spawn(3)
    settings = config.get("environment", {})
    env = MultiAgentBernoulliMAB.uniform(
        settings.get("agents", 50), settings.get("arms", 100), np.random.default_rng(env_seed),
        heterogeneous=bool(settings.get("heterogeneous", False)),
    )
    return env, np.random.default_rng(alg_seed), np.random.default_rng(graph_seed), settings


def _graph(settings: dict[str, Any], m: int, rng: np.random.Generator):
    kind = settings.get("graph", "ring")
    if kind == "fully-connected":
        return fully_connected(m)
    if kind == "star":
        return star(m)
    if kind == "ring":
        return ring(m)
    if kind == "random":
        return random_connected(m, settings.get("edge_prob", 0.1), rng)
    raise config_error("environment.graph", kind, f"one of {list(_GRAPHS)}")


def run_cdp(config: dict[str, Any], seed: np.random.SeedSequence):
    env, rng, _, _ = _setup(config, seed)
    alg = CDPMAB(config["epsilon"], config["horizon"],
                 participation=config.get("participation", 1.0), rounds=config.get("rounds"),
                 server_cost=config.get("server_cost", 25.0))
    return alg.run(env, rng)


def run_ddp(config: dict[str, Any], seed: np.random.SeedSequence):
    env, rng, graph_rng, settings = _setup(config, seed)
    alg = DDPMAB(config["epsilon"], config["horizon"], _graph(settings, env.n_users, graph_rng),
                 rounds=config.get("rounds"), agent_cost=config.get("agent_cost", 1.0))
    return alg.run(env, rng)


def run_hdp(config: dict[str, Any], seed: np.random.SeedSequence):
    env, rng, _, settings = _setup(config, seed)
    # the default fits the agents: rings need >= 3 agents each, so at most agents // 3
    q = settings.get("components", max(1, min(10, env.n_users // 3)))
    if env.n_users < 3:
        raise config_error("environment.agents", env.n_users, "an integer >= 3 for hdp-mab "
                           "(its components are rings of >= 3 agents)")
    if isinstance(q, bool) or not isinstance(q, int) or not 1 <= q <= env.n_users // 3:
        raise config_error("environment.components", q, f"an integer in [1, {env.n_users // 3}] "
                           f"(rings of >= 3 of the {env.n_users} agents)")
    sizes = [env.n_users // q + (i < env.n_users % q) for i in range(q)]
    graph = disjoint_union([ring(s) for s in sizes])
    alg = HDPMAB(config["epsilon"], config["horizon"], graph, rounds=config.get("rounds"),
                 server_cost=config.get("server_cost", 50.0),
                 agent_cost=config.get("agent_cost", 1.0))
    return alg.run(env, rng)


for _name, _run, _text in (
    ("cdp-mab", run_cdp, "master-worker federated MAB with Laplace epoch means (seed 002)"),
    ("ddp-mab", run_ddp, "decentralized federated MAB, GIS protocol on a graph (seed 002)"),
    ("hdp-mab", run_hdp, "hybrid federated MAB, sinks and SAC protocol (seed 002)"),
):
    register_algorithm(AlgorithmEntry(_name, _run, private=True, description=_text))
