"""End-to-end audits on neighbouring environments: every private entry's claim, and controls.

Each pair: the same world, arrivals, contexts and random streams, one user-round's reward
(or one agent's epoch reward, one drawn anonymous reward) flipped by the world itself
(`Environment.neighbour`); the neighbour's releases are forced to the first run's outputs
and everything on the tape compared (`privbandit.audits.audit_replays`).
"""
from __future__ import annotations

import contextvars
import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest

from privbandit.accounting.statement import Relation
from privbandit.auditing.end_to_end import (
    AFTER_LAST,
    LOCAL,
    audit_entry,
    private_entries,
)
from privbandit.auditing.target import AuditTarget, claim_of, profile_of
from privbandit.envs.neighbours import DRAW, Flip
from privbandit.errors import ConfigError
from privbandit.fclub.guarded import GuardedFederatedClub
from privbandit.registry import AlgorithmEntry, get_algorithm
from privbandit.runtime import play_setup

PRIVATE = sorted(name for name, _ in private_entries() if not name.startswith("toy"))
PAPER = "cdp-fclub-dc-paper"  # states a realised-sequence guarantee: measured, not judged
# every audit world of every private entry's profile
WORLDS = [(name, w) for name in PRIVATE
          for w in range(len(profile_of(get_algorithm(name)).worlds))]
# entries that merge users across parties, and those that act on raw data on local rounds
MERGING = ("cdp-fclub-dc", "cdp-fclub-dc+", "cdp-fedc3ucb-h", "cdp-fedc3ucb-h+",
           "cdp-fedc3ucb-sets")
GUARDED = ("cdp-fclub-dc+", "cdp-fedc3ucb-h+")


def _in_tree(entry) -> bool:
    return getattr(entry.build, "func", entry.build).__module__.startswith("privbandit.")


def test_every_private_entry_declares_an_audit_profile():
    """A private entry of privbandit without a profile fails here: the audits never skip
    one (the command fails it too)."""
    missing = [n for n, e in private_entries() if _in_tree(e) and e.audit is None]
    assert not missing
    assert len(PRIVATE) >= 8


def test_an_entry_without_a_profile_is_refused_by_name():
    bare = AlgorithmEntry("bare", lambda config, streams: None, private=True)
    with pytest.raises(ConfigError, match="audit profile of 'bare'.*none is skipped"):
        profile_of(bare)


@pytest.mark.parametrize("name, world", WORLDS)
@pytest.mark.parametrize("epsilon", [1.0, 8.0])
def test_a_claim_holds_on_flips_chosen_from_the_run_and_they_reach_releases(name, world,
                                                                           epsilon):
    """The registry's audit: flips read from the recorded run.  A released round moves its
    own record only, a never-released round nothing; the merging entries' worlds merge
    units, and a merged unit's released round is flipped too."""
    report = audit_entry(name, epsilon=epsilon, world=world)
    if name == PAPER:
        assert report.verdict == "measured" and report.touched, report.describe()
        return
    fixed = profile_of(get_algorithm(name)).flips
    draws = bool(fixed) and fixed[0].kind == DRAW
    assert report.claimed_epsilon == epsilon
    assert report.verdict == "consistent" and report.touched >= 1, report.describe()
    for finding in report.findings:
        if "(released" in finding.pair:
            assert finding.differing == 1, finding.describe()
        if not finding.evidence:
            assert finding.differing == 0 and finding.epsilon == 0.0, finding.describe()
            assert "no release touched" in finding.describe()
        if draws:  # one group sum moves by at most 1: the pair costs epsilon
            assert finding.differing == 1 and finding.mu == 0.0
            assert finding.pure_epsilon == pytest.approx(epsilon, rel=1e-6)
    kinds = " ".join(f.pair for f in report.findings)
    if name in MERGING:
        assert "(released, merged)" in kinds, report.describe()
    if name in GUARDED:
        assert f"({LOCAL})" in kinds, report.describe()


def test_never_released_rounds_are_flipped_and_never_count_as_evidence():
    """Rounds after the last release are flipped; they read "no release touched" and do
    not make a report consistent."""
    report = audit_entry("cdp-fclub-dc")
    after = [f for f in report.findings if f"({AFTER_LAST})" in f.pair]
    assert after and not after[0].evidence and not after[0].touched
    target = AuditTarget.of("cdp-fclub-dc")
    last = target.horizon - 1
    only = audit_entry("cdp-fclub-dc", flips=(last,))
    assert only.verdict == "inconclusive" and only.touched == 0, only.describe()


