"""`RecommendationModels`: deferred resets give the bits of resets done at once."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.fclub.models import RecommendationModels, inverse, logdet, logdets
from privbandit.kernels import sherman_morrison

DIM, ROWS = 4, 5


def _gram(rng: np.random.Generator, scale: float) -> np.ndarray:
    a = rng.standard_normal((DIM, 2 * DIM))
    return a @ a.T * scale + np.eye(DIM)


# one step: ("set", rows, given) resets rows (given: inv and ln det passed in), ("add", row)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.lists(st.integers(0, ROWS - 1), min_size=1, max_size=3,
                                           unique=True), st.booleans()),
        st.tuples(st.just("add"), st.integers(0, ROWS - 1)),
    ),
    min_size=1, max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(steps=steps, seed=st.integers(0, 2**32 - 1))
def test_deferred_resets_match_resets_done_at_once(steps, seed):
    rng = np.random.default_rng(seed)
    models = RecommendationModels(ROWS, DIM)
    inv = np.zeros((ROWS, DIM, DIM))  # the eager reference
    ld, b = np.zeros(ROWS), np.zeros((ROWS, DIM))
    for step in steps:
        if step[0] == "set":
            rows, given_values = np.array(step[1]), step[2]
            grams = np.stack([_gram(rng, 10.0 ** rng.uniform(-2, 3)) for _ in rows])
            moments = rng.standard_normal((rows.size, DIM))
            for row, gram, moment in zip(rows, grams, moments, strict=True):
                inv[row], ld[row], b[row] = inverse(gram), logdet(gram), moment
            extra = (inverse(grams), logdets(grams)) if given_values else ()
            if rows.size == 1 and rng.random() < 0.5:  # one row, as an int
                models.set(int(rows[0]), grams[0], moments[0], 3,
                           *(e[0] for e in extra))
            else:
                models.set(rows, grams, moments, np.full(rows.size, 3), *extra)
        else:
            row = step[1]
            x = rng.standard_normal(DIM) / 3
            models.add(row, x, 0.5)
            ld[row] += math.log1p(sherman_morrison(inv[row], x))  # the same rank-one step
            b[row] += 0.5 * x
        if rng.random() < 0.3:  # read between steps, sometimes
            assert np.array_equal(models.inv, inv)
    assert np.array_equal(models.logdet, ld)
    assert np.array_equal(models.inv, inv)
    assert np.array_equal(models.b, b)


def test_scores_read_the_latest_reset():
    rng = np.random.default_rng(3)
    models = RecommendationModels(2, DIM)
    gram = _gram(rng, 1.0)
    models.set(1, gram, np.ones(DIM), 1)
    models.set(1, 2 * gram, np.ones(DIM), 2)  # reset twice before a read: the last counts
    items = rng.standard_normal((3, DIM))
    inv = inverse(2 * gram)
    expected = items @ (inv @ np.ones(DIM)) + 0.5 * np.sqrt(
        np.einsum("kd,kd->k", items @ inv, items))
    assert np.allclose(models.scores(1, items, 0.5), expected)
    assert models.logdet[1] == logdet(2 * gram)


def test_rebinding_an_array_keeps_pending_resets():
    rng = np.random.default_rng(4)
    models = RecommendationModels(2, DIM)
    gram = _gram(rng, 1.0)
    models.set(0, gram, np.zeros(DIM), 1)
    stacked = np.zeros((3, 2, DIM, DIM))
    stacked[1] = models.inv  # what a lockstep driver does: copy, then bind
    models.inv = stacked[1]
    assert np.array_equal(models.inv[0], inverse(gram))
    assert models.logdet[0] == logdet(gram)


def test_single_logdet_has_the_bits_of_the_batch():
    rng = np.random.default_rng(5)
    for scale in (1e-300, 1e-150, 1e-3, 1.0, 1e3, 1e150, 1e300):
        gram = _gram(rng, scale) * (1.0 if scale < 1e100 else scale)
        assert logdet(gram) == logdets(gram[None])[0] or (
            math.isnan(logdet(gram)) and math.isnan(logdets(gram[None])[0]))
    assert logdet(-np.eye(DIM)) == -math.inf
