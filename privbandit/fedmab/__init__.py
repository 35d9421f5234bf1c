"""Privacy-preserving communication-efficient federated MAB (seed 002, Li & Song).

    CDPMAB(epsilon, horizon, participation=1.0, rounds=None, server_cost=25.0, sampler=...)
    DDPMAB(epsilon, horizon, graph, rounds=None, agent_cost=1.0, sampler=...)
    HDPMAB(epsilon, horizon, graph, rounds=None, server_cost=50.0, agent_cost=1.0, sampler=...)
        sampler: privbandit.privacy.DEFAULT_SAMPLER unless given
        .protocol(env) -> EpochProtocol, played by privbandit.runtime.play_algorithm(alg,
        env, rng) -> RunResult; FedMABRun.of(protocol, result) adds pulls and epochs
    graphs: Graph, fully_connected, star, ring, random_connected, disjoint_union,
        components, is_connected, require_connected, eccentricity, diameter, sinks
    EpochSchedule.build(epsilon, n_arms, horizon, n_uploaders, rounds=None)
    rounds_bound(horizon, n_agents): the paper's R >= 2 ln T / ln M; a smaller R warns
        (RoundsBelowBoundWarning)
    audit: EpochMeansTranscript, neighbouring_rewards, audit_transcript

The environment is `privbandit.envs.multi_agent_mab.MultiAgentBernoulliMAB`.
See docs/fedmab.md.
"""
from .algorithms import CDPMAB, DDPMAB, HDPMAB
from .engine import EpochRecord, FedMABRun
from .errors import DisconnectedGraphError, GraphError, RoundsBelowBoundWarning
from .graphs import (
    Graph,
    components,
    diameter,
    disjoint_union,
    eccentricity,
    fully_connected,
    is_connected,
    random_connected,
    require_connected,
    ring,
    sinks,
    star,
)
from .schedule import EpochSchedule, confidence_radius, rounds_bound

__all__ = [
    "CDPMAB", "DDPMAB", "DisconnectedGraphError", "EpochRecord", "EpochSchedule", "FedMABRun",
    "Graph", "GraphError", "HDPMAB", "components", "confidence_radius", "diameter",
    "disjoint_union", "eccentricity", "fully_connected", "is_connected", "random_connected",
    "require_connected", "ring", "rounds_bound", "RoundsBelowBoundWarning", "sinks", "star",
]
