"""`GuardedFederatedClub` ("cdp-fclub-dc+"): private federation that stays close to going
alone: it acts on each server's raw data on local rounds and pays for its shared rounds
(1.06-1.07x going alone in the main job's world, `examples/guarded_sharing.py`; not a
guarantee).

Each local server (a party) keeps its users' raw data, which needs no
privacy from itself.  A public coin (`private.Billboard`) puts a share
`rate` of rounds on the shared track: there the billboard chooses the item
from released data only (the user's released cluster's exact Gram prefixes
and noisy reward moments, with the width that counts the noise) and the
record enters the user's reward-only stream (`private.RewardStreams`,
mechanism by name: the features of a billboard's record are public, so only
sum y x is noised), released on a data-independent schedule
(`private.ReleaseSchedule`).  The
other rounds are local: the server acts on everything it holds, as below,
and their records are never released.  The
global server clusters users from the noisy prefixes with tests that count
the noise (`clustering.NoiseAwareClustering`), and sends every server, for each
of its users, the noisy prefixes of that user's cluster mates on other
servers.  A server then serves user u from two models:

- own: CLUB's cluster model of u, confidence level (1 - share) alpha;
- federated: the raw data of u's cluster mates on u's server (u included,
  always current) plus the mates' released prefixes from other servers
  (exact Gram, noisy moments), with the width of `private.RewardNoiseRidge`
  (a bound on the moments' noise uniform over every set of units; confidence
  share alpha), when u's cluster has mates on other servers;

and on a local round recommends the item with the highest min(UCB_own,
UCB_fed): both are upper confidence bounds for u's reward, so their minimum
is too (with probability >= 1 - alpha), and it is never looser than going
alone's.  UCB_fed adds resolution * ||x||, the bias of a pooled estimate:
the merge tests keep apart users whose preferences differ by the resolution or
more (with the tests' power), so merged users differ by less.  That term is
exact when the members' data are alike (equal Gram matrices); a
matrix-weighted average can reach further, and then UCB_fed (and so the
minimum) may fall below u's mean reward: the guard then still never acts
looser than going alone, but is not an upper confidence bound.  Shared
rounds pay for acting on released data only; that is the price of
federation that stays private when actions adapt.

Privacy guarantee
-----------------
Neighbouring relation: interactive -- one user-round's reward in the
environment differs (world, arrivals and contexts the same); the view is
everything every OTHER server receives over the whole run, actions adapting
(a local server holds its users' raw data).  Why it holds: a released
record's action is chosen by the billboard from the public coin, the
round's items and earlier releases, so in neighbouring environments, along
any sequence of released outputs, the released records are the same except
the flipped round's, if it is shared (its reward alone differs); local
rounds never reach a stream.  The released records' features are therefore
the same in both neighbours (their Gram prefixes are released exactly, as
`tape.PublicValue`s the end-to-end audit compares).  Sensitivity: ||x|| <=
item_bound B, y clipped to [0, 1], so the flipped record moves its user's
sum y x by at most B; each record enters one step of its user's stream.
Measure: (epsilon, delta)-DP by the streams' Gaussian event (`RewardStreams`,
one ledger per server);
clustering, downloads and every other server's actions are post-processing
of the releases, whose times are public.  Audited end to end
(`privbandit.auditing.end_to_end`).  Source: seed 000 (FCLUB setting, CLUB baseline);
Shariff & Sheffet (2018) for acting on released prefixes; the tests of
`privbandit.private`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.statement import Relation
from privbandit.mechanisms.publication import Publication

from ..clustering import NoiseAwareClustering
from ..comm import DOWNLOAD, SERVER, UPLOAD, CommLog, party
from ..errors import config_error
from ..kernels import sherman_morrison
from ..policies.base import Policy
from ..policies.club import CLUB
from ..private import (
    Billboard,
    GuardedReports,
    GuardPlan,
    RewardNoiseRidge,
    RewardStreams,
    exact_gram_scores,
    pooled_bias,
)
from ..validation import check_action, check_items, check_reward, check_user
from .baselines import PerServer
from .config import FclubConfig

# The study entry's merge-test resolution (GuardPlan's generic default is 0.2): on a
# real-data world, where users are close but not equal, 0.2 merged users far enough apart
# to cost 5.4% over going alone at epsilon = 8; 0.15 costs 1.8% there and still finds the
# synthetic world's clusters at epsilon = 8 (docs/private_federation.md).
RESOLUTION = 0.15


class GuardedFederatedClub(GuardedReports, Policy):
    """See the module docstring.  Shapes: items (K, d), ||x_k|| <= item_bound."""

    name = "cdp-fclub-dc+"
    unit = "one user-round's reward in the environment, seen from outside its local server"
    released_by = "server"
    relation = Relation.INTERACTIVE
    caveat = ("; released records come only from shared rounds, whose actions the billboard "
              "chose from released data")

    def __init__(self, config: FclubConfig, plan: GuardPlan) -> None:
        if not isinstance(config, FclubConfig):
            raise config_error("config", config, "an FclubConfig")
        if not isinstance(plan, GuardPlan):
            raise config_error("plan", plan, "a GuardPlan")
        self.config, self.plan = config, plan
        d, n = config.dim, config.n_users
        confidence = config.confidence
        radius = config.radius()
        self.own = PerServer(
            lambda m: CLUB(d, m, alpha=config.alpha, beta_scale=radius.scale, lam=config.lam,
                           noise_scale=radius.noise_scale,
                           confidence=(1.0 - plan.share) * confidence,
                           theta_bound=config.theta_bound, item_bound=config.item_bound),
            n, config.n_servers, "club")
        self.server = self.own.server
        self._rounds = np.zeros(config.n_servers, dtype=np.int64)
        self.schedule = plan.release_schedule()
        parties = [np.flatnonzero(self.server == s) for s in range(config.n_servers)]
        # the noise bounds of the released models share half the federated model's failure
        self.streams = RewardStreams(parties, d, plan, feature_bound=config.item_bound,
                                     failure=confidence * plan.share / 2.0)
        self.ridge = RewardNoiseRidge(d, config.lam, radius.noise_scale, config.theta_bound,
                                      confidence * plan.share / 2.0)
        self.clustering = NoiseAwareClustering(self.ridge, plan.resolution, plan.level,
                                               plan.miss)
        self.billboard = Billboard(self.streams, self.ridge, plan.rate, plan.merged_rate,
                                   config.beta_scale, plan.cap)
        self._groups = [np.arange(n)] * n  # each user's released cluster (all, before one)
        self._merged = np.zeros(n, dtype=bool)  # released cluster spans other servers
        self._shared = False
        self._raw = np.zeros((n, d + 1, d + 1))  # each user's raw statistics, cumulative
        self.labels = np.arange(n)
        self.active = np.zeros(n, dtype=bool)  # users with a federated model
        self._mates = [np.empty(0, dtype=np.intp)] * n  # none before the first release
        self.inv = np.tile(np.eye(d) / config.lam, (n, 1, 1))
        self.b = np.zeros((n, d))
        self.theta = np.zeros((n, d))
        self.beta = np.zeros(n)
        self.noise = np.zeros(n)  # the bound on the federated moments' noise norm
        self.publication = Publication("global server")
        self._comm = CommLog()
        self._msg = (d * d + 2 * d + 1) * 8  # a user's release: Gram, moments, feature sum
        self._checked: np.ndarray | None = None

    # -- the round -----------------------------------------------------------------------
    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        user = check_user(user, self.config.n_users)
        self._checked = items = check_items(items, self.config.dim, self.config.item_bound)
        self._rng = rng  # the privacy noise of the releases that follow this round
        shared = self.billboard.decide(t, user, items, self._groups[user], rng,
                                       merged=bool(self._merged[user]))
        self._shared = shared is not None
        if self._shared:
            return shared
        s = self.server[user]
        own = self.own.policies[s].scores(items, int(self.own.local[user]))
        if self.active[user]:
            fed = exact_gram_scores(self.theta[user], self.inv[user], items, self.beta[user],
                                    self.noise[user])
            fed += pooled_bias(items, self.plan.resolution)
            np.minimum(own, fed, out=own)
        return int(np.argmax(own))

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        user = check_user(user, self.config.n_users)
        if items is not self._checked:
            items = check_items(items, self.config.dim, self.config.item_bound)
        self._checked = None
        action = check_action(action, items.shape[0])
        y = min(max(check_reward(feedback), 0.0), 1.0)  # the sensitivity assumes [0, 1]
        s = self.server[user]
        self.own.policies[s].update(items, int(self.own.local[user]), action, y,
                                    int(self._rounds[s]))
        self._rounds[s] += 1
        x = items[action]
        z = np.append(x, y)
        self._raw[user] += np.multiply.outer(z, z)
        if self._shared:  # only a round whose action the billboard chose is released
            self.billboard.record(t, user, action, (x, y))
            self._shared = False
        # the user's raw record joins the federated models of its mates on its server
        mates = self._mates[user]
        if mates.size:
            block = self.inv[mates]
            sherman_morrison(block, x)  # one batched rank-one update for every mate
            self.inv[mates] = block
            self.b[mates] += y * x
            self.theta[mates] = np.matmul(block, self.b[mates][:, :, None])[:, :, 0]
        if self.schedule.is_release(t):
            self._release(t, self._rng)

    # -- releases, clustering and downloads ----------------------------------------------
    def _release(self, t: int, rng: np.random.Generator) -> None:
        self.streams.release(rng)  # every user's stream steps
        self.billboard.released_changed()
        uploads = np.bincount(self.server, minlength=self.config.n_servers)
        for s in np.flatnonzero(uploads):
            self._comm.record(UPLOAD, int(uploads[s]), int(uploads[s]) * self._msg, round=t,
                              sender=party("server", int(s)))
        st = self.streams
        self.labels = self.clustering.labels(st.released, st.variances, st.counts)
        self.publication.partition(self.labels)  # what the global server sends
        self._rebuild()
        # the server sends mates' prefixes by released clusters alone (what a server then
        # builds from them with its raw data is its own affair)
        got = np.bincount(self.server[self._merged], minlength=self.config.n_servers)
        for s in np.flatnonzero(got):
            self._comm.record(DOWNLOAD, int(got[s]), int(got[s]) * self._msg, round=t,
                              sender=SERVER)

    def _rebuild(self) -> None:
        """Every user's federated model from its cluster: own-server raw + others' releases."""
        st, d = self.streams, self.config.dim
        for u in range(self.config.n_users):
            members = np.flatnonzero(self.labels == self.labels[u])
            others = members[(self.server[members] != self.server[u]) & (st.counts[members] > 0)]
            mine = self._raw[members[self.server[members] == self.server[u]]].sum(axis=0)
            self.active[u] = others.size > 0
            if not self.active[u]:
                continue
            model = self.ridge.model(st.gram[others].sum(axis=0) + mine[:d, :d],
                                     st.moments[others].sum(axis=0) + mine[:d, d],
                                     st.noise_bound(others.size, st.failure))
            self.inv[u], self.b[u], self.theta[u] = model.inverse, model.moment, model.theta
            self.beta[u] = self.config.beta_scale * model.beta
            self.noise[u] = model.noise_bound
        # who shares a user's records until the next release: active cluster mates on its server
        self._mates = [np.flatnonzero((self.server == self.server[u])
                                      & (self.labels == self.labels[u]) & self.active)
                       for u in range(self.config.n_users)]
        self._groups = [np.flatnonzero(self.labels == self.labels[u])
                        for u in range(self.config.n_users)]
        # from the released labels alone (the federated model's existence reads raw data)
        self._merged = np.array([np.any(self.server[g] != self.server[u])
                                 for u, g in enumerate(self._groups)])

    def params(self) -> dict[str, Any]:
        return {**self.config.params(), **self.plan.params()}

    # -- replicates in lockstep ---------------------------------------------------------
    @property
    def lockstep_ready(self) -> bool:
        """False: the batched twin predates the billboard's shared track."""
        return False
