"""Exported events against dp-accounting and OpenDP (`privbandit.accounting.interop`).

Over generated event trees (every event kind of the packages, nested), the
epsilon dp-accounting's PLD and RDP accountants give the exported event is
within 0.1% of ours (PLD against our PLD, RDP against our RDP), and never
below ours where ours is exact (Gaussian releases alone).  dp-accounting's PLD
runs on a grid of at most 1e-4 epsilon (`_dp_epsilons`).  Every event kind
must have an exporter in both tables and a strategy here: a new kind fails
`test_every_event_kind_is_exported_and_generated` until it gets them.
"""
from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import sys

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from privbandit import accounting, mechanisms
from privbandit.accounting import (
    ComposedEvent,
    ExactGaussianAccountant,
    FactorizationEvent,
    GaussianEvent,
    LaplaceEvent,
    NotDifferentiallyPrivate,
    NotDifferentiallyPrivateError,
    PLDAccountant,
    PrivacyEvent,
    PureDPAccountant,
    RDPAccountant,
    RepeatedEvent,
    SecureSumEvent,
    TreeAggregationEvent,
    UnsupportedEventError,
    ZCDPAccountant,
    to_dp_accounting,
    to_opendp,
)
from privbandit.accounting.errors import MissingExtraError
from privbandit.accounting.events import flatten
from privbandit.accounting.interop import DP_ACCOUNTING, OPENDP, exporter, noise_multiplier

AGREEMENT = 1e-3  # relative: dp-accounting's epsilon within 0.1% of ours

# -- generated event trees: a strategy per event kind ------------------------------------------
sensitivities = st.floats(0.1, 10.0)
LEAVES = {
    LaplaceEvent: st.builds(lambda s, e0: LaplaceEvent(s / e0, s), sensitivities,
                            st.floats(0.01, 2.0)),
    GaussianEvent: st.builds(lambda s, mu: GaussianEvent(s / mu, s), sensitivities,
                             st.floats(0.02, 2.0)),
}
counts = st.integers(1, 8)
NODES = {
    ComposedEvent: lambda inner: st.lists(inner, min_size=1, max_size=3).map(
        lambda es: ComposedEvent(tuple(es))),
    RepeatedEvent: lambda inner: st.builds(RepeatedEvent, inner, counts),
    TreeAggregationEvent: lambda inner: st.builds(TreeAggregationEvent, inner, counts),
    FactorizationEvent: lambda inner: st.builds(FactorizationEvent, LEAVES[GaussianEvent],
                                                st.floats(1.0, 5.0), st.integers(1, 10**5)),
}
NOT_DP = {NotDifferentiallyPrivate: st.just(NotDifferentiallyPrivate("k-anonymity"))}
# Read by the zCDP and RDP accountants only (ours and dp-accounting's): trees of their own.
def secure_sums(min_sigma: float = 0.5):
    return st.builds(
        lambda sigma, shares, mu, d: SecureSumEvent(sigma, shares,
                                                    mu * sigma * math.sqrt(shares), d),
        st.floats(min_sigma, 40.0), st.integers(1, 8), st.floats(0.02, 1.5), st.integers(1, 64))


SECURE = {SecureSumEvent: secure_sums()}


def event_trees(leaves: tuple = (), max_leaves: int = 5):
    """Nested events of every kind, spending at most rho = 4 (epsilon ~ 15 at delta 1e-5:
    beyond it dp-accounting's PLD takes seconds per event)."""
    trees = st.recursive(st.one_of(*(leaves or LEAVES.values())),
                         lambda inner: st.one_of(*(node(inner) for node in NODES.values())),
                         max_leaves=max_leaves)
    return trees.filter(lambda e: ZCDPAccountant().compose(e).rho <= 4.0)


def event_kinds() -> set[type]:
    """Every concrete event class defined in the packages' modules."""
    for package in (accounting, mechanisms):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(info.name)
    found, todo = set(), [PrivacyEvent]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("privbandit.") and not inspect.isabstract(sub):
                found.add(sub)
    return found


