"""`GuardedPrivateCascade` ("cdp-fedc3ucb-h+"): private federated cascading bandits that
stay close to the agents going alone (FedInd): each learns from its own data and pays for
its shared rounds (1.225x FedInd at T = 131,071, `examples/cascade_private.py`; not a
guarantee).

Every agent is a party.  It learns from its own data exactly as FedInd does
(its raw statistics need no privacy from itself).  A public coin and
released facts (`private.Billboard`) put some rounds on the shared track:
there the billboard ranks the items by the released model of the agent's
released cluster (noisy prefixes only) and the round's statistics enter the
agent's continual-release stream (`private.PartyStreams`, mechanism by
name), released on a data-independent schedule.  Local rounds act as below
and are never released.  The server clusters agents
from the noisy prefixes with tests that count the noise
(`clustering.NoiseAwareClustering`) and sends each agent the noisy prefixes of
its cluster mates.  Agent u scores item i with

    min(U_own(i), U_fed(i)),   U = min(theta . x_i + beta ||x_i||_(M^-1), 1),

U_own FedInd's (own data, radius beta), U_fed from u's raw data plus its
mates' releases (when u has mates), with radius beta times the ratio of the
theoretical radius that counts the noise (`private.NoisyRidge.radius`) to the
non-private one at the same confidence -- so a practical beta is scaled by
what the noise costs, as `cascade.private` does.  It then recommends the top K.

Privacy guarantee
-----------------
Neighbouring relation: interactive -- one user-round's click feedback in the
environment differs; the view is every release, actions adapting.  A
released round's ranking comes from the billboard (public coin, the round's
items, earlier releases), so neighbours' released records differ in the
flipped round's only (its examined items and click; replace-one).  Sensitivity: a round adds
sum_k z_k z_k^T over at most K examined items of norm <= item_bound B and one
click, Frobenius norm <= K B^2 + 1 (one record of `PartyStreams`).
Measure: (epsilon, delta)-DP per record by the agent's stream event, one
ledger per agent; the server's clusters, what it sends and every other
agent's recommendations are post-processing of the releases (public times).
Sources: seed 001 (the cascade model, FedInd); `privbandit.private`.
"""
from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

import numpy as np

from privbandit.accounting.statement import Relation
from privbandit.mechanisms.publication import Publication

from ..clustering import NoiseAwareClustering
from ..comm import DOWNLOAD, UPLOAD, CommLog
from ..errors import config_error
from ..kernels import oful_beta, sherman_morrison, ucb_scores
from ..private import (
    Billboard,
    GuardedReports,
    GuardPlan,
    NoisyRidge,
    PartyStreams,
    ReleaseSchedule,
    pooled_bias,
)
from ..validation import check_user
from .algorithm import IndependentCascadeUCB
from .oracle import top_k_list


