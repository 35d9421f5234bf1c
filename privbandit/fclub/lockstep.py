"""FCLUB-family replicates in lockstep (`runtime.lockstep`): one vectorized pass per round.

`BatchedFederatedClub` plays `FederatedClub` replicates with delayed sync:
"fclub-dc", "homo-dc", or "cdp-fclub-dc" with its every-round release
schedule (any mechanism and detection).  Everything a round does runs
batched over replicates, on stacked arrays (replicate, local cluster, ...)
that the replicates' own models and `DelayedSync` arrays are views of:

- the served local cluster's UCB scores and argmax (Algorithm 1, line 12);
- the Sherman-Morrison update of its model and of its raw upload buffer;
- the upload trigger of eq. 5 and, for the replicates it fires in, the upload
  (Algorithm 3: the global sums, the other members' download buffers) and the
  downloads it makes due (Algorithm 4), each step for all those replicates at
  once -- at the main job's sizes most rounds upload in some replicate, so
  these are the hot path, not a rare event;
- privately, the round's record enters the local cluster's stream: that
  `add` is each replicate's own call (its privatizer, its generator, the
  noise its separate run draws), and the trigger then reads the noisy
  increments of all replicates at once.

The same arithmetic as a separate run (elementwise updates; one matrix
inversion and one Cholesky per download, matrix by matrix: `models.inverse`,
`models.logdets`), so each replicate makes the decisions its separate run
makes.  What depends on a replicate's data at a phase start -- detection,
merge, renewal -- stays its own, a rare Python step through its own object,
after which its new arrays are copied into the stacked ones and bound to
them.  Messages are tallied per replicate and written to each replicate's
communication log at the end (`finish`): the same counts, bytes and rounds.

`BatchedInstantClub` plays "fclub" and "homo" (instant sharing: one model per
global cluster, updated by every observation).  `BatchedPerServer`
("club-per-server", "sclub-per-server") makes every server's CLUB (SCLUB) of
every replicate one row of a `policies.club.BatchedCLUB`
(`policies.sclub.BatchedSCLUB`); see its docstring.  ("cdp-fclub-dc+" on the
billboard has no twin: its seeds run one by one.)  Each is registered as the
batched twin of its class (`runtime.lockstep.register_batched`) when this
package is imported.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..comm import DOWNLOAD, UPLOAD
from ..kernels import sherman_morrison, ucb_scores
from ..policies.lockstep import BatchedPolicy, check_replicates, stack_state
from ..runtime.lockstep import batched, register_batched
from ..validation import check_items
from .algorithm import FederatedClub
from .baselines import PerServer
from .models import inverse, logdets

# DelayedSync arrays by local cluster and by global cluster, and the models' arrays, bound
# to the stacked ones: name -> (number of trailing axes of length d, integer counts)
_LOCAL = {"S": (2, False), "logdet_s": (0, False), "u": (1, False), "n_sync": (0, True),
          "pend_s": (2, False), "pend_u": (1, False), "pend_n": (0, True),
          "s_down": (2, False), "u_down": (1, False), "n_down": (0, True)}
_GLOBAL = {"S_g": (2, False), "u_g": (1, False), "n_g": (0, True), "logdet_g": (0, False)}
_MODELS = {"inv": (2, False), "b": (1, False), "logdet": (0, False), "count": (0, True)}


def _copy_into(row: np.ndarray, own: np.ndarray) -> np.ndarray:
    """The leading part of a stacked row that `own` fits, holding `own`'s values."""
    view = row[:own.shape[0]]
    view[...] = own
    return view