def test_every_event_kind_is_exported_and_generated():
    kinds = event_kinds()
    assert {LaplaceEvent, GaussianEvent, FactorizationEvent} <= kinds
    for table, name in ((DP_ACCOUNTING, "DP_ACCOUNTING"), (OPENDP, "OPENDP")):
        missing = sorted(k.__name__ for k in kinds if k not in table)
        assert not missing, f"no exporter in interop.{name} for {missing}"
    ungenerated = sorted(k.__name__ for k in kinds
                         if k not in {**LEAVES, **NODES, **NOT_DP, **SECURE})
    assert not ungenerated, f"add a strategy to tests/accounting/test_interop.py for {ungenerated}"


# -- dp-accounting -------------------------------------------------------------------------------
_STEP = 1e-4  # dp-accounting's PLD grid step where ours reads epsilon 0 (`_dp_epsilons`)


def _dp_epsilons(event, delta: float) -> tuple[float, float]:
    """dp-accounting's (PLD, RDP) epsilon of the exported event.

    RDP at its defaults (our orders); PLD with its grid step at most 1e-4 times
    our epsilon (1e-4 by default, and where ours is 0): its rounding moves
    epsilon by up to about a step, more than 0.1% of an epsilon below 0.1 at the
    default step (measured: +0.68% for one Laplace release of epsilon 0.0103),
    which ours keeps exact.
    """
    import dp_accounting

    exported = to_dp_accounting(event)
    assert isinstance(exported, dp_accounting.DpEvent)
    ours = PLDAccountant().compose(event).epsilon(delta)
    step = _STEP * min(1.0, ours or 1.0)
    pld = dp_accounting.pld.PLDAccountant(value_discretization_interval=step)
    pld.compose(exported)
    rdp = dp_accounting.rdp.RdpAccountant()
    rdp.compose(exported)
    return pld.get_epsilon(delta), rdp.get_epsilon(delta)


@settings(max_examples=30)
@given(event=event_trees(), log_delta=st.floats(-8.0, -3.0))
def test_dp_accounting_agrees_with_ours_on_exported_trees(event, log_delta):
    delta = 10.0**log_delta
    pld, rdp = _dp_epsilons(event, delta)
    ours_pld = PLDAccountant().compose(event).epsilon(delta)
    ours_rdp = RDPAccountant().compose(event).epsilon(delta)
    assert pld == pytest.approx(ours_pld, rel=AGREEMENT, abs=_STEP if ours_pld == 0 else 0)
    assert rdp == pytest.approx(ours_rdp, rel=AGREEMENT)


@settings(max_examples=15)
@given(event=event_trees(leaves=(LEAVES[GaussianEvent],)), log_delta=st.floats(-10.0, -2.0))
@example(event=RepeatedEvent(GaussianEvent(50.0, 1.0), 2), log_delta=-2.001953125)
def test_dp_accounting_is_never_below_ours_where_ours_is_exact(event, log_delta):
    delta = 10.0**log_delta
    exact = ExactGaussianAccountant().compose(event).epsilon(delta)
    assert PLDAccountant().compose(event).epsilon(delta) == exact  # carried exactly
    pld, rdp = _dp_epsilons(event, delta)
    # ours is exact up to its root finder (absolute 1e-13); dp-accounting's float arithmetic
    # reads a tiny epsilon (0.0028 in the example) up to about 1e-11 absolute
    floor = exact * (1 - 1e-9) - 1e-11
    assert pld >= floor and rdp >= floor
    assert pld == pytest.approx(exact, rel=AGREEMENT, abs=_STEP if exact == 0 else 0)


def _dp_accounting_rdp(event, delta: float) -> float:
    import dp_accounting

    rdp = dp_accounting.rdp.RdpAccountant()
    rdp.compose(to_dp_accounting(event))
    return rdp.get_epsilon(delta)


@settings(max_examples=30)
@given(event=event_trees(leaves=(*LEAVES.values(), secure_sums())),
       log_delta=st.floats(-8.0, -3.0))
def test_dp_accounting_rdp_is_never_below_ours_with_secure_sums(event, log_delta):
    """A secure sum's export is the first line of the Renyi curve ours reads as a minimum."""
    delta = 10.0**log_delta
    ours = RDPAccountant().compose(event).epsilon(delta)
    assert _dp_accounting_rdp(event, delta) >= ours * (1 - 1e-9)


