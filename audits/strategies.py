"""Hypothesis strategies for testing privacy code against its guarantees.

Needs Hypothesis, a test dependency: ``pip install "privbandit[test]"``.  No
other module of privbandit imports this one, so the library runs without it.

Privacy parameters.  Valid values are finite and inside the stated range;
every *invalid* value is refused by `privbandit.accounting.validation` with
`privbandit.accounting.errors.InvalidParameterError` (a ValueError) whose message starts
with the parameter's name:

    epsilons(), deltas(allow_zero=False), sigmas(), sensitivities(), seeds()
    invalid_positives() (alias invalid_epsilons, invalid_sigmas),
    invalid_deltas(allow_zero=True), invalid_counts(minimum=1)

Privacy events (`privbandit.accounting.events`):

    laplace_events(), gaussian_events(), not_dp_events(),
    privacy_events(leaves=None, max_leaves=6, max_count=16)

Bounded data: `bounded_vectors(dim, norm_bound)`, `contexts(arms, dim,
norm_bound)`, `rewards(shape, lo, hi)`, `gram_records(dim, norm_bound)`.

Neighbouring pairs (`privbandit.audits.NeighbouringPair`), under each relation of
docs/privacy_relations.md, for any record strategy and for vectors, Gram matrices
and rewards:

    neighbouring_pairs(records, size, relation)
    vector_pairs(dim, size, relation, norm_bound=1.0)
    matrix_pairs(dim, size, relation, norm_bound=1.0)
    reward_pairs(size, relation, lo=0.0, hi=1.0)

Audits inside `@given`: decorate the test with `@audit_settings` (or load the
profile "privbandit-audits": `settings.load_profile(AUDIT_PROFILE)`, or
`pytest --hypothesis-profile=privbandit-audits` once this module is
imported).  No deadline, 5 examples, and no shrinking: a failing audit is
reported on the first example that fails, not after one audit per shrink
step.

Orthogonal-mask partitions (`privbandit.mechanisms.masks`): `mask_widths()`,
`invalid_mask_widths()` (refused with MaskError), `orthogonal_masks(widths)`,
`masks_with_contexts(arms, norm_bound)`.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

try:
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as err:  # without the test extra: say which one to install
    raise ImportError(
        "privbandit.audits.strategies needs Hypothesis, a test dependency: "
        'pip install "privbandit[test]" (or pip install hypothesis)'
    ) from err

from privbandit.accounting.errors import invalid
from privbandit.accounting.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    NotDifferentiallyPrivate,
    RepeatedEvent,
    TreeAggregationEvent,
)
from privbandit.accounting.validation import check_count, check_delta, check_positive
from privbandit.mechanisms._checks import check_interval
from privbandit.mechanisms.masks import OrthogonalMask

from .claims import NeighbouringPair

SearchStrategy = st.SearchStrategy

# -- running audits inside @given -----------------------------------------------------------
AUDIT_PROFILE = "privbandit-audits"
audit_settings = settings(
    deadline=None,  # one audit draws thousands of runs: far over the 200 ms default
    max_examples=5,
    # No shrinking: each attempt to shrink a failing example runs a whole audit (one user
    # saw 76 s), and a refuted claim is as clear on the first failing example.
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target),
    suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large),
    print_blob=True,  # the failure's reproduction blob, for @reproduce_failure
    report_multiple_bugs=False,  # stop at the first refuted claim
)
settings.register_profile(AUDIT_PROFILE, audit_settings)

# -- neighbouring relations (docs/privacy_relations.md) -------------------------------------------
RECORD_LEVEL = "record-level"  # fixed-length stream: one step's record present vs absent (zero)
ADD_REMOVE = "add/remove"  # one record removed: n records vs n - 1
REPLACE_ONE = "replace-one"  # one record replaced by another in-bound record
AGENT_LEVEL = "agent-level"  # one reward of an agent's history replaced (seed 002)
RELATIONS = (RECORD_LEVEL, ADD_REMOVE, REPLACE_ONE, AGENT_LEVEL)


# -- privacy parameters ---------------------------------------------------------------------
def _log_uniform(name: str, lo: float, hi: float) -> SearchStrategy:
    """Floats in [lo, hi] spread evenly over orders of magnitude, ends included."""
    if not lo <= hi:
        raise invalid(name, (lo, hi), "a range with min_value <= max_value")
    if lo == hi:
        return st.just(lo)
    inner = st.floats(math.log(lo), math.log(hi)).map(lambda t: min(hi, max(lo, math.exp(t))))
    return st.one_of(st.sampled_from((lo, hi)), inner)


def epsilons(min_value: float = 1e-3, max_value: float = 50.0) -> SearchStrategy:
    """Valid epsilons: finite floats in [min_value, max_value] (> 0), log-uniform."""
    return _log_uniform("epsilons", check_positive("min_value", min_value),
                        check_positive("max_value", max_value))


def deltas(min_value: float = 1e-12, max_value: float = 0.1, *,
           allow_zero: bool = False) -> SearchStrategy:
    """Valid deltas in [min_value, max_value] inside (0, 1), log-uniform; 0.0 too if allowed.

    Gaussian releases need delta > 0 (the default); pure-DP claims use 0.
    """
    lo = check_delta("min_value", min_value)
    hi = check_delta("max_value", max_value)
    if lo <= 0.0:
        raise invalid("min_value", min_value, "a number in (0, 1) (use allow_zero for 0)")
    values = _log_uniform("deltas", lo, hi)
    return st.one_of(st.just(0.0), values) if allow_zero else values


def sigmas(min_value: float = 1e-3, max_value: float = 1e3) -> SearchStrategy:
    """Valid noise standard deviations: finite floats in [min_value, max_value] (> 0)."""
    return _log_uniform("sigmas", check_positive("min_value", min_value),
                        check_positive("max_value", max_value))


def sensitivities(min_value: float = 1e-3, max_value: float = 1e3) -> SearchStrategy:
    """Valid sensitivities (or noise scales): finite floats in [min_value, max_value]."""
    return _log_uniform("sensitivities", check_positive("min_value", min_value),
                        check_positive("max_value", max_value))


def seeds() -> SearchStrategy:
    """Seeds for `numpy.random.default_rng` (so a failing example names its seed)."""
    return st.integers(0, 2**63 - 1)


# Values no real-number validator accepts, whatever the range.
_NOT_REAL = st.one_of(
    st.none(), st.booleans(), st.sampled_from([np.True_, np.False_]), st.text(max_size=4),
    st.complex_numbers(allow_nan=False, allow_infinity=False, min_magnitude=1e-3),
    st.lists(st.floats(0.1, 1.0), min_size=1, max_size=2),
    st.just(np.array([1.0])),
)
_NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf, np.float64("nan")])


def invalid_positives() -> SearchStrategy:
    """Values `check_positive` refuses: <= 0, NaN, +-inf, bools, non-numbers.

    Anything constructed from one raises InvalidParameterError naming the
    parameter (epsilon, sigma, scale, l2_sensitivity, ...).
    """
    return st.one_of(
        st.floats(max_value=0.0, allow_nan=False),
        st.integers(max_value=0),
        st.floats(max_value=0.0, allow_nan=False).map(np.float64),
        _NON_FINITE, _NOT_REAL,
    )


invalid_epsilons = invalid_positives
invalid_sigmas = invalid_positives


def invalid_deltas(*, allow_zero: bool = True) -> SearchStrategy:
    """Values `check_delta` refuses: < 0, >= 1, NaN, bools, non-numbers (and 0 if not allowed).

    With allow_zero=False the zeros are invalid too: what a Gaussian
    calibration (`from_privacy`, `calibrate_gaussian_sigma`) refuses.
    """
    bad = st.one_of(
        st.floats(max_value=0.0, exclude_max=True),
        st.floats(min_value=1.0),
        st.integers(max_value=-1), st.integers(min_value=1),
        _NON_FINITE, _NOT_REAL,
    )
    return bad if allow_zero else st.one_of(st.sampled_from([0.0, -0.0, 0]), bad)


def invalid_counts(minimum: int = 1) -> SearchStrategy:
    """Values `check_count(name, value, minimum)` refuses: smaller ints, floats, bools, others."""
    minimum = int(minimum)
    return st.one_of(
        st.integers(max_value=minimum - 1),
        st.floats(allow_nan=True), st.just(np.float64(3.0)),
        st.none(), st.booleans(), st.text(max_size=3),
    )


# -- privacy events -------------------------------------------------------------------------
def laplace_events(scales: "SearchStrategy | None" = None,
                   l1_sensitivities: "SearchStrategy | None" = None) -> SearchStrategy:
    """LaplaceEvent(scale, l1_sensitivity) with valid parameters."""
    return st.builds(LaplaceEvent, scales or sensitivities(), l1_sensitivities or sensitivities())


def gaussian_events(sigma: "SearchStrategy | None" = None,
                    l2_sensitivities: "SearchStrategy | None" = None) -> SearchStrategy:
    """GaussianEvent(sigma, l2_sensitivity) with valid parameters."""
    return st.builds(GaussianEvent, sigma or sigmas(), l2_sensitivities or sensitivities())


def not_dp_events() -> SearchStrategy:
    """NotDifferentiallyPrivate(reason) with a non-blank reason."""
    reasons = st.text(min_size=1, max_size=30).filter(lambda s: s.strip())
    return st.builds(NotDifferentiallyPrivate, reasons)


def privacy_events(leaves: "SearchStrategy | None" = None, *, max_leaves: int = 6,
                   max_count: int = 16) -> SearchStrategy:
    """Events built from `leaves` by composition, repetition and tree aggregation.

    `leaves` defaults to Laplace and Gaussian events; pass `laplace_events()`
    for what a pure-DP accountant supports, `gaussian_events()` for the exact
    Gaussian one, or include `not_dp_events()` to test refusals.
    """
    max_leaves = check_count("max_leaves", max_leaves)
    max_count = check_count("max_count", max_count)
    base = leaves if leaves is not None else st.one_of(laplace_events(), gaussian_events())
    counts = st.integers(1, max_count)

    def extend(inner: SearchStrategy) -> SearchStrategy:
        return st.one_of(
            st.builds(ComposedEvent, st.lists(inner, min_size=1, max_size=4).map(tuple)),
            st.builds(RepeatedEvent, inner, counts),
            st.builds(TreeAggregationEvent, inner, counts),
        )

    return st.recursive(base, extend, max_leaves=max_leaves)


# -- bounded data ---------------------------------------------------------------------------
# Radii stop this far (relative) below the bound, so that every way of computing the
# norm (np.linalg.norm of one row or along an axis, hypot, ...) finds it within bounds.
_NORM_MARGIN = 1e-12


def _within_ball(direction: np.ndarray, radius: float, bound: float) -> np.ndarray:
    norm = float(np.linalg.norm(direction))
    if norm < 1e-100:  # (near) zero direction: the zero vector
        return np.zeros_like(direction)
    return direction * (radius * bound * (1.0 - _NORM_MARGIN) / norm)


def bounded_vectors(dim: int, norm_bound: float = 1.0) -> SearchStrategy:
    """float64 vectors (dim,) with L2 norm <= norm_bound, often at it (the worst case).

    "At it" means within 1e-12 (relative) below, so that rounding in any norm
    computation never puts a vector outside the bound.
    """
    dim = check_count("dim", dim)
    bound = check_positive("norm_bound", norm_bound)
    directions = hnp.arrays(np.float64, dim,
                            elements=st.floats(-1.0, 1.0, allow_subnormal=False))
    radii = st.one_of(st.just(1.0), st.floats(0.0, 1.0))
    return st.builds(_within_ball, directions, radii, st.just(bound))


def contexts(arms: int, dim: int, norm_bound: float = 1.0) -> SearchStrategy:
    """Context sets (arms, dim): one row per arm, every row of L2 norm <= norm_bound."""
    arms = check_count("arms", arms)
    rows = bounded_vectors(dim, norm_bound)
    return st.lists(rows, min_size=arms, max_size=arms).map(np.stack)


def rewards(shape: "int | tuple", lo: float = 0.0, hi: float = 1.0) -> SearchStrategy:
    """float64 reward arrays of `shape` with every entry in [lo, hi] (ends included)."""
    lo, hi = check_interval(lo, hi)
    return hnp.arrays(np.float64, shape, elements=st.floats(lo, hi))


def _outer(x: np.ndarray) -> np.ndarray:
    return np.outer(x, x)


def gram_records(dim: int, norm_bound: float = 1.0) -> SearchStrategy:
    """x x^T (dim, dim) for ||x||_2 <= norm_bound: symmetric PSD, Frobenius <= norm_bound**2."""
    return bounded_vectors(dim, norm_bound).map(_outer)


# -- neighbouring pairs ---------------------------------------------------------------------
def _check_size(size: Any, relation: str) -> "tuple[int, ...] | SearchStrategy":
    if isinstance(size, SearchStrategy):
        return size
    dims = (size,) if isinstance(size, (int, np.integer)) and not isinstance(size, bool) else size
    try:
        dims = tuple(check_count("size", d) for d in dims)
    except (TypeError, ValueError):
        raise invalid("size", size, "an int >= 1, a tuple of them, or a strategy") from None
    if not dims or (relation == ADD_REMOVE and len(dims) != 1):
        allowed = "an int >= 1" if relation == ADD_REMOVE else "an int >= 1 or a tuple of them"
        raise invalid("size", size, f"{allowed} for relation {relation!r}")
    return dims


def _same_shape(arrays: list[np.ndarray]) -> None:
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise invalid("records", sorted(shapes), "a strategy whose records all have one shape")


def _stack(records: list, shape: tuple[int, ...]) -> np.ndarray:
    arrays = [np.asarray(r) for r in records]
    _same_shape(arrays)
    return np.stack(arrays).reshape(*shape, *arrays[0].shape)


def _another(draw, records: SearchStrategy, keep, like: np.ndarray) -> np.ndarray:
    """One more record, of the dataset's record shape, for which `keep(record)` holds."""
    record = np.asarray(draw(records.filter(lambda r: keep(np.asarray(r)))))
    _same_shape([record, like])
    return record


