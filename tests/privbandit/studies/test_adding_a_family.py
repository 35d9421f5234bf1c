"""docs/adding_a_family.md runs: its two families' code, commands, sessions and audit.

The page has two parts, split at FEDERATED: part 0 is `my_family.py` (epsilon-greedy),
part 1 is `my_federation.py` (a private federation); each part's python blocks are
its module, and part 1's pycon blocks are one doctest session run in that module.
"""
import csv
import doctest
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit import registry
from privbandit.accounting.errors import BudgetExceededError
from privbandit.auditing.end_to_end import audit_entry
from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.errors import ConfigError
from privbandit.runtime import run
from privbandit.studies import parse_study

CLI = "import sys; from privbandit.cli import main; sys.exit(main(sys.argv[1:]))"
DOC = Path(__file__).resolve().parents[3] / "docs" / "adding_a_family.md"
FEDERATED = "\n## A federated family\n"


def _part(index: int) -> str:
    parts = DOC.read_text(encoding="utf-8").split(FEDERATED)
    assert len(parts) == 2, f"the page has one {FEDERATED.strip()!r} section"
    return parts[index]


def _blocks(language: str, part: int = 0) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", _part(part), re.S)


def _module(folder: Path, name: str, source: str):
    """`source` written to folder/name.py and imported (which registers its entries)."""
    (folder / f"{name}.py").write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cli(folder: Path, module: str, args: list[str]) -> str:
    """stdout of `privbandit args` run in `folder` with `module` registering algorithms."""
    env = {**os.environ, "PYTHONPATH": str(folder), "PRIVBANDIT_ALGORITHMS": module}
    done = subprocess.run([sys.executable, "-c", CLI, *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _commands(part: int, module: str) -> list[list[str]]:
    """The arguments of the page's `privbandit` commands in `part`'s first bash block."""
    lines = [line.split() for line in _blocks("bash", part)[0].splitlines()]
    assert all(words[:2] == [f"PRIVBANDIT_ALGORITHMS={module}", "privbandit"] for words in lines)
    return [words[2:] for words in lines]


@pytest.fixture(scope="module", autouse=True)
def scratch_registry():
    """The page's entries register in a copy of the registry, dropped after these tests
    (other tests list every registered private algorithm)."""
    registry.algorithms()  # the in-tree families first, into the registry kept
    patch = pytest.MonkeyPatch()
    patch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    yield
    patch.undo()


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    """The first part's module written out and imported (which registers its entry)."""
    folder = tmp_path_factory.mktemp("family")
    (folder / "greedy.toml").write_text(_blocks("toml")[0], encoding="utf-8")
    return folder, _module(folder, "my_family", "\n\n".join(_blocks("python")))


def test_the_pages_commands_list_and_run_the_new_family(family):
    folder, _ = family
    commands = _commands(0, "my_family")
    assert [c[:2] for c in commands] == [["study", "algorithms"], ["study", "run"]]
    outputs = []
    for args in commands:
        extra = ["--workers", "1", "--no-plots"] if args[1] == "run" else []
        outputs.append(_cli(folder, "my_family", [*args, *extra]))
    assert "explore: a finite number in [0, 1]; default 0.1" in outputs[0]
    assert "preset 'greedy': explore = 0.0" in outputs[0]
    with open(folder / "results" / "greedy" / "summary.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert sorted(r["label"] for r in rows) == ["epsilon-greedy", "epsilon-greedy", "greedy"]
    assert all(r["seeds"] == "3" and float(r["regret_mean"]) > 0 for r in rows)


def test_the_entry_declares_what_the_page_says(family):
    _, module = family
    spec = parse_study(_blocks("toml")[0])
    configs = {run.label: run.config() for run in spec.runs()}
    assert configs["greedy"]["explore"] == 0.0  # the preset
    assert configs["greedy"]["environment"] == {"arms": 5}
    result = module.ENTRY.run(configs["greedy"], np.random.SeedSequence(1))
    assert result.algorithm == "epsilon-greedy" and result.horizon == 3000
    assert result.params["explore"] == 0.0
    direct = module.ENTRY.run({"horizon": 3000, "explore": 0.0, "environment": {"arms": 5}},
                              np.random.SeedSequence(1))
    np.testing.assert_array_equal(direct.regret, result.regret)
    with pytest.raises(ConfigError, match="unknown key 'explroe'"):
        module.ENTRY.run({"horizon": 10, "explroe": 0.1}, 1)


@pytest.mark.parametrize("bad, message", [
    ("explore = [0.02, 0.2]", None),
    ("explroe = [0.1]", "unknown key 'explroe' in [algorithm.grid] of epsilon-greedy; did you "
                        "mean 'explore'? allowed: explore"),
    ("explore = [1.5]", "algorithm[0].explore must be a finite number in [0, 1]; got 1.5"),
])
def test_the_pages_error_messages(family, bad, message):
    text = _blocks("toml")[0].replace("explore = [0.02, 0.2]", bad)
    if message is None:
        parse_study(text)
        return
    with pytest.raises(ConfigError) as info:
        parse_study(text)
    assert str(info.value) == message
    assert f"`{message}`".replace(" ", "") in DOC.read_text().replace("\n", "").replace(" ", "")


# -- the second part: a private federation -------------------------------------------------

@pytest.fixture(scope="module")
def federation(tmp_path_factory):
    """The second part's module written out and imported (which registers its entry)."""
    folder = tmp_path_factory.mktemp("federation")
    (folder / "shared.toml").write_text(_blocks("toml", 1)[0], encoding="utf-8")
    return folder, _module(folder, "my_federation", "\n\n".join(_blocks("python", 1)))


def test_the_federations_sessions_print_what_the_page_shows(federation):
    """The pycon blocks, one doctest session in the module: the run, its statement and
    ledgers, the horizon check, and the end-to-end audit's report."""
    _, module = federation
    text = "\n".join(_blocks("pycon", 1))
    session = doctest.DocTestParser().get_doctest(text, dict(vars(module)), "federation",
                                                  str(DOC), 0)
    assert len(session.examples) >= 8
    runner = doctest.DocTestRunner()
    report: list[str] = []
    failed, _ = runner.run(session, out=report.append)
    assert failed == 0, "".join(report)


def test_the_federations_statement_ledgers_and_audit(federation):
    _, module = federation
    config = {"epsilon": 1.0, "horizon": 4000, "environment": {"users": 4, "arms": 5}}
    result = module.ENTRY.run(config, 0)
    assert result.algorithm == "shared-means" and result.params["sampler"] == "grid"
    assert result.privacy.holds_interactively and result.privacy.epsilon == 1.0
    assert all(led["epsilon_spent"] <= 1.0 and led["releases"] == 4 for led in result.ledgers)
    assert result.comm["messages_by_party"]["server"] == 16  # 4 broadcasts to 4 agents
    np.testing.assert_array_equal(result.comm_rounds, [250, 1250, 2250, 3250])
    assert module.ENTRY.run({**config, "sampler": "fast"}, 0).privacy.float_safe is False
    report = audit_entry("shared-means", config, 0, flips=(0, 1, 3), agents=(1,))
    assert report.verdict == "consistent", report.describe()
    assert [round(f.epsilon, 6) for f in report.findings] == [1.0, 0.75, 0.25]


def test_the_federation_plays_seeds_one_by_one_with_the_same_results(federation):
    _, module = federation
    config = {"epsilon": 0.5, "horizon": 1200, "epochs": 3, "pulls": 20,
              "environment": {"users": 3, "arms": 4}}
    assert not module.ENTRY.runs_in_lockstep(config, 0)
    together = module.ENTRY.run_seeds(config, [0, 1])
    for seed, result in zip([0, 1], together, strict=True):
        np.testing.assert_array_equal(result.regret, module.ENTRY.run(config, seed).regret)
        assert result.seed == seed
    assert not np.array_equal(together[0].regret, together[1].regret)


@settings(max_examples=25, deadline=None)
@given(epsilon=st.floats(0.01, 20.0), epochs=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_every_agent_spends_its_budget_exactly_and_no_more(federation, epsilon, epochs, seed):
    """Each agent's ledger fills at the last epoch and refuses one more release; the
    statement's epsilon is the budget."""
    _, module = federation
    protocol = module.SharedMeans(epsilon, epochs, 3, "fast")
    env = MultiAgentBernoulliMAB.uniform(2, 3, np.random.default_rng(seed))
    result = run(protocol, env, epochs * 3 * 3 + 7, seed)
    assert result.privacy.epsilon == epsilon
    for ledger in protocol.ledgers():
        spent, delta = ledger.spent()
        assert delta == 0.0 and len(ledger.events) == epochs
        assert spent == pytest.approx(epsilon, rel=1e-12)
        assert spent <= epsilon * (1 + 1e-9)  # the ledger's own tolerance
        with pytest.raises(BudgetExceededError):
            ledger.charge(ledger.events[-1])


def test_the_audit_catches_the_federation_without_its_budget_split(federation):
    """A positive control: the page's code releasing at the full epsilon every epoch,
    its ledger charge dropped, claims epsilon and is caught releasing unpaid (the tape is
    checked against the ledgers: `privbandit.audits.check_recorded`)."""
    folder, _ = federation
    source = "\n\n".join(_blocks("python", 1))
    for old, new in (("ReleasePlan(self.epsilon / self.epochs,", "ReleasePlan(self.epsilon,"),
                     ("ledger.charge(mechanism.event)", "pass"),
                     ('"shared-means", build_shared_means', '"shared-means-broken", '
                                                           "build_shared_means")):
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    _module(folder, "broken_federation", source)
    config = {"epsilon": 1.0, "horizon": 2000, "environment": {"users": 2, "arms": 3}}
    report = audit_entry("shared-means-broken", config, 0, flips=(0,))
    assert report.verdict == "violation"
    assert "charged no ledger" in report.describe()


def test_the_federations_commands_account_and_run_the_study(federation):
    folder, _ = federation
    commands = _commands(1, "my_federation")
    assert [c[0] for c in commands] == ["account", "study"]
    printed = _cli(folder, "my_federation", commands[0])
    assert printed == _blocks("text", 1)[0]
    _cli(folder, "my_federation", [*commands[1], "--workers", "1", "--no-plots"])
    with open(folder / "results" / "shared" / "summary.csv", newline="") as fh:
        rows = {float(r["epsilon"]): r for r in csv.DictReader(fh)}
    assert sorted(rows) == [0.1, 1.0]
    for epsilon, row in rows.items():
        assert row["seeds"] == "3" and float(row["epsilon_spent_max"]) == epsilon
        assert float(row["comm_messages_mean"]) == 32
    assert float(rows[0.1]["regret_mean"]) > float(rows[1.0]["regret_mean"])
