"""Ready canary protocols for one-run audits (`privbandit.audits.one_run`).

    sum_canaries(release, dim, canaries, *, norm=1.0, directions=None, seed=0, name=...)
    user_round_canaries(run, score, canaries, *, high=1.0, low=0.0, relation=..., name=...)

Vectors and sums (`sum_canaries`).  The pipeline releases a noisy sum of
bounded vectors through the mechanism, given as `run_audit` takes it in the
one-run shape (an object with `release(value, rng)` such as a
`GaussianVector`, or `ReleaseAdapter(release, batched=False)` around a
function; a plain `release(value, rng)` works too); the
neighbouring relation is add/remove one vector of L2 norm <= `norm`.
Canary i is the vector norm * u_i: u_i the i-th basis vector when
canaries <= dim (orthogonal canaries: one canary never moves another's
score), else `directions` ((m, dim) unit rows) or random unit directions
drawn from `seed`.  The dataset is the sparse (n_in, dim) matrix of the
included canaries' rows; the score of canary i is the inner product of the
release with u_i.

Bandits (`user_round_canaries`): the plain-callable contract a bandit
pipeline meets, the audit layer knowing nothing of bandits.  m canary
user-rounds are chosen by the caller; coin i plants reward `high` (in) or
`low` (out) at user-round i.  `run(rewards, rng)` runs the algorithm once
with those planted rewards ((m,) array) and returns the view -- what the
other parties receive -- and `score(view)` scores each canary (higher:
more likely `high`).  The relation is one user-round's reward replaced
(`high` vs `low`, the interactive relation of docs/privacy_relations.md).
`privbandit.auditing.canaries` builds such protocols for the registry's algorithms.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import sparse

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_positive

from .adapters import as_release
from .one_run import CanaryProtocol

ADD_REMOVE = "add/remove one vector of L2 norm <= {norm:g}"
USER_ROUND = "interactive: one user-round's reward replaced ({high:g} vs {low:g})"


def _directions(dim: int, m: int, directions: Any, seed: int) -> sparse.csr_matrix:
    if directions is None and m <= dim:
        return sparse.identity(dim, format="csr")[:m]
    if directions is None:
        u = np.random.default_rng(seed).standard_normal((m, dim))
    else:
        u = np.asarray(directions, dtype=float)
        if u.shape != (m, dim):
            raise invalid("directions", f"an array of shape {u.shape}", f"shape ({m}, {dim})")
    norms = np.linalg.norm(u, axis=1, keepdims=True)
    if not np.all(norms > 0):
        raise invalid("directions", "a zero row", "non-zero rows (normalised to unit length)")
    return sparse.csr_matrix(u / norms)


def sum_canaries(release: Any, dim: int, canaries: int, *, norm: float = 1.0,
                 directions: Any = None, seed: int = 0,
                 name: str = "noisy sum of vectors") -> CanaryProtocol:
    """Canary vectors in a released sum (see the module docstring).

    `release`: the mechanism in the one-run shape `run_audit` also takes: an
    object with `release(value, rng)`, a `ReleaseAdapter`, or a plain
    `release(value, rng) -> output` (`adapters.as_release`).
    """
    dim, m = check_count("dim", dim), check_count("canaries", canaries)
    norm = check_positive("norm", norm)
    release = as_release(release)
    units = _directions(dim, m, directions, seed)

    def build(included: np.ndarray) -> sparse.csr_matrix:
        return norm * units[np.flatnonzero(included)]

    def pipeline(dataset: sparse.csr_matrix, rng: np.random.Generator) -> Any:
        total = np.asarray(dataset.sum(axis=0), dtype=float).ravel()
        return release(total, rng)

    def score(output: Any) -> np.ndarray:
        return units @ np.asarray(output, dtype=float).ravel()

    return CanaryProtocol(m, build, pipeline, score, ADD_REMOVE.format(norm=norm), name)


def user_round_canaries(run: Callable[[np.ndarray, np.random.Generator], Any],
                        score: Callable[[Any], Any], canaries: int, *, high: float = 1.0,
                        low: float = 0.0, relation: "str | None" = None,
                        name: str = "bandit pipeline") -> CanaryProtocol:
    """Planted rewards at m canary user-rounds (see the module docstring)."""
    m = check_count("canaries", canaries)
    if not high > low:
        raise invalid("high", high, f"a reward above low = {low}")
    if not callable(run):
        raise invalid("run", run, "a callable run(rewards, rng) -> view")

    def build(included: np.ndarray) -> np.ndarray:
        return np.where(included, float(high), float(low))

    return CanaryProtocol(m, build, run, score,
                          relation or USER_ROUND.format(high=high, low=low), name)
