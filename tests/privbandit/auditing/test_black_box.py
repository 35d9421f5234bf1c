"""Transcripts of registry entries: worlds and rounds fixed by the seed, coins fresh."""
from __future__ import annotations

import numpy as np
import pytest

from privbandit.auditing.black_box import audit_entry_transcripts, sample_entry
from privbandit.auditing.end_to_end import setup, small_config
from privbandit.errors import ConfigError
from privbandit.registry import get_algorithm

NAME = "cdp-fedc3ucb-h"


def tiny(name: str = NAME, horizon: int = 32) -> dict:
    return {**small_config(name, 1.0), "horizon": horizon}


def played(coins):
    """(users arriving, feedback, regret) of one run of the seed's world with `coins`."""
    world, play = setup(NAME, tiny(), 3, coins=coins)
    users, observe = [], world.observe

    def watched(t):
        seen = observe(t)
        users.append(int(seen[1]))
        return seen

    world.observe = watched
    result = play(world)
    return users, result.regret


def test_coins_change_the_algorithm_not_the_world_or_its_rounds():
    users, regret = played(None)
    for coins in (11, 12):
        other_users, other_regret = played(coins)
        assert other_users == users  # the seed's arrivals, whatever the coins
        assert not np.array_equal(other_regret, regret)  # other coins, other actions


def test_samples_are_reproducible_and_draw_fresh_noise():
    """A sample is every release of the run, public values (its messages' metadata) too:
    upload times follow the noisy releases, so other coins may change the schedule."""
    sample = sample_entry(NAME, tiny(), 3, at=5)
    a, b = sample(0, np.random.default_rng(1)), sample(0, np.random.default_rng(2))
    again = sample(0, np.random.default_rng(1))
    assert len(a) > 0 and a.schedule == again.schedule
    assert all(np.array_equal(x.values, y.values) for x, y in zip(a.releases, again.releases,
                                                                   strict=True))
    assert not np.array_equal(a.releases[0].values, b.releases[0].values)
    assert [r.round for r in a.releases] == sorted(r.round for r in a.releases)


def test_an_entry_audited_black_box_is_consistent_with_its_claim():
    report = audit_entry_transcripts(NAME, tiny(), 3, at=5, n=40, rng=0)
    assert report.verdict == "consistent" and report.claimed_epsilon == 1.0
    assert report.samples_per_side == 40 and report.pair == "reward of round 5 flipped"


def test_entries_without_an_interactive_claim_are_refused():
    paper = {**tiny("cdp-fclub-dc"), **get_algorithm("cdp-fclub-dc").presets["paper"]}
    with pytest.raises(ConfigError, match="interactive relation"):
        audit_entry_transcripts("cdp-fclub-dc", paper, 3, at=5, n=8, rng=0)


def first_rewards(name: str, config: dict, coins: int) -> np.ndarray:
    """The first rewards the world draws at once in a run with `coins`."""
    world, play = setup(name, config, 3, coins=coins)
    seen = []
    if name == "cdp-mab":
        inner = world.draw_sums

        def draw_sums(arms, pulls, rng):
            seen.append(inner(arms, pulls, rng))
            return seen[-1]

        world.draw_sums = draw_sums
    else:
        source = world.aggregator.reward_source

        def reward_source(users, arms, rng):
            seen.append(source(users, arms, rng))
            return seen[-1]

        world.aggregator.reward_source = reward_source
    play(world)
    return seen[0]


@pytest.mark.parametrize("name", ["cdp-mab", "anonymous-base-laplace"])
def test_worlds_that_draw_many_rewards_at_once_keep_them_when_the_coins_change(name):
    """The federated MAB's epoch sums and the anonymous aggregator's draws come from the
    round stream under the runner, so a sample's rewards are the seed's, whatever its coins."""
    from privbandit.auditing.end_to_end import small_config

    config = {**small_config(name, 1.0), "horizon": 3000 if name == "cdp-mab" else 2000}
    np.testing.assert_array_equal(first_rewards(name, config, 1), first_rewards(name, config, 2))


def test_the_registry_black_box_audits_every_private_entry_and_says_what_it_can_see(capsys):
    from privbandit.auditing.command import _black_box
    from privbandit.auditing.end_to_end import AUDIT_SIZES

    failures: list[str] = []
    out = _black_box(8, 0, 0.95, failures)
    assert failures == [] and set(out) == set(AUDIT_SIZES)  # every private entry
    assert all(row["verdict"] == "consistent" for row in out.values())
    for row in out.values():  # 8 transcripts per world can certify nothing, and it says so
        assert row["details"]["ceiling"] == 0.0
        assert [p["planted_epsilon"] for p in row["details"]["power"]] == [2.0, 8.0, 32.0]
    printed = capsys.readouterr().out
    assert printed.count("no planted leak up to epsilon 32 was seen above the claim") == len(out)
