"""Every row of docs/reliability.md: a bad input, the error it gets, and state unchanged.

Each row builds a fresh object (or none, for a constructor or a loader), feeds it
the bad input, checks the error's type and message, and checks that the object,
and any generator it was given, are exactly as before (pickled bytes).
"""
from __future__ import annotations

import pickle
import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from privbandit.accounting import BudgetExceededError, InvalidParameterError, LaplaceEvent, Ledger
from privbandit.cli import main
from privbandit.data import read_ratings
from privbandit.envs import LinearUsersEnv, PoolItems, SphereItems, ratings_environment
from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.errors import ConfigError, DataError, RewardError, ShapeError
from privbandit.mechanisms import GaussianVector, PartyMask
from privbandit.mechanisms.errors import ShapeError as MechanismShapeError
from privbandit.policies import LinUCB
from privbandit.registry import get_algorithm

ROOT = Path(__file__).resolve().parents[1]
RAGGED = [[1.0, 0.0], [0.0]]
ITEMS = np.array([[0.5, 0.0], [0.0, 0.5], [0.3, 0.3]])


def selected_linucb() -> LinUCB:
    """A LinUCB between its select and its update (the round's items remembered)."""
    policy = LinUCB(2)
    policy.select(ITEMS, 0, 0, np.random.default_rng(0))
    return policy


def rows() -> list[tuple]:
    """(id, make the object or None, the bad call, error type, message pattern)."""
    rng_rows = []
    for name in ("zcdp", "rdp", "exact-gaussian", "approx-dp", "pld"):
        rng_rows.append((f"ledger-delta0-{name}", None,
                         lambda _o, n=name: Ledger("u", 1.0, 0.0, n), InvalidParameterError,
                         f"delta must be > 0 with the '{name}' accountant"))
    return [
        ("linucb-reward-str", selected_linucb, lambda p: p.update(ITEMS, 0, 0, "1.5", 0),
         RewardError, "reward must be a finite real number; got '1.5'"),
        ("linucb-reward-bool", selected_linucb, lambda p: p.update(ITEMS, 0, 0, True, 0),
         RewardError, "reward must be a finite real number; got True"),
        ("linucb-reward-nan", selected_linucb, lambda p: p.update(ITEMS, 0, 0, np.nan, 0),
         RewardError, "reward must be a finite real number; got nan"),
        ("linucb-items-bool", selected_linucb,
         lambda p: p.select(ITEMS > 0, 0, 1, np.random.default_rng(1)),
         ShapeError, "items must hold real numbers .*got dtype bool"),
        ("linucb-items-str", selected_linucb,
         lambda p: p.select(ITEMS.astype(str), 0, 1, np.random.default_rng(1)),
         ShapeError, "items must hold real numbers"),
        ("linucb-items-list", selected_linucb,
         lambda p: p.select(ITEMS.tolist(), 0, 1, np.random.default_rng(1)),
         ShapeError, r"items must be a \(K, 2\) array of contexts; got list"),
        ("linucb-user-bool", selected_linucb,
         lambda p: p.select(ITEMS, True, 1, np.random.default_rng(1)),
         ConfigError, r"user must be an integer in \[0, 1\); got True"),
        ("gaussian-ragged", lambda: GaussianVector(1.0, 1.0),
         lambda g: g.release(RAGGED, np.random.default_rng(0)),
         InvalidParameterError, "value must be a rectangular array of numbers"),
        ("gaussian-str", lambda: GaussianVector(1.0, 1.0),
         lambda g: g.release(["1.5"], np.random.default_rng(0)),
         MechanismShapeError, "value must hold real numbers"),
        ("partymask-block-ragged", None, lambda _o: PartyMask(RAGGED),
         InvalidParameterError, "block must be a rectangular array of numbers"),
        ("partymask-mask-ragged", lambda: PartyMask(np.eye(2)[:, :1]),
         lambda m: m.mask([[1.0], [2.0, 3.0]]),
         InvalidParameterError, "contexts of party 0 must be a rectangular array"),
        ("linearusers-theta-ragged", None,
         lambda _o: LinearUsersEnv(RAGGED, SphereItems(2, 3)),
         InvalidParameterError, "theta must be a rectangular array of numbers"),
        ("poolitems-features-ragged", None, lambda _o: PoolItems(RAGGED, 1),
         InvalidParameterError, "features must be a rectangular array of numbers"),
        ("mab-means-ragged", None, lambda _o: MultiAgentBernoulliMAB([[0.1, 0.2], [0.3]]),
         InvalidParameterError, "means must be a rectangular array of numbers"),
        ("mab-means-str", None, lambda _o: MultiAgentBernoulliMAB(["0.5"], n_users=2),
         ShapeError, "means must hold real numbers"),
        *rng_rows,
        ("ledger-over-budget", lambda: Ledger("u", 1.0),
         lambda led: led.charge(LaplaceEvent(0.5, 1.0)),
         BudgetExceededError, "would spend epsilon=2"),
        ("hdp-mab-components", None,
         lambda _o: get_algorithm("hdp-mab").run(
             {"horizon": 50, "epsilon": 1.0, "components": 5, "environment": {"users": 10}},
             np.random.SeedSequence(0)),
         ConfigError, r"components must be an integer in \[1, 3\]"),
    ]


