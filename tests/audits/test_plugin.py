"""The pytest plugin: entry point, rng fixture, sample-count option, seed on failure."""
from __future__ import annotations

import re
import subprocess
import sys
import zlib
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest

from privbandit.audits.assertions import FULL_SAMPLES, QUICK_SAMPLES
from privbandit.audits.pytest_plugin import seed_for

pytest_plugins = ["pytester"]

PROBE = """
import pytest

@pytest.mark.parametrize("k", [1, 2])
def test_probe(rng, audit_samples, k):
    print(f"DRAW {k} {rng.integers(2**62)} SAMPLES {audit_samples}")

def test_other(rng):
    print(f"DRAW other {rng.integers(2**62)}")
"""


@pytest.fixture(autouse=True)
def no_settings_from_the_environment(monkeypatch):
    """The inner sessions must not inherit a nightly job's PRIVBANDIT_* settings."""
    monkeypatch.delenv("PRIVBANDIT_AUDIT_SAMPLES", raising=False)
    monkeypatch.delenv("PRIVBANDIT_SEED", raising=False)


def draws(result) -> dict[str, str]:
    return dict(re.findall(r"DRAW (\w+) (\d+)", result.stdout.str()))


def samples(result) -> set[int]:
    return {int(n) for n in re.findall(r"SAMPLES (\d+)", result.stdout.str())}


def test_registered_as_a_pytest11_entry_point():
    found = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert found.get("privbandit") == "privbandit.audits.pytest_plugin"


def test_rng_is_seeded_per_test_and_reproducible(pytester):
    pytester.makepyfile(test_probe=PROBE)
    first = pytester.runpytest("-s")
    first.assert_outcomes(passed=3)
    a, b = draws(first), draws(pytester.runpytest("-s"))
    assert a == b and len(set(a.values())) == 3
    expected = np.random.default_rng(seed_for(0, "test_probe.py::test_probe[1]")).integers(2**62)
    assert a["1"] == str(expected)
    moved = draws(pytester.runpytest("-s", "--privbandit-seed", "5"))
    assert set(moved.values()).isdisjoint(a.values())


def test_seed_is_printed_when_a_test_fails(pytester):
    pytester.makepyfile(test_fails="def test_fails(rng):\n    assert rng.random() < 0\n")
    result = pytester.runpytest("--privbandit-seed", "12")
    result.assert_outcomes(failed=1)
    crc = zlib.crc32(b"test_fails.py::test_fails")
    result.stdout.fnmatch_lines([
        "*- privbandit -*",
        f"rng fixture seed: [12, {crc}] (base seed 12, test test_fails.py::test_fails)",
        f"replay the stream: numpy.random.default_rng([12, {crc}]); rerun the test with "
        "--privbandit-seed 12",
    ])


def test_no_seed_section_for_tests_without_rng(pytester):
    pytester.makepyfile(test_plain="def test_plain():\n    assert False\n")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    assert "rng fixture seed" not in result.stdout.str()


@pytest.mark.parametrize("args, env, ini, expected", [
    ((), None, None, QUICK_SAMPLES),
    (("--privbandit-audit-samples", "full"), None, None, FULL_SAMPLES),
    (("--privbandit-audit-samples=1234",), None, None, 1234),
    ((), "full", None, FULL_SAMPLES),
    ((), None, "777", 777),
    (("--privbandit-audit-samples", "quick"), "full", "777", QUICK_SAMPLES),
])
def test_audit_sample_count_comes_from_option_env_or_ini(pytester, monkeypatch, args, env, ini,
                                                         expected):
    if env is not None:
        monkeypatch.setenv("PRIVBANDIT_AUDIT_SAMPLES", env)
    if ini is not None:
        pytester.makeini(f"[pytest]\nprivbandit_audit_samples = {ini}\n")
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest("-s", *args)
    result.assert_outcomes(passed=3)
    assert samples(result) == {expected}


