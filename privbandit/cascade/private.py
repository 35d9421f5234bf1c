"""CDP-FedC3UCB-H: FedC3UCB-H whose every upload is a tree-privatized prefix sum.

No paper has this algorithm; it combines seed 001's protocol with the
tree-based privatizer of seed 000 (Algorithm 5) and Shariff & Sheffet (2018).

Agent side.  Each agent u owns a continual-release stream (`mechanism`: "tree", the
binary `privbandit.mechanisms.tree.TreePrivatizer` by default; "honaker"; "mf") and a
`Ledger`.  Its record of a round is the increment z z^T summed over the
examined items, with z = [x; click] in R^(d+1).  With schedule "every-round"
(the default) the stream steps at each of u's arrivals (horizon T) and u
keeps the noisy prefix P_u it releases; with "fixed" or "doubling" batches
(`privbandit.private.ReleaseSchedule`, horizon counted in releases) u's
records wait, raw, until the next release round, when every agent with
waiting records puts them into its stream as one step (each record in
exactly one step, clipped on its own) and re-reads its trigger.
Everything it sends or decides afterwards is a function of P_u, of what the
server sent back and of data-independent quantities (contexts, arrival
counts, the p_t coins):

- the det-ratio trigger uses the noisy buffer Sigma~_loc = P_u - P_u(last
  upload) (top-left d x d block): det(Sigma_u + Sigma~_loc) > (1 + alpha_c)
  det(Sigma_u).  Noise makes the increment full rank, so the determinant
  lemma does not apply and the ratio det(I + Sigma_u^-1 Sigma~_loc) is
  evaluated directly (one d x d determinant per round; an indefinite noisy
  matrix, sign <= 0, does not trigger);
- an upload sends P_u itself; the server replaces u's statistics by it
  (`CascadeServer.replace`) and counts u's examined items T_u as the
  privatized trace of P_u's Gram block over B^2 (the count itself for
  unit-norm items), kept within [a, K a], a the arrivals P_u holds.

Every record is declared to the agent's tree as it enters it, and the server
publishes its partition and each model it sends (`publication`, for the
end-to-end audit; post-processing of the releases).

Server side (`PrivateCascadeServer`).  A stored prefix after s steps holds
popcount(s) node noises (public: s counts arrivals); a pooled sum of
prefixes holding n node noises in all gets the regulariser (lam + rho(n)) I,
rho(n) a high-probability bound on the operator norm of that noise
(`TreeNoiseBounds`), so the matrix dominates lam I + (true Gram) and stays
positive definite; the edge test's threshold alpha_d (F(T_u) + F(T_v)) gets
the slack s_u + s_v, s_u = (gamma(n_u) + rho(n_u) S) / lambda_min(u's own
matrix) (the error V^-1 (h - N theta) the noise adds to an estimate, gamma
bounding the noise of b; the ridge shift's bias rho V^-1 theta is left out
as it is nearly common to agents of one cluster).

Confidence width.  theta~ - theta = V^-1 (g + h - (N + rho I) theta) for the
pooled matrix V; its V-norm exceeds the non-private radius by at most
(gamma(n) + 2 rho(n) S) / sqrt(lambda_min(V)) (Shariff & Sheffet 2018, Prop. 4
without the PSD shift), so agent u uses beta + noise_width_scale * that term,
refreshed at every download.  noise_width_scale="matched" (default) scales
the noise term like the rest of the radius: by beta / lemma6_beta(...), the
fraction of the theoretical radius that the practical beta is (beta_scale
when beta="lemma6"); 1.0 adds the full theoretical term.

Privacy guarantee
-----------------
Neighbouring relation: interactive -- one user-round's click feedback in the
environment differs, the view being every release, actions adapting.  An
agent's recommendations read the model the server built from released
prefixes (`_adopt`), never its raw records, and its triggers read its noisy
prefix and public coins; so along any sequence of released outputs the
records of neighbouring environments differ in the flipped round only (its
examined items and click; replace-one).  Audited end to end
(`privbandit.auditing.end_to_end`).  Sensitivity: the round's increment sum_k z_k z_k^T has
Frobenius norm <= K B^2 + 1 (K examined items of norm <= item_bound B, one
click), so two neighbours' increments differ by <= sqrt(2) (K B^2 + 1) in
Frobenius norm; that is the tree's l2_sensitivity (clip_norm K B^2 + 1, never
reached by valid items).  Mechanism: per agent, the binary tree over T steps
with symmetric Gaussian node noise (one record enters ceil(log2 T) + 1
nodes), or the chosen mechanism over the schedule's releases.  Release
times depend on the round index only.
Privacy measure: (epsilon, delta)-DP per agent's record, certified by the
agent's ledger (accountant "exact-gaussian" by default, the tree's
`TreeAggregationEvent` charged once before the first release); calibration
"tight" (exact accountant) or "paper" (seed 000's node formula).  Everything
that leaves an agent -- uploads, the timing of uploads, and therefore every
download, server decision and other agents' recommendations -- is
post-processing of the trees' releases and data-independent quantities, so
the whole transcript is (epsilon, delta)-DP for that relation.  Assumptions:
contexts and arrivals are not private; items have norm <= item_bound
(checked every round); the horizon T is fixed in advance; the fast NumPy
sampler (default for simulation) is not floating-point safe, sampler="exact"
uses OpenDP's.  Sources: seed 001 Alg. 1-3; seed 000 Alg. 5; Chan, Shi &
Song (2011); Shariff & Sheffet (2018).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.ledger import Ledger
from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.accounting.validation import check_positive
from privbandit.mechanisms.publication import Publication
from privbandit.mechanisms.samplers import Sampler

from ..comm import UPLOAD
from ..errors import config_error
from ..privacy import DEFAULT_SAMPLER, sampler_name
from ..private.plan import ReleasePlan
from ..private.schedule import GROWTH
from ..validation import check_user
from .algorithm import FederatedCascadeUCB
from .radius import lemma6_beta
from .server import CascadeServer

UNIT = ("one user-round's click feedback in the environment (its examined items and click), "
        "actions adapting")


@dataclass(frozen=True)
class TreeNoiseBounds:
    """High-probability bounds on the tree noise of a sum of released prefixes.

    A tree's prefix after s steps carries popcount(s) independent node
    noises of per-entry std sigma (off-diagonal; the diagonal has twice the
    variance); s counts arrivals, which are public.  A sum of prefixes
    carrying n node noises in all is a symmetric Gaussian matrix of size
    D = d + 1 with entry std sigma sqrt(n).  With probability >= 1 - level
    over all of `releases` releases: ||N||_op <= rho(n) = sigma sqrt(n)
    (2 sqrt(D) + 2 sqrt(ln(releases / level))) (norm concentration of
    Gaussian symmetric matrices, E||N|| <= 2 sqrt(D) sigma sqrt(n), Lipschitz
    constant sqrt(2) sigma sqrt(n)), and the moment column's noise
    ||h|| <= gamma(n) = sigma sqrt(n) (sqrt(d) + sqrt(2 ln(releases / level))).
    """

    sigma: float
    dim: int
    releases: int
    level: float = 0.1

    def rho(self, nodes: int) -> float:
        tail = 2.0 * math.sqrt(math.log(self.releases / self.level))
        return self.sigma * math.sqrt(nodes) * (2.0 * math.sqrt(self.dim + 1) + tail)

    def gamma(self, nodes: int) -> float:
        tail = math.sqrt(2.0 * math.log(self.releases / self.level))
        return self.sigma * math.sqrt(nodes) * (math.sqrt(self.dim) + tail)


class PrivateCascadeServer(CascadeServer):
    """The server of CDP-FedC3UCB-H: noise-dominating regularisers, noise-aware edge test.

    `nodes[u]` is the number of node noises in u's stored prefix
    (popcount of its step count, public).
    """

    def __init__(
        self, n_users: int, dim: int, lam: float, alpha_d: float, noise: TreeNoiseBounds,
        theta_bound: float,
    ) -> None:
        super().__init__(n_users, dim, lam, alpha_d, clustering=True)
        self.noise = noise
        self.theta_bound = theta_bound
        self.nodes = np.zeros(self.n_users)  # node noises (variance units of sigma^2)
        self.floor = np.full(self.n_users, lam)  # lambda_min of each agent's own matrix

    def noise_nodes(self, members: np.ndarray) -> float:
        return float(self.nodes[members].sum())

    def ridge(self, members: np.ndarray) -> np.ndarray:
        return (self.lam + self.noise.rho(self.noise_nodes(members))) * np.eye(self.dim)

    def replace_prefix(
        self, agent: int, prefix: np.ndarray, count: int, nodes: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Store agent's released prefix ((d+1, d+1): Gram block and moment column)."""
        self.nodes[agent] = nodes
        d = self.dim
        return self.replace(agent, prefix[:d, :d], prefix[:d, d], count)

    def _after_upload(self, agent: int) -> tuple[np.ndarray, np.ndarray]:
        own = self.ridge(np.array([agent])) + self.gram[agent]
        self.floor[agent] = max(float(np.linalg.eigvalsh(own)[0]), self.lam)
        return super()._after_upload(agent)

    def estimate_slack(self, agents: np.ndarray) -> np.ndarray:
        """||V^-1 (h - N theta)|| <= (gamma + rho S) / lambda_min(V): the noise's error."""
        nodes = self.nodes[agents]
        noise = np.array([self.noise.gamma(n) + self.noise.rho(n) * self.theta_bound
                          for n in nodes.tolist()])
        return noise / self.floor[agents]


