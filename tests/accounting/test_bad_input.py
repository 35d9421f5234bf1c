"""Every bad input raises a specific error naming the parameter, the value and what is allowed."""
from __future__ import annotations

import math
import re

import pytest

from privbandit.accounting import (
    ACCOUNTANTS,
    ComposedEvent,
    GaussianEvent,
    InvalidParameterError,
    LaplaceEvent,
    Ledger,
    NotDifferentiallyPrivate,
    NotDifferentiallyPrivateError,
    RDPAccountant,
    RepeatedEvent,
    TreeAggregationEvent,
    UnsupportedEventError,
    calibrate_gaussian_sigma,
    calibrate_laplace_scale,
    make_accountant,
    paper_tree_sigma,
    register,
)

NAN, INF = math.nan, math.inf
LAP = LaplaceEvent(1.0, 1.0)
GAUSS = GaussianEvent(1.0, 1.0)
MASK = NotDifferentiallyPrivate("orthogonal mask")
POSITIVE = "a finite number > 0"
PROBABILITY = "a number in [0, 1)"


def message(name: str, value: object, allowed: str) -> str:
    return re.escape(f"{name} must be {allowed}; got {value!r}")


INVALID = [  # (id, call, parameter, value, allowed)
    *[(f"scale={v}", lambda v=v: LaplaceEvent(v, 1.0), "scale", v, POSITIVE)
      for v in (NAN, INF, -INF, 0.0, -2.0)],
    ("l1_sensitivity=0", lambda: LaplaceEvent(1.0, 0.0), "l1_sensitivity", 0.0, POSITIVE),
    *[(f"sigma={v}", lambda v=v: GaussianEvent(v, 1.0), "sigma", v, POSITIVE)
      for v in (NAN, INF, -INF, 0.0, -1.0)],
    ("l2_sensitivity=nan", lambda: GaussianEvent(1.0, NAN), "l2_sensitivity", NAN, POSITIVE),
    ("sigma='1'", lambda: GaussianEvent("1", 1.0), "sigma", "1", "a real number"),
    *[(f"budget epsilon={v}", lambda v=v: Ledger("u", v), "epsilon", v, POSITIVE)
      for v in (NAN, INF, 0.0, -0.5)],
    *[(f"budget delta={v}", lambda v=v: Ledger("u", 1.0, v), "delta", v, PROBABILITY)
      for v in (NAN, 1.0, 1.5, -1e-9)],
    ("unit=''", lambda: Ledger("", 1.0), "unit", "",
     "a non-empty string naming the protected unit"),
    *[(f"query delta={v} ({n})", lambda v=v, n=n: make_accountant(n).epsilon(v), "delta", v,
       PROBABILITY) for v in (NAN, 1.0, -0.1) for n in ("zcdp", "rdp")],
    *[(f"query epsilon={v}", lambda v=v: make_accountant("pure-dp").delta(v), "epsilon", v,
       "a finite number >= 0") for v in (NAN, INF, -1.0)],
    *[(f"count={v}", lambda v=v: make_accountant("zcdp").compose(GAUSS, v), "count", v,
       "an integer >= 1") for v in (-1, 0, 1.5, True)],
    ("repeated count=-3", lambda: RepeatedEvent(LAP, -3), "count", -3, "an integer >= 1"),
    ("nodes_per_record=0", lambda: TreeAggregationEvent(GAUSS, 0), "nodes_per_record", 0,
     "an integer >= 1"),
    ("calibrate epsilon=0", lambda: calibrate_gaussian_sigma(0.0, 1e-5, 1.0), "epsilon", 0.0,
     POSITIVE),
    ("calibrate delta=0", lambda: calibrate_gaussian_sigma(1.0, 0.0, 1.0), "delta", 0.0,
     "a number in (0, 1) for a Gaussian release"),
    ("calibrate delta=1", lambda: calibrate_gaussian_sigma(1.0, 1.0, 1.0), "delta", 1.0,
     PROBABILITY),
    ("calibrate sensitivity=-1", lambda: calibrate_gaussian_sigma(1.0, 1e-5, -1.0),
     "l2_sensitivity", -1.0, POSITIVE),
    ("calibrate releases=0", lambda: calibrate_gaussian_sigma(1.0, 1e-5, 1.0, releases=0),
     "releases", 0, "an integer >= 1"),
    ("laplace scale for epsilon=inf", lambda: calibrate_laplace_scale(INF, 0.0, 1.0), "epsilon",
     INF, POSITIVE),
    ("gaussian with pure-dp", lambda: calibrate_gaussian_sigma(1.0, 1e-5, 1.0,
                                                              accountant="pure-dp"),
     "accountant", "pure-dp",
     "an accountant that supports GaussianEvent (['approx-dp', 'exact-gaussian', 'pld', "
     "'rdp', 'zcdp'])"),
    ("laplace with exact-gaussian", lambda: calibrate_laplace_scale(
        1.0, 1e-5, 1.0, accountant="exact-gaussian"), "accountant", "exact-gaussian",
     "an accountant that supports LaplaceEvent (['approx-dp', 'pld', 'pure-dp', 'rdp', 'zcdp'])"),
    ("rdp cannot certify delta=0", lambda: calibrate_laplace_scale(1.0, 0.0, 1.0, accountant="rdp"),
     "(epsilon, delta)", (1.0, 0.0), "a target the rdp accountant can certify with finite noise"),
    ("paper formula", lambda: paper_tree_sigma(1.0, 1e-5, 1.0, horizon=512,
                                                      formula="seed001"), "formula",
     "seed001", "one of ['seed000', 'seed000-text', 'shariff-sheffet']"),
    ("paper horizon=0", lambda: paper_tree_sigma(1.0, 1e-5, 1.0, horizon=0), "horizon", 0,
     "an integer >= 1"),
    ("accountant name", lambda: make_accountant("renyi"), "accountant", "renyi",
     f"an Accountant or one of {sorted(ACCOUNTANTS)}"),
    ("rdp orders", lambda: RDPAccountant(orders=[0.5, 2.0]), "orders", [0.5, 2.0],
     "a non-empty sequence of finite orders > 1"),
    ("rdp no orders", lambda: RDPAccountant(orders=[]), "orders", [],
     "a non-empty sequence of finite orders > 1"),
    ("register a non-accountant", lambda: register(dict), "cls", dict,
     "a subclass of Accountant"),
]