def _index_text(index: tuple[int, ...]) -> str:
    return str(index[0]) if len(index) == 1 else str(index)


@st.composite
def _neighbouring(draw, records: SearchStrategy, size, relation: str) -> NeighbouringPair:
    shape = draw(size) if isinstance(size, SearchStrategy) else size
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if not shape or min(shape) < 1 or (relation == ADD_REMOVE and len(shape) != 1):
        raise invalid("size", shape, f"positive sizes (one int for {ADD_REMOVE!r})")
    n = math.prod(shape)
    data = _stack(draw(st.lists(records, min_size=n, max_size=n)), shape)
    index = tuple(draw(st.integers(0, k - 1)) for k in shape)
    where = f"record {_index_text(index)} of {n}"
    if relation == ADD_REMOVE:
        return NeighbouringPair(data, np.delete(data, index[0], axis=0), relation,
                                f"{where} removed")
    if relation == RECORD_LEVEL:
        data[index] = _another(draw, records, lambda r: np.any(r != 0), data[index])
        neighbour = data.copy()
        neighbour[index] = 0.0
        return NeighbouringPair(data, neighbour, relation,
                                f"{where} present in the dataset, absent (zero) in the neighbour")
    old = data[index].copy()
    neighbour = data.copy()
    neighbour[index] = _another(draw, records, lambda r: not np.array_equal(r, old), old)
    return NeighbouringPair(data, neighbour, relation, f"{where} replaced")


