"""What a party publishes besides its noised releases, in one object: `Publication`.

Under the interactive relation (one user-round's reward in the environment
differs, actions adapting) some of what a party sends needs no noise: the
features of a record whose action came from public information, the round's
items and outputs already released (its Gram matrix, feature sums, counts),
and everything computed from releases -- partitions, models, communication
metadata, release schedules, flags.  Such values are public only if they are
the same in neighbouring environments along any sequence of released outputs;
`Publication` is the one way to say a value is public, so that an end-to-end
audit sees every such claim:

- `features(x, why=...)`: marks the features of records public
  (`PublicFeatures`, the only features a reward-only release accepts,
  `reward_only.RewardOnlyRelease`);
- `value(channel, value)`: publishes a value unnoised, on a named channel;
  `partition(labels)` publishes a partition of the units (channel PARTITION,
  which an audit reads to tell units whose cluster spans several parties);
- `fed(mechanism, schedule=..., **facts)`: declares that the record of the
  round being played enters `mechanism`'s next release (by the schedule's
  next release round), with public facts about it.

Outside an audit `value` and `fed` cost one context-variable read each, and
`features` the check of the array.  Inside one (`tape.recording`), every value
goes on the tape as a public value (`tape.PublicValue`: one channel per name
and publication), which the forced replay compares exactly between neighbours
(any difference is an unbounded loss), and every declaration joins the tape's
`declared` list (`tape.Feed`): the audit flips the rounds whose records were
released, and checks that every declared record reached a release of its
mechanism on the tape by its round (`audits.check_recorded`), so a release
that bypasses the tape is found for each mechanism instance and each release.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from privbandit.accounting.errors import invalid

from ._checks import real_array
from .tape import Feed, PublicValue, active

PARTITION = "clusters"  # the channel of `Publication.partition`


class Schedule(Protocol):
    """Release times fixed in advance: the first release round at or after round t (None:
    no release follows within the horizon)."""

    def next_release(self, t: int) -> int | None: ...


class Publication:
    """Everything one party publishes unnoised (see the module docstring).

    party: who publishes, a name for reports (e.g. "server 1", "global server").
    """

    def __init__(self, party: str) -> None:
        if not isinstance(party, str) or not party:
            raise invalid("party", party, "a non-empty name of the publishing party")
        self.party = party
        self._channels: dict[str, PublicValue] = {}

    def features(self, features: object, *, why: str) -> PublicFeatures:
        """The features (R, d) of R records, marked public: `why` says how their actions
        were chosen (from public information, the round's items and released outputs)."""
        return PublicFeatures(features, by=self, why=why)

    def value(self, channel: str, value: Any,
              describe: Callable[[np.ndarray], str] | None = None) -> Any:
        """Publish `value` unnoised on `channel`; returns it (inside a forced replay, the
        recorded run's).  `describe(value) -> str` reads one value in words for reports
        (given with the channel's first value)."""
        if active() is None:
            return value
        public = self._channels.get(channel)
        if public is None:
            public = self._channels[channel] = PublicValue(f"{self.party}: {channel}", describe,
                                                           channel)
        return public.release(value)

    def partition(self, labels: np.ndarray) -> np.ndarray:
        """Publish the cluster label of each unit, (n,) (channel PARTITION)."""
        return self.value(PARTITION, labels)

    def fed(self, mechanism: Any, *, schedule: Schedule | None = None, **facts: Any) -> None:
        """Declare that the record of the round being played enters `mechanism`'s next
        release, which the `schedule` puts at its next release round (None: no round is
        promised); `facts`: public facts about the record (e.g. unit=3, merged=True)."""
        tape = active()
        if tape is None:
            return
        until = None
        if schedule is not None and tape.now is not None:
            until = schedule.next_release(tape.now)
        tape.declared.append(Feed(mechanism, tape.now, len(tape.entries), facts, until,
                                  self.party))

    def __repr__(self) -> str:
        return f"Publication({self.party!r})"


class PublicFeatures:
    """The features (R, d) of R records, marked public by a `Publication` (its `features`;
    `by`: the publication, `why`: how the records' actions were chosen).

    A record's features are public under the interactive relation only when its
    action was computed from public information, the round's items and outputs
    already released.  The end-to-end audit checks the promise: the releases
    built from such features put their public part on the tape
    (`reward_only.RewardOnlyRelease`).
    """

    __slots__ = ("features", "by", "why")

    def __init__(self, features: object, *, by: Publication, why: str) -> None:
        if not isinstance(by, Publication):
            raise invalid("by", type(by).__name__, "the Publication of the party that vouches "
                          "for the features (Publication.features)")
        arr = features
        if not (type(arr) is np.ndarray and arr.dtype == np.float64  # the per-round path
                and math.isfinite(float(arr.sum()))):
            arr = real_array("features", features, None)
        if arr.ndim != 2:
            raise invalid("features", f"an array of shape {arr.shape}", "an (R, d) array")
        if not isinstance(why, str) or not why:
            raise invalid("why", why, "a non-empty sentence saying why the features are public")
        self.features, self.by, self.why = arr, by, why

    def __len__(self) -> int:
        return int(self.features.shape[0])
