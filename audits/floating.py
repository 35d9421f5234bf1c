"""Floating-point reachability: outputs one input can produce and its neighbour cannot.

    FloatTester(model, value=None)
    NumpyLaplaceModel(scale), InverseCDFGaussianModel(sigma), GridModel(k),
    InverseModel(forward, inverse, name), model_for(sampler, scale)

A textbook float mechanism releases fl(x + noise(U)) for a 53-bit uniform
double U (Mironov, CCS 2012; Jin et al., S&P 2022).  Which doubles it can
release depends on x: many outputs of one input are impossible for its
neighbour, an event of infinite privacy loss.  Given a *sampler model* --
the map from U and the noiseless value x to the released double -- a
candidate U is recovered from each output by inverting the noise (the
model's `inverse`), and the 2 `window` + 1 doubles around it are pushed
forward again: the output is reachable from x when one of them reproduces it
bit for bit.

`FloatTester` tests the event E(x') = {outputs not reachable from x'} on all
runs (it is fixed by the model, so no selection part is needed): the
dataset's runs give a Clopper-Pearson lower bound on P_D(E), the neighbour's
own runs an upper bound on P_D'(E) (0 hits when the model describes the
mechanism; if it does not, the bound says so and stays valid), and
eps >= ln((p_hi_lower - delta) / p_lo_upper); both directions, Bonferroni.
Its findings are of the floating-point kind (`privbandit.audits.findings`).
The tester needs the two inputs (`needs_inputs`): `run_audit` passes them,
and `value(dataset)` maps an input to the noiseless value per coordinate
(default: the input itself; for `LaplaceMeans`, its `pairwise_mean`).

Models:
- `NumpyLaplaceModel(scale)`: NumPy's `Generator.laplace` (inverse CDF:
  x - b log(2 - 2U) for U >= 1/2, x + b log(2U) below), with the C library's
  log, exactly as NumPy computes it.
- `InverseCDFGaussianModel(sigma)`: x + sigma * ndtri(U), the textbook
  inverse-CDF float Gaussian (NumPy's own normal uses a ziggurat, which has
  no such inverse).
- `GridModel(k)`: a grid sampler (`GridSampler`, `OpenDPSampler`): every
  multiple of 2**k is reachable from every input, so nothing is unreachable;
  an output off the grid is reported as unreachable from both sides.
- `InverseModel(forward, inverse)`: your own, with `forward(u, x) -> y` and
  `inverse(y, x) -> u` over arrays (u on the grid of multiples of 2**-53).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_delta, check_positive

from .binomial import cp_lower, cp_upper
from .findings import FLOATING_POINT
from .statistics import _rows
from .testers import LowerBound, check_confidence, threshold_score

_UNIT = 2.0**-53  # NumPy's doubles are multiples of it in [0, 1)
_libm_log = np.frompyfunc(math.log, 1, 1)  # NumPy's sampler calls the C library's log


def _log(x: np.ndarray) -> np.ndarray:
    return _libm_log(x).astype(np.float64)


@dataclass(frozen=True)
class InverseModel:
    """A float sampler as forward(u, x) -> y and inverse(y, x) -> u estimate."""

    forward: Callable[[np.ndarray, np.ndarray], np.ndarray]
    inverse: Callable[[np.ndarray, np.ndarray], np.ndarray]
    name: str = "inverse model"
    window: int = 4

    def reachable(self, y: np.ndarray, x: np.ndarray) -> np.ndarray:
        """(n, d) outputs, (d,) values -> (n,) True where every coordinate is reachable."""
        y = _rows(y)
        x = np.broadcast_to(np.asarray(x, dtype=float).ravel(), y.shape[1:])
        xs = np.broadcast_to(x, y.shape)
        centre = np.rint(np.asarray(self.inverse(y, xs), dtype=float) / _UNIT)
        hit = np.zeros(y.shape, dtype=bool)
        for j in range(-self.window, self.window + 1):
            u = (centre + j) * _UNIT
            ok = (u > 0) & (u < 1)
            with np.errstate(all="ignore"):
                out = np.asarray(self.forward(np.where(ok, u, 0.5), xs), dtype=float)
            hit |= ok & (out == y)
        return hit.all(axis=1)


def _laplace_forward(scale: float):
    def forward(u, x):
        upper = u >= 0.5
        # NumPy: loc - scale * log(2.0 - U - U) for U >= 0.5, else loc + scale * log(U + U)
        arg = np.where(upper, (2.0 - u) - u, u + u)
        noise = scale * _log(arg)
        return np.where(upper, x - noise, x + noise)
    return forward


def _laplace_inverse(scale: float):
    def inverse(y, x):
        n = (y - x) / scale
        with np.errstate(over="ignore"):
            return np.where(n < 0, 0.5 * np.exp(n), 1.0 - 0.5 * np.exp(-n))
    return inverse


def NumpyLaplaceModel(scale: float, window: int = 4) -> InverseModel:
    """NumPy's `Generator.laplace(x, scale)` (or `x + laplace(0, scale)`, the same doubles)."""
    scale = check_positive("scale", scale)
    return InverseModel(_laplace_forward(scale), _laplace_inverse(scale),
                        f"numpy laplace scale={scale:.6g}", check_count("window", window))


