"""Positive controls: broken mechanisms, each of which the default audit must reject.

    control_cases() -> list[AuditCase]   # every case has control=True

Each control keeps the claim of the mechanism it imitates and injects one
mistake through `privbandit.audits.broken` (no copy of the mechanism's logic);
the noise is float-safe (the default grid sampler) unless the flaw *is* the
floating point.  Every case has tester None (the default battery) and its
own sample budget (`AuditCase.samples`, None: `DEFAULT_SAMPLES`):

- Laplace means with half the needed scale (claims eps = 1, is eps = 2);
- a Gaussian vector calibrated for l2_sensitivity 0.5 while neighbouring values
  differ by 1 (e.g. rewards in [-1, 1] treated as [0, 1]; mu doubles);
- a tree privatizer that redraws every node's noise at every release (T = 32);
- a tree privatizer that drops the noise of the node completed at step 2;
- the seed 000 code's variance-as-std confusion, at that paper's sweep point
  eps = 8, delta = 0.1 (T = 4; tight sigma 0.56 < 1, so sigma**2 is less noise);
- Laplace means of rewards in [0, 10] whose noise ignores the bound width;
- a delta-leak: Laplace means that return the exact means with probability 1e-3;
- the textbook float Laplace (Mironov 2012): Laplace means with NumPy's float
  sampler, and the textbook inverse-CDF float Gaussian on a Gaussian vector;
- the sparse vector technique without query noise and without its cutoff
  (Lyu, Su & Li 2017, Algorithms 5 and 6), on their kind of counterexample;
- report noisy max with a quarter of the noise it needs;
- a 10-dimensional Gaussian vector whose coordinate 3 gets a quarter of the noise;
- a secure sum whose parties add shares of half the variance their claim needs
  (5 parties, 2-vectors, claimed (1, 1e-5) by zCDP: the true mu is sqrt(2) times
  the honest one, epsilon 1.34 by its Gaussian reading against 0.91 for the
  honest sum; at 100,000 runs per side the battery's lower bound was 1.22 in
  the median and 1.13 at least over 20 seeds, `bench/bench_secure_sum.py`).
"""
from __future__ import annotations

import numpy as np

from privbandit.mechanisms.gaussian import GaussianVector
from privbandit.mechanisms.laplace import LaplaceMeans, pairwise_mean
from privbandit.mechanisms.samplers import FAST, GRID
from privbandit.mechanisms.tree import TreePrivatizer

from .adapters import ReleaseAdapter
from .broken import (
    DeltaLeak,
    DropNoiseSampler,
    InverseCDFGaussianSampler,
    MisScaledCoordinateSampler,
    NoiseScaleSampler,
    NoisyMax,
    RedrawingTree,
    SparseVector,
    VarianceAsStdSampler,
)
from .cases import (
    CANARY,
    DELTA,
    SECURE_PARTIES,
    AuditCase,
    means_pair,
    secure_pair,
    secure_sum_reference,
    stream_pair,
    vector_pair,
)
from .claims import Claim, NeighbouringPair
from .findings import FLOATING_POINT
from .floating import InverseCDFGaussianModel, NumpyLaplaceModel
from .secure import SecureSumAdapter
from .streams import StreamAdapter, tree_factory

# every tree rebuilt per release: a smaller budget keeps the control quick
REDRAW_SAMPLES = 5000


def laplace_half_scale() -> AuditCase:
    honest = LaplaceMeans(1.0, 0.0, 1.0, 10)
    broken = LaplaceMeans(1.0, 0.0, 1.0, 10, sampler=NoiseScaleSampler(GRID, 0.5))
    return AuditCase("CONTROL Laplace at half scale", ReleaseAdapter(broken.release, "half"),
                     means_pair(), None, Claim.from_event(honest.event), control=True,
                     note="noise scale (hi-lo)/(2 n eps): true eps = 2")