class BatchedFederatedClub(BatchedPolicy):
    """`FederatedClub` replicates ("fclub-dc", "homo-dc", "cdp-fclub-dc") in lockstep; see the
    module docstring."""

    def __init__(self, policies: Sequence[FederatedClub]) -> None:
        super().__init__(check_replicates(policies, FederatedClub))
        first = self.policies[0]
        cfg = first.config
        self.dim, self.n, self.lam = cfg.dim, cfg.n_users, cfg.lam
        self.radius = cfg.radius()
        self._log_lam = cfg.dim * math.log(cfg.lam)
        self._ln_u = math.log(cfg.upload_threshold)
        self._ln_d = math.log(cfg.download_threshold)
        self._msg = (cfg.dim * cfg.dim + cfg.dim + 1) * 8
        rep, n, d = len(self.policies), cfg.n_users, cfg.dim
        # at most one local (and global) cluster per user: room for every layout
        self.arrays = {name: np.zeros((rep, n) + (d,) * axes, np.int64 if count else float)
                       for name, (axes, count) in {**_LOCAL, **_GLOBAL, **_MODELS}.items()}
        for name, arr in self.arrays.items():
            setattr(self, name, arr)
        self.k_of = np.full((rep, n), -1, dtype=np.intp)  # -1: no local cluster there
        self.local = np.zeros((rep, n), dtype=np.intp)
        for r, p in enumerate(self.policies):
            self.local[r] = p.replicate_state()["local_of_user"]
            p.bind_replicate_state({"local_of_user": self.local[r]})
        self._bound: list[object] = [None] * rep  # bound at the first phase start
        self._rows = np.empty((rep, 0, d + 1))
        self._row_users = np.empty((rep, 0), dtype=np.intp)
        self._i = 0  # rows of the phase buffers filled
        self._c = np.zeros(rep, dtype=np.intp)
        self._inv = self.inv[:, 0]
        # messages not yet in the replicates' logs: counts, and (round, replicates) talked
        self._uploads = np.zeros(rep, dtype=np.int64)
        self._downloads = np.zeros(rep, dtype=np.int64)
        self._talked: list[tuple[int, np.ndarray]] = []
        # CDP-FCLUB-DC: each local cluster's noisy prefix at its last upload, and the radius
        # terms (a, r, d rho_min, c) of each global cluster (`DelayedSync.beta`)
        self.private = first.plan is not None
        self.detect = cfg.detect  # Homo-DC: no detection, no phase rows
        self._scratch = np.empty((rep, d + 1))
        self.last = np.zeros((rep, n, d + 1, d + 1))
        self.beta_terms = np.ones((rep, n, 4))
        self._rngs: Sequence[np.random.Generator] = ()

    def check_items(self, items: np.ndarray) -> None:
        cfg = self.policies[0].config
        check_items(items, cfg.dim, cfg.item_bound)

    # -- phases: each replicate's own, then its new arrays are bound to the stacked ones ----
    def _start_phase(self, t: int, rngs: Sequence[np.random.Generator]) -> None:
        length = None
        for r, (p, rng) in enumerate(zip(self.policies, rngs, strict=True)):
            p.mark_rows(self._i)
            p.start_phase(t, rng)
            length = self._bind(r, p)
        d1 = self.dim + 1
        self._rows = np.empty((len(self.policies), length, d1))
        self._row_users = np.empty((len(self.policies), length), dtype=np.intp)
        for r, p in enumerate(self.policies):
            p.bind_replicate_state({"rows": self._rows[r], "row_users": self._row_users[r]})
        self._i = 0

    def _bind(self, r: int, p: FederatedClub) -> int:
        """Make replicate r's sync arrays and models views of the stacked ones (after a
        renewal made new ones); returns the length of its new phase buffer."""
        state = p.replicate_state()
        if self._bound[r] is not p.sync.models:
            views = {name: _copy_into(self.arrays[name][r], state[name])
                     for name in (*_LOCAL, *_GLOBAL, *_MODELS)}
            self.k_of[r] = -1
            views["k_of"] = _copy_into(self.k_of[r], state["k_of"])
            if self.private:
                views["last"] = _copy_into(self.last[r], state["last"])
                _copy_into(self.beta_terms[r], p.sync.beta_terms)
            p.bind_replicate_state(views)
            self._bound[r] = p.sync.models
        return state["rows"].shape[0]

    # -- the round -------------------------------------------------------------------------
    def select(self, items: np.ndarray, users: np.ndarray, t: int,
               rngs: Sequence[np.random.Generator]) -> np.ndarray:
        if t >= self.policies[0].next_phase:  # phases start at the same rounds in every run
            self._start_phase(t, rngs)
        r = self.replicates
        self._rngs = rngs  # the privacy noise of the round's releases
        self._c = c = self.local[r, users]
        self._inv = inv = self.inv[r, c]
        beta = self._beta(c)
        theta = np.matmul(inv, self.b[r, c][..., None])[..., 0]
        return ucb_scores(theta, inv, items, beta[:, None]).argmax(axis=1)

    def _beta(self, c: np.ndarray) -> np.ndarray:
        """The radii of the served local clusters c (R,) (`DelayedSync.beta`)."""
        r = self.replicates
        if not self.private:
            return self.radius.many(self.logdet[r, c] - self._log_lam, self.lam)
        a, ratio, drmin, const = self.beta_terms[r, self.k_of[r, c]].T
        inner = a + self.dim * np.log(ratio + self.count[r, c] / drmin)
        return self.radius.scale * (self.radius.noise_scale * np.sqrt(inner) + const)

    def update(self, items: np.ndarray, users: np.ndarray, actions: np.ndarray,
               rewards: np.ndarray, t: int) -> None:
        r, c, inv, i = self.replicates, self._c, self._inv, self._i
        x = items[r, actions]
        if self.private:  # the sensitivity assumes rewards in [0, 1]
            rewards = np.minimum(np.maximum(rewards, 0.0), 1.0)
        if self.detect:  # the phase's observations, for the next detection
            rows = self._rows[:, i]
            self._row_users[:, i] = users
            self._i = i + 1
        else:
            rows = self._scratch
        rows[:, :-1], rows[:, -1] = x, rewards
        quad = sherman_morrison(inv, x)
        self.inv[r, c] = inv
        yx = rewards[:, None] * x
        self.b[r, c] += yx
        logdet = self.logdet[r, c] + np.log1p(quad)
        self.logdet[r, c] = logdet
        self.count[r, c] += 1
        self.pend_s[r, c] += x[:, :, None] * x[:, None, :]
        self.pend_u[r, c] += yx
        self.pend_n[r, c] += 1
        if self.private:
            self._release(rows, c, t)
            return
        fired = np.flatnonzero(logdet - self.logdet_s[r, c] >= self._ln_u)
        if fired.size:
            self._upload(fired, c[fired], t)

    def _release(self, z: np.ndarray, c: np.ndarray, t: int) -> None:
        """Every replicate's record z (R, d+1) enters its local cluster's stream (its own
        privatizer and generator); the trigger of eq. 5 reads the noisy increments
        (`DelayedSync._release`), and the replicates it fires in upload them."""
        r, d = self.replicates, self.dim
        zz = z[:, :, None] * z[:, None, :]
        prefix = np.stack([p.sync.trees[cc].add(zz[k], rng) for k, (p, cc, rng) in
                           enumerate(zip(self.policies, c.tolist(), self._rngs, strict=True))])
        diff = prefix - self.last[r, c]
        noisy_s, noisy_u = diff[:, :d, :d], diff[:, :d, d]
        ld = logdets(self.S[r, c] + noisy_s)
        fired = np.flatnonzero((ld == -math.inf) | (ld - self.logdet_s[r, c] >= self._ln_u))
        if fired.size:
            self.last[fired, c[fired]] = prefix[fired]
            self._upload(fired, c[fired], t, (noisy_s[fired], noisy_u[fired], ld[fired]))

    # -- Algorithms 3 and 4, for the replicates whose trigger fired -------------------------
    def _upload(self, rf: np.ndarray, cf: np.ndarray, t: int,
                noisy: tuple[np.ndarray, ...] | None = None) -> None:
        """Replicate rf[i] uploads local cluster cf[i]'s raw buffer, or its noisy increments
        noisy = (ds, du, ln det(S_c + ds)) (`DelayedSync._upload`)."""
        k = self.k_of[rf, cf]
        n = self.pend_n[rf, cf]
        if noisy is None:
            ds, du = self.pend_s[rf, cf], self.pend_u[rf, cf]
        else:
            ds, du, logdet_new = noisy
        s_g = self.S_g[rf, k] + ds
        self.S_g[rf, k] = s_g
        self.u_g[rf, k] += du
        self.n_g[rf, k] += n
        logdet_g = logdets(s_g)
        self.logdet_g[rf, k] = logdet_g
        group = self.k_of[rf] == k[:, None]  # (F, n): the local clusters of the same global
        group[np.arange(rf.size), cf] = False
        fi, others = np.nonzero(group)
        ro = rf[fi]
        self.s_down[ro, others] += ds[fi]
        self.u_down[ro, others] += du[fi]
        self.n_down[ro, others] += n[fi]
        self.S[rf, cf] += ds
        self.u[rf, cf] += du
        self.n_sync[rf, cf] += n
        self.pend_s[rf, cf], self.pend_u[rf, cf], self.pend_n[rf, cf] = 0.0, 0.0, 0
        if noisy is None:
            self.logdet_s[rf, cf] = self.logdet[rf, cf]  # S_c + R_c is the model already
        else:  # the model restarts from the synchronized copy
            self.logdet_s[rf, cf] = logdet_new
            self.inv[rf, cf] = inverse(self.S[rf, cf])
            self.b[rf, cf] = self.u[rf, cf]
            self.logdet[rf, cf] = logdet_new
            self.count[rf, cf] = self.n_sync[rf, cf]
        self._uploads[rf] += 1
        self._talked.append((t, rf))
        group[np.arange(rf.size), cf] = True
        due = group & (logdet_g[:, None] - self.logdet_s[rf] >= self._ln_d)
        fi, cd = np.nonzero(due)
        if fi.size:
            self._download(rf[fi], cd, logdet_g[fi])

    def _download(self, rd: np.ndarray, cd: np.ndarray, logdet_g: np.ndarray) -> None:
        """Local cluster cd[i] of replicate rd[i] downloads (`DelayedSync._downloads`)."""
        s = self.S[rd, cd] + self.s_down[rd, cd]
        self.S[rd, cd] = s
        u = self.u[rd, cd] + self.u_down[rd, cd]
        self.u[rd, cd] = u
        n = self.n_sync[rd, cd] + self.n_down[rd, cd]
        self.n_sync[rd, cd] = n
        self.s_down[rd, cd], self.u_down[rd, cd], self.n_down[rd, cd] = 0.0, 0.0, 0
        self.logdet_s[rd, cd] = logdet_g  # S_c now equals S_g
        gram = s + self.pend_s[rd, cd]
        self.inv[rd, cd] = inverse(gram)
        self.b[rd, cd] = u + self.pend_u[rd, cd]
        self.logdet[rd, cd] = logdets(gram)
        self.count[rd, cd] = n + self.pend_n[rd, cd]
        self._downloads += np.bincount(rd, minlength=self._downloads.size)

    def finish(self) -> None:
        """The replicates' phase buffers and communication logs brought up to date."""
        for p in self.policies:
            p.mark_rows(self._i)
        if self._talked:
            rounds = np.concatenate([np.full(rf.size, t) for t, rf in self._talked])
            who = np.concatenate([rf for _, rf in self._talked])
            self._talked = []
        else:
            rounds = who = np.empty(0, dtype=np.int64)
        for r, p in enumerate(self.policies):
            up, down = int(self._uploads[r]), int(self._downloads[r])
            p.comm.record(UPLOAD, up, up * self._msg)
            p.comm.record(DOWNLOAD, down, down * self._msg)
            p.comm.mark_rounds(rounds[who == r])
        self._uploads[:] = 0
        self._downloads[:] = 0


