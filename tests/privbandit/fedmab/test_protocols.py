"""GIS and SAC message counts: invariants on any graph, exact counts on small ones."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from privbandit.fedmab import (
    diameter,
    disjoint_union,
    eccentricity,
    fully_connected,
    random_connected,
    ring,
    sinks,
    star,
)
from privbandit.fedmab.graphs import hop_distances
from privbandit.fedmab.protocols import gis_trace, sac_trace


@given(st.integers(1, 25), st.floats(0.0, 0.4), st.integers(0, 2**32 - 1))
def test_gis_ends_after_diameter_slots_with_every_mean_sent_once(n, p, seed):
    g = random_connected(n, p, np.random.default_rng(seed))
    tr = gis_trace(g)
    assert tr.slots == diameter(g)
    assert tr.labels == n * (n - 1)  # each agent receives each other mean exactly once
    assert tr.req == tr.data <= tr.adv
    assert tr.link_uses <= g.n_edges * tr.slots


def test_gis_counts_on_a_star_and_a_fully_connected_graph():
    hub = gis_trace(star(5))
    # slot 1: all 8 directed ADVs, leaves ask the hub and the hub asks every leaf;
    # slot 2: the hub advertises its 4 new means to each leaf and each leaf its one
    # new mean (the hub's) back; only the leaves ask (for the 3 other leaves' means)
    assert (hub.slots, hub.adv, hub.req, hub.link_uses) == (2, 8 + 8, 8 + 4, 4 + 4)
    assert hub.labels == 5 * 4
    full = gis_trace(fully_connected(4))
    assert (full.slots, full.adv, full.req, full.link_uses) == (1, 12, 12, 6)


@given(st.lists(st.integers(1, 8), min_size=1, max_size=4), st.integers(0, 2**32 - 1))
def test_sac_delay_is_the_slowest_sink_eccentricity_and_labels_travel_shortest_paths(
    sizes, seed
):
    rng = np.random.default_rng(seed)
    g = disjoint_union([random_connected(s, 0.3, rng) for s in sizes])
    tr, per_component = sac_trace(g)
    heads = sinks(g)
    ecc = eccentricity(g)
    assert per_component.tolist() == ecc[heads].tolist()
    assert tr.slots == ecc[heads].max()
    dist = hop_distances(g)[heads]
    assert tr.labels == int(np.where(np.isfinite(dist), dist, 0).sum())  # one hop per slot


def test_sac_counts_on_a_star_and_a_ring():
    tr, _ = sac_trace(star(6))
    assert (tr.slots, tr.data, tr.link_uses) == (1, 5, 5)
    tr, _ = sac_trace(ring(6))  # sink 0; branches 1-2-3 and 5-4 (3 joins 2 as lowest index)
    assert tr.slots == 3
    assert tr.data == (3 + 2 + 1) + (2 + 1)
