"""Clustered users: m preference vectors at a minimum gap, shared by clusters of users.

`clustered_preferences` draws the hidden world; `clustered_linear_environment`
wraps it in a `LinearUsersEnv`.  Two factories reproduce the seeds' settings
(notes/seed-clarifications.md):

- `seed000_environment`: theta_j and items both of the form
  [g / ||g|| / sqrt 2, 1 / sqrt 2], g ~ N(0, I_{d-1}); Bernoulli(x . theta)
  rewards; users split contiguously into equal clusters; uniform arrival
  (defaults d = 10, m = 4, 20 users, 10 fresh items per round).
- `seed001_environment`: orthonormal theta_j (J <= d), unit-norm Gaussian
  items, cascade click model (defaults 40 users, J = 5, d = 20, 200 items,
  lists of K = 4); see `envs.cascade`.
"""
from __future__ import annotations

import numpy as np

from privbandit.accounting.validation import check_nonnegative

from ..errors import config_error
from ..validation import check_dim
from .cascade import CascadeEnv
from .items import BiasedSphereItems, SphereItems
from .linear import LinearUsersEnv

PREFERENCE_KINDS = ("sphere", "biased-sphere", "orthonormal")
ASSIGNMENTS = ("contiguous", "random")


def _draw_vectors(kind: str, count: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "sphere":
        g = rng.standard_normal((count, dim))
        return g / np.linalg.norm(g, axis=1, keepdims=True)
    g = rng.standard_normal((count, dim - 1))
    out = np.empty((count, dim))
    out[:, :-1] = g / np.linalg.norm(g, axis=1, keepdims=True) / np.sqrt(2.0)
    out[:, -1] = 1.0 / np.sqrt(2.0)
    return out


def _gapped_vectors(
    kind: str, m: int, dim: int, gap: float, rng: np.random.Generator, max_draws: int
) -> np.ndarray:
    """m vectors with pairwise distance >= gap, by sequential rejection."""
    if kind == "orthonormal":
        if m > dim:
            raise config_error("n_clusters", m, f"at most dim={dim} for orthonormal preferences")
        q, r = np.linalg.qr(rng.standard_normal((dim, m)))
        return (q * np.sign(np.diag(r))).T  # sign fix: Haar-distributed frame
    accepted: list[np.ndarray] = []
    draws = 0
    while len(accepted) < m:
        batch = _draw_vectors(kind, m, dim, rng)
        for v in batch:
            if all(np.linalg.norm(v - w) >= gap for w in accepted):
                accepted.append(v)
                if len(accepted) == m:
                    break
        draws += m
        if draws > max_draws and len(accepted) < m:
            raise config_error(
                "gap", gap, f"a gap reachable for {m} '{kind}' vectors in dim {dim} "
                f"(no placement found in {max_draws} draws)",
            )
    return np.stack(accepted)


def assign_users(
    n_users: int, n_clusters: int, assignment: str, rng: np.random.Generator
) -> np.ndarray:
    """Cluster label of each user: contiguous equal blocks (sizes differ by at most 1)
    or a uniformly random permutation of those blocks."""
    labels = np.repeat(np.arange(n_clusters), np.diff(np.linspace(0, n_users, n_clusters + 1)
                                                       .round().astype(int)))
    if assignment == "random":
        labels = rng.permutation(labels)
    elif assignment != "contiguous":
        raise config_error("assignment", assignment, f"one of {ASSIGNMENTS}")
    return labels


def clustered_preferences(
    n_users: int,
    n_clusters: int,
    dim: int,
    rng: np.random.Generator,
    *,
    kind: str = "sphere",
    gap: float = 0.0,
    assignment: str = "contiguous",
    max_draws: int = 100_000,
) -> tuple[np.ndarray, np.ndarray]:
    """(theta (n_users, dim), labels (n_users,)): m cluster vectors at pairwise gap >= `gap`.

    kind: "sphere" (unit vectors), "biased-sphere" (seed 000's form, norm 1,
    last coordinate 1/sqrt 2) or "orthonormal" (seed 001; pairwise gap sqrt 2).
    Every cluster gets at least one user (n_clusters <= n_users).
    """
    n_users = check_dim("n_users", n_users)
    m = check_dim("n_clusters", n_clusters)
    dim = check_dim("dim", dim)
    if m > n_users:
        raise config_error("n_clusters", n_clusters, f"at most n_users={n_users}")
    if kind not in PREFERENCE_KINDS:
        raise config_error("kind", kind, f"one of {PREFERENCE_KINDS}")
    if kind == "biased-sphere" and dim < 2:
        raise config_error("dim", dim, "an integer >= 2 for biased-sphere preferences")
    gap = check_nonnegative("gap", gap)
    centers = _gapped_vectors(kind, m, dim, gap, rng, max_draws)
    labels = assign_users(n_users, m, assignment, rng)
    return centers[labels], labels


def clustered_linear_environment(
    n_users: int,
    n_clusters: int,
    dim: int,
    n_items: int,
    rng: np.random.Generator,
    *,
    kind: str = "sphere",
    items: str = "sphere",
    gap: float = 0.0,
    assignment: str = "contiguous",
    reward: str = "bernoulli",
    noise_sd: float = 0.1,
    user_probs: np.ndarray | None = None,
    block: int | None = None,
) -> LinearUsersEnv:
    """Clustered linear users with fresh items each round ("sphere" or "biased-sphere")."""
    theta, labels = clustered_preferences(
        n_users, n_clusters, dim, rng, kind=kind, gap=gap, assignment=assignment
    )
    source = {"sphere": SphereItems, "biased-sphere": BiasedSphereItems}.get(items)
    if source is None:
        raise config_error("items", items, "'sphere' or 'biased-sphere'")
    return LinearUsersEnv(
        theta, source(dim, n_items), user_probs=user_probs, reward=reward, noise_sd=noise_sd,
        clusters=labels, block=block, name=f"clustered-{kind}",
    )


def seed000_environment(
    rng: np.random.Generator,
    *,
    n_users: int = 20,
    n_clusters: int = 4,
    dim: int = 10,
    n_items: int = 10,
    gap: float = 0.0,
    block: int | None = None,
) -> LinearUsersEnv:
    """Seed 000's synthetic setting (FCLUB): biased-sphere preferences and items,
    Bernoulli(x . theta) rewards (x . theta is in [0, 1]), contiguous equal clusters."""
    env = clustered_linear_environment(
        n_users, n_clusters, dim, n_items, rng, kind="biased-sphere", items="biased-sphere",
        gap=gap, assignment="contiguous", reward="bernoulli", block=block,
    )
    env.name = "seed000"
    return env


def seed001_environment(
    rng: np.random.Generator,
    *,
    n_users: int = 40,
    n_clusters: int = 5,
    dim: int = 20,
    n_items: int = 200,
    list_len: int = 4,
    block: int | None = None,
) -> CascadeEnv:
    """Seed 001's synthetic setting (FedC3UCB-H): orthonormal cluster preferences,
    unit-norm Gaussian items, cascade clicks with w = clip(x . theta, 0, 1)."""
    theta, labels = clustered_preferences(
        n_users, n_clusters, dim, rng, kind="orthonormal", assignment="contiguous"
    )
    return CascadeEnv(
        theta, SphereItems(dim, n_items), list_len, clusters=labels, block=block, name="seed001"
    )
