"""CDP-MAB, DDP-MAB and HDP-MAB (Li & Song, seed 002, Alg. 1, 3 and 5).

All three share one epoch structure: in epoch r every agent pulls each active
arm n_r = S(r) - S(r-1) times, releases its Laplace-noised epoch means, folds
them into its running private mean, and the means are exchanged -- with a
server (CDP), by the GIS protocol over a graph (DDP), or by SAC into sinks that
upload to a server (HDP).  Arms whose average is 2 C(r) below the best are
eliminated; with one arm left (or R epochs spent) everyone plays the best arm
to the horizon.  While a decentralized or hybrid exchange lasts its t_r slots
each agent plays the best arm of its own running private means (released
values only: every pull follows released means).  S(r) and C(r):
`schedule.py` (privbandit's constants).

Privacy guarantee (every algorithm here)
    Neighbouring relation: agent-level -- one reward in one agent's history
    differs (docs/privacy_relations.md).  Sensitivity: an epoch mean over n_r rewards
    in [0, 1] moves by at most 1/n_r (L1 norm over the arms: one reward
    touches one arm).  Measure: pure epsilon-DP for each agent, separately.
    Mechanism: `privbandit.mechanisms.laplace.LaplaceMeans` (scale 1/(epsilon n_r)),
    charged to the agent's epoch ledger before the release; parallel
    composition over disjoint epochs gives epsilon for the whole transcript.
    Assumptions: rewards in [0, 1]; the exploitation and commit pulls are
    never released and follow released means only (interactive relation); the
    default sampler (`privbandit.privacy.DEFAULT_SAMPLER`, today the fast NumPy
    one, for simulation) is not floating-point safe and
    the statement says so; `sampler="exact"` (or None) is.  Source: Li & Song,
    Alg. 1 line 7 and Theorem 1; audited in `fedmab.audit`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from privbandit.accounting.validation import check_count, check_nonnegative, check_positive
from privbandit.mechanisms.samplers import Sampler

from ..envs.multi_agent_mab import MultiAgentBernoulliMAB
from ..errors import config_error
from ..privacy import DEFAULT_SAMPLER, resolve_sampler, sampler_name
from .engine import EpochProtocol
from .graphs import Graph, require_connected
from .networks import Decentralized, Hybrid, MasterWorker, check_participation
from .schedule import check_rounds


def _common(obj) -> None:
    """Validate the fields every algorithm has (once, at construction)."""
    object.__setattr__(obj, "epsilon", check_positive("epsilon", obj.epsilon))
    object.__setattr__(obj, "horizon", check_count("horizon", obj.horizon))
    if obj.rounds is not None:
        object.__setattr__(obj, "rounds", check_rounds(obj.rounds))
    object.__setattr__(obj, "sampler", resolve_sampler(obj.sampler))


class _EpochAlgorithm:
    """What the three algorithms share: the epochs on their network, as a protocol."""

    epsilon: float
    horizon: int
    rounds: int | None
    sampler: Sampler
    name: ClassVar[str]

    def protocol(self, env: MultiAgentBernoulliMAB) -> EpochProtocol:
        """The epochs on this algorithm's network for `env`'s agents, as a protocol of the
        run loop (`privbandit.runtime.play_algorithm(self, env, rng)`; after
        `runtime.play(protocol, ...)`, `FedMABRun.of(protocol, result)` adds the pulls and
        epochs)."""
        network, params = self._network(_agents(env))
        recorded = {"epsilon": self.epsilon, "horizon": self.horizon, "rounds": self.rounds,
                    "sampler": sampler_name(self.sampler), **params}
        return EpochProtocol(network, epsilon=self.epsilon, horizon=self.horizon,
                             rounds=self.rounds, sampler=self.sampler, name=self.name,
                             params=recorded)


@dataclass(frozen=True)
class CDPMAB(_EpochAlgorithm):
    """CDP-MAB (master-worker), with the R-epoch / participation-p variant.

    epsilon: per-agent privacy budget; horizon: T rounds; participation: p,
    ceil(pM) agents drawn afresh upload each epoch; rounds: R (None: doubling
    epochs, no limit); server_cost: c_s per server-agent link and epoch;
    sampler: Laplace noise source (`privbandit.privacy.resolve_sampler`).
    See the module docstring for the privacy guarantee.
    """

    epsilon: float
    horizon: int
    participation: float = 1.0
    rounds: int | None = None
    server_cost: float = 25.0
    sampler: Sampler | str | None = DEFAULT_SAMPLER

    name = "CDP-MAB"

    def __post_init__(self) -> None:
        _common(self)
        object.__setattr__(self, "participation", check_participation(self.participation))
        object.__setattr__(self, "server_cost", check_nonnegative("server_cost", self.server_cost))

    def _network(self, agents: int) -> tuple[MasterWorker, dict[str, Any]]:
        return (MasterWorker(agents, self.participation, self.server_cost),
                {"participation": self.participation, "server_cost": self.server_cost})


@dataclass(frozen=True)
class DDPMAB(_EpochAlgorithm):
    """DDP-MAB (decentralized): GIS over a connected `graph`, local elimination.

    agent_cost: c_a per agent link carrying messages in a slot.  A
    disconnected graph raises `DisconnectedGraphError`.  See the module
    docstring for the privacy guarantee.
    """

    epsilon: float
    horizon: int
    graph: Graph
    rounds: int | None = None
    agent_cost: float = 1.0
    sampler: Sampler | str | None = DEFAULT_SAMPLER
    network: Decentralized = field(init=False, repr=False, compare=False)

    name = "DDP-MAB"

    def __post_init__(self) -> None:
        _common(self)
        require_connected(self.graph)
        object.__setattr__(self, "agent_cost", check_nonnegative("agent_cost", self.agent_cost))
        object.__setattr__(self, "network", Decentralized(self.graph, self.agent_cost))

    def _network(self, agents: int) -> tuple[Decentralized, dict[str, Any]]:
        return self.network, {"graph": self.graph.name, "agent_cost": self.agent_cost}


@dataclass(frozen=True)
class HDPMAB(_EpochAlgorithm):
    """HDP-MAB (hybrid): the connected components of `graph` are the components.

    Each component's sink is its agent of minimum eccentricity; agents send
    their means to it by SAC, sinks upload to the server (c_s per sink link),
    the server eliminates and broadcasts.  See the module docstring for the
    privacy guarantee.
    """

    epsilon: float
    horizon: int
    graph: Graph
    rounds: int | None = None
    server_cost: float = 50.0
    agent_cost: float = 1.0
    sampler: Sampler | str | None = DEFAULT_SAMPLER
    network: Hybrid = field(init=False, repr=False, compare=False)

    name = "HDP-MAB"

    def __post_init__(self) -> None:
        _common(self)
        if not isinstance(self.graph, Graph):
            raise config_error("graph", self.graph, "a Graph whose components are the components")
        object.__setattr__(self, "server_cost", check_nonnegative("server_cost", self.server_cost))
        object.__setattr__(self, "agent_cost", check_nonnegative("agent_cost", self.agent_cost))
        object.__setattr__(self, "network",
                           Hybrid(self.graph, self.server_cost, self.agent_cost))

    def _network(self, agents: int) -> tuple[Hybrid, dict[str, Any]]:
        return self.network, {"graph": self.graph.name,
                              "components": self.network.n_components,
                              "server_cost": self.server_cost, "agent_cost": self.agent_cost}


def _agents(env: object) -> int:
    if not isinstance(env, MultiAgentBernoulliMAB):
        raise config_error("env", env, "a MultiAgentBernoulliMAB")
    return env.n_users
