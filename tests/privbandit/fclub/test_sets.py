"""SetFederatedClub: FCLUB-DC's sharing with split/merge detection -- its clusters, its local
copies, its phases, its seeds and its bad input."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.clustering import SplitMergeClustering
from privbandit.envs import seed000_environment
from privbandit.fclub import FclubConfig, make_policy
from privbandit.fclub.sets import SetFederatedClub
from privbandit.kernels import cluster_mixing_rate
from privbandit.runtime import run, seed_streams

from .test_algorithm import check_delayed_invariants


def world(seed=1, users=24):
    return seed000_environment(seed_streams(seed)["world"], n_users=users, n_clusters=3, dim=3,
                               n_items=8)


def test_finds_the_true_clusters_across_servers_and_keeps_one_copy_per_server_and_cluster():
    env = world()
    policy = SetFederatedClub(FclubConfig(3, 24, 6))
    result = run(policy, env, 2000, 0)
    assert result.cluster_error[-1] == 0.0 and result.cluster_mixing[-1] == 0.0
    assert policy.graphs == []  # sets, not user graphs
    layout = policy.local_layout()
    pairs = [(server, int(policy.cluster_labels()[users[0]])) for server, users in layout]
    assert len(pairs) == len(set(pairs))  # at most one local copy per (server, cluster)
    truth = env.true_clusters()
    assert all(np.unique(truth[list(users)]).size == 1 for _, users in layout)
    assert result.comm["messages_by_direction"]["upload"] > 0
    assert policy.params()["detection"] == "split-merge" and "alpha" not in policy.params()


def test_same_seed_same_run_and_the_sharing_keeps_fclub_dcs_invariants():
    a = run(SetFederatedClub(FclubConfig(3, 24, 6)), world(), 1000, 3)
    policy = SetFederatedClub(FclubConfig(3, 24, 6))
    b = run(policy, world(), 1000, 3)
    np.testing.assert_array_equal(a.regret, b.regret)
    assert a.comm == b.comm and np.array_equal(a.cluster_mixing, b.cluster_mixing)
    check_delayed_invariants(policy, 1000)
    c = run(SetFederatedClub(FclubConfig(3, 24, 6)), world(), 1000, 4)
    assert not np.array_equal(a.regret, c.regret)


@given(st.floats(1.01, 4.0), st.integers(0, 10**6))
def test_phases_grow_by_the_factor_and_growth_two_is_the_papers_schedule(growth, t):
    policy = SetFederatedClub(FclubConfig(4, 8, 2), phase_growth=growth)
    end = policy.phase_end(t)
    assert end > t and end >= growth * (t + 2) - 2 and end < growth * (t + 2) - 1 or end == t + 1
    paper = SetFederatedClub(FclubConfig(4, 8, 2), phase_growth=2.0)
    s = math.floor(math.log2(t + 2))
    if t + 2 == 2**s:  # at a phase start of the paper, the next is the paper's next one
        assert paper.phase_end(t) == 2 ** (s + 1) - 2


def test_federation_beats_the_papers_merge_where_servers_are_many():
    """The collapse in small: 48 users on 12 servers; the paper's eq. 4 chains clusters,
    split/merge does not (one seed, a fixed world)."""
    env, horizon = world(users=48), 6000
    paper = run(make_policy("fclub-dc", dim=3, n_users=48, n_servers=12), env, horizon, 1)
    sets = run(make_policy("fclub-dc-sets", dim=3, n_users=48, n_servers=12), world(users=48),
               horizon, 1)
    assert sets.cluster_mixing[-1] == 0.0 < paper.cluster_mixing[-1]
    assert sets.total_regret < paper.total_regret
    assert cluster_mixing_rate(env.true_clusters(), np.zeros(48)) == pytest.approx(2 / 3)


@pytest.mark.parametrize(("make", "message"), [
    (lambda: SetFederatedClub(FclubConfig(4, 8, 2, sync="instant")),
     r"config must be sync='delayed' and detect=True"),
    (lambda: SetFederatedClub(FclubConfig(4, 8, 2, detect=False)), r"detect=True"),
    (lambda: SetFederatedClub(FclubConfig(4, 8, 2), SplitMergeClustering(3)),
     r"detection must be None or a SplitMergeClustering of dim 4"),
    (lambda: SetFederatedClub(FclubConfig(4, 8, 2), phase_growth=1.0),
     r"phase_growth must be a number > 1; got 1\.0"),
    (lambda: SetFederatedClub({"dim": 4}), r"config must be an FclubConfig"),
    (lambda: make_policy("fclub-dc-sets", dim=4, n_users=8, alpha=1.5),
     r"settings must be FclubConfig fields but alpha and alpha2"),
    (lambda: make_policy("fclub-dc-sets", dim=4, n_users=8, merge_level=0.999,
                         split_level=0.99), r"split_level must be at least merge_level"),
])
def test_bad_input_is_named(make, message):
    with pytest.raises(InvalidParameterError, match=message):
        make()
