"""Federated contextual cascading UCB agents (seed 001): FedC3UCB-H and its baselines.

One policy object plays all |U| agents (and the server) of a run; the run
loop (`privbandit.runtime`) hands it the arriving user u_t and the round's items.
Each round the agent u_t

1. scores every item with U_t(i) = min(theta_u . x_i + beta ||x_i||_{Sigma_u^-1}, 1)
   from the statistics it last received (Alg. 2, line 2);
2. recommends the exact top-K list of those scores (`oracle.top_k_list`);
3. buffers the examined items (positions up to the first click) and their
   clicks (Alg. 2, lines 5-6) and updates its det-ratio trigger (`LocalBuffers`);
4. communicates when det(Sigma_u + Sigma_loc) > (1 + alpha_c) det(Sigma_u), or
   when the auxiliary rule fires: "pt" (a uniform p < p_t = 3 ln t / t,
   FedC3UCB-H), "force" (the agent's 1st, 2nd, 4th, 8th, ... arrival,
   ForceComm, Alg. 4-5) or "none" (NoAuxiliary).  A communication uploads the
   buffer, runs the server (`CascadeServer`: edge deletion and the uploading
   agent's component) and replaces Sigma_u, theta_u by the cluster statistics.

`FederatedCascadeUCB` with `clustering=False` and `auxiliary="none"` is
FedLinUCB (He et al. 2022) adapted to cascading lists: one shared model.
`IndependentCascadeUCB` is FedInd: every agent learns alone, every round,
and never communicates.  Factories with the paper's names are at the end.

Conventions: t is the run loop's 0-based round, the paper's round is t + 1;
the agents start from Sigma_u = lam I and theta_u = 0 (the pseudocode's
zero matrix cannot be inverted); ties between scores go to the lowest item
index.  Cost per round O(I d^2) for the scores (I items, one matrix product)
and O(K d^2) for the buffer, no matrix inversion or determinant; a
communication costs O(|V| d^2 + d^3).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_positive

from ..comm import DOWNLOAD, UPLOAD, CommLog, payload_bytes
from ..envs.cascade import check_ranking
from ..errors import NormBoundError, RewardError, ShapeError, config_error
from ..kernels import sherman_morrison
from ..policies.base import Policy
from ..validation import check_dim, check_items, check_user
from .buffers import LocalBuffers
from .oracle import check_list_length, observed_positions, top_k_list
from .radius import CascadeRadius
from .server import CascadeServer

AUXILIARY = ("pt", "force", "none")


def auxiliary_probability(round_number: int) -> float:
    """p_t = 3 ln t / t for the paper's round t >= 1 (capped at 1; seed 001, Alg. 1)."""
    return min(1.0, 3.0 * math.log(round_number) / round_number)


def is_forced_arrival(arrival: int) -> bool:
    """True on an agent's 1st, 2nd, 4th, 8th, ... arrival (ForceComm, seed 001 Alg. 5)."""
    return arrival > 0 and arrival & (arrival - 1) == 0


