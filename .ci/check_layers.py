#!/usr/bin/env python3
"""Check that imports point only down privbandit's layers (CI runs it from here).

    accounting  <-  mechanisms  <-  audits  <-  privbandit

A package may import only the packages to its left (and itself).  The three
lower folders are imported as `privbandit.accounting`, `privbandit.mechanisms`
and `privbandit.audits`; the bare names of the folders count as the same
layers.  Relative imports are resolved against the importing file, so
`from ..accounting import x` inside `audits/` is caught too.  Every import
counts, including those inside functions (a lazy import upward is still
upward).

Inside `privbandit/` the application layer has sub-layers of its own
(`SUBLAYERS`, bottom to top): a module may import its own sub-layer and those
below it, and every module must belong to one sub-layer (a new module is
placed on purpose).  Import cycles among privbandit's modules are errors
too, counting imports inside functions and classes (a lazy import that
closes a circle still ties the modules together); only imports under
`if TYPE_CHECKING:` are left out.  A cycle is reported as one circle of
modules, each step with the file and line of its import.

Usage: `python .ci/check_layers.py [repository root]`; exits 1 and lists
every offending import, else prints a one-line summary.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

LAYERS = ["accounting", "mechanisms", "audits", "privbandit"]
# folder -> the dotted package its files are installed as
PACKAGE_OF = {"accounting": "privbandit.accounting", "mechanisms": "privbandit.mechanisms",
              "audits": "privbandit.audits", "privbandit": "privbandit"}

# privbandit's sub-layers, bottom to top: (name, modules or packages under privbandit.)
SUBLAYERS = (
    ("base", ("errors", "validation", "kernels", "comm", "privacy", "protocol", "result",
              "schema")),
    ("data", ("data",)),
    ("envs", ("envs",)),
    ("policies", ("policies", "private", "clustering")),
    ("runtime", ("runtime", "registry")),
    ("families", ("fclub", "cascade", "fedmab", "vertical", "anonymous")),
    ("application", ("", "studies", "cli", "auditing", "__main__")),
)


def layer_of(module: str) -> str | None:
    """The layer a dotted module name belongs to, or None if it is not ours."""
    parts = module.split(".")
    if parts[0] == "privbandit":
        if len(parts) > 1 and parts[1] in LAYERS[:3]:
            return parts[1]
        return "privbandit"
    return parts[0] if parts[0] in LAYERS[:3] else None


def sublayer_of(module: str) -> int | None:
    """Index in SUBLAYERS of a module of the privbandit layer (None if unlisted)."""
    parts = module.split(".")
    head = parts[1] if len(parts) > 1 else ""
    for index, (_, members) in enumerate(SUBLAYERS):
        if head in members:
            return index
    return None


def module_name(root: Path, path: Path) -> str:
    """The installed dotted name of the file at `path`."""
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    parts[0] = PACKAGE_OF[parts[0]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(node: ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, dotted name) of what one import statement names, relative ones resolved."""
    if isinstance(node, ast.Import):
        return [(node.lineno, alias.name) for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        # `from pkg import name` may name a submodule: judge pkg.name when pkg is a package
        return [(node.lineno, f"{target}.{a.name}") for a in node.names]
    return []


def imported_modules(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, dotted module) of every import in `tree`, relative ones resolved."""
    package = module if is_package else module.rpartition(".")[0]
    return [found for node in ast.walk(tree) for found in _targets(node, package)]


def _runtime_imports(body: list[ast.stmt]):
    """Every import statement that can run: at module level, in functions and classes
    (not under `if TYPE_CHECKING:`)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and (
                node.test.id == "TYPE_CHECKING"):
            yield from _runtime_imports(node.orelse)
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield from _runtime_imports([child])
            elif isinstance(child, ast.excepthandler):
                yield from _runtime_imports(child.body)


def _resolve(name: str, known: set[str]) -> str | None:
    """The module of ours that importing `name` runs: itself, or its longest known prefix."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


def _sublayer_problem(rel: Path, line: int, name: str, target: str) -> str | None:
    here, there = sublayer_of(name), sublayer_of(target)
    if there is None or here is None or there <= here:
        return None
    return (f"{rel}:{line}: privbandit sub-layer {SUBLAYERS[here][0]} imports {target} "
            f"(sub-layer {SUBLAYERS[there][0]}; allowed: "
            f"{', '.join(n for n, _ in SUBLAYERS[: here + 1])})")


def check(root: Path) -> tuple[int, list[str]]:
    problems, files = [], 0
    parsed: dict[str, tuple[Path, ast.Module, bool]] = {}
    for folder in LAYERS:
        base = root / folder
        if not base.is_dir():
            continue
        allowed = set(LAYERS[: LAYERS.index(folder) + 1])
        for path in sorted(base.rglob("*.py")):
            files += 1
            rel = path.relative_to(root)
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            except SyntaxError as exc:
                problems.append(f"{rel}: cannot parse ({exc.msg})")
                continue
            name = module_name(root, path)
            is_package = path.name == "__init__.py"
            if folder == "privbandit":
                parsed[name] = (rel, tree, is_package)
                if sublayer_of(name) is None:
                    problems.append(f"{rel}: module {name} belongs to no privbandit sub-layer "
                                    "(add it to SUBLAYERS in .ci/check_layers.py)")
            for line, target in imported_modules(tree, name, is_package):
                layer = layer_of(target)
                if layer is not None and layer not in allowed:
                    problems.append(
                        f"{rel}:{line}: {folder} imports {target} "
                        f"(layer {layer}; allowed: {', '.join(sorted(allowed))})")
                elif folder == "privbandit" and layer == "privbandit":
                    problem = _sublayer_problem(rel, line, name, target)
                    if problem:
                        problems.append(problem)
    problems.extend(_cycle_problems(parsed))
    return files, problems


def _cycle_problems(parsed: dict[str, tuple[Path, ast.Module, bool]]) -> list[str]:
    known = set(parsed)
    graph: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}  # (importer, imported) -> "file:line"
    for name, (rel, tree, is_package) in parsed.items():
        package = name if is_package else name.rpartition(".")[0]
        edges = graph.setdefault(name, set())
        for node in _runtime_imports(tree.body):
            for line, target in _targets(node, package):
                found = _resolve(target, known)
                if found is not None and found != name:
                    edges.add(found)
                    where.setdefault((name, found), f"{rel}:{line}")
    problems = []
    for component in find_cycles(graph):
        circle = shortest_circle(graph, component)
        steps = zip(circle[:-1], circle[1:], strict=True)
        problems.append("import cycle among privbandit modules: " + " -> ".join(circle)
                        + " (" + ", ".join(where[step] for step in steps) + ")")
    return problems


def shortest_circle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest circle of imports through the first module of a strongly connected
    component, as [m0, m1, ..., m0] (breadth-first within the component)."""
    start, members = component[0], set(component)
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph.get(v, ()) & members):
                if w == start:  # back at the start: walk the parents to it
                    path = [v]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if w not in parent:
                    parent[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"{component} is not a cycle")


def main(root: Path) -> int:
    files, problems = check(root)
    for problem in problems:
        print(problem)
    print(f"layers: {files} files checked, {len(problems)} problems "
          "(upward imports, sub-layers, import cycles)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()))
