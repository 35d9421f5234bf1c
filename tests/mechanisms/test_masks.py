"""Orthogonal masks (O3M): lossless masking, Haar law, validation."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting import Ledger, NotDifferentiallyPrivate, NotDifferentiallyPrivateError
from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms.errors import MaskError, ShapeError
from privbandit.mechanisms.masks import OrthogonalMask, PartyMask, sum_masked

widths_st = st.lists(st.integers(1, 6), min_size=1, max_size=5)


@st.composite
def mask_and_contexts(draw):
    widths = draw(widths_st)
    seed = draw(st.integers(0, 2**32 - 1))
    k = draw(st.integers(1, 8))
    rng = np.random.default_rng(seed)
    mask = OrthogonalMask.generate(widths, rng)
    scale = draw(st.sampled_from([1e-3, 1.0, 10.0]))
    parts = [scale * rng.uniform(-1, 1, size=(k, w)) for w in widths]
    return mask, parts


@given(mask_and_contexts())
def test_masking_is_lossless(case):
    mask, parts = case
    x = np.concatenate(parts, axis=1)
    masked = sum_masked([mask.mask(j, xj) for j, xj in enumerate(parts)])
    tol = 1e-12 * max(1.0, float(np.abs(x).max()))
    np.testing.assert_allclose(masked, x @ mask.q.T, rtol=0, atol=tol)
    np.testing.assert_allclose(mask.q.T @ masked.T, x.T, rtol=0, atol=tol)
    np.testing.assert_allclose(mask.unmask(masked), x, rtol=0, atol=tol)
    np.testing.assert_array_equal(mask.mask_all(parts), masked)  # same sums, same order


@given(mask_and_contexts())
def test_party_view_equals_generator_view(case):
    mask, parts = case
    for j, xj in enumerate(parts):
        party = mask.party(j)
        assert party.width == mask.widths[j] and party.dim == mask.dim
        np.testing.assert_array_equal(party.mask(xj), mask.mask(j, xj))


@given(mask_and_contexts())
def test_masks_preserve_norms_and_inner_products(case):
    # The documented leak: what the active party can still compute.
    mask, parts = case
    x = np.concatenate(parts, axis=1)
    y = mask.mask_all(parts)
    tol = 1e-10 * max(1.0, float(np.abs(x).max()) ** 2)
    np.testing.assert_allclose(y @ y.T, x @ x.T, rtol=0, atol=tol)
    p0 = mask.mask(0, parts[0])
    np.testing.assert_allclose(p0 @ p0.T, parts[0] @ parts[0].T, rtol=0, atol=tol)


@given(widths_st, st.integers(0, 2**32 - 1))
def test_generated_q_is_orthogonal_and_blocks_partition_it(widths, seed):
    mask = OrthogonalMask.generate(widths, np.random.default_rng(seed))
    d = sum(widths)
    assert mask.q.shape == (d, d) and mask.widths == tuple(widths)
    assert np.abs(mask.q.T @ mask.q - np.eye(d)).max() < 1e-12
    np.testing.assert_array_equal(np.hstack([mask.block(j) for j in range(len(widths))]), mask.q)
    assert [mask.block(j).shape for j in range(len(widths))] == [(d, w) for w in widths]


def test_same_seed_same_mask_bit_for_bit():
    a = OrthogonalMask.generate((3, 4, 2), np.random.default_rng(7))
    b = OrthogonalMask.generate((3, 4, 2), np.random.default_rng(7))
    c = OrthogonalMask.generate((3, 4, 2), np.random.default_rng(8))
    assert a.q.tobytes() == b.q.tobytes()
    assert not np.array_equal(a.q, c.q)


def test_q_is_haar_distributed():
    # Under Haar measure, Q[0, 0] * sqrt(d) is ~N(0, 1) for large d, E[tr Q] = 0, and
    # E[tr(Q)^2] = 1 (Diaconis & Shahshahani).  QR without the sign fix fails the
    # trace test: its diagonal is biased positive.
    rng = np.random.default_rng(0)
    d, n = 6, 3000
    traces = np.array([np.trace(OrthogonalMask.generate([d], rng).q) for _ in range(n)])
    se = traces.std() / np.sqrt(n)
    assert abs(traces.mean()) < 4 * se
    assert abs(np.mean(traces**2) - 1.0) < 0.15
    unfixed = np.array([np.trace(np.linalg.qr(rng.standard_normal((d, d)))[0])
                        for _ in range(300)])
    assert abs(unfixed.mean()) > 4 * unfixed.std() / np.sqrt(300)


def test_arrays_are_read_only_and_event_is_not_dp():
    mask = OrthogonalMask.generate((2, 3), np.random.default_rng(1))
    with pytest.raises(ValueError):
        mask.q[0, 0] = 1.0
    with pytest.raises(ValueError):
        mask.block(0)[0, 0] = 1.0
    assert isinstance(mask.event, NotDifferentiallyPrivate)
    assert mask.party(1).event == mask.event
    ledger = Ledger("party", epsilon=1.0)
    with pytest.raises(NotDifferentiallyPrivateError):
        ledger.charge(mask.event)
    ledger.note(mask.event)
    assert "orthogonal mask" in ledger.summary()["not_dp_releases"][0]


def test_batched_contexts_keep_leading_axes():
    mask = OrthogonalMask.generate((2, 3), np.random.default_rng(2))
    x = np.random.default_rng(3).standard_normal((4, 7, 2))
    out = mask.mask(0, x)
    assert out.shape == (4, 7, 5)
    np.testing.assert_allclose(out[1], x[1] @ mask.block(0).T, atol=1e-14)


_Q = np.linalg.qr(np.random.default_rng(0).standard_normal((4, 4)))[0]
_NAN_Q = _Q.copy()
_NAN_Q[1, 2] = np.nan


@pytest.mark.parametrize(
    "q, widths, error, match",
    [
        (_Q, (2, 1), MaskError, r"widths must sum to the mask dimension d=4; got \(2, 1\)"),
        (_Q, (2, 3), MaskError, r"widths must sum to the mask dimension d=4"),
        (_Q, (), MaskError, r"widths must be a non-empty sequence of integers >= 1; got \(\)"),
        (_Q, (2, 0, 2), MaskError, r"integers >= 1; got \(2, 0, 2\)"),
        (_Q, (2.0, 2), MaskError, r"integers >= 1; got \(2.0, 2\)"),
        (_Q, 4, MaskError, r"widths must be a sequence of positive integers; got 4"),
        (_Q * 1.001, (4,), MaskError, r"orthogonal to 1e-10; got max \|Q\^T Q - I\|"),
        (_Q + 1e-9, (4,), MaskError, r"orthogonal to 1e-10"),
        (_NAN_Q, (4,), MaskError, r"q must hold finite real numbers"),
        (_Q[:, :3], (3,), ShapeError, r"q must be a square d x d matrix; got shape \(4, 3\)"),
        (np.eye(2).astype(complex), (2,), MaskError, r"q must hold finite real numbers"),
    ],
)
def test_bad_masks_are_refused(q, widths, error, match):
    with pytest.raises(error, match=match):
        OrthogonalMask(q, widths)


def test_generate_refuses_bad_widths_and_rng():
    with pytest.raises(MaskError, match=r"widths must be a non-empty sequence.*got \[0\]"):
        OrthogonalMask.generate([0], np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match=r"rng must be a numpy.random.Generator"):
        OrthogonalMask.generate([2], 0)


_MASK = OrthogonalMask.generate((2, 3), np.random.default_rng(5))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: _MASK.mask(0, np.ones((4, 3))), ShapeError,
         r"contexts of party 0 must have shape \(\.\.\., 2\) \(its width d_j=2\); "
         r"got shape \(4, 3\)"),
        (lambda: _MASK.mask(1, np.ones(2)), ShapeError, r"party 1 must have shape \(\.\.\., 3\)"),
        (lambda: _MASK.mask(0, np.float64(1.0)), ShapeError, r"got shape \(\)"),
        (lambda: _MASK.mask(0, np.array([[1.0, np.nan]])), MaskError,
         r"contexts of party 0 must be finite"),
        (lambda: _MASK.mask(0, np.array([[1.0, np.inf]])), MaskError, r"must be finite"),
        (lambda: _MASK.mask(0, np.array([["a", "b"]])), ShapeError, r"must be real numbers"),
        (lambda: _MASK.mask(2, np.ones((1, 2))), MaskError,
         r"party j must be an integer in \[0, 2\); got 2"),
        (lambda: _MASK.mask(-1, np.ones((1, 2))), MaskError, r"got -1"),
        (lambda: _MASK.block(True), MaskError, r"got True"),
        (lambda: _MASK.mask_all([np.ones((1, 2))]), ShapeError,
         r"contexts must be a list of 2 arrays, one per party; got 1"),
        (lambda: _MASK.mask_all([np.ones((2, 2)), np.ones((3, 3))]), ShapeError,
         r"contexts must share their leading shape \(\.\.\., K\); got \[\(2,\), \(3,\)\]"),
        (lambda: _MASK.mask_all([np.ones((2, 2)), np.ones((2, 2))]), ShapeError,
         r"contexts of party 1 must have shape \(\.\.\., 3\)"),
        (lambda: _MASK.unmask(np.ones((3, 4))), ShapeError,
         r"contexts of the masked batch must have shape \(\.\.\., 5\)"),
        (lambda: sum_masked([]), ShapeError, r"parts must be a non-empty list"),
        (lambda: sum_masked([np.ones((2, 5)), np.ones((3, 5))]), ShapeError,
         r"same shape .* got shapes \[\(2, 5\), \(3, 5\)\]"),
        (lambda: sum_masked([np.ones((2, 5)), np.full((2, 5), np.nan)]), MaskError,
         r"parts must be finite"),
        (lambda: PartyMask(np.ones((3, 2))), MaskError, r"orthonormal columns to 1e-10"),
        (lambda: PartyMask(np.eye(3)[:2]), ShapeError, r"d >= d_j >= 1; got shape \(2, 3\)"),
        (lambda: PartyMask(np.full((3, 1), np.nan)), MaskError, r"finite real numbers"),
    ],
)
def test_bad_contexts_and_parts_are_refused_without_state_change(call, error, match):
    before = _MASK.q.copy()
    with pytest.raises(error, match=match):
        call()
    np.testing.assert_array_equal(_MASK.q, before)
    assert _MASK.widths == (2, 3)


def test_caller_arrays_are_copied_not_frozen():
    q = _Q.copy()
    mask = OrthogonalMask(q, (1, 3))
    q[0, 0] = 5.0  # the caller may keep using its array...
    assert mask.q[0, 0] != 5.0  # ...without changing the mask


def test_the_documentation_examples_run():
    doc = Path(__file__).resolve().parents[2] / "docs" / "masks_and_anonymity.md"
    blocks = [b.split("```", 1)[0] for b in doc.read_text(encoding="utf-8").split("```python")[1:]]
    assert len(blocks) == 3
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(doc), "exec"), namespace)  # noqa: S102


@given(st.integers(0, 2**32 - 1), st.sampled_from([np.nan, np.inf, -np.inf]),
       st.booleans())
def test_a_party_refuses_any_non_finite_entry_with_or_without_out(seed, bad, into):
    rng = np.random.default_rng(seed)
    mask = OrthogonalMask.generate((2, 3, 4), rng).party(1)
    items = rng.uniform(-1, 1, size=(6, 9))
    x = items[:, 2:5]  # a party's column view, as a vertical split hands it over
    out = np.empty((6, 9)) if into else None
    np.testing.assert_allclose(mask.mask(x, out=out), x @ mask.block.T, rtol=1e-12, atol=1e-15)
    items[rng.integers(6), 2 + rng.integers(3)] = bad
    with pytest.raises(MaskError, match="contexts of party 1 must be finite"):
        mask.mask(x, out=None if out is None else np.empty((6, 9)))


def test_finite_contexts_whose_masked_sum_overflows_are_masked_not_refused():
    mask = OrthogonalMask.generate((2, 2), np.random.default_rng(3)).party(0)
    x = np.full((4, 2), 1e308)
    assert not np.isfinite(mask.mask(x).sum())  # as before the one-pass check: masked
