"""The end-to-end audit catches raw data wherever it reaches what a party publishes.

Positive controls (`controls.py`): clusters, models and release times computed from raw
data, and releases of some units that bypass the tape while another unit's stay on it.
Each is audited on the entry's own audit world with the flips the audit chooses itself;
the honest entry on the same world reads consistent (tests/.../test_end_to_end.py).
"""
from __future__ import annotations

import pytest

from privbandit.auditing.end_to_end import audit_entry

from .controls import PartialBypass, RawLabels, RawModels, RawSchedule, RawServer, variant


@pytest.mark.parametrize("cls, name, what", [
    (RawLabels, "cdp-fclub-dc", "global server: "),
    (RawModels, "cdp-fclub-dc", "global server: models"),
    (RawServer, "cdp-fedc3ucb-h", "server: "),
])
def test_clusters_and_models_computed_from_raw_data_are_caught(cls, name, what):
    report = audit_entry(name, variant=variant(cls), world=1 if cls is RawServer else 0)
    assert report.verdict == "violation", report.describe()
    assert any(what in f.diverged for f in report.findings), report.describe()


def test_release_times_computed_from_raw_data_are_caught():
    """The run's declarations promise each record's release at the schedule's next release
    round: a release that left later is found in the recorded run itself."""
    report = audit_entry("cdp-fclub-dc", variant=variant(RawSchedule))
    assert report.verdict == "violation", report.describe()
    assert "by round 0" in report.worst.diverged, report.describe()


def test_units_whose_releases_bypass_the_tape_are_caught_while_another_stays_on_it():
    """One unit's stream on the tape carries the event every party's ledger was charged
    with, so the ledger check alone passes; the declarations name each unit's own
    mechanism, and those releases never reached the tape."""
    report = audit_entry("cdp-fclub-dc", variant=variant(PartialBypass))
    assert report.verdict == "violation", report.describe()
    assert "bypassed the tape" in report.worst.diverged, report.describe()
    assert "unit 0," not in report.worst.diverged  # the first unit's releases are taped
