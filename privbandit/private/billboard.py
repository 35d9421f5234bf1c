"""The billboard rule, enforced: public-coin tracks for the records a party releases.

In an interactive algorithm a party's raw data may drive its own actions,
but a record it RELEASES must come from an action computed only from public
information, the current context and outputs already released (the
billboard).  Otherwise one changed reward changes later actions, hence later
released records, and a guarantee over realised records protects no one
(docs/privacy_relations.md).

`Billboard` splits rounds into two tracks by a public coin (drawn from a
generator seeded before any data is seen, so the split is the same in
neighbouring environments):

- shared rounds (probability `rate`): the billboard itself chooses the action
  -- the upper confidence bound of a ridge model built from released noisy
  prefixes of the unit's group only (`NoisyRidge`: the radius counts the
  noise) -- and only such a round's record can enter the party's stream;
- local rounds: the party acts on everything it holds; the record stays with
  the party and is never released.

`record` refuses a record whose action the billboard did not choose for
that round (`BillboardError`), so no algorithm built on it can feed a
raw-driven record into a stream.  The groups a caller passes must themselves
be computed from released data (e.g. `NoiseAwareClustering` of the prefixes);
the end-to-end audit (`privbandit.endtoend`) checks the whole.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import BanditError, config_error
from ..kernels import ucb_scores
from .estimates import NoisyRidge
from .streams import PartyStreams

_BLOCK = 4096  # coins drawn per block


class BillboardError(BanditError):
    """A record offered for release whose action did not come from the billboard."""


class Billboard:
    """Public-coin tracks over a party's `PartyStreams` (see the module docstring).

    streams: the units' streams; ridge: the released-model arithmetic; rate:
    the share of rounds on the shared track, in (0, 1]; beta_scale: factor on
    the released model's radius.
    """

    def __init__(self, streams: PartyStreams, ridge: NoisyRidge, rate: float,
                 beta_scale: float = 1.0) -> None:
        if not (isinstance(rate, (int, float)) and 0.0 < rate <= 1.0):
            raise config_error("rate", rate, "a share of rounds in (0, 1]")
        self.streams, self.ridge, self.rate = streams, ridge, float(rate)
        self.beta_scale = beta_scale
        self._coins: np.ndarray | None = None
        self._coin_rng: np.random.Generator | None = None
        self._models: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, float]] = {}
        self._ticket: tuple[int, int, int] | None = None
        self.shared_rounds = 0

    # -- the public coin ---------------------------------------------------------------
    def shared(self, t: int, rng: np.random.Generator) -> bool:
        """Whether round t is on the shared track.  The coins come from a generator seeded
        by the first call's `rng`, before any data is seen: public, the same in neighbours."""
        if self._coin_rng is None:
            self._coin_rng = np.random.default_rng(int(rng.integers(2**63)))
            self._coins = np.empty(0, dtype=bool)
        while t >= self._coins.size:
            self._coins = np.concatenate((self._coins, self._coin_rng.random(_BLOCK) < self.rate))
        return bool(self._coins[t])

    # -- the shared track ----------------------------------------------------------------
    def released_changed(self) -> None:
        """Forget the released models (call after every release)."""
        self._models.clear()

    def _model(self, group: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
        key = tuple(int(u) for u in group)
        if key not in self._models:
            st = self.streams
            members = group[st.counts[group] > 0]
            model = None if members.size == 0 else self.ridge.model(
                st.released[members].sum(axis=0), float(st.variance[members].sum()))
            self._models[key] = None if model is None else (
                model.inverse, model.theta, self.beta_scale * model.beta)
        return self._models[key]

    def choose(self, t: int, unit: int, items: np.ndarray, group: np.ndarray) -> int:
        """The shared round's action for `unit`: the UCB of the released model of `group`
        (its released prefixes only); before any release, the widest item under the prior."""
        model = self._model(np.asarray(group, dtype=np.intp))
        if model is None:
            d = items.shape[1]
            inv, theta = np.eye(d) / self.ridge.lam, np.zeros(d)
            beta = 1.0
        else:
            inv, theta, beta = model
        if not math.isfinite(beta):
            beta = 1.0
        action = int(np.argmax(ucb_scores(theta, inv, items, beta)))
        self._ticket = (t, int(unit), action)
        self.shared_rounds += 1
        return action

    def record(self, t: int, unit: int, items: np.ndarray, action: int, reward: float) -> None:
        """Enter the shared round's record z z^T, z = [x; y], in `unit`'s stream; refused
        unless the billboard chose `action` for `unit` at round t."""
        if self._ticket != (t, int(unit), int(action)):
            raise BillboardError(
                f"record of unit {unit} at round {t}, action {action}: only the action the "
                f"billboard chose for a shared round may be released (it chose {self._ticket})")
        self._ticket = None
        z = np.append(items[action], reward)
        self.streams.observe(int(unit), np.multiply.outer(z, z))
