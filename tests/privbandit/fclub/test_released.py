"""CDP-FCLUB-DC acting on released statistics: reward-only releases, public Gram matrices."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from privbandit.auditing.end_to_end import audit_entry
from privbandit.auditing.target import world_config
from privbandit.errors import ConfigError
from privbandit.fclub.released import ReleasedFederatedClub, ReleasedPlan
from privbandit.registry import get_algorithm
from privbandit.runtime import play_setup, seed_streams
from privbandit.schema import defaults

NAME = "cdp-fclub-dc"


def small_config(name, epsilon, **params):
    entry = get_algorithm(name)
    return {**entry.defaults, **params, "epsilon": epsilon, "horizon": 1024,
            "environment": defaults(entry.environment)}


def _config(epsilon=1.0, **params):
    return {**small_config(NAME, epsilon, **params), "horizon": 600}


def test_the_default_entry_releases_only_the_flipped_reward_and_public_grams():
    """Forced replay: the Gram releases are identical, the flipped round moves one release."""
    report = audit_entry(NAME, _config(1.0), 3, flips=(4, 250))
    assert report.verdict == "consistent", report.describe()
    assert [f.differing for f in report.findings] == [1, 1]
    assert all(f.diverged == "" for f in report.findings)


class RawDrivenClub(ReleasedFederatedClub):
    """A control that breaks the billboard rule: the user's last raw reward tilts its
    choice, yet its records are still released with their features marked public."""

    def select(self, items, user, t, rng):
        choice = super().select(items, user, t, rng)
        last = getattr(self, "_last", {}).get(user)
        return choice if last is None or last < 0.5 else int(np.argmin(items[:, 0]))

    def update(self, items, user, action, feedback, t):
        self.__dict__.setdefault("_last", {})[user] = float(feedback)
        super().update(items, user, action, feedback, t)


def _raw_driven(built):
    return replace(built, protocol=RawDrivenClub(built.protocol.config, built.protocol.plan))


def test_a_gram_release_built_from_raw_driven_actions_is_caught():
    report = audit_entry(NAME, _config(1.0), 3, flips=(30,), variant=_raw_driven)
    assert report.verdict == "violation", report.describe()
    assert "public value" in report.worst.diverged


def test_the_statement_is_interactive_and_names_the_release():
    result = get_algorithm(NAME).run(_config(2.0), seed=1)
    statement = result.privacy
    assert statement.holds_interactively and statement.epsilon == 2.0
    assert statement.details["release"].startswith("reward-only")
    assert len(result.ledgers) == 5 and all(
        lg["epsilon_spent"] <= 2.0 * (1 + 1e-9) for lg in result.ledgers)


def test_paper_keys_that_cannot_apply_are_not_keys_of_the_released_entry():
    with pytest.raises(ConfigError, match="unknown key 'calibration'"):
        get_algorithm(NAME).run(_config(1.0, calibration="paper"), seed=1)
    with pytest.raises(ConfigError, match="unknown key 'detection'"):
        get_algorithm(NAME).run(_config(1.0, detection="raw"), seed=1)


def test_an_unknown_clustering_is_refused_by_name():
    with pytest.raises(ConfigError, match="clustering.*split-merge.*cliques.*'by-hand'"):
        ReleasedPlan(1.0, 1e-5, 100, clustering="by-hand")
    with pytest.raises(ConfigError, match="clustering"):
        get_algorithm(NAME).run(_config(1.0, clustering="by-hand"), seed=1)
    with pytest.raises(ConfigError, match="unknown key 'clustering'"):  # its own graph
        get_algorithm("cdp-fclub-dc-paper").run(
            {"epsilon": 1.0, "horizon": 100, "clustering": "cliques"}, seed=1)


def test_the_paper_path_is_its_own_entry_and_its_old_spelling_is_refused_by_name():
    with pytest.raises(ConfigError, match="act_on.*'cdp-fclub-dc-paper'"):
        get_algorithm(NAME).run(_config(1.0, act_on="raw"), seed=1)
    paper = get_algorithm("cdp-fclub-dc-paper")
    assert "act_on" not in {p.name for p in paper.params} and "paper" in paper.presets
    cfg = {**paper.defaults, **paper.presets["paper"], "epsilon": 1.0, "horizon": 200}
    assert paper.run(cfg, seed=1).privacy.relation.value == "cluster-level"


def test_split_merge_keeps_no_user_graph():
    built = get_algorithm(NAME).setup(_config(1.0), 1)
    assert built.protocol.graphs == []
    cliques = get_algorithm(NAME).setup(_config(1.0, clustering="cliques"), 1)
    assert len(cliques.protocol.graphs) == cliques.protocol.config.n_servers


def test_split_merge_finds_the_true_clusters_across_servers():
    """Two true clusters of four users, each spread over two of the four servers."""
    world = {**small_config(NAME, 64.0)["environment"], "dim": 3, "users": 8, "clusters": 2,
             "servers": 4, "items": 10}
    cfg = {**small_config(NAME, 64.0), "horizon": 16000, "environment": world}
    built = get_algorithm(NAME).setup(cfg, 4)
    result = play_setup(built, seed_streams(4), 4)
    policy, truth = built.protocol, built.env.true_clusters()
    assert policy.plan.clustering == "split-merge"  # the default
    assert result.cluster_error[-1] == 0.0
    groups = [np.flatnonzero(policy.labels == k) for k in np.unique(policy.labels)]
    assert len(groups) == 2
    for members in groups:  # one true cluster each, joined across its two servers
        assert np.unique(truth[members]).size == 1
        assert np.unique(policy.server[members]).size == 2


@pytest.mark.parametrize("clustering", ["split-merge", "cliques"])
def test_both_clusterings_are_private_end_to_end_with_merged_flips(clustering):
    """The partition is post-processing of releases: forced replay moves one release."""
    world = 0 if clustering == "split-merge" else 1  # the profile's worlds
    report = audit_entry(NAME, seed=3, world=world)
    assert report.scope and get_algorithm(NAME).audit.worlds[world].params.get(
        "clustering", "split-merge") == clustering
    assert report.verdict == "consistent", report.describe()
    assert report.touched >= 3 and "merged" in report.scope


def test_a_phase_started_by_hand_detects_with_the_plans_clustering(monkeypatch):
    built = get_algorithm(NAME).setup(_config(64.0), 2)
    play_setup(built, seed_streams(2), 2)
    policy = built.protocol
    calls = []
    monkeypatch.setattr(type(policy.clustering), "differs", lambda *a: calls.append("cliques"))
    before = policy.labels.copy()
    policy.start_phase(600)  # split/merge again on the same releases: the same partition
    assert calls == [] and np.array_equal(policy.labels, before)


def _cluster_sum_world():
    """The profile's split/merge audit world with release = "cluster-sum", at epsilon 1."""
    entry = get_algorithm(NAME)
    return world_config(entry, entry.audit.worlds[0], 1.0, release="cluster-sum")


