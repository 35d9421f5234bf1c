"""Neighbouring worlds: what a world changes to become its neighbour, or to hold canaries.

Under the interactive relation two environments hold the same world, arrivals,
contexts and random streams and differ in ONE user-round's feedback.  A world
makes that neighbour itself (`Environment.neighbour(flip)`: a copy of the
world, the original unchanged), so no audit reaches into it from outside.  A
`Flip` names what differs:

- ROUND: the feedback of round `at` moves to the other end of its range (a
  scalar reward y becomes 0 if y >= 1/2 else 1, the change the sensitivity
  allows at most; a cascade's first-click position becomes "no click" if
  there was one, else a click on the first item; where every agent acts, the
  reward of agent `agent`);
- EPOCH: in the `at`-th call of a world that draws whole epochs at once
  (`draw_sums`), agent `agent`'s reward sum of the first arm drawn moves by one;
- DRAW: the `at`-th reward drawn for user `agent` by an anonymous aggregator
  moves to the other end of [0, 1].

A one-run audit plants canaries the same way (`Environment.planted(rounds,
included)`): the feedback of each listed round is set to the top of its range
(a reward of 1, a click on the first item) where included, else to the bottom
(0, no click).  `Edit` is what such a copy carries: the world asks it for each
value it hands out, and it records what it changed (`changed`, for reports).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import config_error

ROUND, EPOCH, DRAW = "round", "epoch", "draw"
FLIP_KINDS = (ROUND, EPOCH, DRAW)


@dataclass(frozen=True)
class Flip:
    """One neighbour: what differs (see the module docstring); `at` counts rounds (ROUND),
    epoch draws (EPOCH) or one user's drawn rewards (DRAW), from 0."""

    at: int
    agent: int = 0
    kind: str = ROUND

    def __post_init__(self) -> None:
        for name in ("at", "agent"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise config_error(f"flip {name}", value, "an integer >= 0")
            object.__setattr__(self, name, int(value))
        if self.kind not in FLIP_KINDS:
            raise config_error("flip kind", self.kind, f"one of {FLIP_KINDS}")

    def label(self, agents: bool = False) -> str:
        """"flip at 5", or with `agents` "flip at 5, agent 1" (an epoch: "epoch 2")."""
        what = {ROUND: "flip at", EPOCH: "flip of epoch", DRAW: "flip of draw"}[self.kind]
        return f"{what} {self.at}" + (f", agent {self.agent}" if agents else "")


class Edit:
    """What a neighbouring or planted world changes (the module docstring).

    flip: the neighbour's `Flip` (or None); planted: round -> included (True: the top of
    the range, False: the bottom).  `changed` says what was hit (the round, the user
    and the feedback before the change), filled as the world plays.
    """

    def __init__(self, flip: Flip | None = None, planted: dict[int, bool] | None = None
                 ) -> None:
        self.flip = flip
        self.planted = dict(planted or {})
        self.changed: dict[str, Any] = {}
        self._epochs = 0  # epoch draws so far
        self._drawn = 0   # rewards drawn for the flipped user so far

    def fresh(self) -> Edit:
        """The same edit with its counters at the start (a world's copy plays afresh)."""
        return Edit(self.flip, self.planted)

    def _target(self, t: int) -> str | None:
        """"other", "top", "bottom" or None: what happens to round t's feedback."""
        flip = self.flip
        if flip is not None and flip.kind == ROUND and flip.at == t:
            return "other"
        planted = self.planted.get(t)
        return None if planted is None else ("top" if planted else "bottom")

    def reward(self, t: int, reward: float, user: Any = None) -> float:
        """Round t's scalar reward as the edited world hands it out."""
        target = self._target(t)
        if target is None:
            return reward
        self.changed = {"round": t, "user": user, "feedback": reward}
        if target == "other":
            return 0.0 if reward >= 0.5 else 1.0
        return 1.0 if target == "top" else 0.0

    def click(self, t: int, first: int, list_len: int, user: Any = None) -> int:
        """Round t's first-click position in [0, list_len] (list_len: no click), edited."""
        target = self._target(t)
        if target is None:
            return first
        self.changed = {"round": t, "user": user, "feedback": first}
        if target == "other":
            return list_len if first < list_len else 0
        return 0 if target == "top" else list_len

    def rewards(self, t: int, rewards: np.ndarray) -> np.ndarray:
        """Round t's (M,) rewards of every agent: agent `flip.agent` (mod M) flipped."""
        if self._target(t) != "other":
            return rewards
        out = np.array(rewards, dtype=float)
        a = self.flip.agent % out.size
        self.changed = {"round": t, "user": a, "feedback": float(out[a])}
        out[a] = 0.0 if out[a] >= 0.5 else 1.0
        return out

    def sums(self, arms: np.ndarray, pulls: int, sums: np.ndarray) -> np.ndarray:
        """One epoch's (M, A) reward sums: in the flipped epoch, one agent's sum of the first
        arm moves by one."""
        epoch, self._epochs = self._epochs, self._epochs + 1
        flip = self.flip
        if flip is None or flip.kind != EPOCH or epoch != flip.at or pulls <= 0 or not sums.size:
            return sums
        a = flip.agent % sums.shape[0]
        out = sums.copy()
        out[a, 0] += -1 if out[a, 0] > 0 else 1
        self.changed = {"epoch": epoch, "user": a, "arm": int(np.asarray(arms)[0])}
        return out

    def draws(self, users: np.ndarray, arms: np.ndarray, rewards: np.ndarray) -> np.ndarray:
        """Rewards an anonymous aggregator drew for `users`: the flipped user's `at`-th."""
        flip = self.flip
        if flip is None or flip.kind != DRAW:
            return rewards
        mine = np.flatnonzero(np.asarray(users) == flip.agent)
        if self._drawn <= flip.at < self._drawn + mine.size:
            i = mine[flip.at - self._drawn]
            rewards = np.array(rewards, dtype=float)
            rewards[i] = 0.0 if rewards[i] >= 0.5 else 1.0
            self.changed = {"draw": flip.at, "user": flip.agent,
                            "arm": int(np.asarray(arms)[i])}
        self._drawn += mine.size
        return rewards
