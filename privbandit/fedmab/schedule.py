"""Epoch lengths S(r) and elimination radii C(r) of the seed-002 algorithms.

The structure is the paper's (Li & Song, Alg. 1 lines 3-5 and Sec. IV-B); its
copy lost the equations, so the constants below are privbandit's derivation
(docs/fedmab.md, "Constants"), not the paper's:

- confidence level beta_r = 1 / (4 K r^2 T), L_r = ln(2 / beta_r);
- sampling radius sqrt(L_r / (2 N S)): Hoeffding over the N*S rewards behind
  the server's mean of N uploaded running means;
- noise radius sqrt(8 L_r) * b * (sqrt(N r) + sqrt(L_r)) with b = 1/(eps S N):
  the server's mean carries N*r independent Laplace terms of scale b (Chan,
  Shi & Song 2011, tail bound for sums of Laplace variables);
- C(r) = sampling + noise; S(r) is the smallest integer above S(r-1) with
  C(r) <= target_r, where target_r = 2^-r (doubling epochs) or, with at most R
  epochs, a geometric sequence from 1/2 down to the radius reachable with
  S = T/K:  target_r = (1/2) * (2 c_min)^((r-1)/(R-1))  (target 1/2 when R = 1).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from privbandit.accounting.validation import check_count, check_positive

from ..errors import config_error
from .errors import RoundsBelowBoundWarning


def log_term(epoch: int, n_arms: int, horizon: int) -> float:
    """L_r = ln(2 / beta_r) with beta_r = 1 / (4 K r^2 T)."""
    return math.log(8.0 * n_arms * float(epoch) ** 2 * horizon)


def _coefficients(epoch: int, n_uploaders: int, epsilon: float, n_arms: int, horizon: int):
    """(a, b) with C(r) = a / sqrt(S) + b / S."""
    lr = log_term(epoch, n_arms, horizon)
    a = math.sqrt(lr / (2.0 * n_uploaders))
    b = math.sqrt(8.0 * lr) * (math.sqrt(n_uploaders * epoch) + math.sqrt(lr)) / (
        epsilon * n_uploaders
    )
    return a, b


def confidence_radius(
    size: float, epoch: int, n_uploaders: int, epsilon: float, n_arms: int, horizon: int
) -> float:
    """C(r) for S(r) = `size` pulls per arm and agent and N = `n_uploaders` uploads."""
    a, b = _coefficients(epoch, n_uploaders, epsilon, n_arms, horizon)
    return a / math.sqrt(size) + b / size


def smallest_size(
    target: float, epoch: int, n_uploaders: int, epsilon: float, n_arms: int, horizon: int
) -> int:
    """The smallest integer S >= 1 with C(r) <= target (C decreases in S)."""
    a, b = _coefficients(epoch, n_uploaders, epsilon, n_arms, horizon)
    # root x = 1/sqrt(S) of b x^2 + a x - target = 0, in the cancellation-free form
    x = 2.0 * target / (a + math.sqrt(a * a + 4.0 * b * target))
    size = max(1, math.ceil(1.0 / (x * x)))
    radius = lambda s: a / math.sqrt(s) + b / s
    while radius(size) > target:  # guard the float rounding of the closed form
        size += 1
    while size > 1 and radius(size - 1) <= target:
        size -= 1
    return size


@dataclass(frozen=True)
class EpochSchedule:
    """S(1) < S(2) < ... and the radii C(r), fixed before the run starts.

    `sizes[r-1]` = S(r), `radii[r-1]` = C(r), `targets[r-1]` = the radius S(r)
    was sized for.  Doubling schedules stop at the first S(r) >= T (no later
    epoch can start); R-round schedules have at most R epochs.
    """

    sizes: tuple[int, ...]
    radii: tuple[float, ...]
    targets: tuple[float, ...]
    rounds: int | None
    n_uploaders: int

    @classmethod
    def build(
        cls,
        epsilon: float,
        n_arms: int,
        horizon: int,
        n_uploaders: int,
        rounds: int | None = None,
    ) -> "EpochSchedule":
        eps = check_positive("epsilon", epsilon)
        k = check_count("n_arms", n_arms, minimum=2)
        t = check_count("horizon", horizon)
        n = check_count("n_uploaders", n_uploaders)
        if rounds is not None:
            rounds = check_rounds(rounds)
        sizes: list[int] = []
        radii: list[float] = []
        targets = _targets(eps, k, t, n, rounds)
        used: list[float] = []
        for r, target in enumerate(targets, start=1):
            if sizes and sizes[-1] >= t:
                break
            size = max(smallest_size(target, r, n, eps, k, t), sizes[-1] + 1 if sizes else 1)
            sizes.append(size)
            radii.append(confidence_radius(size, r, n, eps, k, t))
            used.append(target)
        return cls(tuple(sizes), tuple(radii), tuple(used), rounds, n)

    def __len__(self) -> int:
        return len(self.sizes)


def rounds_bound(horizon: int, n_agents: int) -> float | None:
    """Seed 002's condition on the number of epochs: R >= 2 ln T / ln M (None if M = 1).

    Under it (the paper's decentralized analysis) federation is no worse than each
    agent learning alone; its worst-case remark takes R = 3 ln T / (4 ln M).
    """
    if n_agents < 2:
        return None
    return 2.0 * math.log(horizon) / math.log(n_agents)


def warn_below_bound(rounds: int | None, horizon: int, n_agents: int) -> None:
    """Warn (`RoundsBelowBoundWarning`) when a user's R is below `rounds_bound`."""
    bound = rounds_bound(horizon, n_agents)
    if rounds is None or bound is None or rounds >= bound:
        return
    worst = 3.0 * math.log(horizon) / (4.0 * math.log(n_agents))
    warnings.warn(RoundsBelowBoundWarning(
        f"rounds={rounds} is below seed 002's condition R >= 2 ln T / ln M = {bound:.2f} "
        f"(T={horizon}, M={n_agents}; its worst-case remark gives 3 ln T / (4 ln M) = "
        f"{worst:.2f}): federation may then do worse than each agent alone; use "
        f"rounds >= {math.ceil(bound)} or rounds=None (no limit)"), stacklevel=2)


def check_rounds(rounds: object) -> int:
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise config_error("rounds", rounds, "None (no limit) or an integer R >= 1")
    return int(rounds)


def _targets(eps: float, k: int, t: int, n: int, rounds: int | None):
    """target_r for r = 1, 2, ...: a finite list (R-round) or a long doubling list."""
    if rounds is None:
        # 2^-r below any reachable radius after ~64 epochs; the size cap stops earlier
        return [2.0 ** -r for r in range(1, 64)]
    if rounds == 1:
        return [0.5]
    c_min = confidence_radius(max(1, t // k), rounds, n, eps, k, t)
    ratio = 2.0 * c_min
    return [0.5 * ratio ** ((r - 1) / (rounds - 1)) for r in range(1, rounds + 1)]
