"""The server of the federated cascading bandits (seed 001, Algorithm 3).

The server keeps, for every agent u, the data it has uploaded (Sigma_ser,
b_ser, T_ser) and its own estimate theta_ser = (lam I + Sigma_ser)^-1 b_ser.
With `clustering=True` it also keeps a graph over agents, complete at the
start.  After each upload of agent u it

1. adds the upload to u's server data and refreshes theta_ser[u];
2. deletes the edge (u, v) for every neighbour v with
   ||theta_ser[u] - theta_ser[v]|| > alpha_d (F(T_ser[u]) + F(T_ser[v])),
   F(T) = sqrt((1 + ln(1 + T)) / (1 + T))                     (Alg. 3, line 9)
   (a subclass may add a per-agent slack, `estimate_slack`);
3. finds u's connected component V and returns the cluster statistics
   Sigma_clu = lam I + sum_{v in V} Sigma_ser[v] and theta_clu = Sigma_clu^-1 b_clu.

Order: the paper's pseudocode lists the component before the update of u's
data, its prose after the edge test; privbandit follows the prose (steps 1-3),
so what u receives already reflects its own upload and the refreshed graph.
With `clustering=False` every agent is in one component (FedLinUCB, He et al.
2022): the server aggregates everything and never tests edges.
"""
from __future__ import annotations

import numpy as np

from privbandit.accounting.validation import check_positive

from ..kernels import UserGraph, club_confidence
from ..validation import check_dim


class CascadeServer:
    """Server data of n agents, the agent graph and the cluster statistics it sends back.

    Arrays (read them): gram (n, d, d) = Sigma_ser, moment (n, d) = b_ser,
    count (n,) = T_ser, theta (n, d) = theta_ser.
    """

    def __init__(
        self, n_users: int, dim: int, lam: float, alpha_d: float, *, clustering: bool = True
    ) -> None:
        self.n_users = check_dim("n_users", n_users)
        self.dim = check_dim("dim", dim)
        self.lam = check_positive("lam", lam)
        self.alpha_d = check_positive("alpha_d", alpha_d)
        self.clustering = bool(clustering)
        self.graph = UserGraph.complete(self.n_users) if self.clustering else None
        self.gram = np.zeros((self.n_users, self.dim, self.dim))
        self.moment = np.zeros((self.n_users, self.dim))
        self.count = np.zeros(self.n_users, dtype=np.int64)
        self.theta = np.zeros((self.n_users, self.dim))
        self._ridge = self.lam * np.eye(self.dim)
        self.deleted = 0  # edges deleted so far

    # -- one upload -----------------------------------------------------------------
    def receive(
        self, agent: int, gram: np.ndarray, moment: np.ndarray, count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Add an agent's buffered data (Alg. 3, lines 3-4); return (Sigma_clu, theta_clu)."""
        self.gram[agent] += gram
        self.moment[agent] += moment
        self.count[agent] += count
        return self._after_upload(agent)

    def replace(
        self, agent: int, gram: np.ndarray, moment: np.ndarray, count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Store an agent's cumulative statistics (a privatized prefix sum) instead of adding."""
        self.gram[agent] = gram
        self.moment[agent] = moment
        self.count[agent] = count
        return self._after_upload(agent)

    def _after_upload(self, agent: int) -> tuple[np.ndarray, np.ndarray]:
        own = self.ridge(np.array([agent])) + self.gram[agent]
        self.theta[agent] = np.linalg.solve(own, self.moment[agent])
        if self.graph is not None:
            self._test_edges(agent)
        return self.cluster_statistics(agent)

    def _test_edges(self, agent: int) -> None:
        others = self.graph.neighbors(agent)
        if others.size == 0:
            return
        gaps = np.linalg.norm(self.theta[others] - self.theta[agent], axis=1)
        both = np.append(others, agent)
        radii = self.alpha_d * club_confidence(self.count[both]) + self.estimate_slack(both)
        far = others[gaps > radii[:-1] + radii[-1]]
        if far.size:
            self.graph.delete_edges(agent, far)
            self.deleted += int(far.size)

    def ridge(self, members: np.ndarray) -> np.ndarray:
        """The regulariser added to the pooled data of the agents `members`: lam I."""
        return self._ridge

    def estimate_slack(self, agents: np.ndarray) -> np.ndarray:
        """Extra error of each agent's estimate added to the deletion threshold (none here)."""
        return np.zeros(agents.size)

    # -- what the server knows --------------------------------------------------------
    def members(self, agent: int) -> np.ndarray:
        """The agents in `agent`'s connected component (everyone without clustering)."""
        if self.graph is None:
            return np.arange(self.n_users)
        return self.graph.component(agent)

    def cluster_statistics(self, agent: int) -> tuple[np.ndarray, np.ndarray]:
        """(Sigma_clu, theta_clu) of `agent`'s component (Alg. 3, line 2)."""
        members = self.members(agent)
        gram = self.ridge(members) + self.gram[members].sum(axis=0)
        theta = np.linalg.solve(gram, self.moment[members].sum(axis=0))
        return gram, theta

    def labels(self) -> np.ndarray:
        """Detected cluster label of each agent (its component's smallest index)."""
        if self.graph is None:
            return np.zeros(self.n_users, dtype=np.int64)
        return np.array(self.graph.labels)
