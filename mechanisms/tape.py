"""A tape of releases: what a white-box end-to-end audit records and forces.

No tape is active by default (each release then pays one context-variable
read).  Inside `recording(tape)` every release of a mechanism of this layer
appends an entry: the mechanism, the value it noised (its pre-noise input,
after clipping), the output it released and the round being played when it
left (`Tape.mark`, set by whoever drives the run; None when unmarked).
Inside `recording(tape)` with `tape = Tape(forced=first)`, the i-th release
returns the output the first run released at position i instead of its own
(it still draws its noise, so generators stay in step) and records its own
pre-noise value.

Comparing the two tapes release by release (`pair_loss`) gives the privacy
loss of one neighbouring pair as adaptive composition counts it: along the
forced path every later input is a function of the same outputs, so each
mechanism's pre-noise difference is exactly what its noise must hide.  A run
whose releases differ in number, mechanism, shape or round, or whose
mechanisms do not pair one to one with the recorded run's (which unit
releases), diverged: its release schedule depends on the data, and no finite
loss is certified (`ReplayDivergedError`).

Public values.  Under the interactive relation some released values need no
noise: a record whose action came from public information and earlier
releases has the same features in both neighbours along a forced transcript,
so its Gram matrix is public; so is every message's metadata (who sent what
to whom, when, how big) and every cluster, model or flag computed from
releases.  A party publishes them through its `publication.Publication`,
which puts each on the tape as a `PublicValue` release, unnoised; the pair's
loss reads it exactly: equal in both runs costs nothing, any difference is an
unbounded loss (the value was not public after all), reported with the first
differing release (`PairLoss.public_difference`).

What an audit reads besides releases (each costs one context-variable read
when no tape is active): every mechanism constructed while recording
(`constructed`, `Tape.mechanisms`: the audit checks that what the ledgers paid
for was released on the tape), and declarations that the data of the round
being played entered a mechanism's next release (`Publication.fed`,
`Tape.declared`: which rounds' records are released, by which round, with
public facts such as a unit's released cluster spanning other parties; the
audit chooses its flips there and checks each declared record reached a
release of its mechanism on the tape).
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privbandit.accounting.accountants import ExactGaussianAccountant
from privbandit.accounting.errors import invalid
from privbandit.accounting.events import GaussianEvent

_ACTIVE: ContextVar[Tape | None] = ContextVar("privbandit_release_tape", default=None)


class ReplayDivergedError(RuntimeError):
    """A forced replay released something the recorded run did not (data-dependent timing)."""


@dataclass
class Entry:
    """One release: the mechanism, its pre-noise value, what was released, the round
    being played when it left (None: the tape was not marked), and `view`: what else the
    observer received with it (a secure sum's masked shares and survivors; None for a
    central release)."""

    mechanism: Any
    value: np.ndarray
    output: np.ndarray
    round: int | None = None
    view: Any = None


@dataclass(frozen=True)
class Feed:
    """A declaration (`publication.Publication.fed`): the data of round `round` entered
    `mechanism`, whose next release after the first `position` releases of the tape carries
    it, at round `until` at the latest (None: no round promised); `facts`: public facts
    about the record (e.g. unit=3, merged=True); `party`: who declared it."""

    mechanism: Any
    round: int | None
    position: int
    facts: dict
    until: int | None = None
    party: str = ""


@dataclass
class Tape:
    """The releases of one run, in order; `forced`: the recorded run to replay against.

    mechanisms: every mechanism constructed while recording (`constructed`);
    declared: every `feeds` declaration; now: the round being played (`mark`).
    """

    forced: Tape | None = None
    entries: list[Entry] = field(default_factory=list)
    mechanisms: list[Any] = field(default_factory=list)
    declared: list[Feed] = field(default_factory=list)
    now: int | None = None

    def mark(self, t: int) -> None:
        """Round t is being played: later releases and declarations are stamped with it."""
        self.now = int(t)

    def release(self, mechanism: Any, value: np.ndarray, output: np.ndarray,
                view: Any = None) -> np.ndarray:
        """Record one release (and the observer's `view` of it); return what is released (the
        recorded output when forcing)."""
        i = len(self.entries)
        if self.forced is not None:
            ref = self.forced.entries[i] if i < len(self.forced.entries) else None
            if ref is None or type(ref.mechanism) is not type(mechanism) or (
                    ref.value.shape != np.shape(value)):
                raise ReplayDivergedError(
                    f"release {i} of the replay ({describe_release(mechanism, value)}) has no "
                    f"counterpart in the recorded run ("
                    + ("it made only " + str(len(self.forced.entries)) + " releases"
                       if ref is None else describe_release(ref.mechanism, ref.value))
                    + "): release times or shapes depend on the data")
            if ref.round is not None and self.now is not None and ref.round != self.now:
                raise ReplayDivergedError(
                    f"release {i} ({describe_release(mechanism, value)}) left at round "
                    f"{self.now} in the replay and at round {ref.round} in the recorded run: "
                    "release times depend on the data")
            output = ref.output.copy()
        self.entries.append(Entry(mechanism, np.array(value, dtype=float), np.array(output),
                                  self.now, view))
        return output

    def released_feeds(self) -> list[Feed]:
        """The declarations whose mechanism released after them on this tape (the rounds
        whose data reached a release), in order."""
        last: dict[int, int] = {}
        for i, e in enumerate(self.entries):
            last[id(e.mechanism)] = i
        return [f for f in self.declared if last.get(id(f.mechanism), -1) >= f.position]


def active() -> Tape | None:
    """The tape releases are recorded on now (None: no audit is running)."""
    return _ACTIVE.get()


def tap(mechanism: Any, value: np.ndarray, output: np.ndarray, view: Any = None) -> np.ndarray:
    """What a mechanism releases: `output`, or the forced output inside a replay (`view`: what
    else the observer receives, kept on the tape)."""
    tape = _ACTIVE.get()
    return output if tape is None else tape.release(mechanism, value, output, view)


def constructed(mechanism: Any) -> None:
    """A mechanism was built: listed on the active tape (`Tape.mechanisms`), if any."""
    tape = _ACTIVE.get()
    if tape is not None:
        tape.mechanisms.append(mechanism)


@contextlib.contextmanager
def recording(tape: Tape):
    """Record (and, with `tape.forced`, force) every release made inside the block."""
    if not isinstance(tape, Tape):
        raise invalid("tape", tape, "a Tape")
    token = _ACTIVE.set(tape)
    try:
        yield tape
    finally:
        _ACTIVE.reset(token)


class PublicValue:
    """A channel of values released WITHOUT noise because the neighbouring relation makes
    them public (e.g. the Gram matrix of records whose actions came from released data,
    a message's metadata, clusters computed from releases); a party's
    `publication.Publication` makes one per channel it publishes on.

    Guarantee: none of its own -- it claims the value is equal in neighbouring
    inputs along any forced transcript, and costs nothing only then.  The
    end-to-end audit checks the claim: a public value that differs between
    neighbours is an unbounded loss (`pair_loss`).  `channel` names the value
    in reports; `describe(value) -> str` (optional) reads one value in words
    for the report of the first difference; `name`: the channel's name within
    its publication (e.g. "clusters": what an audit reads a partition from).
    """

    def __init__(self, channel: str, describe: Callable[[np.ndarray], str] | None = None,
                 name: str = "") -> None:
        if not isinstance(channel, str) or not channel:
            raise invalid("channel", channel, "a non-empty name of the public value")
        if describe is not None and not callable(describe):
            raise invalid("describe", describe, "None or a callable value -> str")
        self.channel, self._describe, self.name = channel, describe, name or channel

    def release(self, value: np.ndarray) -> np.ndarray:
        """Release `value` as it is (the recorded run's value inside a forced replay)."""
        value = np.asarray(value, dtype=float)
        return tap(self, value, value)

    def describe(self, value: np.ndarray) -> str:
        """One released value in words (its channel and entries unless told otherwise)."""
        if self._describe is not None:
            return self._describe(np.asarray(value))
        flat = np.ravel(value)
        shown = np.array2string(flat[:8], precision=4, separator=", ")
        return f"{self.channel} {shown}{' ...' if flat.size > 8 else ''}"

    def pair_loss(self, first: list[np.ndarray], second: list[np.ndarray]
                  ) -> tuple[float, float]:
        """(0, 0) when every release is equal in the two runs, else (inf, 0)."""
        return (0.0, 0.0) if first_difference(first, second) is None else (math.inf, 0.0)

    def __repr__(self) -> str:
        return f"PublicValue({self.channel!r})"


def describe_release(mechanism: Any, value: np.ndarray) -> str:
    """A release in words: a public value read by its channel, else the mechanism's type and
    the shape of its pre-noise value."""
    if isinstance(mechanism, PublicValue):
        return f"public {mechanism.describe(value)}"
    return f"{type(mechanism).__name__}, shape {np.shape(value)}"


def first_difference(first: list[np.ndarray], second: list[np.ndarray]) -> int | None:
    """The index of the first pair of values that differ (shape or entries), or None."""
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        if np.shape(a) != np.shape(b) or not np.array_equal(a, b):
            return i
    return None


@dataclass(frozen=True)
class PairLoss:
    """The privacy loss of one neighbouring pair along a forced path.

    mu: the Gaussian-DP parameter of every Gaussian release together (the
    square root of the sum of squared per-mechanism mus); pure_epsilon: the
    sum of the pure-DP losses (Laplace releases); releases: how many releases
    were compared (public values included); differing: how many had different
    pre-noise values; public_difference: the first public value (`PublicValue`)
    that differs between the runs, described ("" when none does; then mu is
    inf); public: how many of the releases were public values.
    """

    mu: float
    pure_epsilon: float
    releases: int
    differing: int
    public_difference: str = ""
    public: int = 0

    def epsilon(self, delta: float) -> float:
        """epsilon at `delta`: the exact Gaussian-DP conversion plus the pure part (basic
        composition of the two)."""
        if self.mu == 0.0:
            return self.pure_epsilon
        if not math.isfinite(self.mu):
            return math.inf
        gauss = ExactGaussianAccountant().compose(GaussianEvent(1.0 / self.mu, 1.0))
        return gauss.epsilon(delta) + self.pure_epsilon


def laplace_loss(first: list[np.ndarray], second: list[np.ndarray], scale: float
                 ) -> tuple[float, float]:
    """(0, epsilon) of two sequences of pre-noise values under Laplace noise of `scale`:
    the sum of ||difference||_1 / scale (pure DP, basic composition)."""
    gap = sum(float(np.abs(a - b).sum()) for a, b in zip(first, second, strict=True))
    return 0.0, gap / scale


def whiten_symmetric(diff: np.ndarray) -> np.ndarray:
    """The values symmetric noise hides at unit variance: the strict upper triangle, and the
    diagonal over sqrt(2) (its noise has twice the variance); ||w||^2 = ||D||_F^2 / 2."""
    dim = diff.shape[-1]
    upper = np.triu_indices(dim, 1)
    diag = np.arange(dim)
    return np.concatenate((diff[..., upper[0], upper[1]],
                           diff[..., diag, diag] / math.sqrt(2.0)), axis=-1)


def pair_loss(first: Tape, second: Tape) -> PairLoss:
    """The loss of the pair (first, second), the second a forced replay of the first.

    Releases are grouped by mechanism (a continual-release stream is one
    mechanism over all its steps) and each group is read by its mechanism's
    `pair_loss(values_first, values_second) -> (mu_squared, pure_epsilon)`.
    The mechanisms of the two runs must pair one to one in both directions
    (each replayed mechanism releases only where one recorded mechanism did,
    and that one only where it does): else which unit releases depends on the
    data (`ReplayDivergedError`).
    """
    if len(first.entries) != len(second.entries):
        raise ReplayDivergedError(
            f"the replay made {len(second.entries)} releases, the recorded run "
            f"{len(first.entries)}: release times depend on the data")
    groups: dict[int, tuple[Any, list[np.ndarray], list[np.ndarray]]] = {}
    twin: dict[int, int] = {}  # the replay's mechanism -> the recorded run's
    back: dict[int, int] = {}  # the recorded run's mechanism -> the replay's
    differing = public_count = 0
    public = ""
    for i, (a, b) in enumerate(zip(first.entries, second.entries, strict=True)):
        if (twin.setdefault(id(b.mechanism), id(a.mechanism)) != id(a.mechanism)
                or back.setdefault(id(a.mechanism), id(b.mechanism)) != id(b.mechanism)):
            raise ReplayDivergedError(
                f"release {i} ({describe_release(a.mechanism, a.value)}): the two runs' "
                "mechanisms do not pair one to one (which unit releases depends on the data)")
        _, va, vb = groups.setdefault(id(a.mechanism), (a.mechanism, [], []))
        va.append(a.value)
        vb.append(b.value)
        same = a.value.shape == b.value.shape and np.array_equal(a.value, b.value)
        differing += int(not same)
        if isinstance(a.mechanism, PublicValue):
            public_count += 1
            if not same and not public:
                public = (f"release {i}: public value {a.mechanism.channel!r} differs between "
                          f"the neighbours: {a.mechanism.describe(a.value)} in the recorded "
                          f"run, {b.mechanism.describe(b.value)} in the replay"
                          + _largest_gap(a.value, b.value))
    mu2 = pure = 0.0
    for mechanism, va, vb in groups.values():
        m2, eps = mechanism.pair_loss(va, vb)
        mu2 += m2
        pure += eps
    return PairLoss(math.sqrt(mu2), pure, len(first.entries), differing, public, public_count)


def _largest_gap(a: np.ndarray, b: np.ndarray) -> str:
    if a.shape != b.shape:
        return f" (shapes {a.shape} and {b.shape})"
    return f" (largest entry difference {float(np.max(np.abs(a - b))):.3g})"
