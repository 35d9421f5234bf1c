"""End-to-end audits on neighbouring environments: every private entry's claim, and controls.

Each pair: the same world, arrivals, contexts and random streams, one user-round's reward
(or one agent's epoch reward) flipped; the neighbour's releases are forced to the first
run's outputs and the pre-noise inputs compared (`privbandit.audits.audit_pairs`).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from privbandit.accounting.statement import Relation
from privbandit.audits.environment import audit_pairs
from privbandit.endtoend import (
    AUDIT_SIZES,
    audit_entry,
    claimed,
    flips_tried,
    neighbour_pair,
    small_config,
)
from privbandit.registry import algorithms, get_algorithm

SIZES = AUDIT_SIZES
config = small_config


def _in_tree(entry) -> bool:
    return getattr(entry.build, "func", entry.build).__module__.startswith("privbandit.")


def test_every_private_entry_is_audited_end_to_end():
    private = {n for n, e in algorithms().items() if e.private and _in_tree(e)}
    assert private == set(SIZES)


@pytest.mark.parametrize("name", sorted(SIZES))
@pytest.mark.parametrize("epsilon", [1.0, 8.0])
def test_a_claim_under_the_interactive_relation_holds_on_every_pair(name, epsilon):
    cfg = config(name, epsilon)
    eps, _, statement = claimed(name, cfg, 3)
    flips, agents = flips_tried(name)  # early flips move the most records
    report = audit_entry(name, cfg, 3, flips, agents)
    if statement.relation is Relation.INTERACTIVE:
        assert eps == epsilon
        assert report.verdict == "consistent", report.describe()
    else:  # no interactive claim: the report measures, and the statement says why
        assert report.verdict == "measured"
        assert "realised" in statement.summary or "record" in statement.relation.value


def test_the_paper_preset_reports_its_realised_sequence_guarantee():
    cfg = config("cdp-fclub-dc", 1.0, **get_algorithm("cdp-fclub-dc").presets["paper"])
    _, _, statement = claimed("cdp-fclub-dc", cfg, 3)
    assert statement.relation is Relation.CLUSTER and not statement.holds_interactively
    assert "realised sequences only" in statement.summary


def _example():
    """examples/pair_loss.py: its record-level control (raw-driven records in the streams)."""
    path = Path(__file__).resolve().parents[2] / "examples" / "pair_loss.py"
    spec = importlib.util.spec_from_file_location("pair_loss_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_raw_driven_records_in_a_stream_are_caught():
    cfg = config("cdp-fclub-dc+", 1.0)
    control = _example().control_pair
    report = audit_pairs({f"flip at {a}": control(cfg, 3, a) for a in (5, 40)}, 1e-5, 1.0)
    assert report.verdict == "violation", report.describe()
    assert report.worst.differing > 1


def test_a_pair_reports_who_was_flipped():
    run_pair, hits = neighbour_pair("cdp-fclub-dc+", config("cdp-fclub-dc+", 1.0), 3, 7)
    run_pair(1)
    assert hits and hits[0]["round"] == 7 and hits[0]["user"] is not None


@pytest.mark.parametrize("name", ["cdp-fclub-dc+", "cdp-fedc3ucb-h+"])
def test_the_billboards_shared_rounds_release_the_flipped_record_only(name):
    """At the defaults most rounds are local (a flip there releases nothing); with half the
    rounds shared, some flips land on shared rounds and move exactly their own record."""
    cfg = config(name, 8.0, rate=0.5, cap=10**6)
    horizon = cfg["horizon"]
    report = audit_entry(name, cfg, 3, (3, 9, 60, horizon // 2, horizon - 2))
    assert report.verdict == "consistent", report.describe()
    moved = [f.differing for f in report.findings]
    assert max(moved) == 1 and 0 < report.worst.epsilon <= 8.0


def test_an_anonymous_reward_moves_its_own_release_only():
    """The Laplace anonymous bandit acts on released sums only: one user-round's reward
    moves the one group sum it is released in, by at most 1, so the pair loss is epsilon."""
    name = "anonymous-base-laplace"
    flips, agents = flips_tried(name)
    report = audit_entry(name, config(name, 2.0), 4, flips, agents)
    assert report.verdict == "consistent" and len(report.findings) == 4
    for finding in report.findings:
        assert finding.differing == 1 and finding.mu == 0.0
        assert finding.pure_epsilon == pytest.approx(2.0, rel=1e-6)