ROWS = rows()


def snapshot(obj) -> bytes:
    return pickle.dumps(obj)


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_gets_a_named_error_and_changes_nothing(row):
    _, make, call, error, pattern = row
    obj = None if make is None else make()
    before = snapshot(obj)
    with pytest.raises(error, match=pattern):
        call(obj)
    assert snapshot(obj) == before


RATINGS = [  # (id, file name, bytes, message pattern)
    ("ratings-binary", "u.data", b"1\t2\t5\t0\n\x00\x89PNG\xff", "a binary file"),
    ("ratings-not-utf8", "u.data", b"1\t2\t5\t0\n\xff\xfe\t2\t5\t0\n", "not a UTF-8 text file"),
    ("ratings-ragged", "u.data", b"1\t2\t5\t0\n1\t3\t4\t0\t7\t8\n",
     "line 2: expected 4 fields like the first line; got 6"),
    ("ratings-truncated", "u.data", b"1\t2\t5\t0\n1\t3\t4", "line 2: expected 4 fields"),
    ("ratings-empty", "u.data", b"\n\n", "no ratings found"),
]


@pytest.mark.parametrize("row", RATINGS, ids=[r[0] for r in RATINGS])
def test_bad_rating_files_are_named(tmp_path, row):
    _, name, data, pattern = row
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(DataError, match=f"^{re.escape(str(path))}: .*{pattern}"):
        read_ratings(path)


def test_ratings_top_users_too_large_names_top_users(tmp_path):
    path = tmp_path / "u.data"
    path.write_text("".join(f"{u}\t{i}\t4\t0\n" for u in range(5) for i in range(6)))
    with pytest.raises(DataError, match="top_users=50 exceeds the 5 users .*set top_users <= 5"):
        ratings_environment(path, np.random.default_rng(0), top_users=50, top_items=6)


def test_hdp_mab_default_components_fit_ten_agents():
    result = get_algorithm("hdp-mab").run(
        {"horizon": 200, "epsilon": 1.0, "environment": {"users": 10, "arms": 4}},
        np.random.SeedSequence(0))
    assert result.total_regret >= 0


STUDY_BAD_KEY = 'name = "s"\nhorizon = 10\n[[algorithm]]\nname = "no-such-algorithm"\n'
STUDY_IMPOSSIBLE = textwrap.dedent("""
    name = "s"
    horizon = 50
    seeds = 1
    [environment]
    users = 10
    arms = 4
    [[algorithm]]
    name = "hdp-mab"
    [algorithm.params]
    components = 5
    [algorithm.grid]
    epsilon = [1]
""")
CLI = [  # (id, argv given the study path and the results folder, study bytes, exit, pattern)
    ("cli-study-binary", ["study", "run", "{s}", "--out", "{o}"], b"name = 1\n\x00\xff",
     2, r"study file '.*s.toml' is not UTF-8 text"),
    ("cli-account-binary", ["account", "{s}"], b"\xff\xfe\x00", 2,
     r"study file '.*s.toml' is not UTF-8 text"),
    ("cli-study-bad-key", ["study", "run", "{s}", "--out", "{o}"], STUDY_BAD_KEY.encode(), 2,
     "algorithm must be one of"),
    ("cli-study-impossible-setting", ["study", "run", "{s}", "--out", "{o}", "--workers", "1"],
     STUDY_IMPOSSIBLE.encode(), 3, "components must be an integer in"),
    ("cli-study-missing-file", ["study", "run", "{o}/none.toml", "--out", "{o}"], b"", 2,
     "cannot be read"),
    ("cli-plot-empty-folder", ["study", "plot", "{o}"], b"", 2, "holds no finished runs"),
]


@pytest.mark.parametrize("row", CLI, ids=[r[0] for r in CLI])
def test_cli_bad_input_exits_with_one_line_and_writes_nothing(tmp_path, capsys, row):
    _, argv, data, status, pattern = row
    study, out = tmp_path / "s.toml", tmp_path / "out"
    study.write_bytes(data)
    args = [a.format(s=study, o=out) for a in argv]
    assert main(args) == status
    lines = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in lines if line.startswith("privbandit")]
    assert len(errors) == 1 and errors == lines[-1:] and re.search(pattern, errors[0]), lines
    assert not out.exists()


def test_every_row_is_documented_and_every_documented_row_is_tested():
    text = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    bad_inputs = text.split("\n# Same seed, same numbers", 1)[0]  # the page's first part
    documented = set(re.findall(r"^\| `([a-z0-9-]+)` \|", bad_inputs, flags=re.M))
    tested = {r[0] for r in ROWS} | {r[0] for r in RATINGS} | {r[0] for r in CLI} | {
        "ratings-top-users", "hdp-mab-default-components", "cli-busy-folder",
        "cli-plot-mixed-horizons", "cli-killed-study"}
    assert documented == tested


def test_audit_without_diffprivlib_keeps_the_opendp_cases_and_says_why(monkeypatch):
    from privbandit.audits.cases import diffprivlib_missing, foreign_cases

    for name in ("diffprivlib", "diffprivlib.mechanisms", "diffprivlib.tools"):
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    assert "pip install \"privbandit[audit]\"" in diffprivlib_missing()
    assert [c.name.split()[0] for c in foreign_cases()] == ["opendp"] * 3
