"""CdpPlan: calibration (tight | paper), ledgers, Definition 2's bounds, and the public
code's privacy flaws (notes/seed-clarifications.md, seed 000), one test each."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting import (
    PAPER_TREE_VARIANCES,
    ExactGaussianAccountant,
    calibrate_gaussian_sigma,
)
from privbandit.errors import ConfigError
from privbandit.fclub import CdpPlan, make_policy
from privbandit.fclub.algorithm import FederatedClub
from privbandit.fclub.audit import AuditWorld, TranscriptMechanism, canary_pair
from privbandit.fclub.privacy import paper_epsilon_limit
from privbandit.mechanisms.samplers import FAST

from .controls import NoNoiseClub

EPS = st.floats(0.05, 20.0)
DELTA = st.floats(1e-8, 0.3)


def plan(eps=1.0, delta=0.1, **kw):
    return CdpPlan(eps, delta, kw.pop("horizon", 1000), kw.pop("dim", 3), kw.pop("n_users", 8),
                   **kw)


@given(EPS, DELTA, st.floats(0.05, 0.95))
def test_tight_calibration_spends_exactly_the_budget(eps, delta, share):
    p = plan(eps, delta, detection_share=share)
    spent = p.spent_epsilon()
    assert spent <= eps * (1 + 1e-9)
    assert spent >= eps * (1 - 1e-6)
    # the record's mu^2 splits as asked between the per-user release and the tree
    det = p.det_event.mu**2
    tree = p.tree_event.nodes_per_record * p.tree_event.node_event.mu**2
    assert det / (det + tree) == pytest.approx(share, rel=1e-9)


@given(EPS, DELTA)
def test_paper_calibration_is_the_seed_formula_and_looser(eps, delta):
    tight, paper = plan(eps, delta), plan(eps, delta, calibration="paper")
    s = paper.tree_event.node_event.l2_sensitivity
    nu_eff = paper.nodes / (1 - paper.detection_share)
    # flaw 2 of the public code: the formula is a variance, never passed as a std
    assert paper.sigma_tree**2 == pytest.approx(
        PAPER_TREE_VARIANCES["seed000"](eps, delta, s, nu_eff), rel=1e-12)
    assert paper.sigma_tree > tight.sigma_tree
    assert paper.sigma_det / paper.sigma_tree == pytest.approx(
        tight.sigma_det / tight.sigma_tree, rel=1e-9)
    assert paper.spent_epsilon() <= eps


@given(st.floats(1e-8, 0.5), st.floats(0.0, 1.0), st.integers(2, 10**6))
def test_paper_calibration_certifies_its_whole_range_and_refuses_beyond(delta, frac, horizon):
    limit = paper_epsilon_limit(delta)
    eps = max(0.05, frac * limit)
    spent = plan(eps, delta, horizon=horizon, calibration="paper").spent_epsilon()
    assert spent <= eps * (1 + 1e-9)
    with pytest.raises(ConfigError, match=r"epsilon must be at most .*calibration='paper'"):
        plan(limit * 1.01, delta, horizon=horizon, calibration="paper")


def test_paper_calibration_names_its_range_at_large_epsilon():
    # once a bare AssertionError; the range does not depend on the horizon
    with pytest.raises(ConfigError, match=r"at most 349\.0.* got 512"):
        plan(512.0, 0.1, horizon=131_071, calibration="paper")
    assert plan(512.0, 0.1, horizon=131_071).spent_epsilon() <= 512.0 * (1 + 1e-9)


def test_tight_matches_the_accounting_layer():
    p = plan(2.0, 1e-5, detection_share=0.5)
    s = p.tree_event.node_event.l2_sensitivity
    expected = calibrate_gaussian_sigma(2.0, 1e-5, s, nodes_per_record=p.nodes) * math.sqrt(2)
    assert p.sigma_tree == pytest.approx(expected, rel=1e-12)


def test_tree_nodes_carry_sigma_tree_as_a_standard_deviation():
    p = plan(1.0, 0.1, horizon=4096, dim=4)
    tree, rng = p.new_tree(), np.random.default_rng(3)
    zero = np.zeros((5, 5))
    prefixes = np.stack([tree.add(zero, rng) for _ in range(4096)])
    # at odd steps the prefix gains exactly one fresh level-0 node
    fresh = prefixes[2::2] - prefixes[1:-1:2]
    off = fresh[:, np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]]
    assert off.std() == pytest.approx(p.sigma_tree, rel=0.05)
    assert tree.event == p.tree_event


def test_ledgers_charge_the_record_event_and_note_raw_detection():
    p = plan()
    ledger = p.open_ledger("server 0, local cluster [0, 1]")
    assert ledger.events == (p.record_event,)
    assert ledger.spent()[0] <= p.epsilon * (1 + 1e-9)
    assert ledger.summary()["not_dp_releases"] == []
    raw = plan(detection="raw").open_ledger("server 0")
    assert raw.summary()["not_dp_releases"][0].startswith("local partition computed from raw")
    acc = ExactGaussianAccountant().compose(p.record_event)
    assert acc.epsilon(p.delta) == pytest.approx(p.epsilon, rel=1e-6)


def test_matrix_radius_bounds_summed_symmetric_noise():
    p = plan(dim=5)
    rng, variance = np.random.default_rng(11), 7.0
    norms = []
    for _ in range(300):  # seven nodes of unit variance, summed: one of variance 7
        noise = sum(FAST.symmetric_gaussian(1.0, 6, rng) for _ in range(7))
        norms.append(np.linalg.norm(noise[:5, :5], 2))
        assert np.linalg.norm(noise[:5, 5]) <= p.vector_radius(variance)
    assert max(norms) <= p.matrix_radius(variance)
    assert np.mean(norms) >= 0.2 * p.matrix_radius(variance)  # not absurdly loose


@given(st.floats(0.0, 1e4), st.floats(0.0, 1e4), st.integers(0, 10**6))
def test_beta_grows_with_the_noise_and_is_finite_at_count_zero(v1, v2, count):
    p, kw = plan(), {"lam": 1.0, "noise_scale": 0.5, "theta_bound": 1.0}
    lo, hi = sorted((v1, v2))
    b_lo, b_hi = p.beta(lo, count, 4, **kw), p.beta(hi, count, 4, **kw)
    assert math.isfinite(b_lo) and b_lo > 0  # flaw 4: never NaN or complex, even at t = 0
    assert b_hi >= b_lo * (1 - 1e-12)
    assert p.beta(lo, 0, 4, **kw) <= b_lo


def test_beta_without_noise_is_the_ridge_radius():
    p, d = plan(dim=3), 3
    beta = p.beta(0.0, 100, 4, lam=1.0, noise_scale=0.5, theta_bound=1.0)
    expected = 0.5 * math.sqrt(2 * math.log(4 / p.failure) + d * math.log(1 + 100 / d)) + 1.0
    assert beta == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("eps", [0.1, 1.0, 8.0])
def test_first_round_is_well_defined(eps):
    policy = make_policy("cdp-fclub-dc", dim=3, n_users=4, n_servers=2, horizon=50, epsilon=eps,
                         delta=0.1)
    items = np.eye(3)
    action = policy.select(items, 0, 0, np.random.default_rng(0))
    assert isinstance(action, int) and 0 <= action < 3
    assert all(math.isfinite(policy.sync.beta(c)) for c in range(len(policy.sync.k_of)))


def _zero_run_uploads(algorithm=FederatedClub):
    mech = TranscriptMechanism(AuditWorld(horizon=24), algorithm)
    data = canary_pair(mech).neighbour  # all-zero observations of server 0
    out = mech(data, np.random.default_rng(5), 1)[0]
    counts = out[mech.layout["upload_count"]]
    contents = out[mech.layout["upload_content"]].reshape(len(counts), -1)
    return counts, contents, out[mech.layout["phase"]]


def test_every_uploaded_statistic_carries_noise():
    # flaw 1: with all-zero data, every upload and phase upload is pure noise, never zero
    counts, contents, phase = _zero_run_uploads()
    assert counts.sum() > 0
    assert np.all(np.abs(contents[counts > 0]).max(axis=1) > 0)
    assert np.abs(phase).max() > 0
    # ... while the positive control "no-noise" uploads the raw (zero) statistics
    counts, contents, _ = _zero_run_uploads(NoNoiseClub)
    assert np.all(contents == 0.0)


def test_moment_noise_is_not_read_from_the_gram_block():
    # flaw 3: h is the last column's first d entries, never a column overlapping H
    records = []

    class Recorder:
        def upload(self, t, server, gram, b):
            records.append((gram.copy(), b.copy()))

        def download(self, t, server):
            pass

        def phase_upload(self, *args):
            pass

    policy = make_policy("cdp-fclub-dc", dim=3, n_users=4, n_servers=2, horizon=300,
                         epsilon=1.0, delta=0.1, observer=Recorder(),
                         upload_threshold=1.0001, download_threshold=1.0001)
    rng = np.random.default_rng(2)
    for t in range(300):
        items = np.eye(3)
        a = policy.select(items, t % 4, t, rng)
        policy.update(items, t % 4, a, 0.0, t)
    grams = np.stack([g for g, _ in records])
    moments = np.stack([b for _, b in records])
    assert len(records) > 20
    for col in range(3):
        assert not np.allclose(moments, grams[:, :, col])
    corr = np.corrcoef(moments.ravel(), grams[:, :, -1].ravel())[0, 1]
    assert abs(corr) < 0.3


@given(EPS, DELTA, st.sampled_from(["tree", "honaker", "mf"]))
def test_every_mechanism_spends_exactly_the_budget(eps, delta, mechanism):
    p = plan(eps, delta, mechanism=mechanism, horizon=257)
    assert p.spent_epsilon() <= eps * (1 + 1e-9)
    assert p.spent_epsilon() == pytest.approx(eps, rel=1e-6)
    assert p.new_tree().event == p.tree_event


def test_radius_reads_the_mechanisms_own_prefix_variance():
    """mf's worst prefix carries far less noise than the tree's at the same budget, and the
    tree's is its largest popcount of nodes, not nu nodes in every prefix."""
    tree, mf = plan(horizon=131_071), plan(horizon=131_071, mechanism="mf")
    assert tree.stream_variance == pytest.approx(17 * tree.sigma_tree**2)  # popcount(2^17-1)
    assert tree.nodes == 18
    assert mf.stream_variance < 0.25 * tree.stream_variance
    assert mf.stream_variance == pytest.approx(mf.new_tree().max_prefix_variance())


