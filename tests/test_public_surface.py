"""The surface a user meets: typed packages, errors where mechanisms are, a lean top level,
a command line whose help is fast and speaks of what it does."""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("privbandit", "privbandit.accounting", "privbandit.mechanisms", "privbandit.audits")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_ships_py_typed(package):
    assert resources.files(package).joinpath("py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"][package]


@pytest.mark.parametrize("package", ["privbandit.accounting", "privbandit.mechanisms",
                                     "privbandit.audits"])
def test_every_error_a_package_defines_is_exported_from_it(package):
    module = importlib.import_module(package)
    defined = set()
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        sub = importlib.import_module(info.name)
        defined |= {name for name, obj in vars(sub).items()
                    if inspect.isclass(obj) and issubclass(obj, Exception)
                    and obj.__module__ == sub.__name__ and not name.startswith("_")}
    missing = sorted(n for n in defined if n not in module.__all__)
    assert not missing, f"{package} does not export {missing}"
    for name in defined:
        assert getattr(module, name).__name__ == name


def test_mechanism_errors_for_bad_input_are_value_errors():
    from privbandit.mechanisms import (
        HorizonExceededError,
        InvalidParameterError,
        MaskError,
        OutOfBoundsError,
        ShapeError,
        continual_release,
    )

    for cls in (HorizonExceededError, InvalidParameterError, MaskError, OutOfBoundsError,
                ShapeError):
        assert issubclass(cls, ValueError), cls
    mech = continual_release("tree", (2,), 1, sigma=1.0)
    import numpy as np

    mech.add(np.zeros(2), np.random.default_rng(0))
    with pytest.raises(ValueError, match="horizon is 1 releases"):
        mech.add(np.zeros(2), np.random.default_rng(0))


def test_the_top_level_namespace_holds_only_the_public_api():
    code = ("import privbandit\n"
            "print(sorted(n for n in vars(privbandit) if not n.startswith('_')))\n"
            "print(sorted(dir(privbandit)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60, cwd=ROOT).stdout.splitlines()
    import privbandit

    assert out[0] == "[]"
    assert out[1] == str(sorted(privbandit.__all__))
    for name in privbandit.__all__:
        assert getattr(privbandit, name) is not None


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "privbandit.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_help_imports_no_command_module():
    code = ("import sys\nfrom privbandit import cli\n"
            "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('privbandit.') or "
            "m in ('numpy', 'scipy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60, cwd=ROOT).stdout.splitlines()[-1]
    assert out == "['privbandit.cli']"


def test_each_command_lists_the_summary_its_module_gives():
    from privbandit import cli

    for name, (module, summary) in cli.COMMANDS.items():
        parser = cli.build_parser(name)
        sub = next(a for a in parser._actions if a.dest == "command")
        helps = {c.dest: c.help for c in sub._choices_actions}
        assert helps[name] == summary, (name, module)


def test_audit_help_says_what_it_does_without_module_paths():
    out = _cli("audit", "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "lower bound on epsilon" in text and "Exit status" in text
    assert not re.search(r"privbandit\.\w|\w+/\W|`", text), text


@pytest.mark.parametrize(("args", "message"), [((), "required: COMMAND"),
                                               (("nope",), "invalid choice: 'nope'"),
                                               (("study", "run"), "the following arguments")])
def test_usage_errors_exit_2(args, message):
    out = _cli(*args)
    assert out.returncode == 2 and message in out.stderr