class CDPFedC3UCBH(FederatedCascadeUCB):
    """FedC3UCB-H with per-agent tree-privatized uploads; see the module docstring
    (it states the privacy guarantee).

    Extra parameters: epsilon > 0 and delta in (0, 1) (each agent's budget),
    calibration "tight" | "paper" (paper_formula "seed000" | "shariff-sheffet"),
    mechanism ("tree", "honaker", "mf"), schedule ("every-round", "fixed",
    "doubling") and batch (rounds per release; default horizon // 32),
    accountant (the ledgers'), sampler (`privbandit.privacy.DEFAULT_SAMPLER`, or
    another `Sampler` or its name), noise_level (failure probability of the noise bounds),
    noise_width_scale ("matched", the default, or a number > 0: multiplies the
    noise term of the width).
    """

    name = "cdp-fedc3ucb-h"

    def __init__(
        self,
        dim: int,
        n_users: int,
        n_items: int,
        list_len: int,
        horizon: int,
        *,
        epsilon: float,
        delta: float,
        calibration: str = "tight",
        paper_formula: str = "seed000",
        mechanism: str = "tree",
        schedule: str = "every-round",
        batch: int | None = None,
        growth: float = GROWTH,
        accountant: str = "exact-gaussian",
        sampler: Sampler | str | None = DEFAULT_SAMPLER,
        noise_level: float = 0.1,
        noise_width_scale: float | str = "matched",
        alpha_d: float = 4.0,
        theta_bound: float = 1.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(dim, n_users, n_items, list_len, horizon, auxiliary="pt",
                         clustering=True, alpha_d=alpha_d, **kwargs)
        plan = ReleasePlan(epsilon, delta, self.horizon, mechanism, schedule, batch, sampler,
                           growth)
        plan.check_paper_calibration(calibration)
        self.plan = plan
        self.epsilon, self.delta, self.sampler = plan.epsilon, plan.delta, plan.sampler
        self.schedule = plan.releases
        self.accountant = accountant
        self.theta_bound = check_positive("theta_bound", theta_bound)
        self.noise_width_scale = self._width_scale(noise_width_scale)
        bound = 1.0 if self.item_bound is None else self.item_bound
        self.record_norm = self.list_len * bound * bound + 1.0
        shape = (self.dim + 1, self.dim + 1)
        self.mechanism = mechanism
        sensitivity = {"l2_sensitivity": math.sqrt(2.0) * self.record_norm,
                       "clip_norm": self.record_norm, "symmetric": True}
        paper = {"paper_formula": paper_formula} if mechanism == "tree" else {}
        first = plan.stream(shape, calibration=calibration, **paper, **sensitivity)
        # calibrated once; the other agents' streams reuse its sigma (same event)
        self.trees = [first] + [plan.stream(shape, sigma=first.sigma, **sensitivity)
                                for _ in range(self.n_users - 1)]
        self._ledgers = [plan.ledger(f"agent {u}", accountant=accountant,
                                     statement=self._statement(f"agent {u}", {}))
                         for u in range(self.n_users)]
        for ledger, tree in zip(self._ledgers, self.trees, strict=True):
            ledger.charge(tree.event)  # before any release
        self.calibration = calibration
        level = check_positive("noise_level", noise_level)
        if level >= 1:
            raise config_error("noise_level", noise_level, "a probability in (0, 1)")
        self.noise = TreeNoiseBounds(self.trees[0].sigma, self.dim,
                                     self.schedule.releases * self.n_users, level)
        self.server = PrivateCascadeServer(self.n_users, self.dim, self.lam, alpha_d,
                                           self.noise, self.theta_bound)
        self._prefix = np.zeros((self.n_users, self.dim + 1, self.dim + 1))
        self._in_prefix = np.zeros(self.n_users, dtype=np.int64)  # arrivals P_u holds
        self._waiting: list[list[np.ndarray]] = [[] for _ in range(self.n_users)]
        self._uploaded = np.zeros_like(self._prefix)
        self._eye = np.eye(self.dim)
        self._rng: np.random.Generator | None = None
        self.publication = Publication("server")  # the partition and the models it sends

    def _width_scale(self, value: float | str) -> float:
        """"matched": the fraction of the theoretical radius the base radius is (see docs)."""
        if value != "matched":
            if isinstance(value, str):
                raise config_error("noise_width_scale", value, "'matched' or a number > 0")
            return check_positive("noise_width_scale", value)
        if self.radius.beta == "lemma6":
            return self.radius.scale
        theory = lemma6_beta(dim=self.dim, n_users=self.n_users, alpha_c=self.alpha_c,
                             list_len=self.list_len, horizon=self.horizon, lam=self.lam,
                             noise_scale=self.radius.noise_scale,
                             theta_bound=self.radius.theta_bound, confidence=self.radius.confidence)
        return self.beta / theory

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> np.ndarray:
        if self._rng is None:
            # tree noise from a child of the policy stream (spawning draws nothing), so
            # the p_t coins are the non-private algorithm's, round for round
            self._rng = rng.spawn(1)[0]
        return super().select(items, user, t, rng)

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Feed the round's record to the agent's tree, then test the triggers on its release."""
        u = check_user(user, self.n_users)
        observed, clicked = self._observed(items, action, feedback)
        if self._rng is None:
            raise config_error("update", "called before select", "select first (it gives rng)")
        z = np.zeros((observed.shape[0], self.dim + 1))
        z[:, : self.dim] = observed
        if clicked is not None:
            z[clicked, self.dim] = 1.0
        self.arrivals[u] += 1
        self.publication.fed(self.trees[u], schedule=self.schedule, unit=u, party=u)
        if self.schedule.kind == "every-round":
            self._prefix[u] = self.trees[u].add(z.T @ z, self._rng)
            self._in_prefix[u] = self.arrivals[u]
        else:
            self._waiting[u].append(z.T @ z)
            if self.schedule.is_release(t):
                self._release_waiting(u, t)
        self._triggered(u, self._noisy_trigger(u), t)

    def _release_waiting(self, arriving: int, t: int) -> None:
        """A release round: every agent with waiting records steps its stream once; the
        others re-read their trigger on the new prefix (the arriving agent's caller does)."""
        for agent in [a for a, rows in enumerate(self._waiting) if rows]:
            rows, self._waiting[agent] = np.stack(self._waiting[agent]), []
            self._prefix[agent] = self.trees[agent].add_records(rows, self._rng)
            self._in_prefix[agent] += rows.shape[0]
            if agent != arriving and self._noisy_trigger(agent):
                self.triggers["det"] += 1
                self._communicate(agent, t)

    def _noisy_trigger(self, agent: int) -> bool:
        d = self.dim
        local = self._prefix[agent, :d, :d] - self._uploaded[agent, :d, :d]
        sign, logdet = np.linalg.slogdet(self._eye + self.inv[agent] @ local)
        return bool(sign > 0 and logdet > self.buffers.log_threshold)

    def _communicate(self, agent: int, t: int) -> None:
        prefix = self._prefix[agent].copy()
        count = self._examined_estimate(agent, prefix)
        self._log.record(UPLOAD, 1, prefix.nbytes + 8, round=t)
        self._uploaded[agent] = prefix
        # node equivalents of the noise in this prefix (popcount(steps) for the tree)
        tree = self.trees[agent]  # nothing released yet (batches): a zero prefix, no noise
        nodes = tree.prefix_variance() / tree.sigma**2 if tree.steps else 0.0
        gram_clu, theta_clu = self.server.replace_prefix(agent, prefix, count, nodes)
        n = self.server.noise_nodes(self.server.members(agent))
        floor = max(float(np.linalg.eigvalsh(gram_clu)[0]), self.lam)
        noise = self.noise.gamma(n) + 2.0 * self.noise.rho(n) * self.theta_bound
        self.widths_beta[agent] = self.beta + self.noise_width_scale * noise / math.sqrt(floor)
        self.publication.partition(self.server.labels())
        self.publication.value("model", np.concatenate((
            [agent], gram_clu.ravel(), theta_clu, [self.widths_beta[agent]])))
        self._adopt(agent, gram_clu, theta_clu, t)

    def _examined_estimate(self, agent: int, prefix: np.ndarray) -> int:
        """T_u from the privatized trace: sum ||x||^2 / B^2, within [arrivals, K arrivals].

        For unit-norm items the trace is the examined count; smaller items make
        it an underestimate, and so a larger (more cautious) F(T).
        """
        arrivals = int(self._in_prefix[agent])
        bound = 1.0 if self.item_bound is None else self.item_bound
        trace = float(np.trace(prefix[: self.dim, : self.dim])) / (bound * bound)
        return int(min(max(trace, arrivals), self.list_len * arrivals))

    def ledgers(self) -> list[Ledger]:
        return list(self._ledgers)

    def _statement(self, unit: str, details: dict[str, Any]) -> PrivacyStatement:
        return self.plan.statement(
            Relation.INTERACTIVE, unit, accountant=self.accountant, details=details,
            summary=f"({self.epsilon:g}, {self.delta:g})-DP for one user-round's click "
                    "feedback, actions adapting: an agent recommends from the model the "
                    "server built of released prefixes (never its raw buffer), and every "
                    "upload and its timing is post-processing of the agent's tree releases")

    def privacy(self) -> PrivacyStatement:
        return self._statement(UNIT, {
            "l2_sensitivity": math.sqrt(2.0) * self.record_norm,
            "mechanism": self.mechanism, **self.schedule.describe(),
            "sigma": self.trees[0].sigma,
            "max_prefix_variance": self.trees[0].max_prefix_variance(),
            "calibration": self.calibration, "sampler": sampler_name(self.sampler),
        })

    def params(self) -> dict[str, Any]:
        return {
            **super().params(), "epsilon": self.epsilon, "delta": self.delta,
            "calibration": self.calibration, "mechanism": self.mechanism,
            "schedule": self.schedule.kind, "batch": self.schedule.batch,
            "sampler": sampler_name(self.sampler), "noise_level": self.noise.level,
            "noise_width_scale": self.noise_width_scale, "theta_bound": self.theta_bound,
        }


def cdp_fedc3ucb_h(dim: int, n_users: int, n_items: int, list_len: int, horizon: int,
                   **kwargs: Any) -> CDPFedC3UCBH:
    """CDP-FedC3UCB-H (see `CDPFedC3UCBH`)."""
    return CDPFedC3UCBH(dim, n_users, n_items, list_len, horizon, **kwargs)