def InverseCDFGaussianModel(sigma: float, window: int = 4) -> InverseModel:
    """x + sigma * ndtri(U): the textbook inverse-CDF float Gaussian."""
    sigma = check_positive("sigma", sigma)
    return InverseModel(lambda u, x: x + sigma * ndtri(u), lambda y, x: ndtr((y - x) / sigma),
                        f"inverse-cdf gaussian sigma={sigma:.6g}", check_count("window", window))


@dataclass(frozen=True)
class GridModel:
    """A grid sampler: outputs are (rounded) multiples of 2**k, reachable from any input."""

    k: int
    name: str = "grid"

    def reachable(self, y: np.ndarray, x: np.ndarray) -> np.ndarray:
        scaled = np.ldexp(_rows(y), -self.k)
        with np.errstate(invalid="ignore"):
            return np.all((scaled == np.rint(scaled)) | ~np.isfinite(scaled), axis=1)


def model_for(sampler: Any, scale: "float | None" = None, kind: str = "laplace"):
    """The reachability model of one of our samplers (None when it has no invertible model).

    Grid samplers give `GridModel(sampler.k)`; the fast NumPy sampler gives
    `NumpyLaplaceModel(scale)` for Laplace noise (its Gaussian is a ziggurat).
    """
    if getattr(sampler, "float_safe", False) and hasattr(sampler, "k"):
        return GridModel(sampler.k)
    if kind == "laplace" and scale is not None and not getattr(sampler, "float_safe", True):
        return NumpyLaplaceModel(scale)
    return None


@dataclass(frozen=True)
class FloatTester:
    """Reachability of the observed doubles under a sampler model (see the module docstring)."""

    model: Any
    value: Any = None
    needs_inputs = True
    name = "float-reachability"
    kind = FLOATING_POINT

    def __post_init__(self) -> None:
        if not callable(getattr(self.model, "reachable", None)):
            raise invalid("model", self.model,
                          "a sampler model with reachable(outputs, value) (e.g. NumpyLaplaceModel)")
        if self.value is not None and not callable(self.value):
            raise invalid("value", self.value, "None or a callable dataset -> noiseless value")

    @property
    def assumptions(self) -> str:
        return f"none for validity; power needs the sampler model ({self.model.name})"

    def bound(self, outputs0, outputs1, *, delta: float, confidence: float,
              inputs: "tuple | None" = None) -> LowerBound:
        delta = check_delta("delta", delta)
        confidence = check_confidence(confidence)
        if inputs is None:
            raise invalid("inputs", inputs, "the pair's (dataset, neighbour): FloatTester tests "
                          "reachability from each input (run_audit passes them)")
        v0, v1 = (self._value(d) for d in inputs)
        y0, y1 = _rows(outputs0), _rows(outputs1)
        from0, from1 = self.model.reachable(y0, v1), self.model.reachable(y1, v0)
        own0, own1 = self.model.reachable(y0, v0), self.model.reachable(y1, v1)
        alpha = (1.0 - confidence) / 4.0  # two directions, two bounds each
        rows = []
        for favoured, cross, own, n_hi, n_lo in (("dataset", from0, own1, len(y0), len(y1)),
                                                 ("neighbour", from1, own0, len(y1), len(y0))):
            k_hi, k_lo = int((~cross).sum()), int((~own).sum())
            p_hi, p_lo = float(cp_lower(k_hi, n_hi, alpha)), float(cp_upper(k_lo, n_lo, alpha))
            eps = float(threshold_score(np.array(p_hi), np.array(p_lo), delta))
            rows.append((eps, favoured, k_hi, k_lo, n_hi, n_lo, p_hi, p_lo))
        eps, favoured, k_hi, k_lo, n_hi, n_lo, p_hi, p_lo = max(rows, key=lambda r: r[0])
        other = "dataset" if favoured == "neighbour" else "neighbour"
        details = {
            "model": self.model.name, "favoured_input": favoured,
            "hits_favoured": k_hi, "hits_other": k_lo, "evaluation_runs": [n_hi, n_lo],
            "unreachable_from_own_input": [int((~own0).sum()), int((~own1).sum())],
            "p_favoured_lower": p_hi, "p_other_upper": p_lo,
            "evidence": (f"{k_hi} of {n_hi} outputs of the {favoured} cannot come from the "
                         f"{other} under the model ({self.model.name}): probability >= "
                         f"{p_hi:.4g} vs <= {p_lo:.4g} ({k_lo} of the {other}'s own outputs)"),
        }
        return LowerBound(eps, delta, confidence, self.name, details, self.assumptions,
                          self.kind)

    def _value(self, dataset: Any) -> np.ndarray:
        value = dataset if self.value is None else self.value(dataset)
        return np.asarray(value, dtype=float).ravel()