class _CascadeAgents(Policy):
    """Shared parts: sizes, validation, per-agent decision statistics and the UCB list."""

    def __init__(
        self,
        dim: int,
        n_users: int,
        n_items: int,
        list_len: int,
        horizon: int,
        *,
        lam: float,
        beta: float | str,
        beta_scale: float,
        noise_scale: float,
        confidence: float,
        item_bound: float | None,
    ) -> None:
        self.dim = check_dim("dim", dim)
        self.n_users = check_dim("n_users", n_users)
        self.n_items = check_dim("n_items", n_items)
        self.list_len = check_list_length(list_len, self.n_items)
        self.horizon = check_dim("horizon", horizon)
        self.lam = check_positive("lam", lam)
        self.item_bound = None if item_bound is None else check_positive("item_bound", item_bound)
        self.radius = CascadeRadius(beta, beta_scale, noise_scale, confidence)
        # decision statistics of every agent: [Sigma_u^-1 | theta_u], (n, d, d + 1)
        self._stacked = np.zeros((self.n_users, self.dim, self.dim + 1))
        self._stacked[:, :, :-1] = np.eye(self.dim) / self.lam
        self._items_shape = (self.n_items, self.dim)
        # relative slack so rounding of normalised vectors passes the bound
        self._bound_sq = None if item_bound is None else self.item_bound**2 * (1 + 1e-9)
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # (items, list) of select

    def _beta_value(self, n_users: int, alpha_c: float) -> float:
        return self.radius.value(
            dim=self.dim, n_users=n_users, alpha_c=alpha_c, list_len=self.list_len,
            horizon=self.horizon, lam=self.lam,
        )

    def scores(self, items: np.ndarray, agent: int) -> np.ndarray:
        """U(i) = min(theta_u . x_i + beta ||x_i||_{Sigma_u^-1}, 1) for the I items, (I,).

        items: (I, d) float.  One matrix product gives both x_i . theta_u and
        Sigma_u^-1 x_i; a NaN or infinite item makes a score non-finite and is refused.
        """
        u = check_user(agent, self.n_users)
        if not isinstance(items, np.ndarray) or items.shape != self._items_shape:
            shape = getattr(items, "shape", type(items).__name__)
            raise ShapeError(f"items must be an array of shape {self._items_shape}; got {shape}")
        z = items @ self._stacked[u]  # (I, d + 1): [Sigma_u^-1 x_i | x_i . theta_u]
        q = np.einsum("kd,kd->k", z[:, :-1], items)
        np.maximum(q, 0.0, out=q)
        s = z[:, -1] + self.widths_beta[u] * np.sqrt(q, out=q)
        if not math.isfinite(s.sum()):
            raise RewardError("items must be finite; got a NaN or infinite entry")
        return np.minimum(s, 1.0, out=s)

    def _set_decision(self, agent: int, inv: np.ndarray, theta: np.ndarray) -> None:
        """Store Sigma_u^-1 and theta_u side by side for the one-product scores."""
        self._stacked[agent, :, :-1] = inv
        self._stacked[agent, :, -1] = theta

    @property
    def inv(self) -> np.ndarray:
        """Sigma_u^-1 of every agent, (n, d, d) (a view)."""
        return self._stacked[:, :, :-1]

    @property
    def theta(self) -> np.ndarray:
        """theta_u of every agent, (n, d) (a view)."""
        return self._stacked[:, :, -1]

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> np.ndarray:
        """The ranked list of K item indices with the highest capped UCBs, (K,) int."""
        ranking = top_k_list(self.scores(items, user), self.list_len)
        self._last = (items, ranking)
        return ranking

    def _observed(
        self, items: np.ndarray, action: Any, feedback: Any
    ) -> tuple[np.ndarray, int | None]:
        """The examined items (m, d) of the round and the row that was clicked (or None).

        The examined items are the data an agent keeps, so their norms are
        checked against item_bound here (m <= K rows, not all I items).
        """
        last = self._last
        self._last = None
        if last is None or items is not last[0] or action is not last[1]:
            items = check_items(items, self.dim, None)
            action = check_ranking(action, items.shape[0], self.list_len)
        m = observed_positions(feedback, self.list_len)
        clicked = m - 1 if feedback < self.list_len else None
        observed = items[action[:m]]
        self._check_norms(observed, "an examined item")
        return observed, clicked

    def _check_norms(self, rows: np.ndarray, what: str) -> None:
        """Refuse rows (m, d) beyond item_bound (the data an agent keeps)."""
        if self.item_bound is not None:
            worst = float(np.einsum("kd,kd->k", rows, rows).max())
            if worst > self._bound_sq:
                raise NormBoundError(
                    f"items must have L2 norm <= item_bound={self.item_bound:g}; "
                    f"got {what} of norm {math.sqrt(worst):.6g}"
                )

    def _base_params(self) -> dict[str, Any]:
        return {
            "dim": self.dim, "n_users": self.n_users, "n_items": self.n_items,
            "list_len": self.list_len, "horizon": self.horizon, "lam": self.lam,
            "beta_value": self.beta, "item_bound": self.item_bound, **self.radius.params(),
        }