def neighbouring_pairs(records: SearchStrategy, size: Any, relation: str) -> SearchStrategy:
    """Pairs of datasets of `size` records drawn from `records`, neighbours under `relation`.

    Records keep their dtype (integers stay integers: bins, categories).
    `size`: the number of records (int), a grid of them (tuple, e.g. (arms,
    pulls) for an agent's reward history), or a strategy for either.  The
    dataset has shape (*size, *record_shape); the relations (docs/privacy_relations.md):

    - "record-level": a stream of fixed length; the record at one step is
      present (non-zero) in the dataset and absent (zero) in the neighbour --
      the tree privatizer's unit (difference: one record).
    - "add/remove": the neighbour has one record fewer (size must be an int).
    - "replace-one": one record replaced by a different one from `records`
      (difference: up to twice a record's bound).
    - "agent-level": seed 002's "one reward in an agent's history": one entry
      of the history replaced (same operation as replace-one, stated unit).
    """
    if not isinstance(records, SearchStrategy):
        raise invalid("records", records, "a Hypothesis strategy drawing one record")
    if relation not in RELATIONS:
        raise invalid("relation", relation, "one of " + ", ".join(map(repr, RELATIONS)))
    return _neighbouring(records, _check_size(size, relation), relation)


def vector_pairs(dim: int, size: Any, relation: str, norm_bound: float = 1.0) -> SearchStrategy:
    """Neighbouring datasets of vectors (dim,), L2 norm <= norm_bound; see `neighbouring_pairs`."""
    return neighbouring_pairs(bounded_vectors(dim, norm_bound), size, relation)


