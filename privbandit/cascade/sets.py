"""`SetFederatedCascade` ("fedc3ucb-sets"): federated cascades that start from going alone.

FedC3UCB-H (seed 001, Algorithms 1-3) starts its server from the complete
agent graph: until the edge tests have deleted the edges between clusters,
every agent recommends from a model pooled over all agents, and at seed 001's
scale that phase costs more than the clusters later repay (docs/cascade.md).
Here the server keeps clusters as sets and starts every agent alone:

1. an agent scores items with the capped UCB of FedC3UCB-H, from the cluster
   statistics it last received PLUS its own examined items since (its buffer,
   folded in by rank-one steps every round), so an agent alone is FedInd;
2. it uploads its buffer when the det-ratio trigger fires (Alg. 2, line 13;
   optionally FedC3UCB-H's auxiliary rules) and adopts the statistics of its
   current cluster;
3. at phases (rounds t_1 = 0, t_{s+1} = max(t_s + 1, ceil(g (t_s + 2)) - 2), g =
   `phase_growth`) every agent that played uploads its buffer, the server moves,
   splits and merges the clusters of the last phase on the agents' uploaded
   statistics (`privbandit.clustering.SetClusters`, started "alone": a merge
   needs consistency AND the power to have seen a difference of `resolution`,
   so agents join only when their data prove a set shares preferences), and
   every agent of a cluster of two or more downloads its cluster's statistics.

A merge is where federation can lose to going alone (a model pooled over
different preferences); the power requirement makes a wrong merge rare
(at most `miss` per pair whose preferences differ by `resolution` or more),
and the split step undoes one on proof.

Privacy guarantee: none (a non-private algorithm); uploads are raw sums.
Sources: seed 001 Algorithms 1-3 (agents, buffers, det-ratio trigger);
`privbandit.clustering.splitmerge` (SCLUB's split and merge over sets, Li et al. 2019,
with the power test of `private.NoiseAwareClustering`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..clustering import SetClusters, SplitMergeClustering
from ..comm import UPLOAD, payload_bytes
from ..errors import config_error
from ..validation import check_user
from .algorithm import FederatedCascadeUCB
from .server import CascadeServer

# The merges' resolution: click probabilities differing by 0.3 in RMS over the items seen.
# Chosen on seed 001's world (docs/cascade.md): 0.2 merges about 10^4 rounds later than 0.3
# and recovers about a third of the oracle's gain at T = 131,071 instead of about a half;
# orthonormal preferences differ by 0.32 in RMS over uniformly random items, more over the
# items seen.
RESOLUTION = 0.3
# SplitMergeClustering fields the entries take (they share lam, noise_scale and theta_bound)
SET_KEYS = ("merge_level", "split_level", "unit_evidence", "block_evidence", "simulations",
            "resolution", "miss")


class SetCascadeServer(CascadeServer):
    """The server of `SetFederatedCascade`: each agent's uploaded data (as `CascadeServer`)
    and clusters as sets (`SetClusters`) in place of the agent graph."""

    def __init__(self, n_users: int, dim: int, lam: float, sets: SetClusters) -> None:
        super().__init__(n_users, dim, lam, 1.0, clustering=False)
        self.sets = sets

    def members(self, agent: int) -> np.ndarray:
        return self.sets.members(agent)

    def labels(self) -> np.ndarray:
        return self.sets.named()

    def add(self, agents: np.ndarray, gram: np.ndarray, moment: np.ndarray,
            count: np.ndarray) -> None:
        """Add the buffers of several agents at once (a phase's uploads)."""
        self.gram[agents] += gram
        self.moment[agents] += moment
        self.count[agents] += count

    def detect(self, rng: np.random.Generator) -> bool:
        """Move, split and merge the clusters on the uploaded statistics; True if changed."""
        return self.sets.detect(self.gram, self.moment, rng, counts=self.count)

    def cluster_moment(self, agent: int) -> np.ndarray:
        """b of `agent`'s cluster: the sum of its members' uploaded moments."""
        return self.moment[self.members(agent)].sum(axis=0)


class SetFederatedCascade(FederatedCascadeUCB):
    """Federated cascading UCB whose server starts every agent alone; see the module
    docstring.

    Keywords as `FederatedCascadeUCB` (alpha_c, auxiliary -- "none" by default: the
    phases sync every agent that played --, lam, beta, ...; alpha_d and clustering
    are not taken), plus detection (a `SplitMergeClustering` with a resolution;
    default: one with the radius' lam, noise_scale and theta_bound and `resolution`)
    and phase_growth g > 1.
    """

    name = "fedc3ucb-sets"

    def __init__(self, dim: int, n_users: int, n_items: int, list_len: int, horizon: int, *,
                 detection: SplitMergeClustering | None = None, resolution: float = RESOLUTION,
                 phase_growth: float = 1.15, auxiliary: str = "none", **kwargs: Any) -> None:
        if "alpha_d" in kwargs:
            raise config_error("alpha_d", kwargs["alpha_d"], "not given: the clusters are sets "
                               "found by split/merge, not an edge test")
        super().__init__(dim, n_users, n_items, list_len, horizon, auxiliary=auxiliary,
                         clustering=False, **kwargs)
        radius = self.radius
        if detection is None:
            detection = SplitMergeClustering(self.dim, lam=self.lam,
                                             noise_scale=radius.noise_scale,
                                             theta_bound=radius.theta_bound,
                                             resolution=resolution)
        elif not isinstance(detection, SplitMergeClustering) or detection.dim != self.dim:
            raise config_error("detection", detection,
                               f"None or a SplitMergeClustering of dim {self.dim}")
        self.sets = SetClusters(detection, self.n_users, start="alone", growth=phase_growth)
        self.server = SetCascadeServer(self.n_users, self.dim, self.lam, self.sets)
        self._cluster_b = np.zeros((self.n_users, self.dim))  # b of the last download
        self._next_phase = 0

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> np.ndarray:
        if t >= self._next_phase:
            self.start_phase(t, rng)
        return super().select(items, user, t, rng)

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Buffer the round, fold it into the agent's decision model, then the triggers."""
        u = check_user(user, self.n_users)
        observed, clicked = self._observed(items, action, feedback)
        self.buffers.add(u, observed, clicked)
        inv = self.buffers.trigger_inv[u]  # (Sigma_u + Sigma_loc)^-1, rank-one updated
        self._set_decision(u, inv, inv @ (self._cluster_b[u] + self.buffers.moment[u]))
        self.arrivals[u] += 1
        self._triggered(u, self.buffers.exceeded(u), t)

    def _adopt(self, agent: int, gram: np.ndarray, theta: np.ndarray, t: int) -> None:
        """Take the cluster's statistics; an agent alone holds its own already: no message."""
        self._cluster_b[agent] = self.server.cluster_moment(agent)
        if self.sets.members(agent).size > 1:
            super()._adopt(agent, gram, theta, t)
        else:
            self._take(agent, gram, theta)

    @property
    def next_phase(self) -> int:
        return self._next_phase

    def start_phase(self, t: int, rng: np.random.Generator) -> None:
        """The phase due at round t: every agent that played uploads, the server detects,
        every agent of a cluster of two or more downloads its cluster's statistics."""
        self._next_phase = self.sets.phase_end(t)
        b = self.buffers
        played = np.flatnonzero(b.count)
        if played.size:
            self.server.add(played, b.gram[played], b.moment[played], b.count[played])
            self._log.record(UPLOAD, int(played.size),
                             int(played.size) * payload_bytes(b.gram[0], b.moment[0], 0),
                             round=t)
        self.server.detect(rng)
        labels = self.sets.labels
        shared = np.bincount(labels)[labels] > 1
        for agent in np.flatnonzero(shared | (b.count > 0)).tolist():  # per phase, not round
            self._adopt(agent, *self.server.cluster_statistics(agent), t)

    def params(self) -> dict[str, Any]:
        out = {k: v for k, v in super().params().items() if k not in ("alpha_d", "clustering")}
        det = self.sets.clustering
        out.update(detection="split-merge", start="alone", phase_growth=self.sets.growth,
                   **{k: getattr(det, k) for k in SET_KEYS})
        return out


def set_detection(dim: int, settings: dict[str, Any]) -> SplitMergeClustering:
    """The `SplitMergeClustering` of a set cascade from plain keyword settings: it takes
    (pops) the fields of SET_KEYS (resolution RESOLUTION by default) and reads the radius' lam,
    noise_scale and theta_bound."""
    keys = {k: settings.pop(k) for k in SET_KEYS if k in settings}
    keys.setdefault("resolution", RESOLUTION)
    radius = {k: settings[k] for k in ("lam", "noise_scale", "theta_bound") if k in settings}
    return SplitMergeClustering(dim, **radius, **keys)


def fedc3ucb_sets(dim: int, n_users: int, n_items: int, list_len: int, horizon: int,
                  **settings: Any) -> SetFederatedCascade:
    """`SetFederatedCascade` from plain keyword settings (`set_detection` takes its
    detection's; the rest go to the class)."""
    settings = dict(settings)
    detection = set_detection(dim, settings)
    return SetFederatedCascade(dim, n_users, n_items, list_len, horizon, detection=detection,
                               **settings)

