"""Sums of users' reward moments over sets of users: the one seam a cluster's releases pass.

A federation that pays the privacy noise once per cluster releases, for a set
of users, the noisy sum of their reward moments sum y x (their Gram matrix,
public under the interactive relation, travels exactly beside it).  Two
shapes of release pass here and nowhere else:

- `open(members, sigma)`: a continual release (`SumStream`) of the members'
  records from now on, stepped at every release of the schedule (`step`),
  with the noise of ONE stream whatever the number of members; its
  membership is fixed for its life;
- `once(members, starts, sigma, rng)`: one release of the sum of each
  member's records from `starts[member]` up to now (a history).

`TrustedSums` realises both at a trusted aggregator (the global server): the
local servers send it their users' raw records, and it releases the sums
through `mechanisms.RewardOnlyRelease` (a stream of the plan's mechanism; a
one-step release for `once`).  A secure aggregation that lets the aggregator
learn only the noisy sum replaces this class and nothing else: the callers
read only the releases (`RewardRelease`), the streams' events and the
variances of their noise.

Privacy guarantee
-----------------
Neighbouring relation: interactive -- one user-round's reward differs, the
features of every record being public (`PublicFeatures`: the caller chose
the actions from released data; the aggregator's `publication` marks them).
Sensitivity: rewards clipped to
`reward_range`, ||x|| <= feature_bound B, so one changed reward moves any sum
holding its record by at most (hi - lo) B.  Measure: a `SumStream` is one
`RewardOnlyRelease`, whose event (the stream's, for a record entering one of
its steps, whatever the step) is `event`; a `once` release is a one-step
`RewardOnlyRelease` with event `once_event(sigma)`.  Which records enter
which release is the caller's to account (`membership.ClusterReleases`
proves it for changing clusters).  Trust: the aggregator sees every member's
raw reward moments; it is trusted not to reveal them.  Source: Shariff &
Sheffet (2018) for noising only the rewards' part; the continual-release
mechanisms of `privbandit.mechanisms`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from privbandit.accounting.events import PrivacyEvent
from privbandit.mechanisms.publication import Publication
from privbandit.mechanisms.reward_only import RewardOnlyRelease, RewardRelease
from privbandit.mechanisms.samplers import Sampler

from ..errors import config_error

TRUST = ("the global server aggregates the cluster sums as a trusted party: it sees the "
         "members' raw reward moments and releases only their noisy sums")
_BY = "acts on released statistics only (each record's action chose from released data)"


class SumStream:
    """A continual release of the sum of `members`' records entered after it opened (see the
    module docstring); `step(rng)` releases the next prefix, `event` is its cost for one
    record."""

    def __init__(self, owner: TrustedSums, members: np.ndarray, release: RewardOnlyRelease
                 ) -> None:
        self.members = members
        self._owner, self._release = owner, release
        self._fed = np.array([owner.count(u) for u in members], dtype=np.int64)
        self.last: RewardRelease | None = None

    @property
    def event(self) -> PrivacyEvent:
        return self._release.event

    @property
    def sigma(self) -> float:
        return self._release.sigma

    def follow(self, members: np.ndarray) -> None:
        """From now on the stream sums `members`' records (members that stay keep their
        place; new ones enter with their records from now on)."""
        members = _members(members)
        fed = dict(zip(self.members.tolist(), self._fed.tolist(), strict=True))
        self._fed = np.array([fed.get(int(u), self._owner.count(u)) for u in members],
                             dtype=np.int64)
        self.members = members

    def step(self, rng: np.random.Generator) -> RewardRelease:
        """Release the prefix sum including the members' records since the last step."""
        x, y, self._fed = self._owner.records(self.members, self._fed)
        self.last = self._release.add(self._owner.publication.features(x, why=_BY), y, rng)
        return self.last


