#!/usr/bin/env python3
"""Check that imports point only down privbandit's layers (CI runs it from here).

    accounting  <-  mechanisms  <-  audits  <-  privbandit

A package may import only the packages to its left (and itself).  The three
lower folders are imported as `privbandit.accounting`, `privbandit.mechanisms`
and `privbandit.audits`; the bare names of the folders count as the same
layers.  Relative imports are resolved against the importing file, so
`from ..accounting import x` inside `audits/` is caught too.  Every import
counts, including those inside functions (a lazy import upward is still
upward).  Usage: `python .ci/check_layers.py [repository root]`; exits 1 and
lists every offending import, else prints a one-line summary.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

LAYERS = ["accounting", "mechanisms", "audits", "privbandit"]
# folder -> the dotted package its files are installed as
PACKAGE_OF = {"accounting": "privbandit.accounting", "mechanisms": "privbandit.mechanisms",
              "audits": "privbandit.audits", "privbandit": "privbandit"}


def layer_of(module: str) -> str | None:
    """The layer a dotted module name belongs to, or None if it is not ours."""
    parts = module.split(".")
    if parts[0] == "privbandit":
        if len(parts) > 1 and parts[1] in LAYERS[:3]:
            return parts[1]
        return "privbandit"
    return parts[0] if parts[0] in LAYERS[:3] else None


def module_name(root: Path, path: Path) -> str:
    """The installed dotted name of the file at `path`."""
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    parts[0] = PACKAGE_OF[parts[0]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, dotted module) of every import in `tree`, relative ones resolved."""
    found = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from pkg import name` may name a submodule: judge pkg.name when pkg is a package
            found.extend((node.lineno, f"{target}.{a.name}") for a in node.names)
    return found


def check(root: Path) -> tuple[int, list[str]]:
    problems, files = [], 0
    for folder in LAYERS:
        base = root / folder
        if not base.is_dir():
            continue
        allowed = set(LAYERS[: LAYERS.index(folder) + 1])
        for path in sorted(base.rglob("*.py")):
            files += 1
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            except SyntaxError as exc:
                problems.append(f"{path.relative_to(root)}: cannot parse ({exc.msg})")
                continue
            name = module_name(root, path)
            for line, target in imported_modules(tree, name, path.name == "__init__.py"):
                layer = layer_of(target)
                if layer is not None and layer not in allowed:
                    problems.append(
                        f"{path.relative_to(root)}:{line}: {folder} imports {target} "
                        f"(layer {layer}; allowed: {', '.join(sorted(allowed))})")
    return files, problems


def main(root: Path) -> int:
    files, problems = check(root)
    for problem in problems:
        print(problem)
    print(f"layers: {files} files checked, {len(problems)} upward imports")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()))
