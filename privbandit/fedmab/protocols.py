"""Message-level simulation of the agent-to-agent protocols of seed 002.

- GIS (Global Information Synchronization, Li & Song Alg. 2), DDP-MAB: in each
  time slot every agent that obtained new private means in the previous slot
  (its own at the start) sends ADV naming their agent labels to each
  neighbour; a neighbour missing some of them answers REQ (each missing label
  is requested from one advertiser only, the lowest-indexed, so no mean is
  sent twice); the advertiser answers DATA with the requested means.  The
  round ends when every agent holds all M labels, after t_r = diameter slots.
- SAC (Sink Agent Collection, Sec. V), HDP-MAB: one-way collection into the
  component's sink along a shortest-path tree (each agent's parent is its
  lowest-indexed neighbour one hop closer to the sink); in every slot each
  agent holding labels it has not yet forwarded sends them to its parent in
  one DATA message.  The sink holds every label after t_r = its eccentricity.

Who talks to whom does not depend on the values exchanged, so each protocol is
simulated once per graph and the trace is replayed every epoch; the cost of a
slot is the number of agent links that carried at least one message in it
(the paper's L_t links of cost c_a).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .graphs import Graph, components, hop_distances, require_connected, sinks


@dataclass(frozen=True)
class ProtocolTrace:
    """What one round of a protocol sends, summed over its slots.

    slots: t_r; adv, req, data: message counts by kind; adv_labels: agent
    labels named by ADV messages; labels: private-mean vectors carried by DATA
    messages (= labels requested); link_uses: sum over slots of agent links
    that carried a message (each costs c_a).
    """

    slots: int
    adv: int
    adv_labels: int
    req: int
    data: int
    labels: int
    link_uses: int

    @property
    def messages(self) -> int:
        return self.adv + self.req + self.data


def gis_trace(graph: Graph) -> ProtocolTrace:
    """Simulate one GIS round on a connected graph, message kind by message kind."""
    adj = require_connected(graph).adjacency
    m = adj.shape[0]
    known = np.eye(m, dtype=bool)  # known[j, l]: agent j holds agent l's mean
    new = known.copy()  # labels each agent obtained in the previous slot
    degree = adj.sum(axis=1)
    slots = adv = adv_labels = req = data = labels = links = 0
    while not known.all():
        senders = new.any(axis=1)
        adv += int(degree[senders].sum())
        adv_labels += int((degree * new.sum(axis=1)).sum())
        # offer[i, j, l]: i advertises l to neighbour j, who lacks it
        offer = adj[:, :, None] & new[:, None, :] & ~known[None, :, :]
        wanted = offer.any(axis=0)  # (j, l)
        source = offer.argmax(axis=0)  # lowest-indexed advertiser of l to j
        asked = np.zeros((m, m), dtype=bool)  # asked[i, j]: j sends REQ to i
        jj, ll = np.nonzero(wanted)
        asked[source[jj, ll], jj] = True
        req += int(asked.sum())
        data += int(asked.sum())
        labels += int(wanted.sum())
        used = adj & (senders[:, None] | senders[None, :])
        links += int(np.triu(used, k=1).sum())
        known |= wanted
        new = wanted
        slots += 1
    return ProtocolTrace(slots, adv, adv_labels, req, data, labels, links)


def sink_tree(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """(sinks (Q,), parent (M,)) for every component; a sink's parent is itself."""
    dist = hop_distances(graph)
    adj = graph.adjacency
    heads = sinks(graph)
    parent = np.arange(graph.n_nodes)
    for part, sink in zip(components(graph), heads, strict=True):
        d = dist[sink]
        for i in part[part != sink]:
            closer = np.flatnonzero(adj[i] & (d == d[i] - 1))
            parent[i] = closer[0]
    return heads, parent


def sac_trace(graph: Graph) -> tuple[ProtocolTrace, np.ndarray]:
    """Simulate one SAC round in every component at once.

    Returns the summed trace (slots = the slowest component's, i.e. the largest
    sink eccentricity) and each component's own slot count (Q,).
    """
    heads, parent = sink_tree(graph)
    m = graph.n_nodes
    is_sink = np.zeros(m, dtype=bool)
    is_sink[heads] = True
    holds = np.eye(m, dtype=bool)  # holds[i, l]: i holds l's mean
    pending = holds & ~is_sink[:, None]  # held but not yet forwarded
    comp_of = np.empty(m, dtype=np.int64)
    for q, part in enumerate(components(graph)):
        comp_of[part] = q
    comp_slots = np.zeros(heads.size, dtype=np.int64)
    slots = data = labels = 0
    while pending.any():
        senders = np.flatnonzero(pending.any(axis=1))
        data += senders.size
        labels += int(pending.sum())
        moved = np.zeros_like(holds)
        np.logical_or.at(moved, parent[senders], pending[senders])
        holds |= moved
        pending = moved & ~is_sink[:, None]
        slots += 1
        comp_slots[np.unique(comp_of[senders])] = slots
    return ProtocolTrace(slots, 0, 0, 0, data, labels, data), comp_slots
