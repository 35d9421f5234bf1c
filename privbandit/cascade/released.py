"""`ReleasedSetCascade` ("cdp-fedc3ucb-sets"): a private federated cascade on the set detection.

No paper has this algorithm; it puts seed 001's cascade on the detection of
"fedc3ucb-sets" (`privbandit.clustering.SetClusters`, started alone) and acts,
as "cdp-fclub-dc" does, on released statistics only:

- every round the arriving agent recommends the top K of the capped scores
  min(x . theta + beta ||x||_(M^-1) + c H ||M^-1 x||, 1) of its released
  cluster's model (`private.RewardNoiseRidge`: M = lam I + the members'
  released exact Gram matrices, theta = M^-1 (their summed noisy moments), H a
  bound on the norm of that sum's noise holding for every set of agents at
  once, `private.sum_noise_bound`; c = noise_width_scale, by default "matched":
  beta over one agent's theoretical radius, `radius.lemma6_beta` with
  alpha_c = 0, as `cascade.private` scales its noise term);
- the round's records enter the agent's reward-only stream
  (`private.RewardStreams`: the Gram matrix travels exactly, sum y x with
  noise), on a data-independent schedule (default "geometric"); at each
  release the server moves, splits and merges the agents' clusters on the
  released statistics (noise variance counted; a merge needs the power to see
  a difference of `resolution`) and rebuilds the clusters' models.

What a record is (`record`).  The list is computed from released data, so it
is public along a forced transcript; which of its items the user examined is
not (the items below position 1 are examined only when nothing above was
clicked).  So the records are built from the list alone:

- "displayed" (default): every displayed item x_k with reward 1 if the first
  click was at k, else 0.  The Gram matrix of the K displayed items is public;
  one user-round's change moves the click between two positions (or adds or
  removes it), changing at most two records' rewards: sensitivity 2 B.  The
  estimate is biased -- position k's click has mean w_k prod_(j<k) (1 - w_j),
  not w_k -- but alike for agents of one cluster, so the detection is sound,
  and it keeps the ranking well (docs/cascade.md measures it: 1.25x FedInd's
  regret without privacy, against 1.85x for "first");
- "first": position 1 alone, always examined, with its click: unbiased
  (mean w_1), public Gram, sensitivity B, a quarter of the displayed data.

The full statistic of the examined items (CDP-FedC3UCB-H's) has a secret Gram
matrix; docs/cascade.md measures why it loses.

Privacy guarantee
-----------------
Neighbouring relation: interactive -- one user-round's click feedback in the
environment differs (world, arrivals and contexts the same); the view is
everything the agents and the server send (every release of every agent's
stream, the clusters, the models, the communication), actions adapting.  Why
it holds: every list is computed from the round's items and earlier releases,
so along any sequence of released outputs the records of the two neighbours
have the same features (the displayed items, or position 1) and differ in the
flipped round's rewards only; the Gram prefixes are therefore equal (public:
the end-to-end audit checks it, `tape.PublicValue`) and the flip moves one
agent's moment stream by at most 2 B ("displayed") or B ("first").  Measure:
each agent's stream's Gaussian event (its records in exactly one step each,
the exact accountant's calibration) charged once to the agent's ledger;
agents hold disjoint records.  Release times are the schedule's (public),
every agent releases at each.  Assumptions: contexts and arrivals are public;
items have norm <= item_bound (checked every round); the fast sampler is not
floating-point safe.  Sources: seed 001 (the cascade model, the agents'
UCB); Shariff & Sheffet (2018) and Hanna, Girgis & Fragouli (2022) for noising
only the rewards' part; `privbandit.clustering.splitmerge` for the detection.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.accounting.validation import check_positive
from privbandit.mechanisms.publication import Publication

from ..clustering import SetClusters, SplitMergeClustering, by_smallest_member
from ..comm import DOWNLOAD, UPLOAD, CommLog
from ..errors import RewardError, ShapeError, config_error
from ..private import (
    GuardedReports,
    ReleasePlan,
    RewardNoiseRidge,
    RewardStreams,
    exact_gram_scores,
)
from ..validation import check_probability, check_user
from .algorithm import _CascadeAgents
from .oracle import top_k_list
from .radius import lemma6_beta
from .sets import RESOLUTION, SET_KEYS, set_detection

RECORDS = ("displayed", "first")
UNIT = "one user-round's click feedback in the environment"
PUBLIC = "the list was computed from released statistics only (cdp-fedc3ucb-sets)"


@dataclass(frozen=True)
class CascadeReleasePlan(ReleasePlan):
    """The private side of "cdp-fedc3ucb-sets": the `ReleasePlan` keys (default mechanism
    "mf", schedule "geometric"), `record` ("displayed" or "first", see the module
    docstring) and `failure` (the probability that a noise bound fails, over the run)."""

    mechanism: str = "mf"
    schedule: str = "geometric"
    record: str = "displayed"
    failure: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.record not in RECORDS:
            raise config_error("record", self.record, f"one of {RECORDS}")
        object.__setattr__(self, "failure", check_probability("failure", self.failure))

    def params(self) -> dict:
        return {**super().params(), "record": self.record, "failure": self.failure,
                "release": "reward-only"}


class ReleasedSetCascade(GuardedReports, _CascadeAgents):
    """See the module docstring.  plan: a `CascadeReleasePlan` for `horizon`; detection: a
    `SplitMergeClustering` with a resolution (default: the radius' lam, noise_scale,
    theta_bound and `resolution`); noise_width_scale: "matched" or a number > 0; the other
    keywords as FedInd's (`IndependentCascadeUCB`: lam, beta, beta_scale, noise_scale,
    confidence, item_bound) and theta_bound S."""

    name = "cdp-fedc3ucb-sets"
    unit = UNIT
    released_by = "agent"
    relation = Relation.INTERACTIVE

    def __init__(self, dim: int, n_users: int, n_items: int, list_len: int, horizon: int,
                 plan: CascadeReleasePlan, *, detection: SplitMergeClustering | None = None,
                 resolution: float = RESOLUTION, noise_width_scale: float | str = "matched",
                 theta_bound: float = 1.0, lam: float = 1.0, beta: float | str = 0.3,
                 beta_scale: float = 1.0, noise_scale: float = 0.5, confidence: float = 0.1,
                 item_bound: float | None = 1.0) -> None:
        super().__init__(dim, n_users, n_items, list_len, horizon, lam=lam, beta=beta,
                         beta_scale=beta_scale, noise_scale=noise_scale, confidence=confidence,
                         item_bound=item_bound)
        if not isinstance(plan, CascadeReleasePlan) or plan.horizon != self.horizon:
            raise config_error("plan", plan, f"a CascadeReleasePlan for horizon {horizon}")
        if self.item_bound is None:
            raise config_error("item_bound", None, "a number > 0 (the release's sensitivity)")
        if detection is None:
            detection = SplitMergeClustering(self.dim, lam=self.lam, noise_scale=noise_scale,
                                             theta_bound=theta_bound, resolution=resolution)
        elif not isinstance(detection, SplitMergeClustering) or detection.dim != self.dim:
            raise config_error("detection", detection,
                               f"None or a SplitMergeClustering of dim {self.dim}")
        self.plan, self.schedule = plan, plan.releases
        self.beta = self._beta_value(1, 0.0)
        self.width_scale = self._width_scale(noise_width_scale, theta_bound)
        self.streams = self.reward_streams()
        self.ridge = RewardNoiseRidge(self.dim, self.lam, noise_scale, theta_bound, confidence)
        self.publication = Publication("server")  # the partition and the models it sends
        self.sets = SetClusters(detection, self.n_users, start="alone",  # at every release
                                publication=self.publication)
        self.decisions = dict.fromkeys(("unit_moves", "splits", "merges"), 0)
        self.labels = np.arange(self.n_users)
        self._failure = plan.failure / (2.0 * max(self.schedule.releases, 1))  # per release
        self._rows = np.zeros(self.n_users, dtype=np.intp)  # each agent's cluster model
        self._merged = np.zeros(self.n_users, dtype=bool)   # its cluster has other agents
        self.model_inv = np.eye(self.dim)[None] / self.lam
        self.model_theta = np.zeros((1, self.dim))
        self.model_noise = np.zeros(1)
        self._comm = CommLog()
        self._msg = (self.dim * self.dim + 2 * self.dim + 1) * 8  # Gram, moments, sum x, count
        self._noise_rng: np.random.Generator | None = None
        self._bootstrap: np.random.Generator | None = None

    def reward_streams(self, **overrides: Any) -> RewardStreams:
        """One reward-only stream per agent for the plan's records ("displayed": K records a
        round, a click moving two of them; "first": one), calibrated to the plan's budget;
        `overrides`: `RewardStreams`' sigma and ledgers."""
        displayed = self.plan.record == "displayed"
        return RewardStreams([np.array([u]) for u in range(self.n_users)], self.dim, self.plan,
                             feature_bound=self.item_bound, failure=self.plan.failure / 2.0,
                             records_per_round=self.list_len if displayed else 1,
                             changed_records=2 if displayed else 1, **overrides)

    def _width_scale(self, value: float | str, theta_bound: float) -> float:
        """"matched": beta over one agent's theoretical radius (alpha_c = 0)."""
        if value != "matched":
            if isinstance(value, str):
                raise config_error("noise_width_scale", value, "'matched' or a number > 0")
            return check_positive("noise_width_scale", value)
        r = self.radius
        theory = lemma6_beta(dim=self.dim, n_users=1, alpha_c=0.0, list_len=self.list_len,
                             horizon=self.horizon, lam=self.lam, noise_scale=r.noise_scale,
                             theta_bound=theta_bound, confidence=r.confidence)
        return self.beta / theory

    # -- the round ---------------------------------------------------------------------
    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator
               ) -> np.ndarray:
        u = check_user(user, self.n_users)
        if not isinstance(items, np.ndarray) or items.shape != self._items_shape:
            shape = getattr(items, "shape", type(items).__name__)
            raise ShapeError(f"items must be an array of shape {self._items_shape}; got {shape}")
        k = self._rows[u]
        scores = exact_gram_scores(self.model_theta[k], self.model_inv[k], items, self.beta,
                                   self.width_scale * self.model_noise[k])
        if not np.isfinite(scores.sum()):
            raise RewardError("items must be finite; got a NaN or infinite entry")
        if self._noise_rng is None:  # children of the policy stream (spawning draws nothing)
            self._noise_rng, self._bootstrap = rng.spawn(2)
        ranking = top_k_list(np.minimum(scores, 1.0, out=scores), self.list_len)
        self._last = (items, ranking)
        return ranking

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Enter the round's records (built from the list and the click) into the agent's
        stream; release on the schedule."""
        if self._noise_rng is None:
            raise config_error("update", "called before select", "select first (it gives rng)")
        u = check_user(user, self.n_users)
        _, clicked = self._observed(items, action, feedback)
        shown = items[np.asarray(action)]
        if self.plan.record == "displayed":
            self._check_norms(shown, "a displayed item")
            rewards = np.zeros(self.list_len)
            if clicked is not None:
                rewards[clicked] = 1.0
            records = shown
        else:
            records, rewards = shown[:1], np.array([1.0 if clicked == 0 else 0.0])
        self.streams.observe(u, self.streams.public(u, records, PUBLIC), rewards,
                             merged=bool(self._merged[u]))
        if self.schedule.is_release(t):
            self._release(t)

    def _release(self, t: int) -> None:
        """Every agent's stream steps; the server detects and rebuilds the models."""
        self.streams.release(self._noise_rng)
        n = self.n_users
        self._comm.record(UPLOAD, n, n * self._msg, round=t)
        self._models(self._detect())
        self._comm.record(DOWNLOAD, n, n * self._msg, round=t)

    def _detect(self) -> np.ndarray:
        """The agents' clusters after a release (n,): split/merge on the released
        statistics, the moments' noise variance counted."""
        st = self.streams
        self.sets.detect(st.gram, st.moments, self._bootstrap,
                         variance=np.full(self.n_users, st.variance), counts=st.counts)
        for key in self.decisions:
            self.decisions[key] += getattr(self.sets.last, key)
        return self.sets.labels

    def _models(self, labels: np.ndarray) -> None:
        """Each cluster's model from its members' latest releases."""
        st = self.streams
        self.labels = by_smallest_member(labels)
        _, self._rows = np.unique(labels, return_inverse=True)
        groups = [np.flatnonzero(self._rows == k) for k in range(int(self._rows.max()) + 1)]
        self._merged = np.array([groups[k].size > 1 for k in self._rows])
        m, d = len(groups), self.dim
        self.model_inv, self.model_theta = np.empty((m, d, d)), np.empty((m, d))
        self.model_noise = np.empty(m)
        for k, members in enumerate(groups):
            model = self.ridge.model(st.gram[members].sum(axis=0),
                                     st.moments[members].sum(axis=0),
                                     st.noise_bound(members.size, self._failure))
            self.model_inv[k], self.model_theta[k] = model.inverse, model.theta
            self.model_noise[k] = model.noise_bound
        self.publication.value("models", np.concatenate((
            self.model_theta.ravel(), self.model_inv.ravel(), self.model_noise)))

    # -- reporting ---------------------------------------------------------------------
    def privacy(self) -> PrivacyStatement:
        return self.streams.statement(
            UNIT, f"every list is computed from released statistics (each agent's exact "
                  f"Gram prefix of its {self.plan.record} records and noisy click moments, on a "
                  "data-independent schedule), so every record's features are public and only "
                  "its click reward is noised; clusters, models and communication are "
                  "post-processing")

    def params(self) -> dict[str, Any]:
        det = self.sets.clustering
        return {**self._base_params(), **self.plan.params(), "theta_bound": self.ridge.theta_bound,
                "noise_width_scale": self.width_scale, "sigma": self.streams.streams[0].sigma,
                "detection": "split-merge", "start": "alone",
                **{k: getattr(det, k) for k in SET_KEYS}}

    @property
    def lockstep_ready(self) -> bool:
        return False


def cdp_fedc3ucb_sets(dim: int, n_users: int, n_items: int, list_len: int, horizon: int,
                      **settings: Any) -> ReleasedSetCascade:
    """`ReleasedSetCascade` from plain keyword settings: the `CascadeReleasePlan` keys,
    the `SplitMergeClustering` fields of `sets.SET_KEYS` (resolution RESOLUTION by default,
    with the radius' lam, noise_scale and theta_bound), the rest to the class."""
    plan_keys = ("epsilon", "delta", "mechanism", "schedule", "batch", "sampler", "growth",
                 "record", "failure")
    plan = CascadeReleasePlan(horizon=horizon, **{k: settings.pop(k) for k in plan_keys
                                                  if k in settings})
    return ReleasedSetCascade(dim, n_users, n_items, list_len, horizon, plan,
                              detection=set_detection(dim, settings), **settings)