def matrix_pairs(dim: int, size: Any, relation: str, norm_bound: float = 1.0) -> SearchStrategy:
    """Neighbouring datasets of x x^T records, ||x|| <= norm_bound; see `neighbouring_pairs`."""
    return neighbouring_pairs(gram_records(dim, norm_bound), size, relation)


def reward_pairs(size: Any, relation: str, lo: float = 0.0, hi: float = 1.0) -> SearchStrategy:
    """Neighbouring reward sequences (or (arms, pulls) histories) in [lo, hi].

    E.g. `reward_pairs((3, 10), "agent-level")` for `LaplaceMeans(eps, 0, 1, 10)`.
    """
    lo, hi = check_interval(lo, hi)
    return neighbouring_pairs(st.floats(lo, hi), size, relation)


# -- orthogonal-mask partitions -------------------------------------------------------------
def mask_widths(min_parties: int = 1, max_parties: int = 4, max_width: int = 4) -> SearchStrategy:
    """Valid feature partitions: tuples of min..max_parties widths, each in 1..max_width."""
    lo = check_count("min_parties", min_parties)
    hi = check_count("max_parties", max_parties, minimum=lo)
    widths = st.integers(1, check_count("max_width", max_width))
    return st.lists(widths, min_size=lo, max_size=hi).map(tuple)


