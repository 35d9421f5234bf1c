"""`SetFederatedClub`: FCLUB-DC whose clusters are sets, split and merged on pooled models.

The federation of seed 000 (FCLUB-DC: local servers, a global server, the
asynchronous det-ratio sharing of Algorithms 3-4, `sync.DelayedSync`) with
another detection, for populations of many users on many servers.  The
paper's detection deletes edges of each server's user graph (eq. 3) and
joins local clusters globally by connected components (eq. 4): one
surviving link between two true clusters joins them, and with tens of
servers there is always one (measured: docs/fclub.md, "Federation at
population scale").  Here, at each phase start:

1. every server uploads the statistics (G_u, b_u) of its users that played
   in the phase (one message per such user);
2. the global server moves, splits and merges the clusters of the last
   phase with `privbandit.clustering.SetClusters` (the set federations' shared
   clustering interface, started "together"), the blocks being
   each server's users of one cluster (a server's users move together on
   their pooled data, a user alone only on strong evidence);
3. the local clusters are the servers' shares of the global clusters, at most
   one per (server, global cluster), so a round's cost and the number of
   copies the sync keeps do not grow with the users of a cluster; if the
   partition changed, the global statistics and every local copy are renewed
   from all the data so far (Algorithm 2, lines 8-18).

Phases start at rounds t_1 = 0 and t_{s+1} = max(t_s + 1, ceil(g (t_s + 2)) - 2):
g = 2 is the paper's 2^s - 2; the default g = 1.15 detects again after every
15% more data, so a wrong partition is corrected sooner (each phase's work is
O(n c d^2 + n d^3) for n users and c clusters, no all-pairs scan).  Between
phases a round is FCLUB-DC's: the UCB of the served user's local copy, the
Sherman-Morrison update, the upload and download triggers.

Privacy guarantee: none; it reads raw rewards (the private entries build on
the same detection, acting on released statistics).  Sources: seed 000,
Algorithms 1-4 (sharing); SCLUB's split and merge over sets (Li et al. 2019)
and `privbandit.clustering` (detection).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.validation import check_positive

from ..clustering import Partition, SetClusters, SplitMergeClustering, partition_of
from ..comm import UPLOAD
from ..errors import config_error
from ..kernels import UserGraph
from .algorithm import FederatedClub
from .config import FclubConfig
from .sync import BaseStats, Layout

_CHUNK = 4096  # rows folded at a time at a phase's end (memory O(chunk d^2))


class SetFederatedClub(FederatedClub):
    """FCLUB-DC with split/merge detection over sets; see the module docstring.

    config: `FclubConfig` with sync="delayed" and detect=True (alpha and alpha2,
    the paper's graph factors, are not read); detection: the
    `SplitMergeClustering` (default: one with the config's dim, lam, noise_scale
    and theta_bound); phase_growth: g > 1 of the phase schedule.
    `cluster_labels()` gives each user's global cluster (labelled by its smallest
    user); `last_partition` what the last detection did.
    """

    name = "fclub-dc-sets"

    def __init__(self, config: FclubConfig, detection: SplitMergeClustering | None = None, *,
                 phase_growth: float = 1.15, name: str | None = None) -> None:
        if not isinstance(config, FclubConfig):
            raise config_error("config", config, "an FclubConfig")
        if config.sync != "delayed" or not config.detect:
            raise config_error("config", (config.sync, config.detect),
                               "sync='delayed' and detect=True (FCLUB-DC's sharing)")
        if detection is None:
            detection = SplitMergeClustering(config.dim, lam=config.lam,
                                             noise_scale=config.noise_scale,
                                             theta_bound=config.theta_bound)
        elif not isinstance(detection, SplitMergeClustering) or detection.dim != config.dim:
            raise config_error("detection", detection,
                               f"None or a SplitMergeClustering of dim {config.dim}")
        growth = check_positive("phase_growth", phase_growth)
        if not growth > 1.0:
            raise config_error("phase_growth", phase_growth, "a number > 1")
        self.detection, self.phase_growth = detection, float(growth)
        super().__init__(config, name=name)
        self.sets = SetClusters(detection, config.n_users, start="together", growth=growth)

    @property
    def last_partition(self) -> Partition | None:
        return self.sets.last

    def _user_graphs(self) -> list[UserGraph]:
        return []  # clusters are sets: no user graph (no memory quadratic in users)

    def phase_end(self, t: int) -> int:
        """The first round of the phase after the one starting at round t."""
        return self.sets.phase_end(t)

    def start_phase(self, t: int, rng: np.random.Generator) -> None:
        """Start the phase due at round t: fold the phase's rows, detect, renew if changed."""
        self._rng = rng
        self._phase += 1
        self._next_phase = self.phase_end(t)
        active = self._fold_rows(self._next_phase - t)
        d = self.config.dim
        self.sets.detect(self._gram[:, :d, :d], self._gram[:, :d, d], rng, blocks=self.server)
        self._comm.record(UPLOAD, active, active * self._upload_bytes(), round=t)
        servers, members, labels = self._shares(self.sets.labels)
        partition = partition_of(members, labels)
        if partition != self._partition:
            sums = np.stack([self._gram[m].sum(axis=0) for m in members])
            counts = np.array([self._count[m].sum() for m in members])
            base = BaseStats(sums[:, :d, :d], sums[:, :d, d], counts, np.zeros(len(members)))
            self._renew(Layout(servers, tuple(members), labels), base, members, t)
            self._partition = partition

    def _fold_rows(self, length: int) -> int:
        """Add the ending phase's rows z z^T to the users' statistics (in chunks, no loop
        over users), start a buffer of `length` rows; returns how many users played."""
        rows, users = self._rows[:self._n_rows], self._row_users[:self._n_rows]
        self._rows = np.empty((length, rows.shape[1]))
        self._row_users = np.empty(length, dtype=np.intp)
        self._n_rows = 0
        self._inc[:] = 0.0
        for start in range(0, users.size, _CHUNK):
            z, who = rows[start:start + _CHUNK], users[start:start + _CHUNK]
            np.add.at(self._inc, who, z[:, :, None] * z[:, None, :])
        self._inc_count = np.bincount(users, minlength=self.config.n_users)
        self._gram += self._inc
        self._count += self._inc_count
        return int(np.count_nonzero(self._inc_count))

    def _shares(self, labels: np.ndarray) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
        """(servers (C,), members (C arrays), global label (C,)) of the local clusters: each
        server's users of each global cluster, in order of (server, cluster)."""
        m = int(labels.max()) + 1
        keys, which = np.unique(self.server * m + labels, return_inverse=True)
        order = np.argsort(which, kind="stable")
        members = np.split(order, np.flatnonzero(np.diff(which[order])) + 1)
        return keys // m, members, keys % m

    def params(self) -> dict[str, Any]:
        out = {k: v for k, v in super().params().items() if k not in ("alpha", "alpha2")}
        det = self.detection
        out.update(detection="split-merge", merge_level=det.merge_level,
                   split_level=det.split_level, unit_evidence=det.unit_evidence,
                   block_evidence=det.block_evidence, simulations=det.simulations,
                   phase_growth=self.phase_growth)
        return out