def test_the_paper_path_reports_its_realised_sequence_guarantee():
    entry = get_algorithm(PAPER)
    cfg = {**entry.defaults, **entry.presets["paper"], "epsilon": 1.0, "horizon": 256,
           "environment": {}}
    _, _, statement = claim_of(AuditTarget.of(PAPER, cfg).play(3))
    assert statement.relation is Relation.CLUSTER and not statement.holds_interactively
    assert "realised sequences only" in statement.summary


def _example():
    """examples/pair_loss.py: its record-level control (raw-driven records in the streams)."""
    path = Path(__file__).resolve().parents[3] / "examples" / "pair_loss.py"
    spec = importlib.util.spec_from_file_location("pair_loss_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_pages_pair_loss_table_is_what_the_code_prints_and_its_control_is_caught():
    """docs/privacy_relations.md shows `examples/pair_loss.py --table`; its first row, the
    record-level design (raw-driven records in the streams), is caught; the billboard's
    shared rounds move their own record only and its local round nothing."""
    module = _example()
    text, reports = module.table(*module.TABLE)
    page = Path(__file__).resolve().parents[3] / "docs" / "privacy_relations.md"
    assert text in page.read_text(encoding="utf-8")
    control = reports[module.ROWS[0][0]]
    assert control.verdict == "violation"
    plus = reports[module.ROWS[1][0]]
    assert plus.verdict == "consistent" and plus.touched == 2
    assert [f.differing for f in plus.findings] == [1, 0, 1]


def test_a_neighbour_says_who_was_flipped_and_leaves_its_world_alone():
    target = AuditTarget.of("cdp-fclub-dc+")
    world = target.world(3)
    neighbour = world.neighbour(Flip(7))
    built, streams = target.setup(3)
    play_setup(built.on(neighbour), streams, 3)
    assert neighbour.changed["round"] == 7 and neighbour.changed["user"] is not None
    assert world.changed == {} and world._edit is None
    with pytest.raises(ConfigError, match="flip"):
        world.neighbour(Flip(0, 0, DRAW))


def test_the_old_registry_flips_touch_nothing_and_read_inconclusive():
    """The blind spot this audit had: at the defaults, rounds 5 and T - 2 of the guarded
    federation are local, so no release moves; that reads inconclusive, not consistent."""
    entry = get_algorithm("cdp-fclub-dc+")
    cfg = {**entry.defaults, "epsilon": 1.0, "horizon": 512, "environment": {}}
    report = audit_entry("cdp-fclub-dc+", cfg, 3, flips=(5, cfg["horizon"] - 2))
    assert report.verdict == "inconclusive" and report.touched == 0, report.describe()
    assert all("never released" in f.pair for f in report.findings)


class _SizeLeak(GuardedFederatedClub):
    """A side channel: every upload's size carries the server's raw reward statistics."""

    def _release(self, t, rng):
        self._msg = 8 * (self.config.dim + 1) ** 2 + int(1000 * self._raw[:, -1, -1].sum())
        super()._release(t, rng)


class _OffTape(GuardedFederatedClub):
    """Releases outside the tape: every release runs in a context the audit does not see."""

    def _release(self, t, rng):
        contextvars.Context().run(super()._release, t, rng)


def _variant(cls):
    return lambda built: replace(built, protocol=cls(built.protocol.config, built.protocol.plan))


@pytest.mark.parametrize("cls, what", [(_SizeLeak, "public value 'communication: messages'"),
                                       (_OffTape, "bypassed")])
def test_a_side_channel_in_upload_sizes_and_releases_off_the_tape_are_unbounded(cls, what):
    honest = audit_entry("cdp-fclub-dc+", flips=(5,), variant=_variant(GuardedFederatedClub))
    assert honest.worst.diverged == "" and honest.worst.public > 0
    report = audit_entry("cdp-fclub-dc+", flips=(5,), variant=_variant(cls))
    assert report.verdict == "violation", report.describe()
    assert what in report.worst.diverged