class GuardedPrivateCascade(GuardedReports, IndependentCascadeUCB):
    """See the module docstring.  `plan`: a `private.GuardPlan` for `horizon`."""

    name = "cdp-fedc3ucb-h+"
    unit = "one user-round's click feedback in the environment, seen from outside its agent"
    released_by = "agent"
    relation = Relation.INTERACTIVE
    caveat = ("; released records come only from shared rounds, whose rankings the "
              "billboard chose from released data")

    @classmethod
    def from_settings(cls, dim: int, n_users: int, n_items: int, list_len: int, horizon: int,
                      **settings: Any) -> GuardedPrivateCascade:
        """Split keyword settings into the `GuardPlan` (epsilon, delta, mechanism, ...)
        and FedInd's own keywords."""
        keys = {f.name for f in fields(GuardPlan)} - {"horizon"}
        plan = GuardPlan(horizon=horizon, **{k: settings.pop(k) for k in keys & set(settings)})
        return cls(dim, n_users, n_items, list_len, horizon, plan, **settings)

    def __init__(self, dim: int, n_users: int, n_items: int, list_len: int, horizon: int,
                 plan: GuardPlan, **kwargs: Any) -> None:
        if not isinstance(plan, GuardPlan):
            raise config_error("plan", plan, "a private.GuardPlan")
        super().__init__(dim, n_users, n_items, list_len, horizon, **kwargs)
        if plan.horizon != horizon:
            raise config_error("plan", plan, f"a plan for horizon {horizon}")
        self.plan = plan
        d, n = self.dim, self.n_users
        confidence = self.radius.confidence
        self.schedule: ReleaseSchedule = plan.release_schedule()
        bound = (self.item_bound or 1.0) ** 2 * self.list_len + 1.0
        self.streams = PartyStreams([np.array([u]) for u in range(n)], d, plan,
                                    record_bound=bound)
        failure = confidence * plan.share / (2.0 * n * max(self.schedule.releases, 1))
        self.ridge = NoisyRidge(d, self.lam, self.radius.noise_scale, self.radius.theta_bound,
                                confidence * plan.share / 2.0, failure)
        self.clustering = NoiseAwareClustering(self.ridge, plan.resolution, plan.level,
                                               plan.miss)
        self.labels = np.arange(n)
        self.active = np.zeros(n, dtype=bool)
        self.fed_inv = np.tile(np.eye(d) / self.lam, (n, 1, 1))
        self.fed_b = np.zeros((n, d))
        self.fed_theta = np.zeros((n, d))
        self.fed_beta = np.zeros(n)
        self._raw = np.zeros((n, d + 1, d + 1))
        self.billboard = Billboard(self.streams, self.ridge, plan.rate, plan.merged_rate,
                                   cap=plan.cap)
        self._groups = [np.arange(n)] * n  # each agent's released cluster (all, before one)
        self._merged = np.zeros(n, dtype=bool)  # a released cluster with other agents
        self._shared = False
        self.publication = Publication("server")
        self._comm = CommLog()
        self._msg = (d + 1) * (d + 1) * 8

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> np.ndarray:
        u = check_user(user, self.n_users)
        self._rng = rng
        shared = self.billboard.decide(t, u, items, self._groups[u], rng,
                                       merged=bool(self._merged[u]), rank=self._rank)
        self._shared = shared is not None
        if self._shared:
            self._last = (items, shared)
            return shared
        scores = self.scores(items, u)
        if self.active[u]:
            fed = ucb_scores(self.fed_theta[u], self.fed_inv[u], items, self.fed_beta[u])
            fed += pooled_bias(items, self.plan.resolution)
            np.minimum(scores, np.minimum(fed, 1.0, out=fed), out=scores)
        ranking = top_k_list(scores, self.list_len)
        self._last = (items, ranking)
        return ranking

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        u = check_user(user, self.n_users)
        observed, clicked = self._observed(items, action, feedback)
        inv = self.inv[u]
        for x in observed:
            sherman_morrison(inv, x)
            if self.active[u]:
                sherman_morrison(self.fed_inv[u], x)
        z = np.zeros((observed.shape[0], self.dim + 1))
        z[:, :-1] = observed
        if clicked is not None:
            self.moment[u] += observed[clicked]
            z[clicked, -1] = 1.0
            if self.active[u]:
                self.fed_b[u] += observed[clicked]
        self._stacked[u, :, -1] = inv @ self.moment[u]
        if self.active[u]:
            np.matmul(self.fed_inv[u], self.fed_b[u], out=self.fed_theta[u])
        zz = z.T @ z
        self._raw[u] += zz
        if self._shared:  # only a ranking the billboard chose is released
            self.billboard.record(t, u, action, zz)
            self._shared = False
        if self.schedule.is_release(t):
            self._release(t)

    def _release(self, t: int) -> None:
        st = self.streams
        sent = st.release(self._rng)
        self.billboard.released_changed()
        if sent.size:
            self._comm.record(UPLOAD, int(sent.size), int(sent.size) * self._msg, round=t)
        self.labels = self.clustering.labels(st.released, st.variance, st.counts)
        self.publication.partition(self.labels)  # what the global server sends
        self._rebuild()
        if self._merged.any():  # sent by released clusters alone
            count = int(self._merged.sum())
            self._comm.record(DOWNLOAD, count, count * self._msg, round=t)

    def _rank(self, scores: np.ndarray) -> np.ndarray:
        return top_k_list(np.minimum(scores, 1.0), self.list_len)

    def _rebuild(self) -> None:
        st, r = self.streams, self.ridge
        self._groups = [np.flatnonzero(self.labels == self.labels[u])
                        for u in range(self.n_users)]
        self._merged = np.array([g.size > 1 for g in self._groups])
        for u in range(self.n_users):
            others = np.flatnonzero(self.labels == self.labels[u])
            others = others[others != u]
            model = None if others.size == 0 else r.model(
                st.released[others].sum(axis=0) + self._raw[u], float(st.variance[others].sum()))
            self.active[u] = model is not None
            if model is None:
                continue
            logdet = float(np.linalg.slogdet(model.matrix)[1]) - self.dim * math.log(r.lam)
            plain = oful_beta(logdet, r.lam, r.noise_scale, r.confidence, r.theta_bound)
            self.fed_inv[u], self.fed_b[u] = model.inverse, model.moment
            self.fed_theta[u] = model.theta
            self.fed_beta[u] = self.beta * model.beta / float(plain)

    def params(self) -> dict[str, Any]:
        return {**self._base_params(), **self.plan.params()}
