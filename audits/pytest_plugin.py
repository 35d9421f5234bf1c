"""pytest plugin of privbandit (entry point `privbandit` in the `pytest11` group).

Loaded automatically once privbandit is installed; disable with `-p no:privbandit`.

Fixtures
- `rng`: a `numpy.random.Generator` seeded per test from the base seed and the
  test's node id, so every test (and every parametrization) gets its own
  reproducible stream.  When a test that used it fails, the report gets a
  "privbandit" section naming the seed: `np.random.default_rng([base, id])`
  replays the stream outside pytest.
- `audit_samples`: the runs per side an audit should use, as chosen by the
  options below; pass it to `privbandit.audits.assertions.assert_consistent(...,
  samples=audit_samples)`.

Options (command line, or the ini keys `privbandit_audit_samples` /
`privbandit_seed`, or the environment variables `PRIVBANDIT_AUDIT_SAMPLES` /
`PRIVBANDIT_SEED`; the command line wins)
- `--privbandit-audit-samples quick|full|N`: quick (default) for CI, full for
  nightly runs, or N runs per side.
- `--privbandit-seed N|random`: the base seed (default 0); `random` draws one
  from the OS and prints it in the header, to explore new streams nightly.

Marker: `privacy_audit` tags statistical audits, e.g. `pytest -m privacy_audit
--privbandit-audit-samples full` for the nightly job.

Cost to a project that does not use it: the plugin imports no NumPy and none
of privbandit's layers when pytest starts (tests/audits/test_plugin.py keeps
its import under 50 ms).  A bad `PRIVBANDIT_*` variable or ini value fails
only the tests that use the fixtures, with a message naming the variable;
a bad command-line option is a usage error.  Needs no Hypothesis (only
`privbandit.audits.strategies` does).
"""
from __future__ import annotations

import os
import secrets
import zlib

import pytest

from .samples import SAMPLE_PRESETS, parse_samples

_SAMPLES_KEY = pytest.StashKey[int]()
_SAMPLES_SPEC_KEY = pytest.StashKey[str]()
_BASE_SEED_KEY = pytest.StashKey[int]()
_PROBLEM_KEY = pytest.StashKey[str]()
_TEST_SEED_KEY = pytest.StashKey[list]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("privbandit", "privbandit privacy tests")
    group.addoption(
        "--privbandit-audit-samples", dest="privbandit_audit_samples", default=None,
        metavar="quick|full|N",
        help=f"runs per side of privacy audits (quick = {SAMPLE_PRESETS['quick']}, "
             f"full = {SAMPLE_PRESETS['full']}); the audit_samples fixture",
    )
    group.addoption(
        "--privbandit-seed", dest="privbandit_seed", default=None, metavar="N|random",
        help="base seed of the per-test rng fixture (default 0; 'random' draws one)",
    )
    parser.addini("privbandit_audit_samples", "default of --privbandit-audit-samples",
                  default="")
    parser.addini("privbandit_seed", "default of --privbandit-seed", default="")


def _setting(config: pytest.Config, name: str, env: str, default: str) -> tuple[str, str]:
    """(value, where it came from) for one setting: command line, environment, ini."""
    for value, source in ((config.getoption(name), f"--{name.replace('_', '-')}"),
                          (os.environ.get(env), f"the environment variable {env}"),
                          (config.getini(name), f"the ini key {name}")):
        if value is not None and str(value).strip():
            return str(value).strip(), source
    return default, "the default"


def _base_seed(spec: str) -> int | None:
    if spec.lower() == "random":
        return secrets.randbits(63)
    return int(spec) if spec.isdigit() else None


def pytest_configure(config: pytest.Config) -> None:
    problems = []
    spec, source = _setting(config, "privbandit_audit_samples", "PRIVBANDIT_AUDIT_SAMPLES",
                            "quick")
    samples = parse_samples(spec)
    if samples is None:
        problems.append((source, f"{source} must be 'quick', 'full' or an integer >= 4; "
                                 f"got {spec!r}"))
        samples, spec = SAMPLE_PRESETS["quick"], "quick"
    seed_spec, seed_source = _setting(config, "privbandit_seed", "PRIVBANDIT_SEED", "0")
    base = _base_seed(seed_spec)
    if base is None:
        problems.append((seed_source, f"{seed_source} must be an integer >= 0 or 'random'; "
                                      f"got {seed_spec!r}"))
        base = 0
    for source, message in problems:
        if source.startswith("--"):  # typed on this command line: stop at once
            raise pytest.UsageError(message)
    config.stash[_SAMPLES_KEY] = samples
    config.stash[_SAMPLES_SPEC_KEY] = spec
    config.stash[_BASE_SEED_KEY] = base
    # Only tests that use the plugin's fixtures fail on a bad variable or ini value.
    config.stash[_PROBLEM_KEY] = "; ".join(message for _, message in problems)
    # Distributed runs (pytest-xdist) hand the controller's options to every worker:
    # storing the resolved seed gives them all one base seed, even for "random".
    config.option.privbandit_seed = str(base)
    config.addinivalue_line(
        "markers", "privacy_audit: a statistical privacy audit (cost grows with "
        "--privbandit-audit-samples)")


def pytest_report_header(config: pytest.Config) -> str:
    problem = config.stash.get(_PROBLEM_KEY, "")
    if problem:
        return f"privbandit: {problem} (tests using its fixtures will fail)"
    return (f"privbandit: audit samples {config.stash[_SAMPLES_SPEC_KEY]} "
            f"({config.stash[_SAMPLES_KEY]} per side), base seed "
            f"{config.stash[_BASE_SEED_KEY]}")


def seed_for(base: int, nodeid: str) -> list[int]:
    """The seed of the `rng` fixture for test `nodeid`: [base, crc32 of the id]."""
    return [int(base), zlib.crc32(nodeid.encode("utf-8"))]


def _check_settings(request: pytest.FixtureRequest) -> None:
    problem = request.config.stash.get(_PROBLEM_KEY, "")
    if problem:
        pytest.fail(f"privbandit plugin: {problem}", pytrace=False)


@pytest.fixture
def rng(request: pytest.FixtureRequest):
    """A Generator seeded from the base seed and this test's id (printed if the test fails)."""
    import numpy as np

    _check_settings(request)
    seed = seed_for(request.config.stash[_BASE_SEED_KEY], request.node.nodeid)
    request.node.stash[_TEST_SEED_KEY] = seed
    return np.random.default_rng(seed)


@pytest.fixture
def audit_samples(request: pytest.FixtureRequest) -> int:
    """Runs per side for audits: --privbandit-audit-samples (quick by default)."""
    _check_settings(request)
    return request.config.stash[_SAMPLES_KEY]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    seed = item.stash.get(_TEST_SEED_KEY, None)
    if report.failed and seed is not None:
        base = item.config.stash[_BASE_SEED_KEY]
        report.sections.append((
            "privbandit",
            f"rng fixture seed: {seed} (base seed {base}, test {item.nodeid})\n"
            f"replay the stream: numpy.random.default_rng({seed}); "
            f"rerun the test with --privbandit-seed {base}",
        ))
    return report
