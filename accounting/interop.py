"""Events for the accountants users already trust: dp-accounting and OpenDP.

    to_dp_accounting(event) -> dp_accounting.DpEvent
    to_opendp(event) -> opendp Measurement (its `map(1.0)`: the event's privacy loss)
    DP_ACCOUNTING, OPENDP: event class -> exporter; `exporter(table, cls)` registers one

Both libraries are optional (the 'interop' extra installs them); a missing one
raises `MissingExtraError` naming the extra.  Every event kind has an exporter
in each table, looked up by its exact class: a kind without one is refused
with `UnsupportedEventError` (fail closed, never exported as its parent), and
tests/accounting/test_interop.py fails until it gets one.

dp-accounting.  Its events are in units of the sensitivity: a noise
multiplier is noise scale / sensitivity (rounded down, so the exported event
never claims more noise than ours).  Laplace and Gaussian releases become
`LaplaceDpEvent` and `GaussianDpEvent`, a composition `ComposedDpEvent`, a
repetition `SelfComposedDpEvent`; a tree of k nodes is the k-fold
self-composition of its node (what one record meets, as our accountants read
it); a matrix factorization is its one Gaussian release on C x; a secure sum
(`SecureSumEvent`) the `ZCDpEvent` of its Renyi curve's first line (rho = s^2
/ 2, xi = tau d: RDP accountants only, as ours); a
`NotDifferentiallyPrivate` release is a `NonPrivateDpEvent` (infinite epsilon).
dp-accounting's PLD and RDP accountants then agree with ours
(tests/accounting/test_interop.py).

OpenDP.  A measurement on one float at absolute distance d_in (1.0: one
protected unit's neighbour) releasing it through the event's noise, in units
of the sensitivity: Laplace `make_laplace`, Gaussian `make_gaussian`,
compositions and repetitions `make_composition`, a secure sum the Gaussian
measurement of its zCDP rho.  Its privacy measure is
max-divergence (pure epsilon) when every release is Laplace, else zCDP (each
Laplace release converted by `make_pureDP_to_zCDP`, rho = epsilon**2 / 2,
Bun & Steinke 2016, Prop. 1.4): read (epsilon, delta) with
`opendp.combinators.make_zCDP_to_approxDP`.  So OpenDP's reading is exact for
pure-DP and Gaussian-only events and an upper bound for mixtures.  OpenDP has
no non-private measurement: a `NotDifferentiallyPrivate` release is refused
with `NotDifferentiallyPrivateError`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .accountants.secure_sum import secure_sum_tau
from .errors import NotDifferentiallyPrivateError, UnsupportedEventError, require_extra
from .events import (
    ComposedEvent,
    FactorizationEvent,
    GaussianEvent,
    LaplaceEvent,
    NotDifferentiallyPrivate,
    PrivacyEvent,
    RepeatedEvent,
    SecureSumEvent,
    TreeAggregationEvent,
    flatten,
)

Exporter = Callable[[Any, Callable[[PrivacyEvent], Any], Any], Any]
# event class -> exporter(event, export, library): `export` exports a child event
DP_ACCOUNTING: dict[type, Exporter] = {}
OPENDP: dict[type, Exporter] = {}


def exporter(table: dict[type, Exporter], cls: type) -> Callable[[Exporter], Exporter]:
    """Register `fn(event, export, library)` as `table`'s exporter of `cls` (a decorator)."""
    def register(fn: Exporter) -> Exporter:
        table[cls] = fn
        return fn
    return register


def to_dp_accounting(event: PrivacyEvent) -> Any:
    """The dp-accounting `DpEvent` of `event` (module docstring); needs the 'interop' extra."""
    dpa = require_extra("dp_accounting", "interop", "to_dp_accounting")
    return _export(DP_ACCOUNTING, "to_dp_accounting", event, dpa)


def to_opendp(event: PrivacyEvent) -> Any:
    """An OpenDP measurement of `event` (module docstring); needs the 'interop' extra.

    `to_opendp(event).map(1.0)` is its privacy loss for one protected unit:
    an epsilon when every release is Laplace, else a zCDP rho.
    """
    dp = require_extra("opendp.prelude", "interop", "to_opendp")
    dp.enable_features("contrib")
    pure = all(isinstance(leaf, LaplaceEvent) for leaf, _ in flatten(event))
    return _export(OPENDP, "to_opendp", event, _OpenDP(dp, pure))


def _export(table: dict[type, Exporter], name: str, event: object, library: Any) -> Any:
    if not isinstance(event, PrivacyEvent):
        raise UnsupportedEventError(f"{name} takes a PrivacyEvent; got {event!r}")
    fn = table.get(type(event))
    if fn is None:
        raise UnsupportedEventError(
            f"{name} has no exporter for {type(event).__name__} ({event!r}); exporters: "
            f"{', '.join(sorted(t.__name__ for t in table))} (add one with "
            "privbandit.accounting.interop.exporter)")
    return fn(event, lambda child: _export(table, name, child, library), library)


