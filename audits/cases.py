"""The standard audit cases: every DP mechanism of `mechanisms/` and foreign ones.

    AuditCase(name, mechanism, pair, tester, claim, control=False, note="", samples=None,
              float_model=None, value=None, kind="distributional")
    mechanism_cases(exact=True) -> list[AuditCase]   # ours: float-safe default, + exact if asked
    foreign_cases() -> list[AuditCase]               # OpenDP and diffprivlib adapters

Each case fixes a worst-case-style neighbouring pair and the claim read from
the mechanism's own `event` through an accountant; the tester is None (the
default battery of `privbandit.audits.battery`), with the floating-point
reachability model of the mechanism's sampler where one is known.  A case
has its own sample budget (`samples`, None: `DEFAULT_SAMPLES`): cases whose
every draw goes through OpenDP use `EXACT_SAMPLES`.  `control` marks cases
expected to be rejected: the broken twins of `privbandit.audits.controls`,
and foreign mechanisms that add textbook floating-point noise (diffprivlib's
Laplace, Gaussian and the tools built on them), which the float-bit events
catch (Mironov 2012).  A control's `kind` is the kind of finding that must
reject it (`privbandit.audits.findings`): floating-point for the textbook
float mechanisms, distributional for the others.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.errors import MissingExtraError, require_extra
from privbandit.mechanisms.anonymous import KAnonymousAggregator
from privbandit.mechanisms.gaussian import GaussianVector, SymmetricGaussianMatrix
from privbandit.mechanisms.laplace import LaplaceMeans, pairwise_mean
from privbandit.mechanisms.samplers import EXACT, GRID
from privbandit.mechanisms.secure_sum import SecureSum
from privbandit.mechanisms.tree import TreePrivatizer

from .adapters import DiffprivlibFunction, DiffprivlibMechanism, OpenDPMechanism, ReleaseAdapter
from .claims import Claim, NeighbouringPair
from .findings import DISTRIBUTIONAL, FLOATING_POINT
from .floating import model_for
from .secure import SecureSumAdapter
from .streams import StreamAdapter, tree_factory

DELTA = 1e-5
# Runs per side where every draw goes through OpenDP (~10-20 us per entry).
EXACT_SAMPLES = 5000


@dataclass(frozen=True, eq=False)
class AuditCase:
    """One audit to run: `control` cases are expected to be rejected."""

    name: str
    mechanism: Any
    pair: NeighbouringPair
    tester: Any
    claim: Claim
    control: bool = False
    note: str = ""
    samples: "int | None" = None
    float_model: Any = None
    value: Any = None
    kind: str = DISTRIBUTIONAL


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
def _budget(sampler) -> "int | None":
    return EXACT_SAMPLES if sampler is EXACT else None


def laplace_means_case(sampler, tag: str) -> AuditCase:
    mech = LaplaceMeans(1.0, 0.0, 1.0, 10, sampler=sampler)
    return AuditCase(f"LaplaceMeans eps=1 [{tag}]", ReleaseAdapter(mech.release, "laplace-means"),
                     means_pair(), None, Claim.from_event(mech.event), samples=_budget(sampler),
                     float_model=model_for(sampler, mech.scale), value=pairwise_mean)


def gaussian_vector_case(sampler, tag: str) -> AuditCase:
    mech = GaussianVector.from_privacy(1.0, DELTA, 1.0, sampler=sampler)
    return AuditCase(f"GaussianVector (1,1e-5) [{tag}]",
                     ReleaseAdapter(mech.release, "gaussian-vector"), vector_pair(CANARY), None,
                     Claim.from_event(mech.event, DELTA), samples=_budget(sampler),
                     float_model=model_for(sampler, kind="gaussian"))


def symmetric_matrix_case(sampler, tag: str) -> AuditCase:
    mech = SymmetricGaussianMatrix.from_privacy(1.0, DELTA, 1.0, sampler=sampler)
    gram = _unit_gram(3)
    pair = NeighbouringPair(np.zeros((3, 3)), gram, "record-level: one x x^T added, |x| = 1")
    # released one matrix at a time: a smaller budget keeps it quick
    return AuditCase(f"SymmetricGaussianMatrix (1,1e-5) [{tag}]",
                     ReleaseAdapter(mech.release, "symmetric-gaussian", batched=False), pair,
                     None, Claim.from_event(mech.event, DELTA),
                     samples=EXACT_SAMPLES if sampler is EXACT else 20_000,
                     float_model=model_for(sampler, kind="gaussian"))


def tree_case(sampler, tag: str, horizon: int = 16, epsilon: float = 4.0) -> AuditCase:
    ref = TreePrivatizer((2,), horizon, epsilon=epsilon, delta=DELTA, sampler=sampler)
    mech = StreamAdapter(tree_factory((2,), horizon, ref.sigma, clip_norm=1.0, sampler=sampler),
                         "tree-privatizer")
    return AuditCase(f"TreePrivatizer T={horizon} ({epsilon:g},1e-5) [{tag}]", mech,
                     stream_pair(horizon, CANARY), None, Claim.from_event(ref.event, DELTA),
                     samples=_budget(sampler), float_model=model_for(sampler, kind="gaussian"))


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
                     AggregateRound(aggregator_for), pair, None,
                     Claim.from_event(aggregator_for(0.0).event), samples=_budget(sampler),
                     float_model=model_for(sampler))


SECURE_PARTIES = 5


def secure_pair(parties: int = SECURE_PARTIES) -> NeighbouringPair:
    """Every party's vector zero vs party 0's vector the canary (norm 1, the sensitivity)."""
    zero = np.zeros((parties, CANARY.size))
    canary = zero.copy()
    canary[0] = CANARY
    return NeighbouringPair(zero, canary, "one party's vector added (norm 1)",
                            f"{parties} parties, party 0 adds {CANARY.tolist()}")


def secure_sum_reference(epsilon: float = 1.0) -> SecureSum:
    """The secure sum the cases audit: 5 parties, 2-vectors, calibrated by zCDP."""
    return SecureSum(SECURE_PARTIES, (CANARY.size,), epsilon=epsilon, delta=DELTA)


def secure_sum_case(epsilon: float = 1.0) -> AuditCase:
    """The aggregate of a secure sum (distributed discrete Gaussian), its zCDP claim."""
    ref = secure_sum_reference(epsilon)
    mech = SecureSumAdapter(SECURE_PARTIES, CANARY.size, ref.sigma, ref.scale)
    return AuditCase(f"SecureSum 5 parties ({epsilon:g},1e-5) [grid]", mech, secure_pair(),
                     None, Claim.from_event(ref.event, DELTA))


def mechanism_cases(exact: bool = True) -> list[AuditCase]:
    """Every DP mechanism of `mechanisms/` with the float-safe default sampler (and exact);
    the secure sum (whose shares are always the grid sampler's integers) once."""
    samplers = [(GRID, "grid")] + ([(EXACT, "opendp")] if exact else [])
    builders = (laplace_means_case, gaussian_vector_case, symmetric_matrix_case, tree_case,
                anonymous_laplace_case)
    return [build(s, tag) for s, tag in samplers for build in builders] + [secure_sum_case()]


# -- foreign mechanisms ---------------------------------------------------------------------
def _exponential_params(utility) -> dict:
    """diffprivlib's Exponential: the dataset is the utility of candidates a, b, c, d."""
    return {"epsilon": 1.0, "sensitivity": 1.0, "utility": list(np.asarray(utility, float)),
            "candidates": ["a", "b", "c", "d"]}


def diffprivlib_missing() -> str | None:
    """None if diffprivlib imports, else the one-line reason (the 'audit' extra to install)."""
    try:
        require_extra("diffprivlib.mechanisms", "audit", "the diffprivlib audits")
    except MissingExtraError as exc:
        return str(exc)
    return None


def foreign_cases() -> list[AuditCase]:
    """OpenDP's exact measurements and a chain; diffprivlib's float-safe and float mechanisms
    (only OpenDP's without the 'audit' extra: see `diffprivlib_missing`)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    scalar = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    pair = NeighbouringPair(0.0, 1.0, "scalar inputs at distance 1 (the sensitivity)")
    od_lap = OpenDPMechanism(dp.m.make_laplace(*scalar, scale=1.0), "opendp make_laplace")
    od_gauss = OpenDPMechanism(dp.m.make_gaussian(*scalar, scale=1.0), "opendp make_gaussian")
    chain = (dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                             dp.symmetric_distance(), bounds=(0.0, 1.0))
             >> dp.t.then_sum() >> dp.m.then_laplace(scale=1.0))
    od_chain = OpenDPMechanism(chain, "opendp clamp >> sum >> laplace")
    chain_pair = NeighbouringPair([0.5, 0.5, 1.0], [0.5, 0.5], "add/remove one record in [0, 1]",
                                  "record 1.0 removed")
    opendp = [
        AuditCase("opendp make_laplace scale=1", od_lap, pair, None, od_lap.claim(1.0),
                  samples=EXACT_SAMPLES),
        AuditCase("opendp make_gaussian scale=1", od_gauss, pair, None,
                  od_gauss.claim(1.0, DELTA), samples=EXACT_SAMPLES),
        AuditCase("opendp clamp>>sum>>laplace", od_chain, chain_pair, None, od_chain.claim(1),
                  samples=EXACT_SAMPLES),
    ]
    return opendp if diffprivlib_missing() else opendp + _diffprivlib_cases(pair)


def _diffprivlib_cases(pair: NeighbouringPair) -> list[AuditCase]:
    from diffprivlib.mechanisms import Exponential, GaussianAnalytic, Geometric, Laplace, Snapping
    from diffprivlib.tools import mean

    dl_lap = DiffprivlibMechanism(Laplace, "diffprivlib Laplace",
                                  {"epsilon": 1.0, "sensitivity": 1.0})
    dl_gauss = DiffprivlibMechanism(GaussianAnalytic, "diffprivlib GaussianAnalytic",
                                    {"epsilon": 1.0, "delta": DELTA, "sensitivity": 1.0})
    dl_snap = DiffprivlibMechanism(Snapping, "diffprivlib Snapping", {
        "epsilon": 1.0, "sensitivity": 1.0, "lower": -10.0, "upper": 10.0})
    dl_geo = DiffprivlibMechanism(Geometric, "diffprivlib Geometric",
                                  {"epsilon": 1.0, "sensitivity": 1})
    dl_exp = DiffprivlibMechanism(Exponential, "diffprivlib Exponential", _exponential_params,
                                  value=False, sample_input=[0.0, 0.0, 0.0, 0.0])
    exp_pair = NeighbouringPair([0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0],
                                "utilities of sensitivity 1", "utility of a: 0 -> 1")
    dl_mean = DiffprivlibFunction(mean, "diffprivlib tools.mean", {"epsilon": 1.0,
                                                                  "bounds": (0.0, 1.0)})
    mean_pair = NeighbouringPair([0.0] * 4, [0.0] * 3 + [1.0], "replace-one record in [0, 1]",
                                 "record 3: 0 -> 1")
    unsafe = "textbook floating-point noise: the float-bit events catch it (Mironov 2012)"
    return [
        AuditCase("diffprivlib Snapping eps=1", dl_snap, pair, None, dl_snap.claim(),
                  samples=20_000),
        AuditCase("diffprivlib Geometric eps=1", dl_geo, NeighbouringPair(0, 1, "counts, +1"),
                  None, dl_geo.claim(), samples=20_000),
        AuditCase("diffprivlib Exponential eps=1", dl_exp, exp_pair, None, dl_exp.claim(),
                  samples=20_000),
        AuditCase("diffprivlib Laplace eps=1 (float)", dl_lap, pair, None, dl_lap.claim(),
                  control=True, note=unsafe, samples=20_000, kind=FLOATING_POINT),
        AuditCase("diffprivlib GaussianAnalytic (float)", dl_gauss, pair, None, dl_gauss.claim(),
                  control=True, note=unsafe, samples=20_000, kind=FLOATING_POINT),
        AuditCase("diffprivlib tools.mean eps=1 (float)", dl_mean, mean_pair, None,
                  dl_mean.claim(), control=True, note=unsafe, samples=20_000, kind=FLOATING_POINT),
    ]
