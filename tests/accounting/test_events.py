"""The event algebra: immutable values, equal and hashable by value, flattened by multiplicity."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    NotDifferentiallyPrivate,
    RepeatedEvent,
    TreeAggregationEvent,
)
from privbandit.accounting.events import flatten

leaves = st.one_of(
    st.builds(LaplaceEvent, st.floats(0.1, 10.0), st.floats(0.1, 10.0)),
    st.builds(GaussianEvent, st.floats(0.1, 10.0), st.floats(0.1, 10.0)),
)


@given(leaf=leaves)
def test_equal_and_hashable_by_value(leaf):
    twin = type(leaf)(*dataclasses.astuple(leaf))
    assert twin == leaf and hash(twin) == hash(leaf)
    assert RepeatedEvent(leaf, 3) == RepeatedEvent(twin, 3)
    assert ComposedEvent([leaf, twin]) == ComposedEvent((twin, leaf))


def test_events_are_frozen():
    event = GaussianEvent(2.0, 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.sigma = 0.1  # type: ignore[misc]


def test_parameters_are_normalised_to_float_and_derived_values_follow():
    lap, gauss = LaplaceEvent(4, 2), GaussianEvent(4, 2)
    assert isinstance(lap.scale, float) and lap.pure_epsilon == 0.5
    assert gauss.mu == 0.5


@given(leaf=leaves, a=st.integers(1, 6), b=st.integers(1, 6), c=st.integers(1, 6))
def test_flatten_multiplies_counts_and_merges_equal_leaves(leaf, a, b, c):
    other = NotDifferentiallyPrivate("k-anonymity")
    nested = ComposedEvent((
        RepeatedEvent(TreeAggregationEvent(leaf, b), a),
        leaf,
        RepeatedEvent(ComposedEvent((leaf, other)), c),
    ))
    assert dict(flatten(nested)) == {leaf: a * b + 1 + c, other: c}


def test_tree_is_its_nodes_repeated():
    node = GaussianEvent(3.0, 1.0)
    assert TreeAggregationEvent(node, 10).as_repeated() == RepeatedEvent(node, 10)