@settings(max_examples=30)
@given(event=event_trees(leaves=(*LEAVES.values(), secure_sums(min_sigma=2.0))),
       log_delta=st.floats(-8.0, -3.0))
def test_dp_accounting_rdp_agrees_on_trees_with_secure_sums(event, log_delta):
    """Within 0.1% of ours where the shares' tau terms are negligible (sigma >= 2 grid
    steps: tau <= 1e-16; a grid fine enough for the sensitivity gives hundreds)."""
    delta = 10.0**log_delta
    ours = RDPAccountant().compose(event).epsilon(delta)
    assert _dp_accounting_rdp(event, delta) == pytest.approx(ours, rel=AGREEMENT)


def test_a_secure_sum_exports_its_renyi_line():
    import dp_accounting as dpa

    event = SecureSumEvent(0.6, 3, 2.0, 10)  # small sigma: tau is not negligible
    exported = to_dp_accounting(event)
    assert isinstance(exported, dpa.ZCDpEvent)
    assert exported.rho == pytest.approx(event.mu**2 / 2) and exported.xi > 0
    assert ZCDPAccountant().compose(event).rho <= exported.rho + exported.xi


@pytest.mark.parametrize("event", [
    LaplaceEvent(3.7 / 0.0103, 3.7),
    ComposedEvent((LaplaceEvent(0.3 / 0.0113, 0.3), RepeatedEvent(LaplaceEvent(2.9 / 0.0127, 2.9),
                                                                  3))),
    ComposedEvent((LaplaceEvent(1.7 / 0.021, 1.7), GaussianEvent(1.3 / 0.015, 1.3))),
], ids=["one", "two-kinds", "mixed"])
def test_small_epsilons_keep_their_relative_agreement(event):
    for delta in (1e-3, 1e-6):
        pld, _ = _dp_epsilons(event, delta)
        assert pld == pytest.approx(PLDAccountant().compose(event).epsilon(delta), rel=AGREEMENT)


def test_the_issue_composition_of_fifty_gaussians_and_ten_laplaces():
    event = ComposedEvent((RepeatedEvent(GaussianEvent(20.0, 1.0), 50),
                           RepeatedEvent(LaplaceEvent(10.0, 1.0), 10)))
    pld, rdp = _dp_epsilons(event, 1e-5)
    assert pld == pytest.approx(PLDAccountant().compose(event).epsilon(1e-5), rel=AGREEMENT)
    assert rdp == pytest.approx(RDPAccountant().compose(event).epsilon(1e-5), rel=AGREEMENT)


def test_a_not_private_release_exports_to_infinite_epsilon():
    import dp_accounting

    event = ComposedEvent((GaussianEvent(1.0, 1.0), NotDifferentiallyPrivate("masks")))
    exported = to_dp_accounting(event)
    assert isinstance(exported.events[1], dp_accounting.NonPrivateDpEvent)
    pld = dp_accounting.pld.PLDAccountant()
    pld.compose(exported)
    assert pld.get_epsilon(1e-5) == math.inf


def test_the_shape_of_exported_events():
    import dp_accounting as dpa

    node = GaussianEvent(3.0, 1.5)
    assert to_dp_accounting(node) == dpa.GaussianDpEvent(2.0)
    assert to_dp_accounting(TreeAggregationEvent(node, 7)) == dpa.SelfComposedDpEvent(
        dpa.GaussianDpEvent(2.0), 7)
    assert to_dp_accounting(FactorizationEvent(node, 1.5, 100)) == dpa.GaussianDpEvent(2.0)
    assert to_dp_accounting(RepeatedEvent(LaplaceEvent(4.0, 2.0), 3)) == dpa.SelfComposedDpEvent(
        dpa.LaplaceDpEvent(2.0), 3)


@given(scale=st.floats(1e-3, 1e3), sensitivity=st.floats(1e-3, 1e3))
def test_noise_multipliers_never_claim_more_noise(scale, sensitivity):
    from fractions import Fraction

    q = noise_multiplier(scale, sensitivity)
    assert Fraction(q) * Fraction(sensitivity) <= Fraction(scale)
    assert q == pytest.approx(scale / sensitivity, rel=1e-15)


