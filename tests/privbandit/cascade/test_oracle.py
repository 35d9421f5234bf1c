"""The exact top-K oracle: brute force over ordered K-lists, ties, and the env's top_k."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.cascade import list_value, top_k_list
from privbandit.cascade.oracle import observed_positions
from privbandit.envs import top_k
from privbandit.errors import RewardError

weights_st = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=7)


@given(weights_st, st.data())
def test_oracle_equals_brute_force_over_ordered_lists(values, data):
    w = np.array(values)
    k = data.draw(st.integers(1, min(4, w.size)))
    best = max(list_value(w, np.array(a)) for a in itertools.permutations(range(w.size), k))
    chosen = top_k_list(w, k)
    assert chosen.shape == (k,) and np.unique(chosen).size == k
    assert list_value(w, chosen) == pytest.approx(best, abs=1e-12)


@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=1, max_size=30), st.data())
def test_oracle_matches_stable_sort_with_ties(values, data):
    w = np.array(values)
    k = data.draw(st.integers(1, w.size))
    np.testing.assert_array_equal(top_k_list(w, k), top_k(w, k))


def test_oracle_lists_items_by_decreasing_weight_lowest_index_on_ties():
    w = np.array([0.2, 1.0, 0.7, 1.0, 0.7, 0.1])
    np.testing.assert_array_equal(top_k_list(w, 4), [1, 3, 2, 4])
    np.testing.assert_array_equal(top_k_list(w, 3), [1, 3, 2])


def test_list_value_is_the_click_probability_of_the_list():
    w = np.array([0.5, 0.0, 0.2])
    assert list_value(w, np.array([0, 2])) == pytest.approx(1 - 0.5 * 0.8)


@pytest.mark.parametrize(("feedback", "expected"), [(0, 1), (2, 3), (3, 4), (4, 4)])
def test_examined_positions_follow_the_first_click(feedback, expected):
    assert observed_positions(feedback, 4) == expected


@pytest.mark.parametrize("feedback", [-1, 5, 1.5, True, None])
def test_feedback_outside_the_list_is_refused(feedback):
    with pytest.raises(RewardError, match="feedback must be the first-click position"):
        observed_positions(feedback, 4)
