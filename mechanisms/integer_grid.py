"""Integer encoding of real vectors for secure sums: a power-of-two grid, stochastic rounding.

A value x is encoded as the integer floor(x / scale) + [U < frac(x / scale)],
U uniform in [0, 1) drawn once per entry (stochastic rounding: unbiased up to
2**-53 per entry), and decoded as integer * scale.  The scale is a power of
two, 2**exponent with exponent <= 0, so x / scale is exact in floats and the
fractional part is exact too: the only rounding is the one we choose.

Sensitivity.  Couple the two neighbours' roundings on the same uniforms U.
For one entry with scaled values a <= b, the rounded difference is
floor(b) - floor(a) + [U < frac(b)] - [U < frac(a)], whose magnitude is below
(b - a) + 1, and 0 when a = b.  So on the coupling
||round(a) - round(b)||_2 <= ||a - b||_2 / scale + sqrt(k), k the number of
entries that may differ (at most the dimension); the Renyi divergence of the
mixtures over U is at most its largest value over U (joint quasi-convexity:
van Erven & Harremoes 2014, Theorem 13), so this bound is the sensitivity of
the encoded release in grid steps (`sensitivity`).  Kairouz, Liu & Steinke
(2021, Theorem 1) state the same (c + gamma sqrt(d))**2 term for their
rounding.
"""
from __future__ import annotations

import math

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_positive

from ._checks import check_rng, real_array

MIN_EXPONENT = -100
_INT_LIMIT = 2.0**62  # encoded magnitudes stay below it (int64 with room for sums of shares)


class IntegerGrid:
    """The grid of multiples of scale = 2**exponent (exponent in [-100, 0]); immutable.

    `encode(values, rng)` -> int64 array of the same shape; `decode(integers)` ->
    float64; `sensitivity(l2, entries)` -> grid steps (module docstring).
    `IntegerGrid.for_sensitivity(l2, entries, tolerance)` picks the coarsest grid
    whose rounding adds at most `tolerance` to the sensitivity, relatively.
    """

    __slots__ = ("_exponent",)

    def __init__(self, exponent: int) -> None:
        if isinstance(exponent, bool) or not isinstance(exponent, (int, np.integer)) or not (
                MIN_EXPONENT <= exponent <= 0):
            raise invalid("exponent", exponent,
                          f"an integer in [{MIN_EXPONENT}, 0] (the grid scale is 2**exponent)")
        object.__setattr__(self, "_exponent", int(exponent))

    @classmethod
    def for_sensitivity(cls, l2_sensitivity: float, entries: int,
                        tolerance: float = 1e-4) -> IntegerGrid:
        """The coarsest grid with sqrt(entries) <= tolerance * l2_sensitivity / scale."""
        sens = check_positive("l2_sensitivity", l2_sensitivity)
        tol = check_positive("tolerance", tolerance)
        target = tol * sens / math.sqrt(check_count("entries", entries))
        return cls(max(MIN_EXPONENT, min(0, math.floor(math.log2(target)))))

    @property
    def exponent(self) -> int:
        return self._exponent

    @property
    def scale(self) -> float:
        """The grid step, 2**exponent."""
        return math.ldexp(1.0, self._exponent)

    def encode(self, values: object, rng: np.random.Generator) -> np.ndarray:
        """Stochastic rounding of values / scale (int64, same shape); one uniform per entry.

        Raises InvalidParameterError for NaN/inf or a scaled magnitude of 2**62 or more.
        """
        return self._encode(real_array("values", values), check_rng(rng))

    def _encode(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """`encode` of a validated float array (mechanisms call it after validating once)."""
        x = np.ldexp(values, -self._exponent)  # exact
        if x.size and not np.abs(x).max() < _INT_LIMIT:
            raise invalid("values", f"an entry of magnitude {float(np.abs(x).max()):.3g} "
                          "grid steps", f"entries below 2**62 grid steps (scale {self.scale:g})")
        low = np.floor(x)
        up = rng.random(x.shape) < (x - low)  # x - floor(x) is exact
        return low.astype(np.int64) + up

    def decode(self, integers: object) -> np.ndarray:
        """integers * scale, as floats (exact below 2**53 grid steps)."""
        return np.ldexp(np.asarray(integers, dtype=np.float64), self._exponent)

    def sensitivity(self, l2_sensitivity: float, entries: int) -> float:
        """l2_sensitivity / scale + sqrt(entries): the encoded release's sensitivity in steps."""
        sens = check_positive("l2_sensitivity", l2_sensitivity)
        return math.ldexp(sens, -self._exponent) + math.sqrt(check_count("entries", entries))

    def __setattr__(self, name, value):
        raise AttributeError("IntegerGrid is immutable")

    def __reduce__(self):
        return (IntegerGrid, (self._exponent,))

    def __eq__(self, other: object) -> bool:
        return type(other) is IntegerGrid and other.exponent == self._exponent

    def __hash__(self) -> int:
        return hash((IntegerGrid, self._exponent))

    def __repr__(self) -> str:
        return f"IntegerGrid(exponent={self._exponent})"
