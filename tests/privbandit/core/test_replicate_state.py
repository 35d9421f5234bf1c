"""The contract batched twins use: `Policy.replicate_state` / `bind_replicate_state`, and no
twin touching a private attribute of another object."""
import ast
import inspect
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privbandit.fclub.lockstep  # noqa: F401  (registers the family's twins)
from privbandit.errors import ConfigError, ShapeError
from privbandit.fclub import make_policy
from privbandit.kernels import UserGraph
from privbandit.policies import CLUB, SCLUB, LinTS, LinUCB
from privbandit.policies.base import Policy
from privbandit.policies.lockstep import BatchedPolicy
from privbandit.runtime import lockstep


def _twin_classes(kind=BatchedPolicy):
    for sub in kind.__subclasses__():
        yield sub
        yield from _twin_classes(sub)


def twin_files() -> list[Path]:
    """The modules that define a batched twin, and the driver."""
    files = {Path(inspect.getfile(kind)) for kind in _twin_classes()}
    return sorted(files | {Path(lockstep.__file__)})


def _own(node: ast.expr) -> bool:
    """Whether `node` is the object itself: self, cls or super()."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "super")


def _private(name: object) -> bool:
    """Whether `name` is a private attribute name: "_x", not a dunder."""
    return isinstance(name, str) and re.fullmatch(r"_[A-Za-z]\w*", name) is not None \
        and not name.endswith("__")


def private_accesses(source: str) -> list[tuple[int, str]]:
    """(line, text) of every `x._name` with x not self, cls or super(), and of every
    string naming a private attribute ("_name", what a getattr would read) other than
    in get/set/has/delattr(self, "_name"), in `source`."""
    tree = ast.parse(source)
    exempt = {id(node.args[1]) for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
              and len(node.args) >= 2 and _own(node.args[0])}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and not _own(node.value):
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Constant) and _private(node.value) \
                and id(node) not in exempt:
            found.append((node.lineno, repr(node.value)))
    return sorted(found)


def test_the_scan_finds_private_accesses_of_other_objects():
    source = ("p._rng = rng\nself._ok = 1\ncls._ok\nsuper()._bind_views(v)\n"
              "type(p).__name__\nx = getattr(sync, '_peers')\nsetattr(self, '_fine', 1)\n"
              "policies[0]._next_phase\nnames = ('row_of', '_peers')\n'_doc'\n")
    assert [line for line, _ in private_accesses(source)] == [1, 6, 8, 9, 10]


def test_the_twins_are_found():
    names = {p.name for p in twin_files()}
    assert {"lockstep.py", "club.py", "sclub.py"} <= names
    assert any(p.parent.name == "fclub" for p in twin_files())


@pytest.mark.parametrize("path", twin_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_twin_touches_a_private_attribute_of_another_object(path):
    found = private_accesses(path.read_text())
    assert not found, "\n".join(f"{path}:{line}: {text}" for line, text in found)


# -- the contract on every policy class with a twin ---------------------------------------
def _started(name):
    """An FCLUB-family policy in its first phase (it has its sync's arrays then)."""
    policy = make_policy(name, dim=4, n_users=6, n_servers=2)
    policy.select(np.eye(4)[:3] * 0.5, 0, 0, np.random.default_rng(0))
    return policy


POLICIES = {
    "linucb": lambda: LinUCB(4, 3),
    "lints": lambda: LinTS(4, 1, shared=True),
    "club": lambda: CLUB(4, 5),
    "sclub": lambda: SCLUB(4, 5),
    "fclub-dc": lambda: _started("fclub-dc"),
    "fclub": lambda: _started("fclub"),
    "club-per-server": lambda: make_policy("club-per-server", dim=4, n_users=6, n_servers=2),
}


def test_every_class_with_a_twin_is_covered():
    covered = {type(make()) for make in POLICIES.values()}
    assert all(lockstep.supports_lockstep(make()) for make in POLICIES.values())
    assert {LinUCB, LinTS, CLUB, SCLUB} <= covered and len(covered) == 6


@pytest.mark.parametrize("name", POLICIES)
def test_a_policy_adopts_views_as_its_state(name):
    policy = POLICIES[name]()
    state = policy.replicate_state()
    assert state and all(isinstance(a, np.ndarray) for a in state.values())
    stacked = {k: np.stack([a, a]) for k, a in state.items()}
    policy.bind_replicate_state({k: a[1] for k, a in stacked.items()})
    for key, arr in policy.replicate_state().items():
        assert arr.base is stacked[key], key  # a view of the stacked array
        np.testing.assert_array_equal(arr, state[key])


@pytest.mark.parametrize("name", POLICIES)
def test_a_policy_refuses_views_that_cannot_stand_for_its_state(name):
    policy = POLICIES[name]()
    key, own = next(iter(policy.replicate_state().items()))
    with pytest.raises(ConfigError, match="'nonsense'"):
        policy.bind_replicate_state({"nonsense": own.copy()})
    with pytest.raises(ShapeError, match=rf"'{key}'.*shape {re.escape(str(own.shape))}.*got shape"):
        policy.bind_replicate_state({key: np.zeros(own.shape + (1,), own.dtype)})
    with pytest.raises(ShapeError, match=rf"'{key}'.*dtype {own.dtype}; got .*dtype complex128"):
        policy.bind_replicate_state({key: np.zeros(own.shape, complex)})
    frozen = own.copy()
    frozen.flags.writeable = False
    with pytest.raises(ShapeError, match="writeable False"):
        policy.bind_replicate_state({key: frozen})
    with pytest.raises(ShapeError, match="got list"):
        policy.bind_replicate_state({key: own.tolist()})
    assert policy.replicate_state()[key] is own  # refused: nothing bound


def test_a_policy_without_state_binds_nothing():
    class Fixed(Policy):
        def select(self, items, user, t, rng):
            return 0

        def update(self, items, user, action, feedback, t):
            return None

    policy = Fixed()
    assert policy.replicate_state() == {}
    policy.bind_replicate_state({})
    with pytest.raises(ConfigError, match=r"name must be absent \(no state\); got 'inv'"):
        policy.bind_replicate_state({"inv": np.eye(2)})


@settings(max_examples=25, deadline=None)
@given(dim=st.integers(1, 5), n_users=st.integers(1, 4), rounds=st.integers(1, 12),
       seed=st.integers(0, 2**32 - 1), club=st.booleans())
def test_a_bound_policy_plays_into_the_views_as_it_would_alone(dim, n_users, rounds, seed,
                                                                club):
    """A policy bound to views (of copies of its state) plays as a fresh twin alone would,
    and its rounds write into the views."""
    make = (lambda: CLUB(dim, n_users, alpha=0.3)) if club else (lambda: LinUCB(dim, n_users))
    bound, alone = make(), make()
    views = {k: np.array(a) for k, a in bound.replicate_state().items()}
    bound.bind_replicate_state(views)
    rng = np.random.default_rng(seed)
    for t in range(rounds):
        items = rng.normal(size=(3, dim))
        items /= np.maximum(np.linalg.norm(items, axis=1, keepdims=True), 1.0)
        user, reward = int(rng.integers(n_users)), float(rng.random())
        action = bound.select(items, user, t, rng)
        assert action == alone.select(items, user, t, rng)
        bound.update(items, user, action, reward, t)
        alone.update(items, user, action, reward, t)
    for key, arr in bound.replicate_state().items():
        assert arr.base is views[key] or arr is views[key], key
        np.testing.assert_array_equal(views[key], alone.replicate_state()[key], err_msg=key)


def test_a_graph_adopts_arrays_of_its_shapes_only():
    graph = UserGraph.complete(4)
    adj, labels = np.array(graph.adjacency), np.array(graph.labels)
    with pytest.raises(ShapeError, match=r"adjacency must be .*shape \(4, 4\)"):
        graph.adopt(adjacency=np.ones((3, 3), bool))
    with pytest.raises(ShapeError, match="labels must be .*dtype int64"):
        graph.adopt(labels=labels.astype(float))
    graph.adopt(adj, labels)
    assert graph.delete_edges(0, np.array([1, 2, 3]))
    assert not adj[0].any() and labels[0] == 0 and (labels[1:] == 1).all()
