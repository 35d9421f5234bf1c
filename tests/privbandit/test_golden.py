"""Golden regression: fixed seeds give the same decisions, and the same numbers to a tolerance.

For every registered algorithm (through the study parser, as a study runs it)
and for the run functions of every family, small fixed runs are reduced to a
fingerprint (`golden_fingerprint`): the decisions the run handed its world
(actions, arms, assignments), the clusters it detected, its communication and
its ledgers' releases, compared exactly; its regret curve, reward, epsilon
spent, detection error and the sums of the scores its decisions were taken
on, compared to a relative tolerance of 1e-9.  So the fingerprints hold on
any CPU and BLAS kernel (`test_golden_set_holds_under_another_blas_kernel`),
and a change of an algorithm's arithmetic changes them
(`test_a_radius_changed_by_one_part_in_a_million_fails`).

`golden.json` holds one object per family, one fingerprint per case.  A
refactor that leaves an algorithm alone must leave its fingerprint unchanged;
a deliberate change of an algorithm regenerates its family's fingerprints
(`python tests/privbandit/test_golden.py FAMILY...`; no argument: all) and
says why in its commit (docs/reliability.md).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

if __package__ in (None, ""):  # run as a script, to regenerate
    sys.path.insert(0, str(Path(__file__).parent))
    from golden_fingerprint import TOLERANCE, differences, fingerprint
else:
    from .blas_kernels import TEST_ORDER, kernel_of, other_kernel
    from .golden_fingerprint import TOLERANCE, differences, fingerprint

GOLDEN = Path(__file__).with_name("golden.json")
ROOT = Path(__file__).resolve().parents[2]

# one small study per family: every registered algorithm of the family, fixed seeds
STUDIES: dict[str, dict[str, Any]] = {
    "core": {
        "horizon": 300, "seeds": [0, 1],
        "environment": {"dim": 5, "users": 8, "clusters": 2, "items": 6},
        "algorithm": [{"name": n} for n in ("linucb", "linucb-shared", "lints", "club", "sclub")],
    },
    "fclub": {
        "horizon": 400, "seeds": [0, 1],
        "environment": {"dim": 5, "users": 8, "clusters": 2, "items": 6, "servers": 2},
        "algorithm": [
            *({"name": n} for n in ("fclub", "fclub-dc", "homo", "homo-dc", "club-per-server",
                                    "sclub-per-server", "linucb", "fclub-dc-sets",
                                    "oracle-clusters")),
            {"name": "cdp-fclub-dc", "grid": {"epsilon": [1.0, 8.0]}},
            {"name": "cdp-fclub-dc-paper", "preset": "paper", "grid": {"epsilon": [1.0, 8.0]}},
            {"name": "cdp-fclub-dc+", "params": {"batch": 50},
             "grid": {"epsilon": [1.0, 1e4]}},
        ],
    },
    "cascade": {
        "horizon": 400, "seeds": [0, 1],
        "environment": {"users": 8, "clusters": 2, "dim": 5, "items": 12, "list_len": 3},
        "algorithm": [
            *({"name": n, "params": {"cluster_points": 5}}
              for n in ("fedc3ucb-h", "forcecomm", "noauxiliary", "fedlinucb", "fedind",
                        "fedc3ucb-sets", "oracle-cascade")),
            {"name": "cdp-fedc3ucb-h", "params": {"cluster_points": 5},
             "grid": {"epsilon": [1.0, 8.0], "delta": [0.1], "calibration": ["tight", "paper"]}},
            {"name": "cdp-fedc3ucb-h+", "params": {"cluster_points": 5, "batch": 50},
             "grid": {"epsilon": [1.0, 1e4]}},
            {"name": "cdp-fedc3ucb-sets", "params": {"cluster_points": 5},
             "grid": {"epsilon": [1.0, 1e4], "record": ["displayed", "first"]}},
        ],
    },
    "fedmab": {
        "horizon": 20000, "seeds": [0, 1],
        "environment": {"users": 6, "arms": 5},
        "algorithm": [{"name": n, "params": p, "grid": {"epsilon": [0.5, 4.0]}}
                      for n, p in (("cdp-mab", {}), ("ddp-mab", {"graph": "ring"}),
                                   ("hdp-mab", {"components": 2}))],
    },
    "vertical": {
        "horizon": 200, "seeds": [0, 1],
        "environment": {"dim": 10, "items": 5, "parties": 2},
        "algorithm": [{"name": n} for n in ("vfucb", "vfts", "partial-linucb", "partial-lints")],
    },
    "anonymous": {
        "horizon": 20000, "seeds": [0, 1],
        "environment": {"users": 30, "arms": 3, "threshold": 2, "cluster_size": 5},
        "algorithm": [
            *({"name": n} for n in ("anonymous-base-lp", "anonymous-base-randomized",
                                    "anonymous-base-greedy", "anonymous-etc")),
            {"name": "anonymous-base-laplace", "grid": {"epsilon": [1.0]}},
        ],
    },
}


def _study_runs(family: str):
    from privbandit.studies.spec import study_from_dict

    spec = study_from_dict({"name": f"golden-{family}", **STUDIES[family]})
    for run in spec.runs():
        yield run.run_id.rsplit("__", 1)[0], run


def _study_case(family: str, case: str):
    from privbandit.registry import get_algorithm
    from privbandit.studies.runner import run_seed

    run = dict(_study_runs(family))[case]
    return get_algorithm(run.algorithm).run(run.config(), run_seed(run))


# -- the run functions of each family, called directly ---------------------------------
def _core_run():
    from privbandit.envs import clustered_linear_environment
    from privbandit.policies import LinTS
    from privbandit.runtime import run

    env = clustered_linear_environment(6, 2, 4, 5, np.random.default_rng(3), reward="gaussian")
    return run(LinTS(4, 6, v=0.2), env, 250, 11)


def _fclub_raw_detection():
    from privbandit.envs import seed000_environment
    from privbandit.fclub import make_policy
    from privbandit.runtime import run

    env = seed000_environment(np.random.default_rng(5), n_users=8, n_clusters=2, dim=4,
                              n_items=5)
    policy = make_policy("cdp-fclub-dc", dim=4, n_users=8, n_servers=2, horizon=300,
                         epsilon=2.0, delta=0.1, detection="raw")
    return run(policy, env, 300, 7)


def _cascade_prefetch():
    from privbandit.registry import get_algorithm

    config = {"horizon": 300, "prefetch": True,
              "environment": {"users": 6, "clusters": 2, "dim": 4, "items": 10, "list_len": 2}}
    return get_algorithm("fedc3ucb-h").run(config, np.random.SeedSequence(4))


def _fedmab_participation():
    from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
    from privbandit.fedmab import CDPMAB
    from privbandit.runtime import play_algorithm

    env = MultiAgentBernoulliMAB.uniform(5, 4, np.random.default_rng(8), heterogeneous=True)
    return play_algorithm(CDPMAB(1.0, 30000, participation=0.6, rounds=4), env,
                          np.random.default_rng(9))


def _vertical_runs(kind: str):
    from privbandit.envs.vertical import VerticalSplit, seed003_environment
    from privbandit.policies import LinUCB
    from privbandit.runtime import run, run_setup, seed_streams
    from privbandit.vertical import vertical_setup

    world = seed003_environment(8, 6, rng=np.random.default_rng(1))
    if kind == "centralized":
        return run(LinUCB(8, beta=0.5), world, 150, 3)
    setup = vertical_setup(LinUCB(8, beta=0.5), VerticalSplit(world, (3, 3, 2)), 150,
                           seed_streams(3)["secrets"], seal_traffic=False)
    return run_setup(setup, 3)


def _anonymous_etc_laplace():
    from privbandit.anonymous import AnonymousExploreThenCommit
    from privbandit.envs.anonymous import AnonymousBanditEnv, clustered_means
    from privbandit.runtime import play_algorithm

    means = clustered_means(20, 3, 4, np.random.default_rng(2))
    env = AnonymousBanditEnv(means, 2, laplace_epsilon=1.0)
    return play_algorithm(AnonymousExploreThenCommit(20, 3, 2, 5000, explore_constant=0.3),
                          env, np.random.default_rng(6))


DIRECT = {
    "core/run-lints-gaussian": _core_run,
    "fclub/cdp-raw-detection": _fclub_raw_detection,
    "cascade/run-cascade-prefetch": _cascade_prefetch,
    "fedmab/cdp-participation": _fedmab_participation,
    "vertical/run-vertical-plain": lambda: _vertical_runs("vertical"),
    "vertical/run-centralized": lambda: _vertical_runs("centralized"),
    "anonymous/etc-laplace": _anonymous_etc_laplace,
}


def all_cases() -> dict[str, Any]:
    """Every case name, "family/case" -> a function computing its `RunResult`."""
    cases: dict[str, Any] = {}
    for family in STUDIES:
        for case, _ in _study_runs(family):
            cases[f"{family}/{case}"] = lambda f=family, c=case: _study_case(f, c)
    cases.update(DIRECT)
    return cases


def _expected() -> dict[str, Any]:
    """The stored fingerprints by case name ("family/case")."""
    stored = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return {f"{family}/{case}": fp
            for family, cases in stored.items() for case, fp in cases.items()}


def check(case: str) -> list[str]:
    """The differences of `case`'s fingerprint, computed now, from the stored one."""
    return differences(_expected()[case], fingerprint(all_cases()[case]))


