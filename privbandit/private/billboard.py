"""The billboard rule, enforced: public-coin tracks for the records a party releases.

In an interactive algorithm a party's raw data may drive its own actions,
but a record it RELEASES must come from an action computed only from public
information, the current context and outputs already released (the
billboard).  Otherwise one changed reward changes later actions, hence later
released records, and a guarantee over realised records protects no one
(docs/privacy_relations.md).

`Billboard` splits rounds into two tracks by a public coin (drawn from a
generator seeded before any data is seen, so the split is the same in
neighbouring environments) and released facts:

- shared rounds (a share `rate` of rounds, `merged_rate` for a unit whose
  released cluster spans other parties -- a public fact, found from released
  data): the billboard itself chooses the action
  -- the upper confidence bound of a ridge model built from released noisy
  prefixes of the unit's group only (`NoisyRidge`: the radius counts the
  noise) -- and only such a round's record can enter the party's stream;
- local rounds: the party acts on everything it holds; the record stays with
  the party and is never released.

`record` refuses a record whose action the billboard did not choose for
that round (`BillboardError`), so no algorithm built on it can feed a
raw-driven record into a stream.  The groups a caller passes must themselves
be computed from released data (e.g. `clustering.NoiseAwareClustering` of the prefixes);
the end-to-end audit (`privbandit.auditing.end_to_end`) checks the whole.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import BanditError, config_error
from ..kernels import ucb_scores
from .estimates import NoisyRidge, RewardNoiseRidge
from .streams import PartyStreams, RewardStreams

_BLOCK = 4096  # coins drawn per block


class BillboardError(BanditError):
    """A record offered for release whose action did not come from the billboard."""


class Billboard:
    """Public-coin tracks over a party's streams (see the module docstring).

    streams: the units' streams (`PartyStreams`, full statistics, with a
    `NoisyRidge`; or `RewardStreams`, reward-only with public Gram matrices,
    with a `RewardNoiseRidge`); ridge: the released-model arithmetic; rate:
    the share of rounds shared (exploration that feeds the released models),
    in (0, 1]; merged_rate: the share for a unit whose released cluster spans
    other parties (federation has something to pool; the larger of it and
    rate applies), in (0, 1]; cap: the
    records a unit releases at `rate` before it stops sharing unless merged
    (None: no cap), so that exploring for clusters costs a bounded number of
    shared rounds whatever the horizon; beta_scale: factor on the released
    model's radius.  Every rule reads only the public coin, released data and
    counts of shared rounds (public: coins and arrivals).
    """

    def __init__(self, streams: PartyStreams | RewardStreams, ridge: NoisyRidge | RewardNoiseRidge,
                 rate: float,
                 merged_rate: float | None = None, beta_scale: float = 1.0,
                 cap: int | None = None) -> None:
        if not (isinstance(rate, (int, float)) and 0.0 < rate <= 1.0):
            raise config_error("rate", rate, "a share of rounds in (0, 1]")
        merged_rate = rate if merged_rate is None else merged_rate
        if not (isinstance(merged_rate, (int, float)) and 0.0 < merged_rate <= 1.0):
            raise config_error("merged_rate", merged_rate, "a share of rounds in (0, 1]")
        self.streams, self.ridge, self.rate = streams, ridge, float(rate)
        self.merged_rate, self.beta_scale = max(float(merged_rate), self.rate), beta_scale
        if cap is not None and not (isinstance(cap, int) and cap >= 1):
            raise config_error("cap", cap, "None or an integer >= 1 (records per unit)")
        self.cap = cap
        self._coins: np.ndarray | None = None
        self._coin_rng: np.random.Generator | None = None
        self._models: dict[tuple[int, ...], Any] = {}
        self._ticket: tuple | None = None
        self.shared_rounds = 0

    # -- the public coin ---------------------------------------------------------------
    def coin(self, t: int, rng: np.random.Generator) -> float:
        """Round t's public coin, uniform on [0, 1).  The coins come from a generator seeded
        by the first call's `rng`, before any data is seen: the same in neighbours."""
        if self._coin_rng is None:
            self._coin_rng = np.random.default_rng(int(rng.integers(2**63)))
            self._coins = np.empty(0)
        while t >= self._coins.size:
            self._coins = np.concatenate((self._coins, self._coin_rng.random(_BLOCK)))
        return float(self._coins[t])

    # -- the shared track ----------------------------------------------------------------
    def released_changed(self) -> None:
        """Forget the released models (call after every release)."""
        self._models.clear()

    def _model(self, group: np.ndarray) -> Any:
        key = tuple(int(u) for u in group)
        if key not in self._models:
            model = self.streams.group_model(group, self.ridge)
            self._models[key] = None if model is None or not math.isfinite(model.beta) else model
        return self._models[key]

    def decide(self, t: int, unit: int, items: np.ndarray, group: np.ndarray,
               rng: np.random.Generator, *, merged: bool = False, rank=None) -> Any:
        """The shared round's action for `unit` at round t, or None for a local round.

        merged: whether the unit's released cluster spans other parties (the
        caller's reading of released clusters).  The action ranks the released
        model's upper confidence bounds of `group` (its released prefixes only;
        before any release, the widest items under the prior): `rank(scores)`
        (default: the argmax, an int).
        """
        if not merged and self.cap is not None and self.streams.recorded(unit) >= self.cap:
            return None
        if self.coin(t, rng) >= (self.merged_rate if merged else self.rate):
            return None
        model = self._model(np.asarray(group, dtype=np.intp))
        if model is None:  # the widest items under the prior
            d = items.shape[1]
            upper = ucb_scores(np.zeros(d), np.eye(d) / self.ridge.lam, items, 1.0)
        else:
            upper = model.scores(items, self.beta_scale)
        action = int(np.argmax(upper)) if rank is None else rank(upper)
        self._ticket = (t, int(unit), _key(action))
        self.shared_rounds += 1
        return action

    def record(self, t: int, unit: int, action: Any, record: Any) -> None:
        """Enter a shared round's record in `unit`'s stream: for `PartyStreams` the statistic
        z z^T its feedback gives, for `RewardStreams` the pair (x, y) of the chosen item's
        features (marked public here: the billboard chose the action) and its reward.
        Refused unless the billboard chose `action` for `unit` at round t."""
        if self._ticket != (t, int(unit), _key(action)):
            raise BillboardError(
                f"record of unit {unit} at round {t}, action {action}: only the action the "
                f"billboard chose for a shared round may be released (it chose {self._ticket})")
        self._ticket = None
        self.streams.enter(int(unit), record, by=f"billboard: shared round {t} of unit {unit}")


def _key(action: Any) -> Any:
    return tuple(int(a) for a in np.ravel(action))
