"""Privacy events: immutable descriptions of releases, interpreted by accountants.

An event says *what noise, what sensitivity*; it never carries an epsilon.
Events are frozen dataclasses: equal and hashable by value.  The algebra is
add-only: single releases (Laplace, Gaussian), composition, repetition, tree
aggregation, matrix factorization, and the explicit `NotDifferentiallyPrivate`
marker.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import UnsupportedEventError
from .validation import check_count, check_positive


class PrivacyEvent:
    """Base class of all events (not instantiated directly)."""

    __slots__ = ()


@dataclass(frozen=True)
class LaplaceEvent(PrivacyEvent):
    """One release of f(D) + Lap(scale), with ||f(D) - f(D')||_1 <= l1_sensitivity."""

    scale: float
    l1_sensitivity: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(
            self, "l1_sensitivity", check_positive("l1_sensitivity", self.l1_sensitivity)
        )

    @property
    def pure_epsilon(self) -> float:
        """The pure-DP epsilon of this release: sensitivity / scale."""
        return self.l1_sensitivity / self.scale


@dataclass(frozen=True)
class GaussianEvent(PrivacyEvent):
    """One release of f(D) + N(0, sigma^2 I), with ||f(D) - f(D')||_2 <= l2_sensitivity.

    `sigma` is the standard deviation (never the variance).
    """

    sigma: float
    l2_sensitivity: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(
            self, "l2_sensitivity", check_positive("l2_sensitivity", self.l2_sensitivity)
        )

    @property
    def mu(self) -> float:
        """The Gaussian-DP parameter mu = sensitivity / sigma (Dong, Roth, Su 2019)."""
        return self.l2_sensitivity / self.sigma


@dataclass(frozen=True)
class ComposedEvent(PrivacyEvent):
    """The adaptive composition of several events on the same protected unit."""

    events: tuple

    def __post_init__(self) -> None:
        events = tuple(self.events)
        for e in events:
            _require_event("events[...]", e)
        object.__setattr__(self, "events", events)


@dataclass(frozen=True)
class RepeatedEvent(PrivacyEvent):
    """`count` adaptive repetitions of `event`."""

    event: PrivacyEvent
    count: int

    def __post_init__(self) -> None:
        _require_event("event", self.event)
        object.__setattr__(self, "count", check_count("count", self.count))


@dataclass(frozen=True)
class TreeAggregationEvent(PrivacyEvent):
    """A binary-tree (counting) mechanism whose every node releases `node_event`.

    One record touches `nodes_per_record` nodes (ceil(log2 n) + 1 over a horizon
    of n steps), so for one protected record the whole tree is the composition of
    `nodes_per_record` copies of `node_event`; every released prefix sum is
    post-processing of the nodes.
    """

    node_event: PrivacyEvent
    nodes_per_record: int

    def __post_init__(self) -> None:
        _require_event("node_event", self.node_event)
        object.__setattr__(
            self, "nodes_per_record", check_count("nodes_per_record", self.nodes_per_record)
        )

    def as_repeated(self) -> RepeatedEvent:
        """The equivalent composition seen by one record."""
        return RepeatedEvent(self.node_event, self.nodes_per_record)


@dataclass(frozen=True)
class FactorizationEvent(PrivacyEvent):
    """A matrix-factorization mechanism for prefix sums, A = B C, released as C x + z.

    The whole stream of `horizon` releases (C x)_t + z_t is one Gaussian
    mechanism on the vector C x: `release_event` is GaussianEvent(sigma,
    clip_norm * column_norm (+ float slack)), where `column_norm` is the
    largest column norm of the C used over the horizon (one record enters one
    column).  Every prefix estimate B y is post-processing.  Accountants see
    `release_event` once (Denisov, McMahan, Rush, Smith & Thakurta 2022;
    Choquette-Choo et al. 2023).
    """

    release_event: GaussianEvent
    column_norm: float
    horizon: int

    def __post_init__(self) -> None:
        if not isinstance(self.release_event, GaussianEvent):
            raise UnsupportedEventError(
                f"release_event must be a GaussianEvent (the Gaussian mechanism on C x); "
                f"got {self.release_event!r}")
        object.__setattr__(self, "column_norm", check_positive("column_norm", self.column_norm))
        object.__setattr__(self, "horizon", check_count("horizon", self.horizon))


@dataclass(frozen=True)
class NotDifferentiallyPrivate(PrivacyEvent):
    """A release whose protection is not DP (masks, k-anonymity); `reason` names it.

    Every DP accountant refuses this event with `NotDifferentiallyPrivateError`.
    """

    reason: str

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise UnsupportedEventError(
                f"reason must be a non-empty string; got {self.reason!r}"
            )


def _require_event(name: str, value: object) -> None:
    if not isinstance(value, PrivacyEvent):
        raise UnsupportedEventError(
            f"{name} must be a PrivacyEvent (LaplaceEvent, GaussianEvent, ComposedEvent, "
            f"RepeatedEvent, TreeAggregationEvent, FactorizationEvent, "
            f"NotDifferentiallyPrivate); got {value!r}"
        )


def flatten(event: PrivacyEvent) -> list[tuple[PrivacyEvent, int]]:
    """Expand an event into (leaf event, multiplicity) pairs, merging equal leaves.

    Leaves are LaplaceEvent, GaussianEvent or NotDifferentiallyPrivate.
    """
    _require_event("event", event)
    counts: dict[PrivacyEvent, int] = {}
    stack: list[tuple[PrivacyEvent, int]] = [(event, 1)]
    while stack:
        e, k = stack.pop()
        if isinstance(e, ComposedEvent):
            stack.extend((child, k) for child in e.events)
        elif isinstance(e, RepeatedEvent):
            stack.append((e.event, k * e.count))
        elif isinstance(e, TreeAggregationEvent):
            stack.append((e.node_event, k * e.nodes_per_record))
        elif isinstance(e, FactorizationEvent):
            stack.append((e.release_event, k))
        else:
            counts[e] = counts.get(e, 0) + k
    return list(counts.items())
