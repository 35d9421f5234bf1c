"""The one environment protocol: what a round offers, what comes back, the regret oracle.

An environment owns the world: the users' hidden parameters, the items of
each round, the reward draws, the oracle's best action and the regret.
Algorithms only see what a round offers (`Round`) and the feedback to their
own action (`Outcome.feedback`).

Round by round, for t = 0, 1, 2, ... in order:

    env.reset(rng)                 # start the round stream (once per run)
    rnd = env.observe(t)           # Round(t, user, items): what round t offers
    out = env.act(t, action)       # Outcome(reward, feedback, regret, expected)

`Outcome.regret` is the regret oracle: the action's pseudo-regret (best
expected reward minus the action's), computed by the world from its hidden
parameters.  `describe()` is a JSON description without hidden parameters.
Optional, with defaults here: `true_clusters()` (hidden cluster labels, for
evaluation only), `detection_error(labels)` (how wrong an algorithm's
detected clusters are) and `detection_mixing(labels)` (the share of users
outside the largest true cluster of their detected cluster); the run loop's
checkpoints read both.

Neighbours (`envs.neighbours`): a world that can be audited end to end makes
its own neighbours, `neighbour(flip)` (the same world with one user-round's
feedback flipped, a `Flip` of a kind in `flip_kinds`), and holds canaries,
`planted(rounds, included)`; both are copies, the world itself unchanged.

Worlds without contexts (the multi-agent MAB, anonymous users) also answer
for many rounds at once, `regret(actions)` and `expected_reward(actions)`
with actions (R, ...) -> (R,): protocols whose steps span many rounds use
them.  Drawing rounds block by block, and prefetching the next block on a
worker thread, is an optional accelerator a world may use
(`envs.blocks.BlockRounds`), not part of the protocol.
"""
from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..errors import HorizonError, config_error
from ..kernels import cluster_error_rate, cluster_mixing_rate
from .neighbours import ROUND, Edit, Flip


class Round(NamedTuple):
    """What round t offers: the arriving user (None when every user acts) and the items
    ((K, d) read-only contexts for linear worlds; None when there are none)."""

    t: int
    user: Any
    items: Any


class Outcome(NamedTuple):
    """The result of an action: realised reward, the algorithm's feedback, pseudo-regret,
    and the action's expected reward."""

    reward: float
    feedback: Any
    regret: float
    expected: float


class Environment(ABC):
    """The protocol every world implements (see the module docstring).

    `flip_kinds`: the kinds of `Flip` the world makes neighbours for (none: it
    cannot be audited end to end); `_edit`: what a neighbour or planted copy
    changes (None in a plain world).
    """

    flip_kinds: tuple[str, ...] = ()
    _edit: Edit | None = None

    @abstractmethod
    def reset(self, rng: np.random.Generator) -> None:
        """Start a fresh round stream from `rng` (the hidden world is unchanged)."""

    @abstractmethod
    def observe(self, t: int) -> Round:
        """What round t offers; rounds are observed in order 0, 1, 2, ..."""

    @abstractmethod
    def act(self, t: int, action: Any) -> Outcome:
        """Play `action` at the round just observed."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """A JSON-serialisable description of the environment (no hidden parameters)."""

    def true_clusters(self) -> np.ndarray | None:
        """Hidden cluster label of each user, for evaluation only (None: no clusters)."""
        return None

    # -- neighbours (envs.neighbours) ---------------------------------------------------
    def neighbour(self, flip: Flip) -> Environment:
        """The neighbouring world that differs from this one in what `flip` names: a copy,
        this world unchanged.  ConfigError for a flip of a kind the world cannot make."""
        if not isinstance(flip, Flip) or flip.kind not in self.flip_kinds:
            raise config_error("flip", flip, f"a Flip of kind {self.flip_kinds or '(none)'} "
                               f"for {type(self).__name__}")
        planted = {} if self._edit is None else self._edit.planted
        return self._edited(Edit(flip, planted))

    def planted(self, rounds: Sequence[int], included: Sequence[bool]) -> Environment:
        """A copy whose feedback at `rounds` is the top of its range where `included`, else
        the bottom (canary user-rounds of a one-run audit)."""
        if ROUND not in self.flip_kinds:
            raise config_error("planted rounds", type(self).__name__,
                               "a world that hands out feedback round by round")
        rounds = [int(t) for t in rounds]
        included = [bool(i) for i in included]
        if len(rounds) != len(included):
            raise config_error("included", len(included), f"one flag per round ({len(rounds)})")
        flip = None if self._edit is None else self._edit.flip
        return self._edited(Edit(flip, dict(zip(rounds, included, strict=True))))

    @property
    def changed(self) -> dict[str, Any]:
        """What a neighbour's flip hit so far (round or epoch, user, feedback; empty in a
        plain world or before the flipped round)."""
        return {} if self._edit is None else dict(self._edit.changed)

    def _edited(self, edit: Edit) -> Environment:
        """A copy of this world that carries `edit` (a world holding objects bound to itself
        rebuilds them here)."""
        world = copy.copy(self)
        world._edit = edit
        return world

    def detection_error(self, labels: np.ndarray | None) -> float | None:
        """The fraction of users whose detected cluster is not exactly their true cluster
        (`kernels.cluster_error_rate`); None when either side has no clusters."""
        return self._against_truth(labels, cluster_error_rate)

    def detection_mixing(self, labels: np.ndarray | None) -> float | None:
        """The fraction of users outside the largest true cluster of their detected cluster
        (`kernels.cluster_mixing_rate`); None when either side has no clusters."""
        return self._against_truth(labels, cluster_mixing_rate)

    def _against_truth(self, labels: np.ndarray | None, measure: Any) -> float | None:
        truth = self.true_clusters()
        if truth is None or labels is None:
            return None
        return measure(truth, labels)


class ContextFreeRounds:
    """`reset` and `observe` for worlds whose rounds offer no contexts (every user acts).

    `observe(t)` is `Round(t, None, None)`, in order from 0 after `reset(rng)`;
    the world's `act(t, action)` gets the round stream from `_acting(t)`.
    """

    _rounds_rng: np.random.Generator | None = None
    _observed = -1

    def reset(self, rng: np.random.Generator) -> None:
        if not isinstance(rng, np.random.Generator):
            raise config_error("rng", rng, "a numpy.random.Generator")
        self._rounds_rng = rng
        self._observed = -1

    def observe(self, t: int) -> Round:
        if self._rounds_rng is None:
            raise HorizonError("call reset(rng) before observe(t)")
        if t != self._observed + 1:
            raise HorizonError(
                f"rounds are served in order: expected t={self._observed + 1}; got t={t}")
        self._observed = t
        return Round(t, None, None)

    def round_stream(self) -> np.random.Generator | None:
        """The round stream given to `reset` (None before it): a world that draws many
        rounds' rewards at once draws them from it when the run gives one."""
        return self._rounds_rng

    def _acting(self, t: int) -> np.random.Generator:
        """The round stream, once `t` is checked to be the round just observed."""
        if t != self._observed or self._rounds_rng is None:
            raise HorizonError(f"act on the round just observed (t={self._observed}); got t={t}")
        return self._rounds_rng
