"""Mask attacks: known-plaintext, known-sample PCA, and what leaks with no pair."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits.attacks.masks import (
    gram_leakage,
    known_plaintext,
    pca_curve,
    pca_recovery,
    recovery_curve,
    skewed_contexts,
)
from privbandit.mechanisms.errors import ShapeError
from privbandit.mechanisms.masks import OrthogonalMask


@pytest.mark.parametrize("method", ["lstsq", "procrustes"])
def test_three_pairs_recover_a_width_three_block_exactly(method):
    curve = recovery_curve(3, 10, [1, 2, 3, 4], np.random.default_rng(0), method=method)
    errors = [r.block_error for r in curve]
    assert errors[2] < 1e-9 and errors[3] < 1e-9
    assert min(errors[:2]) > 1e-3  # fewer pairs than d_j: not identifiable
    assert curve[2].context_error < 1e-9 and curve[2].subspace_error < 1e-9


@settings(max_examples=25)
@given(width=st.integers(1, 5), extra=st.integers(0, 5), more=st.integers(0, 3),
       seed=st.integers(0, 2**32 - 1))
def test_d_j_generic_pairs_always_suffice(width, extra, more, seed):
    rng = np.random.default_rng(seed)
    mask = OrthogonalMask.generate((width, extra) if extra else (width,), rng)
    x = rng.standard_normal((width + more, width))
    r = known_plaintext(x, mask.mask(0, x)).scored(mask.block(0))
    assert r.block_error < 1e-8


def test_pca_recovers_the_span_at_once_and_the_block_with_rounds():
    curve = pca_curve(3, 8, [20, 200000], np.random.default_rng(1))
    assert all(r.subspace_error < 1e-9 for r in curve)
    assert curve[1].block_error < 0.05 < curve[0].block_error


def test_pca_cannot_orient_an_isotropic_symmetric_population():
    rng = np.random.default_rng(2)
    mask = OrthogonalMask.generate((3, 3), rng)
    x = rng.standard_normal((20000, 3))
    r = pca_recovery(mask.mask(0, x), rng.standard_normal((20000, 3))).scored(mask.block(0))
    assert r.subspace_error < 1e-9 and r.block_error > 0.1


def test_norms_and_inner_products_leak_exactly():
    rng = np.random.default_rng(3)
    mask = OrthogonalMask.generate((4, 6), rng)
    x = skewed_contexts(30, 4, rng)
    leak = gram_leakage(mask.mask(0, x))
    assert leak.error(x) < 1e-12
    assert np.allclose(leak.norms, np.linalg.norm(x, axis=1), atol=1e-12)
    y = leak.contexts_up_to_rotation(4)  # = x R for an unknown orthogonal R
    r = np.linalg.lstsq(x, y, rcond=None)[0]
    assert np.allclose(r.T @ r, np.eye(4), atol=1e-8) and np.allclose(x @ r, y, atol=1e-8)


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: known_plaintext(np.ones((3, 2)), np.ones((2, 5))), ShapeError,
         r"masked must have shape \(3, d\) with d >= d_j=2"),
        (lambda: known_plaintext(np.ones(3), np.ones((3, 5))), ShapeError,
         r"contexts must be a matrix of shape \(n, width\); got shape \(3,\)"),
        (lambda: known_plaintext(np.ones((3, 2)), np.ones((3, 5)), "svd"), InvalidParameterError,
         r"method must be one of \('lstsq', 'procrustes'\); got 'svd'"),
        (lambda: known_plaintext(np.full((3, 2), np.nan), np.ones((3, 5))),
         InvalidParameterError, "contexts must be an array of finite numbers"),
        (lambda: pca_recovery(np.ones((1, 5)), np.ones((4, 2))), ShapeError,
         r"need >= 2 rows of traffic"),
        (lambda: recovery_curve(3, 2, [3], np.random.default_rng(0)), InvalidParameterError,
         "dim must be an integer >= width=3; got 2"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