def gaussian_wrong_sensitivity() -> AuditCase:
    broken = GaussianVector.from_privacy(1.0, DELTA, 0.5)
    return AuditCase("CONTROL Gaussian, sensitivity 0.5 for 1", ReleaseAdapter(broken.release),
                     vector_pair(CANARY), None,
                     Claim(1.0, DELTA, "intended (1, 1e-5) for neighbours at L2 distance 1"),
                     control=True, note="calibrated for l2_sensitivity 0.5; true mu doubles")


def _tree_claim(horizon: int, epsilon: float, delta: float) -> tuple[float, Claim]:
    ref = TreePrivatizer((2,), horizon, epsilon=epsilon, delta=delta)
    return ref.sigma, Claim.from_event(ref.event, delta)


def tree_redraws_noise(horizon: int = 32, epsilon: float = 4.0) -> AuditCase:
    sigma, claim = _tree_claim(horizon, epsilon, DELTA)
    mech = RedrawingTree(tree_factory((2,), horizon, sigma, clip_norm=1.0))
    return AuditCase(f"CONTROL tree redrawing node noise T={horizon}", mech,
                     stream_pair(horizon, CANARY), None, claim, control=True,
                     note="fresh node noise at every release", samples=REDRAW_SAMPLES)


def tree_drops_node_noise(horizon: int = 16, epsilon: float = 4.0) -> AuditCase:
    sigma, claim = _tree_claim(horizon, epsilon, DELTA)

    def factory(batch: int):  # a fresh stateful sampler per tree
        return tree_factory((2,), horizon, sigma, clip_norm=1.0,
                            sampler=DropNoiseSampler(GRID, 2))(batch)

    return AuditCase(f"CONTROL tree dropping node [1,2] noise T={horizon}",
                     StreamAdapter(factory, "tree dropping a node's noise"),
                     stream_pair(horizon, CANARY), None, claim, control=True,
                     note="node completed at step 2 released without noise")


def variance_as_std(horizon: int = 4, epsilon: float = 8.0, delta: float = 0.1) -> AuditCase:
    sigma, claim = _tree_claim(horizon, epsilon, delta)
    mech = StreamAdapter(tree_factory((2,), horizon, sigma, clip_norm=1.0,
                                      sampler=VarianceAsStdSampler(GRID)), "variance as std")
    return AuditCase(f"CONTROL tree variance-as-std eps={epsilon:g} d={delta:g}", mech,
                     stream_pair(horizon, CANARY), None, claim, control=True,
                     note=f"node std sigma**2 = {sigma**2:.3g} for sigma {sigma:.3g}")


def laplace_ignores_width(lo: float = 0.0, hi: float = 10.0) -> AuditCase:
    honest = LaplaceMeans(1.0, lo, hi, 10)
    broken = LaplaceMeans(1.0, lo, hi, 10, sampler=NoiseScaleSampler(GRID, 1.0 / (hi - lo)))
    return AuditCase("CONTROL Laplace mean ignoring bound width",
                     ReleaseAdapter(broken.release, "width ignored"), means_pair(lo=lo, hi=hi),
                     None, Claim.from_event(honest.event), control=True,
                     note=f"scale 1/(n eps) on rewards in [{lo:g}, {hi:g}]")


def delta_leak(probability: float = 1e-3) -> AuditCase:
    mech = LaplaceMeans(1.0, 0.0, 1.0, 10)
    leaky = DeltaLeak(ReleaseAdapter(mech.release, "laplace-means"), pairwise_mean, probability)
    return AuditCase("CONTROL Laplace means leaking the exact means (1e-3)", leaky, means_pair(),
                     None, Claim.from_event(mech.event), control=True,
                     note=f"with probability {probability:g} the release is the raw means")


def float_laplace() -> AuditCase:
    mech = LaplaceMeans(1.0, 0.0, 1.0, 10, sampler=FAST)
    return AuditCase("CONTROL textbook float Laplace (LaplaceMeans, numpy)",
                     ReleaseAdapter(mech.release, "laplace-means [numpy]"), means_pair(), None,
                     Claim.from_event(mech.event), control=True,
                     note="Mironov 2012: the doubles released depend on the input",
                     float_model=NumpyLaplaceModel(mech.scale), value=pairwise_mean,
                     kind=FLOATING_POINT)


