"""Array validators shared by the mechanisms (small and stable: others import it).

Each check raises with the parameter's name, what was received and what is
allowed: `ShapeError` for a wrong shape or dtype, `InvalidParameterError` for
NaN/inf or an out-of-range parameter.  Messages describe arrays by shape,
dtype and the offending count instead of printing them.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import as_array

from .errors import OutOfBoundsError, ShapeError

# dtype kinds accepted as real numbers: float, signed and unsigned integers.
_REAL_KINDS = "fiu"


def describe(array: np.ndarray) -> str:
    """A short description of an array for error messages (never its contents)."""
    return f"an array of shape {array.shape} and dtype {array.dtype}"


def real_array(name: str, value: object, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """`value` as a finite float64 array, optionally of exactly `shape`.

    Refuses booleans, complex numbers, strings and objects (ShapeError), a
    different shape (ShapeError) and NaN or infinite entries
    (InvalidParameterError).
    """
    array = as_array(name, value)
    if array.dtype.kind not in _REAL_KINDS:
        raise ShapeError(
            f"{name} must hold real numbers (float or integer dtype); got {describe(array)}"
        )
    if shape is not None and array.shape != shape:
        raise ShapeError(f"{name} must have shape {shape}; got {describe(array)}")
    array = array.astype(np.float64, copy=False)
    # a NaN or inf makes the sum non-finite; only then (or on overflow) look closer
    if not math.isfinite(array.sum()) and not np.isfinite(array).all():
        bad = int(array.size - np.count_nonzero(np.isfinite(array)))
        raise invalid(name, f"{describe(array)} with {bad} NaN/inf entries", "finite entries")
    return array


def finite_real(name: str, value: object) -> float:
    """A finite real number (bools refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise invalid(name, value, "a finite real number")
    x = float(value)
    if not math.isfinite(x):
        raise invalid(name, value, "a finite real number")
    return x


def check_interval(lo: object, hi: object) -> tuple[float, float]:
    """Finite bounds with lo < hi (names `lo` and `hi`)."""
    lo_f, hi_f = finite_real("lo", lo), finite_real("hi", hi)
    if not lo_f < hi_f:
        raise invalid("(lo, hi)", (lo, hi), "finite bounds with lo < hi")
    return lo_f, hi_f


def check_choice(name: str, value: object, choices: Iterable[str]) -> str:
    """One of a fixed set of option strings."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise invalid(name, value, "one of " + ", ".join(repr(c) for c in choices))
    return value


def check_rng(rng: object) -> np.random.Generator:
    """An explicit numpy Generator (no global state, no seeds in its place)."""
    if not isinstance(rng, np.random.Generator):
        raise invalid("rng", rng, "a numpy.random.Generator, e.g. numpy.random.default_rng(seed)")
    return rng


def check_shape(name: str, shape: object) -> tuple[int, ...]:
    """A shape: a non-negative int or a tuple of them (bools refused)."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        dims = tuple(dims)  # type: ignore[arg-type]
    except TypeError:
        raise invalid(name, shape, "an int or a tuple of ints >= 0") from None
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or d < 0:
            raise invalid(name, shape, "an int or a tuple of ints >= 0")
    return tuple(int(d) for d in dims)


def clip_rows(rows: np.ndarray, clip: float, on_excess: str, name: str) -> tuple[np.ndarray, int]:
    """Each row (last axis) brought to L2 norm <= clip, or OutOfBoundsError naming `name` with
    on_excess="reject"; returns (rows, how many were scaled down)."""
    norms = np.sqrt(np.einsum("...i,...i->...", rows, rows))
    if norms.max(initial=0.0) <= clip:  # the common case: nothing to clip
        return rows, 0
    if not np.all(np.isfinite(norms)):  # squares overflowed: scale first
        top = np.max(np.abs(rows), axis=-1)
        safe = np.where(top > 0, top, 1.0)
        norms = top * np.linalg.norm(rows / safe[..., None], axis=-1)
    over = norms > clip
    if over.any() and on_excess == "reject":
        raise OutOfBoundsError(
            f"{name} must have L2 norm <= clip_norm = {clip:g} per party and record "
            f"(on_excess='reject'); got one of norm {float(norms[over].max()):.6g}")
    factor = np.where(over, clip / np.where(over, norms, 1.0), 1.0)
    return rows * factor[..., None], int(over.sum())