def noise_multiplier(scale: float, sensitivity: float) -> float:
    """scale / sensitivity rounded down: never more noise per unit of sensitivity than ours."""
    q = scale / sensitivity
    if Fraction(q) * Fraction(sensitivity) > Fraction(scale):
        q = math.nextafter(q, 0.0)
    return q


# -- dp-accounting ---------------------------------------------------------------------------
@exporter(DP_ACCOUNTING, LaplaceEvent)
def _(event: LaplaceEvent, export, dpa):
    return dpa.LaplaceDpEvent(noise_multiplier(event.scale, event.l1_sensitivity))


@exporter(DP_ACCOUNTING, GaussianEvent)
def _(event: GaussianEvent, export, dpa):
    return dpa.GaussianDpEvent(noise_multiplier(event.sigma, event.l2_sensitivity))


@exporter(DP_ACCOUNTING, ComposedEvent)
def _(event: ComposedEvent, export, dpa):
    return dpa.ComposedDpEvent([export(e) for e in event.events])


@exporter(DP_ACCOUNTING, RepeatedEvent)
def _(event: RepeatedEvent, export, dpa):
    return dpa.SelfComposedDpEvent(export(event.event), event.count)


@exporter(DP_ACCOUNTING, TreeAggregationEvent)
def _(event: TreeAggregationEvent, export, dpa):
    return dpa.SelfComposedDpEvent(export(event.node_event), event.nodes_per_record)


@exporter(DP_ACCOUNTING, FactorizationEvent)
def _(event: FactorizationEvent, export, dpa):
    return export(event.release_event)


@exporter(DP_ACCOUNTING, SecureSumEvent)
def _(event: SecureSumEvent, export, dpa):
    # The first line of its Renyi curve, xi + rho alpha (KLS 2021 Prop. 14): never below
    # the curve our RDP accountant reads, equal to it up to the tau terms.
    return dpa.ZCDpEvent(rho=event.mu**2 / 2,
                         xi=secure_sum_tau(event.sigma, event.shares) * event.dimension)


@exporter(DP_ACCOUNTING, NotDifferentiallyPrivate)
def _(event: NotDifferentiallyPrivate, export, dpa):
    return dpa.NonPrivateDpEvent()


# -- OpenDP ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _OpenDP:
    """The OpenDP prelude and the measure of the whole export (pure: max-divergence)."""

    dp: Any
    pure: bool

    def scalar(self):
        return self.dp.atom_domain(T=float, nan=False), self.dp.absolute_distance(T=float)

    def compose(self, parts: list) -> Any:
        return self.dp.c.make_composition(parts)


@exporter(OPENDP, LaplaceEvent)
def _(event: LaplaceEvent, export, od: _OpenDP):
    m = od.dp.m.make_laplace(*od.scalar(), noise_multiplier(event.scale, event.l1_sensitivity))
    return m if od.pure else od.dp.c.make_pureDP_to_zCDP(m)


@exporter(OPENDP, GaussianEvent)
def _(event: GaussianEvent, export, od: _OpenDP):
    return od.dp.m.make_gaussian(*od.scalar(), noise_multiplier(event.sigma, event.l2_sensitivity))


@exporter(OPENDP, ComposedEvent)
def _(event: ComposedEvent, export, od: _OpenDP):
    return od.compose([export(e) for e in event.events])


@exporter(OPENDP, RepeatedEvent)
def _(event: RepeatedEvent, export, od: _OpenDP):
    return od.compose([export(event.event)] * event.count)


@exporter(OPENDP, TreeAggregationEvent)
def _(event: TreeAggregationEvent, export, od: _OpenDP):
    return od.compose([export(event.node_event)] * event.nodes_per_record)


@exporter(OPENDP, FactorizationEvent)
def _(event: FactorizationEvent, export, od: _OpenDP):
    return export(event.release_event)


@exporter(OPENDP, SecureSumEvent)
def _(event: SecureSumEvent, export, od: _OpenDP):
    # OpenDP has no distributed discrete Gaussian: a Gaussian measurement of the same zCDP
    # rho (1 / (2 scale^2) at d_in = 1), its scale rounded down so it never claims less loss.
    from .accountants.secure_sum import secure_sum_rho

    return od.dp.m.make_gaussian(*od.scalar(),
                                 noise_multiplier(1.0, math.sqrt(2.0 * secure_sum_rho(event))))


@exporter(OPENDP, NotDifferentiallyPrivate)
def _(event: NotDifferentiallyPrivate, export, od: _OpenDP):
    raise NotDifferentiallyPrivateError(
        f"to_opendp refuses {event!r}: the release is not differentially private "
        f"({event.reason}), and OpenDP has no measurement for it")
