"""The three communication structures of seed 002 as one small interface.

`exchange(ybar, at, rng, log)` takes the agents' running private means
(M, A) over the A active arms, records every message it sends in the
`CommLog`, and returns what the eliminating party averages (A,), the number
of time slots the exchange lasts (the agents exploit locally meanwhile) and
its communication cost.  `announce(active, at, log)` logs how the new
active set reaches the agents; `at` is the round (time step) the epoch's
exploration ended, which labels its messages in the log.  Costs follow the paper's C(T): c_s per
server-agent link and c_a per agent-agent link carrying private means in a
slot; the small active-set announcements are logged as messages but not
costed (as in the paper's cost model).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privbandit.accounting.validation import check_count, check_nonnegative

from ..comm import DOWNLOAD, PEER, UPLOAD, CommLog
from ..errors import config_error
from .graphs import Graph, components, require_connected
from .protocols import ProtocolTrace, gis_trace, sac_trace

_FLOAT = 8  # bytes per released mean
_LABEL = 8  # bytes per agent label or arm index


@dataclass(frozen=True)
class Exchange:
    """mean: (A,) the average of the means used to eliminate; delay: slots; cost."""

    mean: np.ndarray
    delay: int
    cost: float


def check_participation(p: object) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)) or not 0.0 < p <= 1.0:
        raise config_error("participation", p, "a rate p in (0, 1]")
    return float(p)


def n_participants(p: float, n_users: int) -> int:
    """N = ceil(p M), with p M rounded to 9 decimals first (0.6 * 50 is 30, not 31)."""
    return max(1, math.ceil(round(p * n_users, 9)))


class MasterWorker:
    """CDP-MAB: N = ceil(pM) agents, drawn afresh each epoch, upload to the server."""

    name = "master-worker"

    def __init__(self, n_users: int, participation: float, server_cost: float) -> None:
        self.n_users = check_count("n_users", n_users)
        self.participation = check_participation(participation)
        self.server_cost = check_nonnegative("server_cost", server_cost)
        self.n_uploaders = n_participants(self.participation, self.n_users)

    def exchange(self, ybar: np.ndarray, at: int, rng: np.random.Generator, log: CommLog):
        m, a = ybar.shape
        if self.n_uploaders < m:
            chosen = np.sort(rng.choice(m, self.n_uploaders, replace=False))
            mean = ybar[chosen].mean(axis=0)
        else:
            mean = ybar.mean(axis=0)
        log.record(UPLOAD, self.n_uploaders, self.n_uploaders * a * _FLOAT, round=at)
        return Exchange(mean, 0, self.server_cost * self.n_uploaders)

    def announce(self, active: np.ndarray, at: int, log: CommLog) -> None:
        log.record(DOWNLOAD, self.n_users, self.n_users * active.size * _LABEL, round=at)

    def describe(self) -> dict:
        return {"structure": self.name, "participation": self.participation,
                "uploaders": self.n_uploaders, "server_cost": self.server_cost}


class Decentralized:
    """DDP-MAB: GIS over a connected graph; every agent ends with all M means."""

    name = "decentralized"

    def __init__(self, graph: Graph, agent_cost: float) -> None:
        self.graph = require_connected(graph)
        self.agent_cost = check_nonnegative("agent_cost", agent_cost)
        self.n_users = graph.n_nodes
        self.n_uploaders = graph.n_nodes
        self.trace: ProtocolTrace = gis_trace(graph)

    def exchange(self, ybar: np.ndarray, at: int, rng: np.random.Generator, log: CommLog):
        tr, a = self.trace, ybar.shape[1]
        _log_trace(log, tr, a, at)
        # every agent holds the same M means, so every local elimination agrees
        return Exchange(ybar.mean(axis=0), tr.slots, self.agent_cost * tr.link_uses)

    def announce(self, active: np.ndarray, at: int, log: CommLog) -> None:
        """Nothing to send: each agent eliminates locally."""

    def describe(self) -> dict:
        return {"structure": self.name, "graph": self.graph.name, "agent_cost": self.agent_cost,
                "slots_per_round": self.trace.slots, "links_per_round": self.trace.link_uses}


class Hybrid:
    """HDP-MAB: SAC into each component's sink, sinks upload to the server.

    The components are the connected components of `graph`; a sink uploads
    its component's sum of running means and size, so the server's average is
    over all M agents.
    """

    name = "hybrid"

    def __init__(self, graph: Graph, server_cost: float, agent_cost: float) -> None:
        if not isinstance(graph, Graph):
            raise config_error("graph", graph, "a Graph whose components are the components")
        self.graph = graph
        self.server_cost = check_nonnegative("server_cost", server_cost)
        self.agent_cost = check_nonnegative("agent_cost", agent_cost)
        self.n_users = graph.n_nodes
        self.n_uploaders = graph.n_nodes
        parts = components(graph)
        self.n_components = len(parts)
        self._component_of = np.empty(graph.n_nodes, dtype=np.int64)
        for q, part in enumerate(parts):
            self._component_of[part] = q
        self.trace, self.component_slots = sac_trace(graph)

    def exchange(self, ybar: np.ndarray, at: int, rng: np.random.Generator, log: CommLog):
        tr, a, q = self.trace, ybar.shape[1], self.n_components
        _log_trace(log, tr, a, at)
        sums = np.zeros((q, a))
        np.add.at(sums, self._component_of, ybar)
        log.record(UPLOAD, q, q * (a + 1) * _FLOAT, round=at)
        cost = self.agent_cost * tr.link_uses + self.server_cost * q
        return Exchange(sums.sum(axis=0) / self.n_users, tr.slots, cost)

    def announce(self, active: np.ndarray, at: int, log: CommLog) -> None:
        q, m = self.n_components, self.n_users
        log.record(DOWNLOAD, q, q * active.size * _LABEL, round=at)
        if m > q:  # sinks relay the active set inside their components
            log.record(PEER, m - q, (m - q) * active.size * _LABEL, round=at)

    def describe(self) -> dict:
        return {"structure": self.name, "graph": self.graph.name,
                "components": self.n_components, "server_cost": self.server_cost,
                "agent_cost": self.agent_cost, "slots_per_round": self.trace.slots,
                "links_per_round": self.trace.link_uses}


def _log_trace(log: CommLog, tr: ProtocolTrace, n_active: int, at: int) -> None:
    log.record(PEER, tr.adv, tr.adv_labels * _LABEL, round=at)
    log.record(PEER, tr.req, tr.labels * _LABEL, round=at)
    log.record(PEER, tr.data, tr.labels * (n_active * _FLOAT + _LABEL), round=at)