def float_gaussian() -> AuditCase:
    mech = GaussianVector.from_privacy(1.0, DELTA, 1.0, sampler=InverseCDFGaussianSampler(GRID))
    return AuditCase("CONTROL textbook float Gaussian (inverse CDF)",
                     ReleaseAdapter(mech.release, "inverse-cdf gaussian"), vector_pair(CANARY),
                     None, Claim.from_event(mech.event, DELTA), control=True,
                     note="x + sigma ndtri(U) in floats",
                     float_model=InverseCDFGaussianModel(mech.sigma), kind=FLOATING_POINT)


SVT_PAIR = NeighbouringPair(np.r_[np.ones(5), np.zeros(5)], np.r_[np.zeros(5), np.ones(5)],
                            "query answers of sensitivity 1 (each moves by at most 1)",
                            "answers 1,1,1,1,1,0,0,0,0,0 vs 0,0,0,0,0,1,1,1,1,1")


def svt(variant: str) -> AuditCase:
    mech = SparseVector(1.0, 0.5, variant, name=f"sparse vector ({variant})")
    return AuditCase(f"CONTROL sparse vector, {variant}", mech, SVT_PAIR, None,
                     Claim(1.0, 0.0, "sparse vector with cutoff 1 at eps = 1"), control=True,
                     note="Lyu, Su & Li 2017, " + ("Algorithm 5" if variant == "no-query-noise"
                                                   else "Algorithm 6"))


def noisy_max_too_little_noise(factor: float = 0.25) -> AuditCase:
    pair = NeighbouringPair(np.array([4.0, 5.0, 5.0]), np.array([5.0, 5.0, 5.0]),
                            "counts of sensitivity 1 (one record added)", "count 0: 4 -> 5")
    return AuditCase("CONTROL report noisy max, a quarter of the noise",
                     NoisyMax(1.0, factor, name="noisy max (too little noise)"), pair, None,
                     Claim(1.0, 0.0, "report noisy max with Laplace(1/eps) at eps = 1"),
                     control=True, note=f"Laplace scale {factor:g}/eps instead of 1/eps")


def vector_misscaled_coordinate(dim: int = 10, index: int = 3, factor: float = 0.25):
    sampler = MisScaledCoordinateSampler(GRID, index, factor)
    mech = GaussianVector.from_privacy(1.0, DELTA, 1.0, sampler=sampler)
    pair = vector_pair(np.full(dim, 1.0 / np.sqrt(dim)))
    return AuditCase(f"CONTROL Gaussian vector, coordinate {index} of {dim} under-noised",
                     ReleaseAdapter(mech.release, "mis-scaled vector"), pair, None,
                     Claim.from_event(GaussianVector.from_privacy(1.0, DELTA, 1.0).event, DELTA),
                     control=True, note=f"coordinate {index} noise x{factor:g}")


def secure_sum_half_variance(epsilon: float = 1.0) -> AuditCase:
    """Parties add noise shares of half the variance (std / sqrt(2)) under the honest claim."""
    ref = secure_sum_reference(epsilon)
    mech = SecureSumAdapter(SECURE_PARTIES, CANARY.size, ref.sigma / np.sqrt(2.0), ref.scale,
                            name="secure sum, half-variance shares")
    return AuditCase("CONTROL secure sum, half-variance shares", mech, secure_pair(), None,
                     Claim.from_event(ref.event, DELTA), control=True,
                     note="every share has std sigma/sqrt(2): mu x sqrt(2)")


def control_cases() -> list[AuditCase]:
    """Every positive control."""
    return [laplace_half_scale(), gaussian_wrong_sensitivity(), tree_redraws_noise(),
            tree_drops_node_noise(), variance_as_std(), laplace_ignores_width(), delta_leak(),
            float_laplace(), float_gaussian(), svt("no-query-noise"), svt("no-cutoff"),
            noisy_max_too_little_noise(), vector_misscaled_coordinate(),
            secure_sum_half_variance()]