def test_every_registered_algorithm_is_pinned():
    from privbandit.registry import algorithms

    ours = {name for name, entry in algorithms().items()
            if getattr(entry.build, "func", entry.build).__module__.startswith("privbandit.")}
    assert ours <= set(_pinned_algorithms())
    assert set(all_cases()) == set(_expected())


def _pinned_algorithms():
    for family in STUDIES:
        for _, run in _study_runs(family):
            yield run.algorithm


@pytest.mark.parametrize("case", sorted(_expected()))
def test_fingerprint_is_unchanged(case):
    found = check(case)
    assert not found, f"{case}: " + "; ".join(found)


def test_golden_set_holds_under_another_blas_kernel():
    """The fingerprints, stored on one machine, hold under another OpenBLAS kernel: its
    other order of summation changes no decision and no float beyond the tolerance."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        pytest.skip(f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} is set by the "
                    "machine; the tests leave it alone")
    kernel = other_kernel(TEST_ORDER)
    if kernel is None:
        pytest.skip("no other OpenBLAS kernel here (not x86-64, or OpenBLAS without DYNAMIC_ARCH)")
    environ = {**os.environ, "OPENBLAS_CORETYPE": kernel}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(Path(__file__)), "-p", "no:cacheprovider",
         "-k", "test_fingerprint_is_unchanged"],
        cwd=ROOT, env=environ, capture_output=True, text=True, timeout=600, check=False)
    ran = f"under OPENBLAS_CORETYPE={kernel} ({kernel_of(environ)} kernels)"
    assert done.returncode == 0, f"{ran}:\n{done.stdout[-4000:]}{done.stderr[-2000:]}"
    assert f"{len(_expected())} passed" in done.stdout, f"{ran}:\n{done.stdout[-2000:]}"


def _scaled(function, factor):
    return lambda *args, **kwargs: function(*args, **kwargs) * factor


def _radius_of_linucb(monkeypatch, factor):
    from privbandit.policies.radius import ConfidenceRadius

    monkeypatch.setattr(ConfidenceRadius, "__call__", _scaled(ConfidenceRadius.__call__, factor))
    monkeypatch.setattr(ConfidenceRadius, "many", _scaled(ConfidenceRadius.many, factor))


def _radius_of_federated_mab(monkeypatch, factor):
    from privbandit.fedmab import schedule

    monkeypatch.setattr(schedule, "confidence_radius", _scaled(schedule.confidence_radius, factor))


@pytest.mark.parametrize(("case", "change"), [
    ("core/linucb____s0", _radius_of_linucb),
    ("vertical/vfucb____s0", _radius_of_linucb),
    ("fedmab/cdp-mab__epsilon-0.5__s0", _radius_of_federated_mab),
])
def test_a_radius_changed_by_one_part_in_a_million_fails(monkeypatch, case, change):
    """A deliberate change of an algorithm's arithmetic fails the golden test, even when
    it flips no decision in these short runs."""
    change(monkeypatch, 1 + 1e-6)
    found = check(case)
    assert any(d.startswith("scores.") and "> tolerance 1e-09" in d for d in found), found


@settings(max_examples=200, deadline=None)
@given(st.floats(-1e12, 1e12, allow_nan=False), st.floats(-1.0, 1.0))
def test_floats_compare_to_the_tolerance_and_the_rest_exactly(value, shift):
    moved = value * (1 + shift * TOLERANCE / 2) if abs(value) > 1 else value + shift * TOLERANCE / 2
    assert differences({"f": [value], "n": [3, "ab"]}, {"f": [moved], "n": [3, "ab"]}) == []
    far = value + 3 * TOLERANCE * max(1.0, abs(value))
    (message,) = differences({"f": [value]}, {"f": [far]})
    assert message.startswith(f"f[0]: expected {value!r}, got {far!r}") and "1e-09" in message
    assert differences({"n": [3, "ab"]}, {"n": [4, "ab"]}) == [
        "n[0]: expected 3, got 4 (compared exactly)"]
    assert differences({"n": [3]}, {"n": [3.0]}) != []


def test_the_reliability_page_states_the_tolerance_and_every_field():
    text = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    stated = re.findall(r"relative tolerance of ([0-9e.-]+[0-9])", text.replace("\n", " "))
    assert stated and {float(v) for v in stated} == {TOLERANCE}
    table = text.split("## The golden fingerprints", 1)[1]
    documented = {name for row in re.findall(r"^\| (`[^|]*) \|", table, flags=re.M)
                  for name in re.findall(r"`([a-z_]+)`", row)}
    fields = {key for fp in _expected().values() for key in fp}
    assert documented == fields - {"horizon"}


def test_ci_runs_the_golden_set_under_another_kernel_after_the_readme_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    readme_command = ci.index('pip install -e ".[test]" && python -m pytest\n')
    second = ci.index('OPENBLAS_CORETYPE="$kernel" python -m pytest tests/privbandit/'
                      'test_golden.py')
    assert readme_command < ci.index('if [ -z "${OPENBLAS_CORETYPE:-}" ]') < second


def write(names: list[str]) -> None:
    """Store the fingerprints of `names` (cases "family/case" or whole families), keeping
    the others; one object per family, one line per field."""
    cases = all_cases()
    chosen = [c for c in cases if c in names or c.split("/", 1)[0] in names]
    unknown = set(names) - set(chosen) - {c.split("/", 1)[0] for c in chosen}
    if unknown:
        raise SystemExit(f"unknown cases or families {sorted(unknown)}; families: {list(STUDIES)}")
    data = _expected() if GOLDEN.exists() else {}
    data = {c: fp for c, fp in data.items() if c in cases}
    for name in chosen:
        data[name] = fingerprint(cases[name])
    nested: dict[str, dict[str, Any]] = {}
    for name in sorted(data):
        family, case = name.split("/", 1)
        nested.setdefault(family, {})[case] = data[name]
    text = json.dumps(nested, indent=1, sort_keys=True)
    # lists of plain values on one line
    text = re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: f"[{' '.join(m[1].split())}]", text)
    GOLDEN.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {len(chosen)} fingerprints to {GOLDEN}")


if __name__ == "__main__":  # regenerate: only when an algorithm changed on purpose
    write(sys.argv[1:] or list(STUDIES))
