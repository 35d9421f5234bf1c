"""Packaging: privbandit.* import names, every package listed, light core imports, layers."""
from __future__ import annotations

import importlib.util
import runpy
import subprocess
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"accounting": "privbandit.accounting", "mechanisms": "privbandit.mechanisms",
           "audits": "privbandit.audits", "privbandit": "privbandit"}


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_package_folder_is_installed_under_privbandit():
    listed = set(_config()["tool"]["setuptools"]["packages"])
    found = set()
    for folder, package in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *rel)))
    assert found == listed


def test_no_generic_top_level_name_is_installed(tmp_path):
    code = ("import importlib.util\n"
            "print([n for n in ('accounting', 'mechanisms', 'audits') "
            "if importlib.util.find_spec(n)])\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("module", ["privbandit.accounting", "privbandit.mechanisms"])
def test_core_layers_load_no_optional_dependency(module, tmp_path):
    code = (f"import sys, {module}\n"
            "print(sorted(m for m in ('matplotlib', 'cryptography', 'tqdm', 'dask', "
            "'diffprivlib', 'sklearn') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_version_and_entry_points():
    import privbandit

    assert privbandit.__version__ == _config()["project"]["version"]
    assert callable(privbandit.run_study) and callable(privbandit.get_algorithm)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        privbandit.nope  # noqa: B018


def test_missing_extra_names_the_extra(monkeypatch):
    from privbandit.accounting.errors import MissingExtraError, require_extra

    with pytest.raises(MissingExtraError, match=r"'plots' extra installs: pip install "
                                                r"\"privbandit\[plots\]\""):
        require_extra("no_such_module_for_privbandit", "plots", "a figure")
    assert importlib.util.find_spec("privbandit.mechanisms.sealing") is not None


NO_CRYPTO = """
import sys
sys.modules["cryptography"] = None  # as on an install without the crypto extra
from privbandit.accounting.errors import MissingExtraError
from privbandit.registry import algorithms, get_algorithm
from privbandit.runtime import seed_sequence
assert {"cdp-fclub-dc+", "vfucb", "partial-linucb"} <= set(algorithms())
config = {"horizon": 20, "environment": {"dim": 4, "parties": 2}}
entry = get_algorithm("partial-linucb")
assert entry.run({**entry.defaults, **config}, seed_sequence(1)).horizon == 20
entry = get_algorithm("vfucb")
try:
    entry.run({**entry.defaults, **config}, seed_sequence(1))
except MissingExtraError as e:
    print(e)
from privbandit.studies.spec import parse_study
try:  # a study that names it is refused before anything runs
    parse_study("horizon = 5\\nseeds = 1\\n[[algorithm]]\\nname = 'vfts'\\n")
except MissingExtraError as e:
    print(e)
"""


def test_registry_loads_without_the_crypto_extra(tmp_path):
    """Only the sealed vertical protocol needs `cryptography`: every entry registers and
    runs without it, and the protocol's runs name the extra to install."""
    out = subprocess.run([sys.executable, "-c", NO_CRYPTO], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count('pip install "privbandit[crypto]"') == 2
    assert "algorithm 'vfts'" in out.stdout


def _checker():
    return runpy.run_path(str(ROOT / ".ci" / "check_layers.py"))


def test_repository_imports_point_down_the_layers():
    files, problems = _checker()["check"](ROOT)
    assert files > 100 and problems == []


def test_layer_checker_catches_upward_and_relative_imports(tmp_path):
    for folder in FOLDERS:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "accounting" / "bad.py").write_text("from privbandit.mechanisms import x\n")
    (tmp_path / "mechanisms" / "ok.py").write_text("from privbandit.accounting import y\n")
    (tmp_path / "mechanisms" / "lazy.py").write_text(
        "def f():\n    from ..audits import runner\n")
    (tmp_path / "audits" / "bare.py").write_text("import privbandit.run\n")
    _, problems = _checker()["check"](tmp_path)
    assert len(problems) == 3
    assert any("accounting/bad.py:1" in p for p in problems)
    assert any("mechanisms/lazy.py:2" in p and "privbandit.audits.runner" in p for p in problems)
    assert any("audits/bare.py:1" in p for p in problems)


def _tree(tmp_path, files: dict[str, str]):
    """A synthetic repository: the four folders, privbandit's envs and policies packages,
    and `files` (path under the root -> text)."""
    for folder in FOLDERS:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    for package in ("envs", "policies"):
        (tmp_path / "privbandit" / package).mkdir()
        (tmp_path / "privbandit" / package / "__init__.py").write_text("")
    for path, text in files.items():
        (tmp_path / path).write_text(text)
    return _checker()["check"](tmp_path)[1]


def test_layer_checker_catches_sublayers_unplaced_modules_and_cycles(tmp_path):
    problems = _tree(tmp_path, {
        "privbandit/envs/world.py": "import numpy\nfrom ..policies import base\n",
        "privbandit/policies/base.py": "from . import linear\n",
        "privbandit/policies/linear.py": "from .base import Policy\n",
        "privbandit/misc.py": "",
    })
    assert len(problems) == 3, problems
    assert any("envs/world.py:2" in p and "sub-layer envs imports privbandit.policies.base" in p
               for p in problems)
    assert any("privbandit.misc belongs to no privbandit sub-layer" in p for p in problems)
    assert ("import cycle among privbandit modules: privbandit.policies.base -> "
            "privbandit.policies.linear -> privbandit.policies.base "
            "(privbandit/policies/base.py:1, privbandit/policies/linear.py:1)") in problems


def test_cycle_detector_counts_imports_inside_functions_and_classes(tmp_path):
    problems = _tree(tmp_path, {
        # a class importing its twin lazily closes a circle of three modules
        "privbandit/policies/a.py": "from .b import B\n",
        "privbandit/policies/b.py": "from . import c\nB = 1\n",
        "privbandit/policies/c.py": ("class C:\n    @classmethod\n    def twin(cls):\n"
                                     "        from .a import A\n        return A\n"),
        # imports only for type checkers never run: no circle
        "privbandit/policies/d.py": "from typing import TYPE_CHECKING\nfrom . import e\n",
        "privbandit/policies/e.py": ("from typing import TYPE_CHECKING\n"
                                     "if TYPE_CHECKING:\n    from .d import D\n"),
    })
    assert problems == [
        "import cycle among privbandit modules: privbandit.policies.a -> privbandit.policies.b"
        " -> privbandit.policies.c -> privbandit.policies.a (privbandit/policies/a.py:1, "
        "privbandit/policies/b.py:1, privbandit/policies/c.py:4)"]


def test_cycle_detector_passes_an_acyclic_tree(tmp_path):
    problems = _tree(tmp_path, {
        "privbandit/policies/a.py": "from .b import B\nfrom . import c\n",
        "privbandit/policies/b.py": "def f():\n    from .c import C\n",
        "privbandit/policies/c.py": "import numpy\n",
        "privbandit/envs/w.py": "try:\n    from . import v\nexcept ImportError:\n    v = None\n",
        "privbandit/envs/v.py": "",
    })
    assert problems == []


def test_shortest_circle_names_one_circle_of_a_component():
    graph = {"a": {"b", "c"}, "b": {"c"}, "c": {"a"}}
    circle = _checker()["shortest_circle"](graph, ["a", "b", "c"])
    assert circle == ["a", "c", "a"]


def test_privbandit_sublayers_cover_its_folders():
    layers = _checker()["SUBLAYERS"]
    named = {m for _, members in layers for m in members if m}
    folders = {p.name for p in (ROOT / "privbandit").iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= named
