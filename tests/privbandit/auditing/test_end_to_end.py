"""End-to-end audits on neighbouring environments: every private entry's claim, and controls.

Each pair: the same world, arrivals, contexts and random streams, one user-round's reward
(or one agent's epoch reward) flipped; the neighbour's releases are forced to the first
run's outputs and the pre-noise inputs compared (`privbandit.audits.audit_pairs`).
"""
from __future__ import annotations

import contextvars
import importlib.util
from pathlib import Path

import pytest

from privbandit.accounting.statement import Relation
from privbandit.auditing.end_to_end import (
    AUDIT_WORLDS,
    DRAW_ENTRIES,
    FlippedReward,
    audit_config,
    audit_entry,
    claimed,
    marked,
    neighbour_pair,
    small_config,
)
from privbandit.audits.environment import audit_pairs
from privbandit.fclub.guarded import GuardedFederatedClub
from privbandit.registry import algorithms, get_algorithm
from privbandit.runtime import run

config = small_config
GUARDED = ("cdp-fclub-dc+", "cdp-fedc3ucb-h+")  # they declare released records and merges


def _in_tree(entry) -> bool:
    return getattr(entry.build, "func", entry.build).__module__.startswith("privbandit.")


def test_every_private_entry_is_audited_end_to_end():
    private = {n for n, e in algorithms().items() if e.private and _in_tree(e)}
    assert private == set(AUDIT_WORLDS)


@pytest.mark.parametrize("name", sorted(AUDIT_WORLDS))
@pytest.mark.parametrize("epsilon", [1.0, 8.0])
def test_a_claim_holds_on_flips_chosen_from_the_run_and_they_reach_releases(name, epsilon):
    """The registry's audit: flips read from the recorded run.  A released round moves its
    own record only, a local round nothing; the guarded entries' worlds merge units, and a
    merged unit's released round is flipped too."""
    report = audit_entry(name, audit_config(name, epsilon), 3)
    if report.claimed_epsilon is None:  # no interactive claim: the report measures
        assert report.verdict == "measured"
        return
    assert report.claimed_epsilon == epsilon
    assert report.verdict == "consistent" and report.touched >= 1, report.describe()
    for finding in report.findings:
        if "(released" in finding.pair:
            assert finding.differing == 1, finding.describe()
        if "(local)" in finding.pair:
            assert finding.differing == 0 and finding.epsilon == 0.0, finding.describe()
        if name in DRAW_ENTRIES:  # one group sum moves by at most 1: the pair costs epsilon
            assert finding.differing == 1 and finding.mu == 0.0
            assert finding.pure_epsilon == pytest.approx(epsilon, rel=1e-6)
    kinds = " ".join(f.pair for f in report.findings)
    if name in GUARDED or name == "cdp-fclub-dc":  # entries that merge users across parties
        assert "(released, merged)" in kinds, report.describe()
    if name in GUARDED:  # and those that act on raw data on local rounds
        assert "(local)" in kinds, report.describe()


def test_the_paper_preset_reports_its_realised_sequence_guarantee():
    cfg = config("cdp-fclub-dc", 1.0, **get_algorithm("cdp-fclub-dc").presets["paper"])
    _, _, statement = claimed("cdp-fclub-dc", cfg, 3)
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
    assert control.verdict == "violation" and control.worst.differing > 1
    plus = reports[module.ROWS[1][0]]
    assert plus.verdict == "consistent" and plus.touched == 2
    assert [f.differing for f in plus.findings] == [1, 0, 1]


def test_a_pair_reports_who_was_flipped():
    run_pair, hits = neighbour_pair("cdp-fclub-dc+", config("cdp-fclub-dc+", 1.0), 3, 7)
    run_pair(1)
    assert hits and hits[0]["round"] == 7 and hits[0]["user"] is not None


def test_the_old_registry_flips_touch_nothing_and_read_inconclusive():
    """The blind spot this audit had: at the defaults, rounds 5 and T - 2 of the guarded
    federation are local, so no release moves; that reads inconclusive, not consistent."""
    cfg = config("cdp-fclub-dc+", 1.0)
    report = audit_entry("cdp-fclub-dc+", cfg, 3, flips=(5, cfg["horizon"] - 2))
    assert report.verdict == "inconclusive" and report.touched == 0
    assert all("(local)" in f.pair for f in report.findings)


class _SizeLeak(GuardedFederatedClub):
    """A side channel: every upload's size carries the server's raw reward statistics."""

    def _release(self, t, rng):
        self._msg = 8 * (self.config.dim + 1) ** 2 + int(1000 * self._raw[:, -1, -1].sum())
        super()._release(t, rng)


class _OffTape(GuardedFederatedClub):
    """Releases outside the tape: every release runs in a context the audit does not see."""

    def _release(self, t, rng):
        contextvars.Context().run(super()._release, t, rng)


def _variant(cls, cfg, at):
    def play(which):
        built = get_algorithm("cdp-fclub-dc+").setup(cfg, 3)
        algorithm = cls(built.protocol.config, built.protocol.plan)
        marked(built.env)
        if which:
            FlippedReward(built.env, at)
        return run(algorithm, built.env, built.horizon, 3)
    return play


@pytest.mark.parametrize("cls, what", [(_SizeLeak, "public value 'communication'"),
                                       (_OffTape, "bypassed it")])
def test_a_side_channel_in_upload_sizes_and_releases_off_the_tape_are_unbounded(cls, what):
    cfg = audit_config("cdp-fclub-dc+", 1.0)
    honest = audit_pairs({"flip at 5": _variant(GuardedFederatedClub, cfg, 5)}, 1e-5, 1.0)
    assert honest.worst.diverged == "" and honest.worst.public > 0
    report = audit_pairs({"flip at 5": _variant(cls, cfg, 5)}, 1e-5, 1.0)
    assert report.verdict == "violation", report.describe()
    assert what in report.worst.diverged