@pytest.mark.parametrize(("call", "name", "value", "allowed"),
                         [row[1:] for row in INVALID], ids=[row[0] for row in INVALID])
def test_invalid_parameter_is_named_with_value_and_allowed_range(call, name, value, allowed):
    with pytest.raises(InvalidParameterError, match=message(name, value, allowed)):
        call()


NOT_EVENTS = [("string", "laplace"), ("float", 0.5), ("none", None), ("dict", {"sigma": 1.0})]


@pytest.mark.parametrize("accountant", sorted(ACCOUNTANTS))
@pytest.mark.parametrize(("kind", "thing"), NOT_EVENTS, ids=[k for k, _ in NOT_EVENTS])
def test_non_events_are_refused(accountant, kind, thing):
    acc = make_accountant(accountant)
    with pytest.raises(UnsupportedEventError,
                       match=re.escape("event must be a PrivacyEvent") + ".*" +
                       re.escape(f"got {thing!r}")):
        acc.compose(thing)
    assert not acc.supports(thing) and acc.releases == 0


@pytest.mark.parametrize(("build", "name", "thing"), [
    (lambda: ComposedEvent((LAP, 3)), "events[...]", 3),
    (lambda: RepeatedEvent("e", 2), "event", "e"),
    (lambda: TreeAggregationEvent(1.0, 2), "node_event", 1.0),
], ids=["composed", "repeated", "tree"])
def test_event_constructors_refuse_non_events(build, name, thing):
    pattern = re.escape(f"{name} must be a PrivacyEvent") + ".*" + re.escape(f"got {thing!r}")
    with pytest.raises(UnsupportedEventError, match=pattern):
        build()


@pytest.mark.parametrize("accountant", sorted(ACCOUNTANTS))
@pytest.mark.parametrize("wrap", [
    lambda: MASK,
    lambda: ComposedEvent((LAP, GAUSS, MASK)),
    lambda: RepeatedEvent(ComposedEvent((MASK,)), 4),
    lambda: TreeAggregationEvent(MASK, 10),
], ids=["bare", "composed", "repeated", "tree"])
def test_mixing_a_not_dp_event_is_refused_naming_it(accountant, wrap):
    acc = make_accountant(accountant)
    pattern = re.escape(f"{accountant} accountant refuses {MASK!r}") + ".*orthogonal mask"
    with pytest.raises(NotDifferentiallyPrivateError, match=pattern):
        acc.compose(wrap())
    assert acc.releases == 0 and acc.epsilon(1e-5) == 0.0


def test_ledger_note_accepts_only_not_dp_events():
    with pytest.raises(InvalidParameterError,
                       match=message("event", LAP,
                                     "a NotDifferentiallyPrivate event (use charge for DP)")):
        Ledger("u", 1.0).note(LAP)


@pytest.mark.parametrize("reason", ["", "   ", 3])
def test_not_dp_needs_a_reason(reason):
    with pytest.raises(UnsupportedEventError,
                       match=re.escape(f"reason must be a non-empty string; got {reason!r}")):
        NotDifferentiallyPrivate(reason)