@pytest.mark.parametrize("args, message", [
    (("--privbandit-audit-samples", "3"),
     "*--privbandit-audit-samples must be 'quick', 'full' or an integer >= 4; got '3'*"),
    (("--privbandit-seed", "-1"),
     "*--privbandit-seed must be an integer >= 0 or 'random'; got '-1'*"),
])
def test_bad_options_are_usage_errors(pytester, args, message):
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_header_marker_and_random_seed(pytester):
    pytester.makepyfile(test_marked="""
        import pytest

        @pytest.mark.privacy_audit
        def test_marked(audit_samples, request):
            print("OPTION", request.config.getoption("privbandit_seed"))
            assert audit_samples == 50
    """)
    result = pytester.runpytest("-s", "--strict-markers", "--privbandit-audit-samples", "50",
                                "--privbandit-seed", "random")
    result.assert_outcomes(passed=1)
    text = result.stdout.str()
    (seed,) = re.findall(r"privbandit: audit samples 50 \(50 per side\), base seed (\d+)", text)
    # the resolved seed replaces "random" in the options (what xdist workers receive)
    assert re.findall(r"OPTION (\d+)", text) == [seed]


def test_plugin_and_assertions_import_without_hypothesis():
    code = (
        "import sys\n"
        "sys.modules['hypothesis'] = None  # any import of it now fails\n"
        "import privbandit.audits, privbandit.audits.assertions, privbandit.audits.pytest_plugin\n"
        "try:\n"
        "    import privbandit.audits.strategies\n"
        "except ImportError as err:\n"
        "    print('REFUSED', err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.startswith(
        "REFUSED privbandit.audits.strategies needs Hypothesis, a test dependency: "
        'pip install "privbandit[test]"')


# -- docs/testing.md: the worked example's pasted failure is what it really prints ----------
DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def doc_blocks(kind: str) -> list[str]:
    parts = DOC.read_text(encoding="utf-8").split(f"```{kind}\n")[1:]
    return [p.split("```", 1)[0] for p in parts]


def test_docs_worked_example_prints_the_documented_failure(pytester):
    (example,) = [b for b in doc_blocks("python") if b.startswith("# test_histogram.py")]
    pasted = [ln for ln in doc_blocks("text")[0].splitlines()
              if ln.strip() and ln != "..." and not ln.startswith(("_", "-"))]
    pytester.makepyfile(test_histogram=example)
    result = pytester.runpytest("-k", "keeps_epsilon_1")
    result.assert_outcomes(passed=1, failed=1)
    actual = iter(result.outlines)
    for line in pasted:  # in order, each exactly
        assert any(got == line for got in actual), f"not printed (in order): {line!r}"


# -- an installed plugin must not cost or break unrelated projects ---------------------------
def test_plugin_import_is_light():
    code = (
        "import sys, time\n"
        "import pytest\n"
        "start = time.perf_counter()\n"
        "import privbandit.audits.pytest_plugin\n"
        "took = time.perf_counter() - start\n"
        "heavy = sorted(m for m in ('numpy', 'scipy', 'privbandit.accounting')\n"
        "               if m in sys.modules)\n"
        "print(took, heavy)\n"
    )
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, timeout=60).stdout.split(maxsplit=1) for _ in range(3)]
    assert all(heavy.strip() == "[]" for _, heavy in runs), runs
    assert min(float(took) for took, _ in runs) < 0.05, runs


def test_bad_environment_variable_fails_only_tests_that_use_the_plugin(pytester, monkeypatch):
    monkeypatch.setenv("PRIVBANDIT_SEED", "banana")
    pytester.makepyfile(test_mixed="""
        def test_plain():
            assert True

        def test_uses_rng(rng):
            assert True
    """)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)  # the fixture fails: the test errors
    result.stdout.fnmatch_lines([
        "*privbandit plugin: the environment variable PRIVBANDIT_SEED must be an integer >= 0 "
        "or 'random'; got 'banana'*"])


def test_project_with_its_own_accounting_package_is_untouched(pytester):
    pytester.mkpydir("accounting")
    pytester.makepyfile(**{"accounting/ledger": "KIND = 'theirs'\n"})
    pytester.makepyfile(test_theirs="""
        from accounting.ledger import KIND

        def test_their_package():
            assert KIND == "theirs"
    """)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
