"""Claims read off events, and neighbouring pairs."""
import pytest

from privbandit.accounting.accountants.gaussian import gaussian_epsilon
from privbandit.accounting.errors import InvalidParameterError, NotDifferentiallyPrivateError
from privbandit.accounting.events import (
    GaussianEvent,
    LaplaceEvent,
    NotDifferentiallyPrivate,
    RepeatedEvent,
)
from privbandit.audits import Claim, NeighbouringPair


def test_laplace_event_gives_pure_epsilon():
    c = Claim.from_event(LaplaceEvent(scale=0.5, l1_sensitivity=1.0))
    assert (c.epsilon, c.delta) == (2.0, 0.0)
    assert "pure-dp" in c.source


def test_gaussian_event_gives_exact_epsilon_at_delta():
    c = Claim.from_event(RepeatedEvent(GaussianEvent(2.0, 1.0), 4), delta=1e-5)
    assert c.epsilon == pytest.approx(gaussian_epsilon(1.0, 1e-5))
    assert c.delta == 1e-5


def test_not_private_event_is_refused():
    with pytest.raises(NotDifferentiallyPrivateError, match="not differentially private"):
        Claim.from_event(NotDifferentiallyPrivate("masks"), accountant="pure-dp")


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"epsilon": -1.0}, "epsilon must be a finite number >= 0; got -1.0"),
        ({"epsilon": float("nan")}, "epsilon must be a finite number >= 0"),
        ({"epsilon": 1.0, "delta": 1.0}, r"delta must be a number in \[0, 1\); got 1.0"),
        ({"epsilon": "1"}, "epsilon must be a real number; got '1'"),
    ],
)
def test_bad_claims(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        Claim(**kwargs)


def test_pair_needs_a_relation():
    with pytest.raises(InvalidParameterError, match="relation must be a non-empty string"):
        NeighbouringPair(0, 1, " ")
