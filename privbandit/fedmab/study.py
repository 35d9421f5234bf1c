"""Study registrations of the federated MAB family (seed 002): cdp-mab, ddp-mab, hdp-mab.

Environment settings (`[environment]` of a study, declared in `ENVIRONMENT`,
the same world for the three): `users` (the agents, M, default 50), `arms`
(K, default 100), `heterogeneous` (default false).
Parameters (`PARAMS`): epsilon, sampler, `participation` (CDP-MAB), `rounds`,
costs, and the protocols' graphs: `graph` ("fully-connected", "star", "ring",
"random"; default "ring") and `edge_prob` (random graphs, default 0.1) for
DDP-MAB, `components` for HDP-MAB (the agents are split into this many equal
rings of >= 3 agents; default min(10, users // 3), so that the default fits
any number of agents).  The three are pure epsilon-DP: no delta.
The arm means (and a random graph) come from the run seed's "world" stream,
so every algorithm of a seed index sees the same arms; the runner plays the
epochs with the "policy" stream (rewards, Laplace noise, participation).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ..envs.multi_agent_mab import MultiAgentBernoulliMAB
from ..envs.neighbours import EPOCH, Flip
from ..errors import config_error
from ..registry import AlgorithmEntry, AuditProfile, AuditWorld, privacy_params, register_algorithm
from ..runtime import Setup
from ..schema import Param, fill
from .algorithms import CDPMAB, DDPMAB, HDPMAB
from .audit import epoch_means_protocol
from .graphs import disjoint_union, fully_connected, random_connected, ring, star

_GRAPHS = ("fully-connected", "star", "ring", "random")
WORLD = (
    Param("users", int, 50, "number of agents M", range="[1, inf)"),
    Param("arms", int, 100, "number of arms K", range="[2, inf)"),
    Param("heterogeneous", bool, False, "agents' arm means differ around the global ones"),
)
GRAPH = (
    Param("graph", str, "ring", "the agents' communication graph", choices=_GRAPHS),
    Param("edge_prob", float, 0.1, "edge probability of a random graph", range="(0, 1]"),
)
COMPONENTS = Param("components", int, None, "the agents are split into this many equal rings "
                   "of >= 3 agents (default: min(10, users // 3))", range="[1, inf)")
ROUNDS = Param("rounds", int, None, "number of epochs (default: the algorithm's)",
               range="[1, inf)")
SERVER_COST = Param("server_cost", float, 25.0, "communication cost of a server message",
                    range="[0, inf)")
AGENT_COST = Param("agent_cost", float, 1.0, "communication cost of an agent link",
                   range="[0, inf)")
PRIVACY = privacy_params(delta=False, sampler=True)
PARAMS = {
    "cdp-mab": (*PRIVACY, Param("participation", float, 1.0, "probability p that an agent "
                                "takes part in an epoch", range="(0, 1]"), ROUNDS, SERVER_COST),
    "ddp-mab": (*PRIVACY, ROUNDS, AGENT_COST, *GRAPH),
    "hdp-mab": (*PRIVACY, ROUNDS, dataclasses.replace(SERVER_COST, default=50.0), AGENT_COST,
                COMPONENTS),
}
ENVIRONMENT = WORLD


def _world(config: dict[str, Any], streams: dict[str, Any]) -> MultiAgentBernoulliMAB:
    """The agents' arm means, from the "world" stream."""
    settings = fill(config.get("environment", {}), ENVIRONMENT)
    return MultiAgentBernoulliMAB.uniform(settings["users"], settings["arms"], streams["world"],
                                          heterogeneous=settings["heterogeneous"])


def _setup(alg: Any, env: MultiAgentBernoulliMAB) -> Setup:
    return Setup(alg.protocol(env), env, alg.horizon)


def _graph(params: dict[str, Any], m: int, rng: Any):
    kind = params["graph"]
    if kind == "fully-connected":
        return fully_connected(m)
    if kind == "star":
        return star(m)
    if kind == "ring":
        return ring(m)
    if kind == "random":
        return random_connected(m, params["edge_prob"], rng)
    raise config_error("graph", kind, f"one of {list(_GRAPHS)}")


def build_cdp(config: dict[str, Any], streams: dict[str, Any]) -> Setup:
    env, p = _world(config, streams), fill(config, PARAMS["cdp-mab"])
    alg = CDPMAB(p["epsilon"], config["horizon"], participation=p["participation"],
                 rounds=p["rounds"], server_cost=p["server_cost"], sampler=p["sampler"])
    return _setup(alg, env)


def build_ddp(config: dict[str, Any], streams: dict[str, Any]) -> Setup:
    env, p = _world(config, streams), fill(config, PARAMS["ddp-mab"])
    # the graph is part of the world: drawn from its stream after the means
    alg = DDPMAB(p["epsilon"], config["horizon"], _graph(p, env.n_users, streams["world"]),
                 rounds=p["rounds"], agent_cost=p["agent_cost"], sampler=p["sampler"])
    return _setup(alg, env)


def build_hdp(config: dict[str, Any], streams: dict[str, Any]) -> Setup:
    env, p = _world(config, streams), fill(config, PARAMS["hdp-mab"])
    if env.n_users < 3:
        raise config_error("environment.users", env.n_users, "an integer >= 3 for hdp-mab "
                           "(its components are rings of >= 3 agents)")
    q = p["components"]
    if q is None:  # the default fits the agents: rings of >= 3, so at most agents // 3
        q = min(10, env.n_users // 3)
    if not 1 <= q <= env.n_users // 3:
        raise config_error("components", q, f"an integer in [1, {env.n_users // 3}] "
                           f"(rings of >= 3 of the {env.n_users} agents)")
    sizes = [env.n_users // q + (i < env.n_users % q) for i in range(q)]
    graph = disjoint_union([ring(s) for s in sizes])
    alg = HDPMAB(p["epsilon"], config["horizon"], graph, rounds=p["rounds"],
                 server_cost=p["server_cost"], agent_cost=p["agent_cost"], sampler=p["sampler"])
    return _setup(alg, env)


# how the three are audited (`privbandit.auditing`): worlds draw rewards per epoch, so the
# neighbours move one agent's reward sum of an epoch; one run: the epoch means' canaries
AUDIT = AuditProfile(worlds=(AuditWorld(20000),),
                     flips=tuple(Flip(e, a, EPOCH) for e in (0, 2) for a in (0, 1)),
                     black_box=(3000, Flip(0, 0, EPOCH)), canaries=epoch_means_protocol)

for _name, _build, _text in (
    ("cdp-mab", build_cdp, "master-worker federated MAB with Laplace epoch means (seed 002)"),
    ("ddp-mab", build_ddp, "decentralized federated MAB, GIS protocol on a graph (seed 002)"),
    ("hdp-mab", build_hdp, "hybrid federated MAB, sinks and SAC protocol (seed 002)"),
):
    register_algorithm(AlgorithmEntry(_name, _build, private=True, params=PARAMS[_name],
                                      environment=ENVIRONMENT, description=_text, audit=AUDIT))