# -- OpenDP --------------------------------------------------------------------------------------
def _opendp_epsilon(measurement, delta: float) -> float:
    import opendp.prelude as dp

    if measurement.output_measure == dp.max_divergence():
        return float(measurement.map(1.0))
    return float(dp.c.make_zCDP_to_approxDP(measurement).map(1.0).epsilon(delta))


@settings(max_examples=25)
@given(event=event_trees(leaves=(*LEAVES.values(), *SECURE.values()), max_leaves=4))
def test_opendp_reads_our_zcdp_rho_on_trees_with_secure_sums(event):
    assume(any(isinstance(leaf, SecureSumEvent) for leaf, _ in flatten(event)))
    measurement = to_opendp(event)
    assert float(measurement.map(1.0)) >= ZCDPAccountant().compose(event).rho * (1 - 1e-12)
    assert float(measurement.map(1.0)) == pytest.approx(ZCDPAccountant().compose(event).rho,
                                                        rel=1e-9)


@settings(max_examples=25)
@given(event=event_trees(max_leaves=4), log_delta=st.floats(-8.0, -3.0))
def test_opendp_bounds_every_exported_tree_from_above(event, log_delta):
    delta = 10.0**log_delta
    measurement = to_opendp(event)
    leaves = [leaf for leaf, _ in flatten(event)]
    ours = PLDAccountant().compose(event).epsilon(delta)
    if all(isinstance(leaf, LaplaceEvent) for leaf in leaves):  # pure: epsilons add
        pure = PureDPAccountant().compose(event).epsilon(0.0)
        assert float(measurement.map(1.0)) == pytest.approx(pure, rel=1e-9)
    else:  # zCDP: rho adds, exactly our zCDP accountant's
        rho = float(measurement.map(1.0))
        assert rho == pytest.approx(ZCDPAccountant().compose(event).rho, rel=1e-9)
    assert _opendp_epsilon(measurement, delta) >= ours * (1 - 1e-9)
    assert len(measurement(0.0)) >= 1 if isinstance(event, ComposedEvent) else True


def test_opendp_reads_gaussian_trees_as_exact_zcdp():
    node = GaussianEvent(4.0, 2.0)
    measurement = to_opendp(TreeAggregationEvent(node, 10))
    assert float(measurement.map(1.0)) == pytest.approx(10 * 0.5**2 / 2, rel=1e-12)


def test_opendp_refuses_a_not_private_release_by_name():
    with pytest.raises(NotDifferentiallyPrivateError, match="to_opendp refuses .*k-anonymity"):
        to_opendp(ComposedEvent((LaplaceEvent(1.0, 1.0), NotDifferentiallyPrivate("k-anonymity"))))


# -- extension and refusals ----------------------------------------------------------------------
class _Unknown(PrivacyEvent):
    """An event kind no exporter knows (removed from the registries after the test)."""

    __slots__ = ()


def test_an_unknown_kind_is_refused_until_an_exporter_is_registered():
    event = ComposedEvent((GaussianEvent(1.0, 1.0), _Unknown()))
    for export in (to_dp_accounting, to_opendp):
        with pytest.raises(UnsupportedEventError, match="no exporter for _Unknown"):
            export(event)
    try:
        exporter(DP_ACCOUNTING, _Unknown)(lambda e, export, dpa: dpa.NoOpDpEvent())
        import dp_accounting

        assert to_dp_accounting(event).events[1] == dp_accounting.NoOpDpEvent()
    finally:
        DP_ACCOUNTING.pop(_Unknown, None)
    with pytest.raises(UnsupportedEventError, match="takes a PrivacyEvent"):
        to_dp_accounting("gaussian")


@pytest.mark.parametrize(("export", "module"), [(to_dp_accounting, "dp_accounting"),
                                                (to_opendp, "opendp.prelude")])
def test_a_missing_library_names_the_extra(export, module, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    with pytest.raises(MissingExtraError, match=r"'interop' extra.*privbandit\[interop\]"):
        export(GaussianEvent(1.0, 1.0))
