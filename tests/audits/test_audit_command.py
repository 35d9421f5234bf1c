"""`privbandit audit`: table, JSON, exit status."""
import argparse
import dataclasses
import json

import pytest

from privbandit import audit_command
from privbandit.audits.controls import laplace_ignores_width


def parse(*argv):
    parser = argparse.ArgumentParser()
    audit_command.add_parser(parser.add_subparsers())
    return parser.parse_args(["audit", *argv])


def test_whole_suite_passes_and_writes_json(tmp_path, capsys):
    out = tmp_path / "audit.json"
    args = parse("--samples", "3000", "--no-exact", "--json", str(out), "--seed", "3")
    assert args.func is audit_command.run
    assert audit_command.run(args) == 0
    text = capsys.readouterr().out
    assert "LaplaceMeans" in text and "diffprivlib Laplace" in text and "opendp" in text
    data = json.loads(out.read_text())
    assert data["failures"] == [] and data["settings"]["samples"] == 3000
    assert all(a["verdict"] == a["expected"] for a in data["audits"])
    floats = [a for a in data["audits"] if a["mechanism"].endswith("(float)")]
    assert len(floats) == 3 and {a["verdict"] for a in floats} == {"violation"}
    masks = data["attacks"]["mask_known_plaintext_d3_in_10"]
    assert masks[2]["observed"] == 3 and masks[2]["block_error"] < 1e-9
    plain = data["attacks"]["anonymity_differencing_C10_p05"][0]
    assert abs(plain["accuracy"] - 0.588) < 0.03


def test_a_violation_exits_with_1(tmp_path, capsys, monkeypatch):
    as_if_correct = dataclasses.replace(laplace_ignores_width(), control=False)
    monkeypatch.setattr(audit_command, "standard_suite", lambda **kw: [as_if_correct])
    args = parse("--samples", "300", "--json", str(tmp_path / "a.json"))
    assert audit_command.run(args) == 1
    assert "FAIL CONTROL Laplace mean ignoring bound width: violation" in capsys.readouterr().out


def test_rejected_controls_are_expected(tmp_path, monkeypatch):
    seen = {}

    def suite(**kw):
        seen.update(kw)
        return [laplace_ignores_width()]

    monkeypatch.setattr(audit_command, "standard_suite", suite)
    args = parse("--samples", "300", "--controls", "--json", str(tmp_path / "c.json"))
    assert audit_command.run(args) == 0
    assert seen == {"exact": True, "controls": True}


def test_default_budgets_are_each_cases_own(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(audit_command, "standard_suite", lambda **kw: [laplace_ignores_width()])
    monkeypatch.setattr(audit_command, "run_cases",
                        lambda cases, **kw: seen.append(kw) or [])
    monkeypatch.setattr(audit_command, "suite_summary", lambda c, r: {"failures": []})
    monkeypatch.setattr(audit_command, "_attacks", lambda rng: {
        "mask_known_plaintext_d3_in_10": [], "anonymity_differencing_C10_p05": []})
    audit_command.run(parse("--json", str(tmp_path / "d.json")))
    assert seen[0]["samples"] is None and seen[0]["confidence"] == 0.99


@pytest.mark.parametrize("argv", [["--samples", "3"], ["--confidence", "1.5"],
                                  ["--confidence", "0"]])
def test_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse(*argv)
    assert exit_info.value.code == 2
    assert "must be" in capsys.readouterr().err