def test_cluster_sums_are_private_end_to_end_while_the_clusters_change():
    """release = "cluster-sum": the flipped record moves its detection step, the one cluster
    stream step holding it and its user's one-shot releases after it, within the claim."""
    cfg = _cluster_sum_world()
    report = audit_entry(NAME, cfg, 3)
    assert report.verdict == "consistent", report.describe()
    assert max(f.differing for f in report.findings) >= 3  # a one-shot release was read too


def test_a_one_shot_release_at_half_its_charged_noise_is_caught(monkeypatch):
    from privbandit.private import membership

    built = membership.ClusterReleases.__init__

    def halved(self, *args, **kwargs):
        built(self, *args, **kwargs)
        self.sigma_once /= 2.0  # the ledgers were charged for the full noise

    monkeypatch.setattr(membership.ClusterReleases, "__init__", halved)
    cfg = _cluster_sum_world()
    report = audit_entry(NAME, cfg, 3, flips=[0])
    assert report.verdict == "violation", report.describe()


def test_cluster_sums_state_their_trusted_aggregator():
    result = get_algorithm(NAME).run({**_config(2.0), "release": "cluster-sum"}, seed=1)
    assert "trusted" in result.privacy.summary
    assert result.privacy.details["release"].startswith("cluster-sum")
    assert all(lg["epsilon_spent"] <= 2.0 * (1 + 1e-9) for lg in result.ledgers)