class FederatedCascadeUCB(_CascadeAgents):
    """Agents with local buffers, a det-ratio trigger and an optional auxiliary rule,
    and a server that clusters agents (or pools everyone); see the module docstring.

    Parameters: dim d, n_users |U|, n_items I (items per round), list_len K
    (<= I), horizon T (fixes the radius), alpha_c > 0 (communication
    threshold), alpha_d > 0 (deletion threshold), auxiliary in ("pt",
    "force", "none"), clustering (server graph on or off), lam > 0 (ridge
    regulariser), beta ("lemma6" or a number) times beta_scale, noise_scale R,
    confidence (the radius' failure probability), item_bound.

    Privacy guarantee: none (a non-private algorithm); uploads are raw sums.
    """

    name = "fedc3ucb-h"

    def __init__(
        self,
        dim: int,
        n_users: int,
        n_items: int,
        list_len: int,
        horizon: int,
        *,
        alpha_c: float = 1.5,
        alpha_d: float = 4.0,
        auxiliary: str = "pt",
        clustering: bool = True,
        lam: float = 1.0,
        beta: float | str = 0.3,
        beta_scale: float = 1.0,
        noise_scale: float = 0.5,
        confidence: float = 0.1,
        item_bound: float | None = 1.0,
        name: str | None = None,
    ) -> None:
        super().__init__(
            dim, n_users, n_items, list_len, horizon, lam=lam, beta=beta,
            beta_scale=beta_scale, noise_scale=noise_scale, confidence=confidence,
            item_bound=item_bound,
        )
        if auxiliary not in AUXILIARY:
            raise config_error("auxiliary", auxiliary, f"one of {AUXILIARY}")
        if not isinstance(clustering, bool):
            raise config_error("clustering", clustering, "True or False")
        self.auxiliary = auxiliary
        self.alpha_c = check_positive("alpha_c", alpha_c)
        self.server = CascadeServer(self.n_users, self.dim, self.lam, alpha_d,
                                    clustering=clustering)
        self.buffers = LocalBuffers(self.n_users, self.dim, self.alpha_c, self.lam)
        self.beta = self._beta_value(self.n_users, self.alpha_c)
        self.widths_beta = np.full(self.n_users, self.beta)  # per agent: CDP widens it
        self.arrivals = np.zeros(self.n_users, dtype=np.int64)
        self.triggers = dict.fromkeys(("det", "auxiliary"), 0)  # why agents communicated
        self._log = CommLog()
        self._coin = 1.0
        if name is not None:
            self.name = name

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> np.ndarray:
        if self.auxiliary == "pt":
            self._coin = float(rng.random())  # Alg. 2 line 12: one uniform draw per round
        return super().select(items, user, t, rng)

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Buffer the round's feedback, then communicate if a trigger fires (Alg. 2, 13)."""
        u = check_user(user, self.n_users)
        observed, clicked = self._observed(items, action, feedback)
        self.buffers.add(u, observed, clicked)
        self.arrivals[u] += 1
        self._triggered(u, self.buffers.exceeded(u), t)

    def _triggered(self, agent: int, exceeded: bool, t: int) -> None:
        """Communicate if the det-ratio trigger fired (`exceeded`) or, failing it, the
        auxiliary rule does; count which."""
        if exceeded:
            self.triggers["det"] += 1
        elif self._auxiliary_fires(agent, t):
            self.triggers["auxiliary"] += 1
        else:
            return
        self._communicate(agent, t)

    def _auxiliary_fires(self, agent: int, t: int) -> bool:
        if self.auxiliary == "pt":
            return self._coin < auxiliary_probability(t + 1)
        if self.auxiliary == "force":
            return is_forced_arrival(int(self.arrivals[agent]))
        return False

    def _communicate(self, agent: int, t: int) -> None:
        """Upload the buffer, run the server, adopt the cluster statistics (Alg. 1, 8-11)."""
        gram, moment, count = self.buffers.take(agent)
        self._log.record(UPLOAD, 1, payload_bytes(gram, moment, count), round=t)
        gram_clu, theta_clu = self.server.receive(agent, gram, moment, count)
        self._adopt(agent, gram_clu, theta_clu, t)

    def _adopt(self, agent: int, gram: np.ndarray, theta: np.ndarray, t: int) -> None:
        """Download (Sigma_clu, theta_clu) and decide from them."""
        self._log.record(DOWNLOAD, 1, payload_bytes(gram, theta), round=t)
        self._take(agent, gram, theta)

    def _take(self, agent: int, gram: np.ndarray, theta: np.ndarray) -> None:
        """Decide from (Sigma_u, theta_u) = (gram, theta); the buffer starts empty."""
        self._set_decision(agent, np.linalg.inv(gram), theta)
        self.buffers.reset(agent, self.inv[agent])

    @property
    def comm(self) -> CommLog:
        return self._log

    def comm_details(self) -> dict[str, Any]:
        """Why agents communicated: counts by trigger ("det", "auxiliary")."""
        return {"triggers": dict(self.triggers)}

    def cluster_labels(self) -> np.ndarray:
        return self.server.labels()

    def params(self) -> dict[str, Any]:
        return {
            **self._base_params(), "alpha_c": self.alpha_c, "alpha_d": self.server.alpha_d,
            "auxiliary": self.auxiliary, "clustering": self.server.clustering,
        }