@pytest.mark.parametrize("kw, name", [({"mechanism": "binary"}, "mechanism"),
                                      ({"mechanism": "mf", "calibration": "paper"},
                                       "calibration")])
def test_bad_mechanism_choices_are_named(kw, name):
    from privbandit.errors import ConfigError

    with pytest.raises(ConfigError, match=name):
        plan(**kw)


@pytest.mark.parametrize("mechanism", ["honaker", "mf"])
def test_cdp_fclub_dc_runs_with_any_mechanism_and_charges_its_event(mechanism):
    from privbandit.envs.clustered import seed000_environment
    from privbandit.runtime import run

    policy = make_policy("cdp-fclub-dc", dim=3, n_users=6, n_servers=2, horizon=300,
                         epsilon=2.0, delta=1e-5, mechanism=mechanism)
    env = seed000_environment(np.random.default_rng(0), n_users=6, n_clusters=2, dim=3,
                              n_items=4)
    result = run(policy, env, 300, 1)
    assert result.params["mechanism"] == mechanism
    assert result.privacy.details["mechanism"] == mechanism
    assert result.ledgers and all(led["epsilon_spent"] <= 2.0 * (1 + 1e-9)
                                  for led in result.ledgers)


@given(EPS, st.sampled_from(["fixed", "doubling"]), st.integers(1, 64))
def test_a_batched_schedule_counts_releases_and_spends_exactly_the_budget(eps, kind, batch):
    p, every = plan(eps, 1e-5, schedule=kind, batch=batch), plan(eps, 1e-5)
    assert p.spent_epsilon() == pytest.approx(eps, rel=1e-6)
    assert p.new_tree().horizon == p.releases.releases <= 1000
    assert p.nodes == p.tree_event.nodes_per_record <= every.nodes
    assert p.new_tree().records_per_step == p.releases.longest_batch()
    assert p.sigma_tree <= every.sigma_tree * (1 + 1e-9)  # fewer nodes: less noise per node
    assert p.statement(2, 2).details["releases"] == p.releases.releases


