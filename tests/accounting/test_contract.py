"""The contract every accountant honours; one subclass per registered accountant."""
from __future__ import annotations

import math
import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privbandit.accounting import (
    ACCOUNTANTS,
    ApproxDPAccountant,
    ComposedEvent,
    ExactGaussianAccountant,
    GaussianEvent,
    LaplaceEvent,
    NotDifferentiallyPrivate,
    NotDifferentiallyPrivateError,
    PLDAccountant,
    PureDPAccountant,
    RDPAccountant,
    RepeatedEvent,
    SecureSumEvent,
    TreeAggregationEvent,
    UnsupportedEventError,
    ZCDPAccountant,
)

DELTA = 1e-5
NOT_DP = NotDifferentiallyPrivate("orthogonal masking")
SECURE_SUM = SecureSumEvent(3.0, 4, 2.0, 5)  # a distributed discrete Gaussian: zCDP and RDP
scales = st.floats(0.3, 30.0)
counts = st.integers(1, 40)


def contract(max_examples: int):
    """Hypothesis settings for inherited tests (each subclass is its own executor)."""
    return settings(
        max_examples=max_examples,
        suppress_health_check=[HealthCheck.differing_executors, HealthCheck.too_slow],
    )


def close(a: float, b: float, rel: float = 1e-9) -> bool:
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))


class AccountantContract:
    """Subclasses set `cls`, `supported` (leaf examples), `unsupported` and `noisy(scale)`."""

    cls: type
    supported: tuple = ()
    unsupported: tuple = ()

    def noisy(self, scale: float):
        raise NotImplementedError

    def fresh(self):
        return self.cls()

    def test_registered_under_its_name(self):
        assert ACCOUNTANTS[self.cls.name] is self.cls

    def test_fresh_accountant_has_spent_nothing(self):
        acc = self.fresh()
        assert acc.epsilon(DELTA) == 0.0 and acc.delta(0.0) == 0.0
        assert acc.events == () and acc.releases == 0

    def test_supports_iff_compose_succeeds(self):
        nested = [ComposedEvent((e, NOT_DP)) for e in self.supported]
        candidates = [*self.supported, *self.unsupported, NOT_DP, *nested, "laplace", 3.0, None]
        for event in candidates:
            acc = self.fresh()
            try:
                acc.compose(event)
                composed = True
            except UnsupportedEventError:
                composed = False
            assert acc.supports(event) == composed, event
            if not composed:
                assert acc.releases == 0 and acc.epsilon(DELTA) == 0.0

    def test_refused_compose_changes_nothing(self):
        acc = self.fresh().compose(self.supported[0], 3)
        before = (acc.events, acc.epsilon(DELTA), acc.delta(1.0))
        for bad in (NOT_DP, ComposedEvent((self.supported[0], NOT_DP)), *self.unsupported):
            with pytest.raises(UnsupportedEventError):
                acc.compose(bad)
        assert (acc.events, acc.epsilon(DELTA), acc.delta(1.0)) == before

    def test_not_dp_is_refused_naming_the_event(self):
        with pytest.raises(NotDifferentiallyPrivateError, match="orthogonal masking"):
            self.fresh().compose(TreeAggregationEvent(NOT_DP, 3))

    @contract(25)
    @given(scale=scales, k1=counts, k2=counts)
    def test_epsilon_grows_with_count(self, scale, k1, k2):
        k1, k2 = min(k1, k2), max(k1, k2)
        e1 = self.fresh().compose(self.noisy(scale), k1).epsilon(DELTA)
        e2 = self.fresh().compose(self.noisy(scale), k2).epsilon(DELTA)
        assert e1 <= e2 * (1 + 1e-9)

    @contract(25)
    @given(s1=scales, s2=scales, k=counts)
    def test_epsilon_shrinks_with_noise(self, s1, s2, k):
        s1, s2 = min(s1, s2), max(s1, s2)
        e1 = self.fresh().compose(self.noisy(s1), k).epsilon(DELTA)
        e2 = self.fresh().compose(self.noisy(s2), k).epsilon(DELTA)
        assert e2 <= e1 * (1 + 1e-9)

    @contract(20)
    @given(scale=scales, k=st.integers(1, 12))
    def test_k_compositions_equal_one_repeated_event(self, scale, k):
        event = self.noisy(scale)
        one_by_one = self.fresh()
        for _ in range(k):
            one_by_one.compose(event)
        forms = [
            self.fresh().compose(RepeatedEvent(event, k)),
            self.fresh().compose(event, count=k),
            self.fresh().compose(ComposedEvent((event,) * k)),
            self.fresh().compose(TreeAggregationEvent(event, k)),
        ]
        for acc in forms:
            assert close(acc.epsilon(DELTA), one_by_one.epsilon(DELTA))
            assert close(acc.delta(1.0), one_by_one.delta(1.0))

    @contract(20)
    @given(scale=scales, k=counts, log_delta=st.floats(-12, -1))
    def test_delta_of_epsilon_is_certified(self, scale, k, log_delta):
        acc = self.fresh().compose(self.noisy(scale), k)
        delta = 10.0**log_delta
        eps = acc.epsilon(delta)
        assert math.isfinite(eps)
        assert acc.delta(eps) <= delta * (1 + 1e-6)

    def test_copy_is_independent(self):
        acc = self.fresh().compose(self.supported[0])
        eps = acc.epsilon(DELTA)
        twin = acc.copy().compose(self.supported[0], 5)
        assert acc.epsilon(DELTA) == eps and acc.releases == 1
        assert twin.releases == 2 and twin.epsilon(DELTA) > eps

    def test_pickles_a_long_history(self):
        acc = self.fresh()
        for _ in range(3000):  # deeper than the recursion limit
            acc.compose(self.supported[0])
        back = pickle.loads(pickle.dumps(acc))
        assert back.events == acc.events and back.releases == 3000
        assert back.epsilon(DELTA) == acc.epsilon(DELTA)