class IndependentCascadeUCB(_CascadeAgents):
    """FedInd: each agent runs a cascading UCB on its own data only, updated every round,
    and never communicates (seed 001, Experiments, baseline 2).

    Privacy guarantee: none (a non-private baseline); nothing leaves an agent.
    """

    name = "fedind"

    def __init__(
        self,
        dim: int,
        n_users: int,
        n_items: int,
        list_len: int,
        horizon: int,
        *,
        lam: float = 1.0,
        beta: float | str = 0.3,
        beta_scale: float = 1.0,
        noise_scale: float = 0.5,
        confidence: float = 0.1,
        item_bound: float | None = 1.0,
    ) -> None:
        super().__init__(
            dim, n_users, n_items, list_len, horizon, lam=lam, beta=beta,
            beta_scale=beta_scale, noise_scale=noise_scale, confidence=confidence,
            item_bound=item_bound,
        )
        self.beta = self._beta_value(1, 0.0)
        self.widths_beta = np.full(self.n_users, self.beta)
        self.moment = np.zeros((self.n_users, self.dim))
        self._log = CommLog()

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Add the examined items to the agent's own ridge model (one rank-one step each)."""
        u = check_user(user, self.n_users)
        observed, clicked = self._observed(items, action, feedback)
        inv = self.inv[u]  # a view: updated in place
        for x in observed:
            sherman_morrison(inv, x)
        if clicked is not None:
            self.moment[u] += observed[clicked]
        self._stacked[u, :, -1] = inv @ self.moment[u]

    @property
    def comm(self) -> CommLog:
        return self._log

    def comm_details(self) -> dict[str, Any]:
        return {"triggers": {}}  # never communicates

    def cluster_labels(self) -> np.ndarray:
        return np.arange(self.n_users)

    def params(self) -> dict[str, Any]:
        return self._base_params()


def fedc3ucb_h(dim: int, n_users: int, n_items: int, list_len: int, horizon: int,
               **kwargs: Any) -> FederatedCascadeUCB:
    """FedC3UCB-H (seed 001, Alg. 1-3): clustering server, det-ratio and p_t triggers."""
    return FederatedCascadeUCB(dim, n_users, n_items, list_len, horizon, auxiliary="pt",
                               clustering=True, name="fedc3ucb-h", **kwargs)


def force_comm(dim: int, n_users: int, n_items: int, list_len: int, horizon: int,
               **kwargs: Any) -> FederatedCascadeUCB:
    """ForceComm (seed 001, Alg. 4-5): communicate on each agent's 2^n-th arrival too."""
    return FederatedCascadeUCB(dim, n_users, n_items, list_len, horizon, auxiliary="force",
                               clustering=True, name="forcecomm", **kwargs)


def no_auxiliary(dim: int, n_users: int, n_items: int, list_len: int, horizon: int,
                 **kwargs: Any) -> FederatedCascadeUCB:
    """NoAuxiliary: FedC3UCB-H without the p_t rule (det-ratio trigger only)."""
    return FederatedCascadeUCB(dim, n_users, n_items, list_len, horizon, auxiliary="none",
                               clustering=True, name="noauxiliary", **kwargs)


def fed_linucb(dim: int, n_users: int, n_items: int, list_len: int, horizon: int,
               *, alpha_d: float = 1.0, **kwargs: Any) -> FederatedCascadeUCB:
    """FedLinUCB (He et al. 2022) on cascading lists: one model shared by every agent.

    alpha_d is unused (no clustering) and accepted only for a uniform signature.
    """
    return FederatedCascadeUCB(dim, n_users, n_items, list_len, horizon, auxiliary="none",
                               clustering=False, alpha_d=alpha_d, name="fedlinucb", **kwargs)


def fed_ind(dim: int, n_users: int, n_items: int, list_len: int, horizon: int,
            **kwargs: Any) -> IndependentCascadeUCB:
    """FedInd: independent agents without communication."""
    return IndependentCascadeUCB(dim, n_users, n_items, list_len, horizon, **kwargs)
