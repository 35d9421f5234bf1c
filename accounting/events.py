"""Privacy events: immutable descriptions of releases, interpreted by accountants.

An event says *what noise, what sensitivity*; it never carries an epsilon.
Events are frozen dataclasses: equal and hashable by value.  The algebra is
add-only: single releases (Laplace, Gaussian, a secure sum with distributed
discrete Gaussian noise), composition, repetition, tree aggregation, matrix
factorization, and the explicit `NotDifferentiallyPrivate` marker.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import UnsupportedEventError
from .validation import check_count, check_nonnegative, check_positive


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
class SecureSumEvent(PrivacyEvent):
    """One secure-sum release whose noise is a sum of discrete Gaussian shares.

    Every contributing party encodes its vector on an integer grid and adds an
    independent share N_Z(0, sigma^2) per entry; the aggregator learns only the
    modular sum (Kairouz, Liu & Steinke 2021, "The distributed discrete
    Gaussian mechanism for federated learning with secure aggregation").  All
    quantities are in grid steps:

    - `sigma`: the parameter of each share's discrete Gaussian (at least 1/2,
      which KLS 2021 Theorem 1 assumes);
    - `shares`: the fewest shares the released sum is guaranteed to hold that
      the observer does not know (the minimum number of surviving parties
      minus the colluding ones);
    - `l2_sensitivity`: bound on the L2 distance of the two neighbours'
      encoded sums, rounding included;
    - `dimension`: entries of the released integer vector (KLS's d);
    - `rounding_slack`: the part of `l2_sensitivity` that rounding adds (the
      square root of the number of entries that may differ, for stochastic
      rounding coupled on one uniform per entry), stated, already counted;
    - `wrap_probability`: a bound on the chance that the sum leaves the
      modulus's centred range, so that the decoded value is wrong.  Stated for
      accuracy only: the modular reduction is a function of the exact integer
      sum (post-processing), so it cannot weaken the guarantee, and the
      accountants ignore it.

    Privacy: with s = l2_sensitivity / (sqrt(shares) sigma) and
    tau = 10 sum_(k=1)^(shares-1) exp(-2 pi^2 sigma^2 k / (k + 1)), the release
    has Renyi divergence at most min(alpha s^2/2 + tau d, alpha (s + tau sqrt(d))^2 / 2)
    at every order alpha (KLS 2021, Proposition 14 and Theorem 1), hence is
    rho-zCDP with rho = min(s^2/2 + tau d, (s + tau sqrt(d))^2 / 2).  The
    formulas live in `accountants.secure_sum`; the zCDP and RDP accountants
    read them, the others refuse the event.
    """

    sigma: float
    shares: int
    l2_sensitivity: float
    dimension: int
    rounding_slack: float = 0.0
    wrap_probability: float = 0.0

    def __post_init__(self) -> None:
        sigma = check_positive("sigma", self.sigma)
        if sigma < 0.5:
            raise UnsupportedEventError(
                f"sigma must be >= 0.5 grid steps (the distributed discrete Gaussian bound of "
                f"Kairouz, Liu & Steinke 2021 assumes it); got {self.sigma!r}")
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "shares", check_count("shares", self.shares))
        sens = check_positive("l2_sensitivity", self.l2_sensitivity)
        object.__setattr__(self, "l2_sensitivity", sens)
        object.__setattr__(self, "dimension", check_count("dimension", self.dimension))
        slack = check_nonnegative("rounding_slack", self.rounding_slack)
        if slack > sens:
            raise UnsupportedEventError(
                f"rounding_slack must be <= l2_sensitivity = {sens!r} (it is a part of it); "
                f"got {self.rounding_slack!r}")
        object.__setattr__(self, "rounding_slack", slack)
        wrap = check_nonnegative("wrap_probability", self.wrap_probability)
        if wrap > 1.0:
            raise UnsupportedEventError(
                f"wrap_probability must be a probability in [0, 1]; got {self.wrap_probability!r}")
        object.__setattr__(self, "wrap_probability", wrap)

    @property
    def mu(self) -> float:
        """s = l2_sensitivity / (sqrt(shares) sigma), as a Gaussian of the summed variance."""
        return self.l2_sensitivity / (self.sigma * self.shares**0.5)


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
    Choquette-Choo et al. 2023).  Over secure sums the release of C x is one
    `SecureSumEvent` instead (discrete shares of the noise of C x).
    """

    release_event: GaussianEvent | SecureSumEvent
    column_norm: float
    horizon: int

    def __post_init__(self) -> None:
        if not isinstance(self.release_event, (GaussianEvent, SecureSumEvent)):
            raise UnsupportedEventError(
                f"release_event must be a GaussianEvent or a SecureSumEvent (the noisy "
                f"release of C x); got {self.release_event!r}")
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
            f"{name} must be a PrivacyEvent (LaplaceEvent, GaussianEvent, SecureSumEvent, "
            f"ComposedEvent, RepeatedEvent, TreeAggregationEvent, FactorizationEvent, "
            f"NotDifferentiallyPrivate); got {value!r}"
        )


def flatten(event: PrivacyEvent) -> list[tuple[PrivacyEvent, int]]:
    """Expand an event into (leaf event, multiplicity) pairs, merging equal leaves.

    Leaves are LaplaceEvent, GaussianEvent, SecureSumEvent or NotDifferentiallyPrivate.
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
