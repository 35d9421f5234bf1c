"""Positive controls: the broken twins of the standard cases, each of which must be rejected.

    control_cases() -> list[AuditCase]   # every case has control=True

Each control keeps the claim of the mechanism it imitates and injects one
mistake through `privbandit.audits.broken` (no copy of the mechanism's logic):

- Laplace means with half the needed scale (claims eps = 1, is eps = 2);
- a Gaussian vector calibrated for l2_sensitivity 0.5 while neighbouring values
  differ by 1 (e.g. rewards in [-1, 1] treated as [0, 1]; mu doubles);
- a tree privatizer that redraws every node's noise at every release (T = 32:
  a record is seen through 32 fresh noises instead of 6 fixed nodes);
- a tree privatizer that drops the noise of the node completed at step 2 (it
  holds the canary, and prefix 2 is that node alone);
- the seed 000 code's variance-as-std confusion, at that paper's sweep point
  eps = 8, delta = 0.1 (T = 4; tight sigma 0.56 < 1, so sigma**2 is less noise);
- Laplace means of rewards in [0, 10] whose noise ignores the bound width
  (scale 1 / (n eps) instead of 10 / (n eps): claims eps = 1, is eps = 10).
"""
from __future__ import annotations

import numpy as np

from privbandit.mechanisms.gaussian import GaussianVector
from privbandit.mechanisms.laplace import LaplaceMeans
from privbandit.mechanisms.samplers import FAST
from privbandit.mechanisms.tree import TreePrivatizer

from .adapters import ReleaseAdapter
from .broken import DropNoiseSampler, NoiseScaleSampler, RedrawingTree, VarianceAsStdSampler
from .cases import CANARY, DELTA, AuditCase, means_pair, stream_pair, vector_pair
from .claims import Claim
from .statistics import LinearDiscriminant, Projection
from .streams import StreamAdapter, tree_factory
from .testers import GaussianDPTester, ThresholdTester


def laplace_half_scale() -> AuditCase:
    honest = LaplaceMeans(1.0, 0.0, 1.0, 10, sampler=FAST)
    broken = LaplaceMeans(1.0, 0.0, 1.0, 10, sampler=NoiseScaleSampler(FAST, 0.5))
    return AuditCase("CONTROL Laplace at half scale", ReleaseAdapter(broken.release, "half"),
                     means_pair(), ThresholdTester(Projection(np.eye(3)[0])),
                     Claim.from_event(honest.event), control=True,
                     note="noise scale (hi-lo)/(2 n eps): true eps = 2")


def gaussian_wrong_sensitivity() -> AuditCase:
    broken = GaussianVector.from_privacy(1.0, DELTA, 0.5, sampler=FAST)
    return AuditCase("CONTROL Gaussian, sensitivity 0.5 for 1", ReleaseAdapter(broken.release),
                     vector_pair(CANARY), GaussianDPTester(Projection(CANARY)),
                     Claim(1.0, DELTA, "intended (1, 1e-5) for neighbours at L2 distance 1"),
                     control=True, note="calibrated for l2_sensitivity 0.5; true mu doubles")


def _tree_claim(horizon: int, epsilon: float, delta: float) -> tuple[float, Claim]:
    ref = TreePrivatizer((2,), horizon, epsilon=epsilon, delta=delta, sampler=FAST)
    return ref.sigma, Claim.from_event(ref.event, delta)


def tree_redraws_noise(horizon: int = 32, epsilon: float = 4.0) -> AuditCase:
    sigma, claim = _tree_claim(horizon, epsilon, DELTA)
    mech = RedrawingTree(tree_factory((2,), horizon, sigma, clip_norm=1.0, sampler=FAST))
    return AuditCase(f"CONTROL tree redrawing node noise T={horizon}", mech,
                     stream_pair(horizon, CANARY), GaussianDPTester(LinearDiscriminant()), claim,
                     control=True, note="fresh node noise at every release")


def tree_drops_node_noise(horizon: int = 16, epsilon: float = 4.0) -> AuditCase:
    sigma, claim = _tree_claim(horizon, epsilon, DELTA)

    def factory(batch: int):  # a fresh stateful sampler per tree
        return tree_factory((2,), horizon, sigma, clip_norm=1.0,
                            sampler=DropNoiseSampler(FAST, 2))(batch)

    return AuditCase(f"CONTROL tree dropping node [1,2] noise T={horizon}",
                     StreamAdapter(factory, "tree dropping a node's noise"),
                     stream_pair(horizon, CANARY), ThresholdTester(LinearDiscriminant()), claim,
                     control=True, note="node completed at step 2 released without noise")


def variance_as_std(horizon: int = 4, epsilon: float = 8.0, delta: float = 0.1) -> AuditCase:
    sigma, claim = _tree_claim(horizon, epsilon, delta)
    mech = StreamAdapter(tree_factory((2,), horizon, sigma, clip_norm=1.0,
                                      sampler=VarianceAsStdSampler(FAST)), "variance as std")
    return AuditCase(f"CONTROL tree variance-as-std eps={epsilon:g} d={delta:g}", mech,
                     stream_pair(horizon, CANARY), GaussianDPTester(LinearDiscriminant()), claim,
                     control=True, note=f"node std sigma**2 = {sigma**2:.3g} for sigma {sigma:.3g}")


def laplace_ignores_width(lo: float = 0.0, hi: float = 10.0) -> AuditCase:
    honest = LaplaceMeans(1.0, lo, hi, 10, sampler=FAST)
    broken = LaplaceMeans(1.0, lo, hi, 10, sampler=NoiseScaleSampler(FAST, 1.0 / (hi - lo)))
    return AuditCase("CONTROL Laplace mean ignoring bound width",
                     ReleaseAdapter(broken.release, "width ignored"), means_pair(lo=lo, hi=hi),
                     ThresholdTester(Projection(np.eye(3)[0])), Claim.from_event(honest.event),
                     control=True, note=f"scale 1/(n eps) on rewards in [{lo:g}, {hi:g}]")


def control_cases() -> list[AuditCase]:
    """Every positive control (all use the fast sampler)."""
    return [laplace_half_scale(), gaussian_wrong_sensitivity(), tree_redraws_noise(),
            tree_drops_node_noise(), variance_as_std(), laplace_ignores_width()]
