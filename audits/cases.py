"""The standard audit cases: every DP mechanism of `mechanisms/` and two foreign ones.

    AuditCase(name, mechanism, pair, tester, claim, control=False, note="")
    mechanism_cases(exact=True) -> list[AuditCase]   # ours: fast sampler, + exact if asked
    foreign_cases() -> list[AuditCase]               # OpenDP and diffprivlib adapters

Each case fixes a worst-case-style neighbouring pair, the statistic that
separates it (projection onto the canary's direction, or a fitted linear
discriminant for a stream of releases), the tester (Gaussian-DP for Gaussian
noise, threshold otherwise) and the claim read from the mechanism's own
`event` through an accountant.  `privbandit.audits.controls` holds the broken twins.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.mechanisms.anonymous import KAnonymousAggregator
from privbandit.mechanisms.gaussian import GaussianVector, SymmetricGaussianMatrix
from privbandit.mechanisms.laplace import LaplaceMeans
from privbandit.mechanisms.samplers import EXACT, FAST
from privbandit.mechanisms.tree import TreePrivatizer

from .adapters import DiffprivlibMechanism, OpenDPMechanism, ReleaseAdapter
from .claims import Claim, NeighbouringPair
from .statistics import LinearDiscriminant, Projection, Scalar
from .streams import StreamAdapter, tree_factory
from .testers import GaussianDPTester, ThresholdTester

DELTA = 1e-5


@dataclass(frozen=True, eq=False)
class AuditCase:
    """One audit to run: `control` cases are deliberately broken and must be rejected."""

    name: str
    mechanism: Any
    pair: NeighbouringPair
    tester: Any
    claim: Claim
    control: bool = False
    note: str = ""


# -- pairs ------------------------------------------------------------------------------
def means_pair(k: int = 3, n: int = 10, lo: float = 0.0, hi: float = 1.0) -> NeighbouringPair:
    """Rewards (K, n) at the midpoint vs the same with arm 0's first reward moved lo -> hi."""
    rewards = np.full((k, n), 0.5 * (lo + hi))
    rewards[0, 0] = lo
    neighbour = rewards.copy()
    neighbour[0, 0] = hi
    return NeighbouringPair(rewards, neighbour, "agent-level: one reward of one arm replaced",
                            f"arm 0 reward {lo:g} -> {hi:g}")


def vector_pair(direction: np.ndarray) -> NeighbouringPair:
    d = np.asarray(direction, dtype=float)
    return NeighbouringPair(np.zeros_like(d), d, "values differ by an L2 norm of |direction|",
                            f"zero vs {np.round(d, 3).tolist()}")


def stream_pair(horizon: int, direction: np.ndarray) -> NeighbouringPair:
    """A zero stream vs the same with `direction` added at step 1 (it enters every prefix)."""
    d = np.asarray(direction, dtype=float)
    zero = np.zeros((horizon, *d.shape))
    canary = zero.copy()
    canary[0] = d
    return NeighbouringPair(zero, canary, "record-level: one increment added at step 1",
                            f"T={horizon}, canary norm {np.linalg.norm(d):g}")


CANARY = np.array([0.6, 0.8])  # a unit vector, so its norm is the sensitivity


def _unit_gram(dim: int) -> np.ndarray:
    x = np.zeros(dim)
    x[:2] = CANARY
    return np.outer(x, x)  # Frobenius norm 1, like one context's x x^T


# -- our mechanisms -----------------------------------------------------------------------
def laplace_means_case(sampler, tag: str) -> AuditCase:
    mech = LaplaceMeans(1.0, 0.0, 1.0, 10, sampler=sampler)
    return AuditCase(f"LaplaceMeans eps=1 [{tag}]", ReleaseAdapter(mech.release, "laplace-means"),
                     means_pair(), ThresholdTester(Projection(np.eye(3)[0])),
                     Claim.from_event(mech.event))


def gaussian_vector_case(sampler, tag: str) -> AuditCase:
    mech = GaussianVector.from_privacy(1.0, DELTA, 1.0, sampler=sampler)
    return AuditCase(f"GaussianVector (1,1e-5) [{tag}]",
                     ReleaseAdapter(mech.release, "gaussian-vector"), vector_pair(CANARY),
                     GaussianDPTester(Projection(CANARY)), Claim.from_event(mech.event, DELTA))