class TestPureDP(AccountantContract):
    cls = PureDPAccountant
    supported = (LaplaceEvent(2.0, 1.0),)
    unsupported = (GaussianEvent(2.0, 1.0), SECURE_SUM)

    def noisy(self, scale):
        return LaplaceEvent(scale, 1.0)


class TestExactGaussian(AccountantContract):
    cls = ExactGaussianAccountant
    supported = (GaussianEvent(3.0, 1.0),)
    unsupported = (LaplaceEvent(2.0, 1.0), SECURE_SUM)

    def noisy(self, scale):
        return GaussianEvent(scale, 1.0)


class TestZCDP(AccountantContract):
    cls = ZCDPAccountant
    supported = (GaussianEvent(3.0, 1.0), LaplaceEvent(2.0, 1.0), SECURE_SUM)

    def noisy(self, scale):
        return ComposedEvent((GaussianEvent(scale, 1.0), LaplaceEvent(2 * scale, 1.0)))


class TestRDP(AccountantContract):
    cls = RDPAccountant
    supported = (GaussianEvent(3.0, 1.0), LaplaceEvent(2.0, 1.0), SECURE_SUM)

    def noisy(self, scale):
        return ComposedEvent((GaussianEvent(scale, 1.0), LaplaceEvent(2 * scale, 1.0)))


class TestApproxDP(AccountantContract):
    """Properties run on Laplace leaves (a Gaussian query costs ~0.1 s); Gaussian below."""

    cls = ApproxDPAccountant
    supported = (LaplaceEvent(2.0, 1.0), GaussianEvent(3.0, 1.0))
    unsupported = (SECURE_SUM,)

    def noisy(self, scale):
        return LaplaceEvent(scale / 3, 1.0)

    @pytest.mark.parametrize("k", [1, 4, 16])
    def test_gaussian_epsilon_grows_with_count_and_shrinks_with_noise(self, k):
        eps = [[self.fresh().compose(GaussianEvent(s, 1.0), kk).epsilon(DELTA)
                for kk in (k, 2 * k)] for s in (1.0, 3.0)]
        assert eps[0][0] < eps[0][1] and eps[1][0] < eps[1][1]
        assert eps[1][0] < eps[0][0] and eps[1][1] < eps[0][1]


class TestPLD(AccountantContract):
    """Properties on Gaussian leaves (no FFT, so no numerical floor on delta); Laplace and
    mixtures are checked against dp-accounting in test_pld.py."""

    cls = PLDAccountant
    supported = (GaussianEvent(3.0, 1.0), LaplaceEvent(2.0, 1.0))
    unsupported = (SECURE_SUM,)

    def noisy(self, scale):
        return GaussianEvent(scale, 1.0)