def invalid_mask_widths() -> SearchStrategy:
    """Partitions `OrthogonalMask.generate` refuses with MaskError (empty, < 1, non-integer)."""
    some = st.lists(st.integers(1, 4), max_size=3)
    return st.one_of(
        st.just(()),
        st.tuples(some, st.integers(max_value=0), some).map(lambda t: (*t[0], t[1], *t[2])),
        st.lists(st.floats(1.0, 4.0), min_size=1, max_size=3),
        st.lists(st.booleans(), min_size=1, max_size=3),
        st.none(), st.integers(), st.text(min_size=1, max_size=3),
    )


def orthogonal_masks(widths: "SearchStrategy | None" = None) -> SearchStrategy:
    """Haar-random `OrthogonalMask`s over partitions from `widths` (default `mask_widths()`)."""
    return st.builds(lambda w, seed: OrthogonalMask.generate(w, np.random.default_rng(seed)),
                     widths if widths is not None else mask_widths(), seeds())


@st.composite
def masks_with_contexts(draw, arms: int = 3, norm_bound: float = 1.0,
                        widths: "SearchStrategy | None" = None):
    """(mask, parts): a mask and each party's contexts (arms, d_j), full rows of norm <= bound."""
    mask = draw(orthogonal_masks(widths))
    full = draw(contexts(arms, mask.dim, norm_bound))
    return mask, np.split(full, np.cumsum(mask.widths)[:-1], axis=1)
