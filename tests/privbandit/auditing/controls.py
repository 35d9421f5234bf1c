"""Deliberately broken private entries: what the end-to-end audit must catch (tests only).

Each keeps the entry's ledgers, releases and statement, so only an audit of what the
parties publish can tell it from the honest entry; each is handed to the audit as a
variant of what the entry builds (`audit_entry(..., variant=variant(cls))`).

- `RawLabels`: cdp-fclub-dc's clusters read from raw rewards: at each release, the users
  whose raw mean reward since the previous release exceeds 1/2 against the others;
- `RawModels`: cdp-fclub-dc's cluster models from the raw moments;
- `RawSchedule`: cdp-fclub-dc postpones a scheduled release by a round when that round's
  raw reward is 0 (release times that read the data);
- `PartialBypass`: cdp-fclub-dc whose units other than the first release outside the
  audit's tape, sending their raw moments (the first unit's stream stays on the tape;
  every party's ledger is charged with the same event);
- `RawServer`: cdp-fedc3ucb-h whose server tests its edges and builds its models on the
  agents' raw statistics.
"""
from __future__ import annotations

import contextvars
from dataclasses import replace
from typing import Any

import numpy as np

from privbandit.cascade.private import CDPFedC3UCBH
from privbandit.fclub.released import ReleasedFederatedClub


class _RawMoments(ReleasedFederatedClub):
    """Keeps each user's raw reward moments sum y x, its rewards since the last release
    (sum, count) and the last raw reward."""

    def __init__(self, config, plan, **kw):
        self.raw = np.zeros((config.n_users, config.dim))
        self.recent = np.zeros((config.n_users, 2))
        super().__init__(config, plan, **kw)

    def update(self, items, user, action, feedback, t):
        self.last = min(max(float(feedback), 0.0), 1.0)
        self.raw[user] += self.last * np.asarray(items)[action]
        self.recent[user] += (self.last, 1.0)
        super().update(items, user, action, feedback, t)


class RawLabels(_RawMoments):
    def _split_merge(self):
        total, count = self.recent.T
        high = np.divide(total, count, out=np.zeros_like(total), where=count > 0) > 0.5
        self.recent[:] = 0.0
        self._partition(high.astype(np.int64))


class RawModels(_RawMoments):
    def _models(self):
        super()._models()
        for k, members in enumerate(self._groups):
            self.theta[k] = self.inv[k] @ self.raw[members].sum(axis=0)


class _RawTimes:
    """A release schedule that postpones a release by one round when the raw reward of the
    round due is 0 (every other query goes to the real schedule)."""

    def __init__(self, schedule: Any, club: _RawMoments) -> None:
        self.schedule, self.club, self.late = schedule, club, False

    def is_release(self, t: int) -> bool:
        if self.late:
            self.late = False
            return True
        if self.schedule.is_release(t) and self.club.last < 0.5:
            self.late = True
            return False
        return self.schedule.is_release(t)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.schedule, name)


class RawSchedule(_RawMoments):
    def __init__(self, config, plan, **kw):
        super().__init__(config, plan, **kw)
        self.schedule = _RawTimes(self.schedule, self)


class _Hidden:
    """A unit's stream that releases outside the audit's tape and sends raw moments."""

    def __init__(self, stream: Any, raw: Any) -> None:
        self.stream, self.raw = stream, raw

    def add(self, records, rewards, rng):
        out = contextvars.Context().run(self.stream.add, records, rewards, rng)
        return replace(out, moments=self.raw())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class PartialBypass(_RawMoments):
    def __init__(self, config, plan, **kw):
        super().__init__(config, plan, **kw)
        streams = self.streams.streams
        for u in range(1, len(streams)):
            streams[u] = _Hidden(streams[u], lambda u=u: self.raw[u].copy())


class RawServer(CDPFedC3UCBH):
    """The server is handed each agent's raw statistics beside its released prefix."""

    def update(self, items, user, action, feedback, t):
        if not hasattr(self, "raw"):
            self.raw = np.zeros((self.n_users, self.dim + 1, self.dim + 1))
        observed, clicked = self._observed(items, action, feedback)
        z = np.zeros((observed.shape[0], self.dim + 1))
        z[:, : self.dim] = observed
        if clicked is not None:
            z[clicked, self.dim] = 1.0
        self.raw[user] += z.T @ z
        super().update(items, user, action, feedback, t)

    def _communicate(self, agent, t):
        self._prefix[agent] = self.raw[agent]  # what the server stores: the raw statistics
        super()._communicate(agent, t)


def variant(cls):
    """What the audit builds for control `cls`: the entry's run with `cls` in it."""
    def build(built):
        p = built.protocol
        if isinstance(p, CDPFedC3UCBH):
            return replace(built, protocol=_cascade(cls, p))
        return replace(built, protocol=cls(p.config, p.plan, world_clusters=p.world_clusters))
    return build


def _cascade(cls, protocol: CDPFedC3UCBH) -> CDPFedC3UCBH:
    """`cls` built like `protocol` (a copy of its state at construction, its class swapped)."""
    out = object.__new__(cls)
    out.__dict__.update(protocol.__dict__)
    return out