class BatchedInstantClub(BatchedFederatedClub):
    """`FederatedClub` replicates with instant sharing ("fclub", "homo") in lockstep.

    `InstantSync` keeps one model per global cluster, and every observation
    updates it at once (one upload, and a download to each other local
    cluster of the global cluster): the round's rank-one update of the
    served global model runs batched, and the messages are tallied.
    """

    def __init__(self, policies: Sequence[FederatedClub]) -> None:
        super().__init__(policies)
        rep, n = len(self.policies), self.n
        self.row_of = np.zeros((rep, n), dtype=np.intp)
        self.peers = np.zeros((rep, n), dtype=np.int64)

    def _bind(self, r: int, p: FederatedClub) -> int:
        state = p.replicate_state()
        if self._bound[r] is not p.sync.models:
            views = {name: _copy_into(self.arrays[name][r], state[name]) for name in _MODELS}
            views["row_of"] = _copy_into(self.row_of[r], state["row_of"])
            views["peers"] = _copy_into(self.peers[r], state["peers"])
            p.bind_replicate_state(views)
            self._bound[r] = p.sync.models
        return state["rows"].shape[0]

    def select(self, items: np.ndarray, users: np.ndarray, t: int,
               rngs: Sequence[np.random.Generator]) -> np.ndarray:
        if t >= self.policies[0].next_phase:
            self._start_phase(t, rngs)
        r = self.replicates
        self._c = row = self.row_of[r, self.local[r, users]]
        self._inv = inv = self.inv[r, row]
        beta = self.radius.many(self.logdet[r, row] - self._log_lam, self.lam)
        theta = np.matmul(inv, self.b[r, row][..., None])[..., 0]
        return ucb_scores(theta, inv, items, beta[:, None]).argmax(axis=1)

    def update(self, items: np.ndarray, users: np.ndarray, actions: np.ndarray,
               rewards: np.ndarray, t: int) -> None:
        r, row, inv, i = self.replicates, self._c, self._inv, self._i
        x = items[r, actions]
        if self.detect:
            rows = self._rows[:, i]
            rows[:, :-1], rows[:, -1] = x, rewards
            self._row_users[:, i] = users
            self._i = i + 1
        quad = sherman_morrison(inv, x)
        self.inv[r, row] = inv
        self.b[r, row] += rewards[:, None] * x
        self.logdet[r, row] += np.log1p(quad)
        self.count[r, row] += 1
        self._uploads += 1
        self._downloads += self.peers[r, row]
        self._talked.append((t, r))


