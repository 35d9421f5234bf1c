"""Transcripts of registry entries: worlds and rounds fixed by the seed, coins fresh."""
from __future__ import annotations

import numpy as np
import pytest

from privbandit.auditing.black_box import audit_entry_transcripts, sample_entry
from privbandit.auditing.end_to_end import private_entries
from privbandit.auditing.target import AuditTarget
from privbandit.envs.neighbours import Flip
from privbandit.registry import get_algorithm

NAME = "cdp-fedc3ucb-h"


def tiny(name: str = NAME, horizon: int = 32) -> AuditTarget:
    return AuditTarget.of(name).with_horizon(horizon)


def played(coins):
    """(users arriving, regret) of one run of the seed's world with `coins`."""
    built, streams = tiny().setup(3, coins)
    world = built.env
    world.reset(streams["rounds"])
    users = [int(world.observe(t).user) for t in range(32)]
    return users, tiny().play(3, coins=coins).regret


def test_coins_change_the_algorithm_not_the_world_or_its_rounds():
    users, regret = played(None)
    for coins in (11, 12):
        other_users, other_regret = played(coins)
        assert other_users == users  # the seed's arrivals, whatever the coins
        assert not np.array_equal(other_regret, regret)  # other coins, other actions


def test_samples_are_reproducible_and_draw_fresh_noise():
    """A sample is every release of the run, public values (its messages' metadata) too:
    upload times follow the noisy releases, so other coins may change the schedule."""
    sample = sample_entry(tiny(), Flip(5), 3)
    a, b = sample(0, np.random.default_rng(1)), sample(0, np.random.default_rng(2))
    again = sample(0, np.random.default_rng(1))
    assert len(a) > 0 and a.schedule == again.schedule
    assert all(np.array_equal(x.values, y.values) for x, y in zip(a.releases, again.releases,
                                                                   strict=True))
    assert not np.array_equal(a.releases[0].values, b.releases[0].values)
    assert [r.round for r in a.releases] == sorted(r.round for r in a.releases)


def test_an_entry_audited_black_box_is_consistent_with_its_claim():
    config = dict(tiny().config)
    report = audit_entry_transcripts(NAME, config, 3, 5, n=40, rng=0)
    assert report.verdict == "consistent" and report.claimed_epsilon == 1.0
    assert report.samples_per_side == 40 and report.pair.startswith("flip at 5")


def test_entries_without_an_interactive_claim_are_measured_not_judged():
    """The paper's path states a guarantee over realised sequences: its black-box bound is
    reported against its stated epsilon, verdict "measured", never "consistent"."""
    entry = get_algorithm("cdp-fclub-dc-paper")
    paper = {**dict(tiny("cdp-fclub-dc-paper").config), **entry.presets["paper"]}
    report = audit_entry_transcripts("cdp-fclub-dc-paper", paper, 3, 5, n=8, rng=0)
    assert report.verdict == "measured" and not report.violation
    assert "cluster-level" in report.details["measured"]


def first_rewards(name: str, horizon: int, coins: int) -> np.ndarray:
    """The first rewards a run with `coins` hands the world's drawing of many at once:
    the federated MAB's first epoch sums, the anonymous aggregator's first group draws."""
    target = tiny(name, horizon)
    built, streams = target.setup(3, coins)
    world = built.env
    world.reset(streams["rounds"])
    if name == "cdp-mab":
        return world.draw_sums(np.arange(world.n_arms), 4, world.round_stream())
    users = np.arange(world.n_users)
    return world.aggregator.reward_source(users, np.zeros_like(users), streams["policy"])


@pytest.mark.parametrize("name", ["cdp-mab", "anonymous-base-laplace"])
def test_worlds_that_draw_many_rewards_at_once_keep_them_when_the_coins_change(name):
    """The federated MAB's epoch sums and the anonymous aggregator's draws come from the
    round stream under the runner, so a sample's rewards are the seed's, whatever its coins."""
    horizon = 3000 if name == "cdp-mab" else 2000
    np.testing.assert_array_equal(first_rewards(name, horizon, 1),
                                  first_rewards(name, horizon, 2))


def test_the_registry_black_box_audits_every_private_entry_and_says_what_it_can_see(capsys):
    from privbandit.auditing.command import _black_box

    failures: list[str] = []
    out = _black_box(8, 0, 0.95, failures)
    ours = {n for n, _ in private_entries() if not n.startswith("toy")}
    assert set(out) >= ours and all(f.startswith("black box toy") for f in failures)
    assert all(row["verdict"] in ("consistent", "measured") for row in out.values())
    assert out["cdp-fclub-dc-paper"]["verdict"] == "measured"  # its realised-sequence claim
    for row in out.values():  # 8 transcripts per world can certify nothing, and it says so
        assert row["details"]["ceiling"] == 0.0
        assert [p["planted_epsilon"] for p in row["details"]["power"]] == [2.0, 8.0, 32.0]
    printed = capsys.readouterr().out
    assert printed.count("no planted leak up to epsilon 32 was seen above the claim") == len(out)
