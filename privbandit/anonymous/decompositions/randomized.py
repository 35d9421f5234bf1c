"""The randomized-matching decomposition (the intuition of seed 004, §3.4.2).

Each draw matches every user to a random arm of A_i; a user is kept on its arm
only when that arm drew at least C + 1 users (the draw is informative for it),
otherwise it is left free.  Draws continue until every pair's demand
ceil(D / |A_i|) is met.  No ratio is guaranteed (a rare arm may seldom reach C + 1
users), so after `max_draws` draws (default K * D, the greedy's size) the
remaining deficits are topped up with greedy assignments M_j, which keeps the
result valid; `details["topped_up"]` says how many were added.
"""
from __future__ import annotations

import numpy as np

from privbandit.accounting.validation import check_count

from ...errors import config_error
from .core import (
    FREE,
    Decomposition,
    check_batched_graph,
    informative_mask,
    pair_demand,
    random_active_arms,
)
from .greedy import greedy_patterns

WEIGHTINGS = ("deficit", "uniform")


def randomized_decomposition(
    active: np.ndarray,
    demand: int,
    threshold: int,
    rng: np.random.Generator,
    *,
    weighting: str = "deficit",
    max_draws: int | None = None,
) -> Decomposition:
    """Random informative matchings until every demand is met (then greedy top-up).

    weighting "uniform": each user picks a uniform arm of A_i (the paper's
    intuition; waits for the slowest pair).  "deficit" (default, our choice):
    arm j with probability proportional to the pair's unmet demand (uniform over
    A_i once the user's demand is met), so draws go where feedback is missing.
    """
    if weighting not in WEIGHTINGS:
        raise config_error("weighting", weighting, f"one of {WEIGHTINGS}")
    active, demand, threshold = check_batched_graph(active, demand, threshold)
    n, k = active.shape
    cap = check_count("max_draws", k * demand if max_draws is None else max_draws)
    need = pair_demand(active, demand)
    draw = _uniform_draws if weighting == "uniform" else _deficit_draws
    patterns, got = draw(active, need, threshold, rng, cap)
    top = _greedy_top_up(active, need - got)
    details = {"draws": len(patterns), "topped_up": int(top[1].sum()), "weighting": weighting}
    return Decomposition(
        np.concatenate([patterns, top[0]]),
        np.r_[np.ones(len(patterns), dtype=np.int64), top[1]], "randomized", details,
    )


def _uniform_draws(active, need, threshold, rng, cap):
    """I.i.d. uniform matchings in vectorized chunks; stop at the first draw meeting all demand."""
    n, k = active.shape
    flat_need = need.ravel()
    got = np.zeros(n * k, dtype=np.int64)
    kept: list[np.ndarray] = [np.zeros((0, n), dtype=np.int64)]
    drawn = 0
    while drawn < cap and (got < flat_need).any():
        chunk = min(max(int(flat_need.max()), 64), cap - drawn)
        arms = random_active_arms(active, chunk, rng)
        patterns = np.where(informative_mask(arms, threshold), arms, FREE)
        cum = got + np.cumsum(_one_hot(patterns, k), axis=0)
        done = np.flatnonzero((cum >= flat_need).all(axis=1))
        stop = int(done[0]) + 1 if done.size else chunk
        kept.append(patterns[:stop])
        got = cum[stop - 1]
        drawn += stop
    return np.concatenate(kept), got.reshape(n, k)


def _deficit_draws(active, need, threshold, rng, cap):
    """One matching per draw, arms drawn in proportion to the unmet demand."""
    n, k = active.shape
    got = np.zeros((n, k), dtype=np.int64)
    rows = np.arange(n)
    kept = []
    while len(kept) < cap:
        deficit = np.maximum(need - got, 0)
        if not deficit.any():
            break
        weights = np.where(deficit.any(axis=1, keepdims=True), deficit, active).astype(float)
        cdf = np.cumsum(weights, axis=1)
        u = rng.random(n) * cdf[:, -1]
        arms = np.minimum((cdf <= u[:, None]).sum(axis=1), k - 1)
        pattern = np.where(informative_mask(arms[None, :], threshold)[0], arms, FREE)
        on = pattern >= 0
        got[rows[on], pattern[on]] += 1
        kept.append(pattern)
    patterns = np.array(kept, dtype=np.int64).reshape(len(kept), n)
    return patterns, got


def _one_hot(patterns: np.ndarray, k: int) -> np.ndarray:
    """(R, N * K) int: 1 where pattern r makes user i informative on arm j."""
    r, n = patterns.shape
    out = np.zeros((r, n * k), dtype=np.int64)
    rows, users = np.nonzero(patterns >= 0)
    out[rows, users * k + patterns[rows, users]] = 1
    return out


def _greedy_top_up(active: np.ndarray, deficit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Greedy M_j for each arm with a deficit, repeated its largest deficit."""
    arms = np.flatnonzero((deficit > 0).any(axis=0))
    return greedy_patterns(active, arms), deficit[:, arms].max(axis=0)