class TrustedSums:
    """The seam, realised at a trusted aggregator (see the module docstring).

    n_users: n; dim: d; mechanism: the streams' continual release by name;
    releases: the streams' horizon (the schedule's releases); records_per_step:
    the most records one step holds (the schedule's longest batch); horizon: the
    most records a history holds (the rounds); feature_bound: B; reward_range:
    (lo, hi); sampler: the noise sampler.
    """

    def __init__(self, n_users: int, dim: int, *, mechanism: str, releases: int,
                 records_per_step: int, horizon: int, feature_bound: float,
                 reward_range: tuple[float, float] = (0.0, 1.0),
                 sampler: Sampler | None = None) -> None:
        self.dim, self.mechanism, self.releases = dim, mechanism, releases
        self._per_step, self._horizon = records_per_step, horizon
        self._bound, self._range, self.sampler = feature_bound, reward_range, sampler
        self._x = [np.empty((16, dim)) for _ in range(n_users)]
        self._y = [np.empty(16) for _ in range(n_users)]
        self._count = np.zeros(n_users, dtype=np.int64)
        self.publication = Publication("global server (cluster sums)")

    # -- the parties' records -----------------------------------------------------------
    def observe(self, user: int, x: np.ndarray, y: float) -> None:
        """Keep a record (x, y) of `user` whose action came from released data."""
        i = self._count[user]
        if i == self._y[user].size:
            self._x[user] = np.concatenate((self._x[user], np.empty_like(self._x[user])))
            self._y[user] = np.concatenate((self._y[user], np.empty_like(self._y[user])))
        self._x[user][i], self._y[user][i] = x, y
        self._count[user] = i + 1

    def count(self, user: int) -> int:
        """Records of `user` so far (public: arrivals are)."""
        return int(self._count[user])

    def records(self, members: np.ndarray, starts: np.ndarray, ends: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x (R, d), y (R,), ends): the members' records from starts[i] to ends[i] (default:
        now), and where they end (the next call's starts)."""
        ends = self._count[members] if ends is None else ends
        xs = [self._x[u][s:e] for u, s, e in zip(members, starts, ends, strict=True)]
        ys = [self._y[u][s:e] for u, s, e in zip(members, starts, ends, strict=True)]
        if not xs:
            return np.empty((0, self.dim)), np.empty(0), ends.copy()
        return np.concatenate(xs), np.concatenate(ys), ends.copy()

    # -- the releases -----------------------------------------------------------------------
    def _release(self, steps: int, per_step: int, sigma: float) -> RewardOnlyRelease:
        return RewardOnlyRelease(self.dim, steps, mechanism=self.mechanism, sigma=sigma,
                                 feature_bound=self._bound, reward_range=self._range,
                                 records_per_step=per_step, sampler=self.sampler)

    def open(self, members: Sequence[int], sigma: float) -> SumStream:
        """A stream of the sum of `members`' records from now on, its noise of scale sigma."""
        members = _members(members)
        return SumStream(self, members, self._release(self.releases, self._per_step, sigma))

    def once(self, members: Sequence[int], starts: Sequence[int], ends: Sequence[int],
             sigma: float, rng: np.random.Generator) -> RewardRelease:
        """One release of the sum of each member's records from starts[i] to ends[i]."""
        members = _members(members)
        x, y, _ = self.records(members, np.asarray(starts, dtype=np.int64),
                               np.asarray(ends, dtype=np.int64))
        return self._release(1, self._horizon, sigma).add(
            self.publication.features(x, why=_BY), y, rng)

    def stream_event(self, sigma: float) -> PrivacyEvent:
        """The event of a stream at noise scale sigma (for one record)."""
        return self._release(self.releases, self._per_step, sigma).event

    def once_event(self, sigma: float) -> PrivacyEvent:
        """The event of a `once` release at noise scale sigma (for one record)."""
        return self._release(1, self._horizon, sigma).event


def _members(members: Sequence[int]) -> np.ndarray:
    arr = np.asarray(members, dtype=np.intp)
    if arr.ndim != 1 or arr.size == 0 or np.unique(arr).size != arr.size:
        raise config_error("members", members, "distinct user indices, at least one")
    return arr
