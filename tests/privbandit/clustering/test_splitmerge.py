"""Split/merge clustering over sets: it finds clusters, never merges on one link, and its
split test holds its level on data from one model."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.clustering import SplitMergeClustering
from privbandit.clustering.phases import merge_global, ridge_estimates
from privbandit.errors import ConfigError, ShapeError
from privbandit.kernels import cluster_error_rate, cluster_mixing_rate
from privbandit.mechanisms.publication import Publication

D = 4


def observe(rng, theta, count, noise=0.5):
    """(G, b) of `count` unit-norm items with rewards x . theta + N(0, noise^2)."""
    x = rng.standard_normal((count, theta.size))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = x @ theta + noise * rng.standard_normal(count)
    return x.T @ x, x.T @ y


def world(rng, thetas, truth, counts):
    """Per-unit Gram matrices and moments of units of the true clusters `truth`."""
    stats = [observe(rng, thetas[k], c) for k, c in zip(truth, counts, strict=True)]
    return np.stack([g for g, _ in stats]), np.stack([b for _, b in stats])


THETAS = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])


def test_splits_one_cluster_into_the_true_ones_and_moves_parties_together():
    rng = np.random.default_rng(0)
    truth = np.repeat([0, 1, 2], 8)
    gram, moments = world(rng, THETAS, truth, np.full(24, 200))
    blocks = np.arange(24) // 4  # six parties, each inside one true cluster
    found = SplitMergeClustering(D).partition(gram, moments, np.zeros(24, dtype=int),
                                              rng=rng, blocks=blocks)
    assert cluster_error_rate(truth, found.labels) == 0.0 and found.splits >= 2
    again = SplitMergeClustering(D).partition(gram, moments, found.labels, rng=rng,
                                              blocks=blocks)
    assert np.array_equal(again.labels, found.labels)  # a right partition stays
    assert (again.splits, again.merges, again.unit_moves, again.block_moves) == (0, 0, 0, 0)


def test_two_halves_of_one_cluster_merge_and_a_stray_user_moves_home():
    rng = np.random.default_rng(1)
    truth = np.repeat([0, 1], 6)
    gram, moments = world(rng, THETAS, truth, np.full(12, 400))
    start = np.array([0, 0, 0, 2, 2, 2, 1, 1, 1, 1, 1, 0])  # cluster 0 halved; user 11 astray
    found = SplitMergeClustering(D).partition(gram, moments, start, rng=rng)
    assert cluster_error_rate(truth, found.labels) == 0.0
    assert found.unit_moves >= 1  # the stray user (and maybe a half, one user at a time)
    halves = SplitMergeClustering(D).partition(gram[:6], moments[:6], start[:6], rng=rng)
    assert np.all(halves.labels == 0) and halves.merges + halves.unit_moves >= 1


def test_a_user_that_fits_both_clusters_joins_no_two_of_them():
    """The collapse of eq. 4: a local cluster with little data is close to both true
    clusters, so connected components join them through it; split/merge does not."""
    rng = np.random.default_rng(2)
    truth = np.array([0, 0, 0, 1, 1, 1, 0])
    gram, moments = world(rng, THETAS, truth, np.array([500] * 6 + [3]))
    counts = np.array([500] * 6 + [3])
    theta = ridge_estimates(gram, moments, np.ones(7))
    chained = merge_global(theta, counts, 2.0)  # the paper's global merge, alpha2 = 2
    assert cluster_mixing_rate(truth, chained) == pytest.approx(3 / 7)  # all in one
    found = SplitMergeClustering(D).partition(gram, moments, np.arange(7), rng=rng)
    assert cluster_mixing_rate(truth[:6], found.labels[:6]) == 0.0
    assert np.unique(found.labels[:6]).size == 2


@pytest.mark.parametrize("parts", [3, 20])
def test_the_bootstrap_threshold_sits_at_the_split_level_of_the_best_cut(parts):
    """On data from one model, the threshold at split_level 0.999 lies between the 0.99
    quantile of the best cut's T^2 and its mean + 5 sd (a chi-square quantile would not:
    far below for many parts), so a cluster is cut in noise about once in a thousand."""
    rng = np.random.default_rng(3)
    sm = SplitMergeClustering(D, split_level=0.999, simulations=24)
    gram, moments = world(rng, THETAS, np.zeros(parts, dtype=int), np.full(parts, 100))
    stats = (gram, moments, np.zeros(parts))
    best = []
    for _ in range(300):
        fake = (gram, gram @ THETAS[0] + np.einsum(
            "kij,kj->ki", np.linalg.cholesky(0.25 * gram), rng.standard_normal((parts, D))),
            stats[2])
        side = sm._two_means(fake)
        best.append(0.0 if side is None else sm._halves(fake, side))
    mean, sd = np.mean(best), np.std(best)
    threshold = sm._null_threshold(stats, rng)
    assert np.quantile(best, 0.99) < threshold < mean + 5 * sd
    if parts == 20:
        assert sm.split_threshold < np.quantile(best, 0.99)  # chi-square alone: too lax


def test_noise_in_the_moments_is_counted():
    rng = np.random.default_rng(4)
    truth = np.repeat([0, 1], 4)
    gram, moments = world(rng, THETAS, truth, np.full(8, 60))
    sm = SplitMergeClustering(D)
    exact = sm.partition(gram, moments, np.zeros(8, dtype=int), rng=np.random.default_rng(0))
    assert cluster_error_rate(truth, exact.labels) == 0.0
    noisy = moments + 30.0 * rng.standard_normal(moments.shape)
    told = sm.partition(gram, noisy, np.zeros(8, dtype=int), rng=np.random.default_rng(0),
                        variance=np.full(8, 900.0))
    assert told.splits == 0  # with the noise counted, nothing is proven different


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**16), st.floats(1e-9, 1e-6))
def test_evidence_is_continuous_in_the_noise_and_exact_without_it(seed, tiny):
    rng = np.random.default_rng(seed)
    gram, moments = world(rng, THETAS, np.array([0, 1, 2]), np.array([5, 50, 500]))
    sm = SplitMergeClustering(D)
    own, other = rng.standard_normal((3, D)), rng.standard_normal((3, 2, D))
    plain = sm.evidence(gram, moments, np.zeros(3), own, other)
    blurred = sm.evidence(gram, moments, np.full(3, tiny), own, other)
    np.testing.assert_allclose(blurred, plain, rtol=1e-3, atol=1e-3)
    # the log-ratio is half the drop in squared error over R^2 (Gaussian rewards)
    sse = np.einsum("nci,nij,ncj->nc", other, gram, other) - 2 * np.einsum("nci,ni->nc",
                                                                           other, moments)
    sse_own = np.einsum("ni,nij,nj->n", own, gram, own) - 2 * np.einsum("ni,ni->n", own, moments)
    np.testing.assert_allclose(plain, (sse_own[:, None] - sse) / (2 * 0.25), rtol=1e-9,
                               atol=1e-9)


@settings(max_examples=15, deadline=None)
@given(st.permutations(range(4)), st.integers(0, 2**16))
def test_labels_are_named_by_first_appearance_whatever_their_names(names, seed):
    rng = np.random.default_rng(seed)
    truth = np.repeat([0, 1], 5)
    gram, moments = world(rng, THETAS, truth, np.full(10, 80))
    start = np.array([0, 0, 1, 1, 2, 2, 3, 3, 0, 1])
    sm = SplitMergeClustering(D)
    a = sm.partition(gram, moments, start, rng=np.random.default_rng(seed))
    b = sm.partition(gram, moments, np.array(names)[start], rng=np.random.default_rng(seed))
    assert np.array_equal(a.labels, b.labels) and a.labels[0] == 0
    assert set(a.labels) == set(range(a.labels.max() + 1))
    assert np.all(np.diff(np.unique(a.labels, return_index=True)[1]) > 0)


@pytest.mark.parametrize("kwargs, match", [
    ({"merge_level": 1.0}, "merge_level must be a probability in"),
    ({"split_level": 0.9, "merge_level": 0.99}, "split_level must be at least merge_level"),
    ({"unit_evidence": -1.0}, "unit_evidence must be"),
    ({"simulations": 1.5}, "simulations"),
    ({"dim": 0}, "dim must be"),
])
def test_bad_settings_are_named(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):  # ConfigError is one
        SplitMergeClustering(**{"dim": D, **kwargs})


def test_bad_statistics_are_named():
    sm, rng = SplitMergeClustering(D), np.random.default_rng(0)
    gram, moments = np.tile(np.eye(D), (3, 1, 1)), np.zeros((3, D))
    with pytest.raises(ShapeError, match=r"gram and moments must have shapes \(n, 4, 4\)"):
        sm.partition(gram[:, :2], moments, np.zeros(3, dtype=int), rng=rng)
    with pytest.raises(ShapeError, match=r"labels must have shape \(3,\)"):
        sm.partition(gram, moments, np.zeros(2, dtype=int), rng=rng)
    with pytest.raises(ConfigError, match="labels and blocks must be integer arrays"):
        sm.partition(gram, moments, np.zeros(3), rng=rng)
    with pytest.raises(ConfigError, match="variance must be finite variances >= 0"):
        sm.partition(gram, moments, np.zeros(3, dtype=int), rng=rng, variance=[0, -1, 0])
    assert math.isclose(sm.merge_threshold, 13.2767, rel_tol=1e-4)  # chi-square_4 at 0.99


# -- proof of sameness: merges that need power (resolution), sets started alone ---------
def test_singletons_stay_alone_until_their_data_could_tell_them_apart():
    """Started alone, units with little data are consistent with anything; with a resolution
    they do not merge until the test had the power, then the true clusters form."""
    rng = np.random.default_rng(5)
    truth = np.repeat([0, 1, 2], 4)
    sm = SplitMergeClustering(D, resolution=0.3)
    few = np.full(12, 15)
    gram, moments = world(rng, THETAS, truth, few)
    lax = SplitMergeClustering(D).partition(gram, moments, np.arange(12), rng=rng)
    assert cluster_mixing_rate(truth, lax.labels) > 0  # consistency alone pools them
    alone = sm.partition(gram, moments, np.arange(12), rng=rng, counts=few)
    assert np.array_equal(alone.labels, np.arange(12)) and alone.merges == 0
    many = np.full(12, 600)
    gram, moments = world(rng, THETAS, truth, many)
    found = sm.partition(gram, moments, np.arange(12), rng=rng, counts=many)
    assert cluster_error_rate(truth, found.labels) == 0.0 and found.merges == 9


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**16), st.integers(1, 400), st.floats(0.05, 1.0))
def test_a_merge_happens_only_where_the_test_had_the_power(seed, count, resolution):
    """merge_statistic is T^2 exactly where the power reaches required_power, inf elsewhere;
    the power grows with the records and the resolution, and is 0 without records."""
    rng = np.random.default_rng(seed)
    gram, moments = world(rng, THETAS, np.array([0, 0]), np.array([count, count]))
    sm = SplitMergeClustering(D, resolution=resolution)
    a, b = (gram[0], moments[0], 0.0), (gram[1], moments[1], 0.0)
    t2, spread = sm._hotelling(a, b)
    power = sm.power(gram[0], gram[1], count, count, spread)
    got = sm.merge_statistic(a, b, (count, count))
    assert got == (t2 if power >= sm.required_power else np.inf)
    wider = SplitMergeClustering(D, resolution=2 * resolution)
    assert wider.power(gram[0], gram[1], count, count, spread) == pytest.approx(4 * power)
    more = world(rng, THETAS, np.array([0, 0]), np.array([4 * count, 4 * count]))[0]
    assert sm.power(more[0], more[1], 4 * count, 4 * count,
                    sm._hotelling((more[0], moments[0], 0.0), (more[1], moments[1], 0.0))[1]
                    ) > power
    assert sm.power(gram[0], gram[1], 0, count, spread) == 0.0
    assert SplitMergeClustering(D).merge_statistic(a, b) == t2  # no resolution: consistency


def test_required_power_is_the_noncentral_chi_square_at_the_miss():
    from scipy.stats import ncx2

    sm = SplitMergeClustering(D, resolution=0.2, miss=0.01)
    assert ncx2.cdf(sm.merge_threshold, D, sm.required_power) == pytest.approx(0.01, rel=1e-6)


def test_set_clusters_start_detect_and_name_their_clusters():
    from privbandit.clustering import SetClusters, phase_end
    from privbandit.mechanisms.tape import Tape, recording

    rng = np.random.default_rng(6)
    truth = np.repeat([0, 1], 3)
    counts = np.full(6, 500)
    gram, moments = world(rng, THETAS, truth, counts)
    together = SetClusters(SplitMergeClustering(D), 6)
    assert np.array_equal(together.labels, np.zeros(6))
    sets = SetClusters(SplitMergeClustering(D, resolution=0.3), 6, start="alone",
                       publication=Publication("server"))
    assert np.array_equal(sets.labels, np.arange(6)) and sets.last is None
    tape = Tape()
    with recording(tape):
        assert sets.detect(gram, moments, rng, counts=counts)  # changed
    (entry,) = tape.entries  # the partition, published on the tape
    assert entry.mechanism.channel == "server: clusters"
    assert np.array_equal(entry.value, sets.labels)
    assert cluster_error_rate(truth, sets.labels) == 0.0 and sets.last.merges == 4
    assert np.array_equal(sets.named(), [0, 0, 0, 3, 3, 3])
    assert np.array_equal(sets.members(4), [3, 4, 5])
    assert not sets.detect(gram, moments, rng, counts=counts)  # a right partition stays
    assert sets.phase_end(100) == phase_end(100, 1.15) == 116  # ceil(1.15 * 102) - 2


@pytest.mark.parametrize("kwargs, match", [
    ({"start": "alone"}, "start must be 'together' unless the clustering has a resolution"),
    ({"start": "apart"}, "start must be one of"),
    ({"growth": 1.0}, "growth must be a finite number > 1"),
])
def test_set_clusters_refuse_bad_settings_by_name(kwargs, match):
    from privbandit.clustering import SetClusters

    with pytest.raises(ConfigError, match=match):
        SetClusters(SplitMergeClustering(D), 4, **kwargs)


def test_a_resolution_needs_the_record_counts():
    sm, rng = SplitMergeClustering(D, resolution=0.2), np.random.default_rng(0)
    gram, moments = np.tile(np.eye(D), (3, 1, 1)), np.zeros((3, D))
    with pytest.raises(ConfigError, match="counts must be"):
        sm.partition(gram, moments, np.arange(3), rng=rng)
    with pytest.raises(ShapeError, match=r"counts must have shape \(3,\)"):
        sm.partition(gram, moments, np.arange(3), rng=rng, counts=[1, 2])
    with pytest.raises(ConfigError, match="counts must be finite record counts"):
        sm.partition(gram, moments, np.arange(3), rng=rng, counts=[1, -2, 3])
    with pytest.raises(InvalidParameterError, match="resolution must be"):
        SplitMergeClustering(D, resolution=0.0)
