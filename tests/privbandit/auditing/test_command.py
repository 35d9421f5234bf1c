"""`privbandit audit`: table, JSON, exit status."""
import argparse
import dataclasses
import json

import pytest

from privbandit.auditing import command as audit_command
from privbandit.audits.controls import float_laplace, laplace_ignores_width


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
    monkeypatch.setattr(audit_command, "suite_summary", lambda c, r, kinds=None: {"failures": []})
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


@pytest.mark.parametrize("flags,expected,kinds", [
    ([], "violation", ["floating-point"]), (["--distributional-only"], "consistent", []),
])
def test_the_table_and_json_say_which_kind(flags, expected, kinds, tmp_path, capsys,
                                           monkeypatch):
    monkeypatch.setattr(audit_command, "standard_suite", lambda **kw: [float_laplace()])
    out = tmp_path / "k.json"
    assert audit_command.run(parse("--samples", "3000", "--json", str(out), *flags)) == 0
    text = capsys.readouterr().out
    assert "dist" in text.splitlines()[0] and "kind" in text.splitlines()[0]
    (audit,) = json.loads(out.read_text())["audits"]
    assert audit["verdict"] == audit["expected"] == expected
    assert audit["violation_kinds"] == kinds and audit["expected_kind"] == "floating-point"


@pytest.fixture
def ours(monkeypatch):
    """The registry without the toy entries other tests register in this process."""
    from privbandit import registry

    monkeypatch.setattr(registry, "_REGISTRY", {k: v for k, v in registry.algorithms().items()
                                                if not k.startswith("toy")})


def test_one_run_audits_the_registry_private_algorithms(tmp_path, capsys, ours):
    out = tmp_path / "one.json"
    assert audit_command.run(parse("--one-run", "--json", str(out), "--seed", "1")) == 0
    text = capsys.readouterr().out
    data = json.loads(out.read_text())
    from privbandit.auditing.end_to_end import private_entries

    verdicts = {r["pipeline"].split()[0]: r["verdict"] for r in data["one_run"]}
    assert set(verdicts) == {name for name, _ in private_entries()}  # every private entry
    assert not data["not_audited"]
    assert verdicts.pop("cdp-fclub-dc-paper") == "measured"  # its claim: realised sequences
    assert set(verdicts.values()) == {"consistent"}
    assert all(r["canaries"] >= 64 for r in data["one_run"])
    methods = {r["pipeline"].split()[0]: r["method"] for r in data["one_run"]}
    assert methods["cdp-fclub-dc"] == "fdp" and methods["cdp-mab"] == "snj"
    assert all(r["details"]["bound_from"] in r["details"]["bounds"] for r in data["one_run"])
    assert "right/guesses" in text and "from" in text.splitlines()[0]


def test_end_to_end_audits_join_the_report_and_a_violation_fails(tmp_path, capsys,
                                                                 monkeypatch):
    from privbandit.auditing import end_to_end as endtoend
    from privbandit.audits.environment import EnvironmentAuditReport, PairFinding

    def fake(name, entry, epsilons=(1.0,), seed=3):
        ok = EnvironmentAuditReport(1.0, 1e-5, (PairFinding("flip at 5", 0.58, 0.16, 0.0, 9, 1),))
        bad = EnvironmentAuditReport(1.0, 1e-5, (PairFinding("flip at 5", 48.0, 6.5, 0.0, 9, 7),))
        return {"good": ok} if name == "cdp-mab" else {"leaky": bad} if name == "ddp-mab" else {}

    monkeypatch.setattr(endtoend, "entry_audits", fake)
    monkeypatch.setattr(audit_command, "standard_suite", lambda **kw: [])
    out = tmp_path / "e.json"
    assert audit_command.run(parse("--end-to-end", "--json", str(out))) == 1
    text = capsys.readouterr().out
    assert "end to end good: consistent" in text and "FAIL end to end leaky" in text
    data = json.loads(out.read_text())["end_to_end"]
    assert data["good"]["verdict"] == "consistent" and data["leaky"]["worst_epsilon"] == 48.0


def test_a_private_entry_without_a_profile_fails_every_algorithm_audit(tmp_path, capsys,
                                                                       monkeypatch, ours):
    """Never skipped silently: the end-to-end, black-box and one-run audits each fail it."""
    from privbandit import registry

    bare = registry.AlgorithmEntry("bare-private", lambda config, streams: None, private=True)
    monkeypatch.setitem(registry._REGISTRY, "bare-private", bare)
    monkeypatch.setattr(audit_command, "standard_suite", lambda **kw: [])
    monkeypatch.setattr("privbandit.auditing.end_to_end.entry_audits", lambda *a, **k: {})
    monkeypatch.setattr("privbandit.auditing.black_box.audit_entries_transcripts",
                        lambda entries, n, **k: {})
    out = tmp_path / "b.json"
    assert audit_command.run(parse("--end-to-end", "--black-box", "8", "--json",
                                   str(out))) == 1
    text = capsys.readouterr().out
    assert "FAIL end to end bare-private: no audit profile" in text
    assert "FAIL black box bare-private: no audit profile" in text
    from privbandit.auditing import canaries

    case = canaries.entry_case("bare-private", bare)
    assert case.protocol is None and "no audit profile" in case.note
    monkeypatch.setattr(canaries, "registry_cases", lambda epsilon=1.0: [case])
    assert audit_command.run(parse("--one-run", "--json", str(out))) == 1
    assert "FAIL one run bare-private: no audit profile" in capsys.readouterr().out