def symmetric_matrix_case(sampler, tag: str) -> AuditCase:
    mech = SymmetricGaussianMatrix.from_privacy(1.0, DELTA, 1.0, sampler=sampler)
    gram = _unit_gram(3)
    pair = NeighbouringPair(np.zeros((3, 3)), gram, "record-level: one x x^T added, |x| = 1")
    return AuditCase(f"SymmetricGaussianMatrix (1,1e-5) [{tag}]",
                     ReleaseAdapter(mech.release, "symmetric-gaussian", batched=False), pair,
                     GaussianDPTester(Projection(gram)), Claim.from_event(mech.event, DELTA))


def tree_case(sampler, tag: str, horizon: int = 16, epsilon: float = 4.0) -> AuditCase:
    ref = TreePrivatizer((2,), horizon, epsilon=epsilon, delta=DELTA, sampler=sampler)
    mech = StreamAdapter(tree_factory((2,), horizon, ref.sigma, clip_norm=1.0, sampler=sampler),
                         "tree-privatizer")
    return AuditCase(f"TreePrivatizer T={horizon} ({epsilon:g},1e-5) [{tag}]", mech,
                     stream_pair(horizon, CANARY), GaussianDPTester(LinearDiscriminant()),
                     Claim.from_event(ref.event, DELTA))


@dataclass(frozen=True, eq=False)
class AggregateRound:
    """One noisy C-anonymous round: canary (user 0) plus C - 1 users of known reward 0."""

    aggregator_for: Any
    name: str = "k-anonymous aggregate"

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        agg = self.aggregator_for(float(dataset))
        c = agg.threshold
        members = np.broadcast_to(np.arange(c), (n, 1, c))  # n rounds, one group each
        return agg.aggregate(members, np.zeros((n, 1), dtype=np.int64), rng)


def anonymous_laplace_case(sampler, tag: str, threshold: int = 5) -> AuditCase:
    def aggregator_for(canary: float) -> KAnonymousAggregator:
        source = lambda users, arms, rng: np.where(users == 0, canary, 0.0)
        return KAnonymousAggregator(threshold, source, laplace_epsilon=1.0,
                                    reward_bounds=(0.0, 1.0), sampler=sampler)

    pair = NeighbouringPair(0.0, 1.0, "record-level: one user's reward in one round (0 vs 1)")
    return AuditCase(f"KAnonymousAggregator+Laplace eps=1 [{tag}]",
                     AggregateRound(aggregator_for), pair, ThresholdTester(Scalar()),
                     Claim.from_event(aggregator_for(0.0).event))


def mechanism_cases(exact: bool = True) -> list[AuditCase]:
    """Every DP mechanism of `mechanisms/` with the fast sampler, and with the exact one."""
    samplers = [(FAST, "numpy")] + ([(EXACT, "opendp")] if exact else [])
    builders = (laplace_means_case, gaussian_vector_case, symmetric_matrix_case, tree_case,
                anonymous_laplace_case)
    return [build(s, tag) for s, tag in samplers for build in builders]


# -- foreign mechanisms ---------------------------------------------------------------------
def foreign_cases() -> list[AuditCase]:
    """OpenDP's Laplace and Gaussian measurements, diffprivlib's Laplace and analytic Gaussian."""
    import opendp.prelude as dp
    from diffprivlib.mechanisms import GaussianAnalytic, Laplace

    dp.enable_features("contrib")
    scalar = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    pair = NeighbouringPair(0.0, 1.0, "scalar inputs at distance 1 (the sensitivity)")
    od_lap = OpenDPMechanism(dp.m.make_laplace(*scalar, scale=1.0), "opendp make_laplace")
    od_gauss = OpenDPMechanism(dp.m.make_gaussian(*scalar, scale=1.0), "opendp make_gaussian")
    dl_lap = DiffprivlibMechanism(Laplace, "diffprivlib Laplace",
                                  {"epsilon": 1.0, "sensitivity": 1.0})
    dl_gauss = DiffprivlibMechanism(GaussianAnalytic, "diffprivlib GaussianAnalytic",
                                    {"epsilon": 1.0, "delta": DELTA, "sensitivity": 1.0})
    return [
        AuditCase("opendp make_laplace scale=1", od_lap, pair, ThresholdTester(),
                  od_lap.claim(1.0)),
        AuditCase("opendp make_gaussian scale=1", od_gauss, pair, GaussianDPTester(),
                  od_gauss.claim(1.0, DELTA)),
        AuditCase("diffprivlib Laplace eps=1", dl_lap, pair, ThresholdTester(), dl_lap.claim()),
        AuditCase("diffprivlib GaussianAnalytic (1,1e-5)", dl_gauss, pair, GaussianDPTester(),
                  dl_gauss.claim()),
    ]