class BatchedPerServer(BatchedPolicy):
    """"club-per-server" and "sclub-per-server" (`PerServer`) replicates in lockstep: every
    server's CLUB (or SCLUB) of every replicate is row r * L + s of one `BatchedCLUB`
    (`BatchedSCLUB`; servers of equal size); a round serves each replicate's user from its
    server's row, at that server's own round count."""

    def __init__(self, policies: Sequence[PerServer]) -> None:
        super().__init__(check_replicates(policies, PerServer))
        first = self.policies[0]
        self.n_servers, self.server, self.local = len(first.policies), first.server, first.local
        self.own = batched([c for p in self.policies for c in p.policies])
        self.rounds = stack_state(self.policies)["rounds"]
        self._q = self.replicates

    def check_items(self, items: np.ndarray) -> None:
        self.own.check_items(items)

    def select(self, items: np.ndarray, users: np.ndarray, t: int,
               rngs: Sequence[np.random.Generator]) -> np.ndarray:
        self._q = q = self.replicates * self.n_servers + self.server[users]
        return self.own.scores(q, items, self.local[users]).argmax(axis=1)

    def update(self, items: np.ndarray, users: np.ndarray, actions: np.ndarray,
               rewards: np.ndarray, t: int) -> None:
        r, s = self.replicates, self.server[users]
        self.own.learn(self._q, self.local[users], items[r, actions], rewards, self.rounds[r, s])
        self.rounds[r, s] += 1


def batched_club(policies: Sequence[FederatedClub]) -> BatchedFederatedClub:
    """The twin of `FederatedClub` replicates: instant or delayed sharing, as configured."""
    policies = list(policies)
    if policies and policies[0].config.sync == "instant":
        return BatchedInstantClub(policies)
    return BatchedFederatedClub(policies)


register_batched(FederatedClub, batched_club)
register_batched(PerServer, BatchedPerServer)