def test_the_audit_world_moves_splits_and_merges():
    """The profile's split/merge world takes every public decision at the audit's seed and
    epsilon 1: unit moves, a server's block moved, splits and merges (each published)."""
    from privbandit.auditing.target import AuditTarget

    built, streams = AuditTarget.of(NAME, epsilon=1.0).setup(3)
    play_setup(built, streams, 3)
    made = built.protocol.decisions
    assert min(made["unit_moves"], made["block_moves"], made["splits"], made["merges"]) > 0


def _routed_world(**params):
    """The profile's split/merge audit world with release = "routed", at epsilon 1; a coarse
    resolution settles users early, so most records reach the cluster streams."""
    entry = get_algorithm(NAME)
    return world_config(entry, entry.audit.worlds[0], 1.0, release="routed", resolution=5.0,
                        **params)


def _routed_rounds(cfg, variant=None):
    """The recorded run's tape and the rounds (with their party) routed to a cluster sum."""
    from privbandit.auditing.end_to_end import record
    from privbandit.auditing.target import AuditTarget

    tape = record(lambda: AuditTarget.of(NAME, cfg, variant=variant).play(3)).tape
    return tape, [(f.round, f.facts["party"]) for f in tape.declared if f.facts.get("routed")]


def test_routed_records_are_private_end_to_end_and_the_view_holds_the_masked_shares():
    """release = "routed": a record on its user's stream moves that stream, one routed to a
    cluster sum moves that stream's steps from its own on (masked shares included), within
    the claim; the tape holds every secure step's masked shares and the routing."""
    from privbandit.mechanisms import SecureStream

    cfg = _routed_world()
    tape, routed = _routed_rounds(cfg)
    secure = [e for e in tape.entries if isinstance(e.mechanism, SecureStream)]
    assert secure and all(e.view.shares.shape == (3, 2) for e in secure)  # 3 servers, d = 2
    public = {getattr(e.mechanism, "name", "") for e in tape.entries}
    assert {"routing", "clusters"} <= public  # who is settled, each cluster's stream; membership
    rounds = [t for t, _ in routed]
    assert rounds and rounds[0] > 4
    report = audit_entry(NAME, cfg, 3, flips=(4, rounds[0], rounds[len(rounds) // 2]))
    assert report.verdict == "consistent", report.describe()
    assert report.findings[1].differing > 1  # every later step of the cluster stream


def _unmasked(built):
    from privbandit.audits.broken import UnmaskedShare

    policy = built.protocol
    return replace(built, protocol=ReleasedFederatedClub(
        policy.config, policy.plan, world_clusters=policy.world_clusters,
        masks=UnmaskedShare(0)))


def test_a_cluster_sum_with_a_share_left_unmasked_is_caught_end_to_end():
    """The control: server 0's share of every cluster-stream step reaches the aggregator
    unmasked; flipping a record of server 0 routed to a cluster sum is a violation."""
    cfg = _routed_world()
    _, routed = _routed_rounds(cfg, _unmasked)
    first = next(t for t, party in routed if party == 0)
    report = audit_entry(NAME, cfg, 3, flips=(first,), variant=_unmasked)
    assert report.verdict == "violation", report.describe()


def test_routed_statement_ledgers_and_keys():
    result = get_algorithm(NAME).run({**_config(2.0), "release": "routed", "keep": 0.2,
                                      "settle": 1}, seed=1)
    assert result.privacy.details["release"].startswith("routed")
    assert "secure" in result.privacy.summary and "parallel composition" in result.privacy.summary
    assert len(result.ledgers) == 10  # per local server: its users' streams, its cluster sums
    per_user = get_algorithm(NAME).run({**_config(2.0), "resolution": 5.0}, seed=1)
    routed = get_algorithm(NAME).run({**_config(2.0), "resolution": 5.0, "release": "routed"},
                                     seed=1)
    up = "bytes_by_direction"
    assert routed.comm[up]["upload"] > per_user.comm[up]["upload"]  # the masked shares
    assert all(lg["epsilon_spent"] <= 2.0 * (1 + 1e-9) for lg in result.ledgers)
    with pytest.raises(ConfigError, match="mechanism.*'routed'"):
        ReleasedPlan(1.0, 1e-5, 100, release="routed", mechanism="honaker")
    with pytest.raises(ConfigError, match="keep"):
        ReleasedPlan(1.0, 1e-5, 100, release="routed", keep=1.0)