def test_batch_defaults_to_a_32nd_of_the_horizon_and_paper_needs_every_round():
    assert plan(schedule="fixed", horizon=6400).batch == 200
    with pytest.raises(ConfigError, match="schedule 'fixed'"):
        plan(schedule="fixed", calibration="paper")
    with pytest.raises(ConfigError, match="schedule must be one of"):
        plan(schedule="weekly")


class _Uploads:
    def __init__(self):
        self.rounds = []

    def upload(self, t, server, gram, b):
        self.rounds.append(t)

    def download(self, t, server):
        pass

    def phase_upload(self, *args):
        pass


@pytest.mark.parametrize("kind", ["fixed", "doubling"])
def test_batched_uploads_happen_at_release_rounds_only_and_each_record_once(kind):
    from privbandit.envs.clustered import seed000_environment
    from privbandit.runtime import run

    observer = _Uploads()
    policy = make_policy("cdp-fclub-dc", dim=3, n_users=6, n_servers=2, horizon=1024,
                         epsilon=64.0, delta=1e-5, schedule=kind, batch=16, observer=observer)
    env = seed000_environment(np.random.default_rng(0), n_users=6, n_clusters=2, dim=3,
                              n_items=4)
    result = run(policy, env, 1024, 1)
    releases = policy.plan.releases
    assert observer.rounds and all(releases.is_release(t) for t in observer.rounds)
    sync = policy.sync  # the last phase's streams: one step per release with records
    assert all(tree.steps <= releases.releases for tree in sync.trees)
    assert sum(len(rows) for rows in sync.unreleased) <= 16  # the last, unfinished batch
    assert result.privacy.details["schedule"] == kind


def test_noise_aware_detection_keeps_true_clusters_apart_under_heavy_noise():
    from privbandit.envs.clustered import seed000_environment
    from privbandit.runtime import run

    env = seed000_environment(np.random.default_rng(0), n_users=8, n_clusters=2, dim=3,
                              n_items=6)
    kw = dict(dim=3, n_users=8, n_servers=2, horizon=4000, epsilon=0.5, delta=1e-5)
    aware = make_policy("cdp-fclub-dc", detection="noise-aware", **kw)
    shrunk = make_policy("cdp-fclub-dc", **kw)
    run(aware, env, 4000, 3)
    run(shrunk, env, 4000, 3)
    truth, found = env.true_clusters(), aware.cluster_labels()
    for label in set(found.tolist()):  # no detected cluster mixes two true clusters
        assert len(set(truth[found == label].tolist())) == 1
    # the fixed widths read shrunken noisy estimates and pool everyone
    assert len(set(shrunk.cluster_labels().tolist())) == 1
