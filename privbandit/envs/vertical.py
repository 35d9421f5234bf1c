"""Vertical split of a linear environment: each party holds a column block of the features.

Seed 003 (Cao et al., *Vertical Federated Linear Contextual Bandits*, Section 3.3)
splits every context x = [x^1; ...; x^M] by columns: party j only ever sees
x^j, its d_j features of the K candidate items.  Party 0 is the active party
(it serves the user and sees the reward); parties 1..M-1 are passive.

- `FeatureSplit`: the widths d_1 + ... + d_M = d and the column slices.
- `VerticalSplit`: wraps any `Environment`; `observe(t)` hands out one
  read-only (K, d_j) view per party instead of the full (K, d) items.
- `ActivePartyView`: the active party's columns alone (the partial-local baseline).
- `seed003_environment`: the paper's synthetic world (Section 5.1): one user,
  x, theta ~ N(0, 0.05 I) normalised to unit norm, reward x . theta + eps with
  eps ~ N(0, 0.05) (0.05 read as the variance, as in N(0, sigma^2 I)).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_positive

from ..errors import config_error
from ..validation import check_dim
from .base import Environment, Outcome, Round
from .items import SphereItems
from .linear import LinearUsersEnv


def _check_widths(widths: object) -> tuple[int, ...]:
    try:
        items = tuple(widths)  # type: ignore[arg-type]
    except TypeError:
        raise config_error("widths", widths, "a sequence of integers >= 1") from None
    if not items or not all(
        isinstance(w, numbers.Integral) and not isinstance(w, bool) and w >= 1 for w in items
    ):
        raise config_error("widths", widths, "a non-empty sequence of integers >= 1")
    return tuple(int(w) for w in items)


@dataclass(frozen=True)
class FeatureSplit:
    """Contiguous column blocks of widths d_1, ..., d_M; party 0 is the active party."""

    widths: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "widths", _check_widths(self.widths))

    @classmethod
    def equal(cls, dim: int, parties: int) -> "FeatureSplit":
        """d split as evenly as possible (the first d mod M parties get one more column)."""
        dim, parties = check_dim("dim", dim), check_dim("parties", parties)
        if parties > dim:
            raise config_error("parties", parties, f"at most dim={dim} (one column each)")
        base, extra = divmod(dim, parties)
        return cls(tuple(base + (j < extra) for j in range(parties)))

    @classmethod
    def with_active_share(cls, dim: int, parties: int, share: float) -> "FeatureSplit":
        """The active party holds round(share * d) columns; the rest split evenly.

        This is the paper's "partial ratio" (#features used / #features total).
        """
        dim, parties = check_dim("dim", dim), check_dim("parties", parties)
        share = check_positive("share", share)
        active = round(share * dim)
        rest = dim - active
        if share > 1 or active < 1 or (parties > 1 and rest < parties - 1) or (
            parties == 1 and rest != 0
        ):
            raise config_error(
                "share", share,
                f"a fraction in (0, 1] leaving >= 1 column for each of the {parties - 1} "
                f"passive parties (dim={dim})",
            )
        if parties == 1:
            return cls((dim,))
        return cls((active, *FeatureSplit.equal(rest, parties - 1).widths))

    @property
    def dim(self) -> int:
        return sum(self.widths)

    @property
    def parties(self) -> int:
        return len(self.widths)

    @property
    def offsets(self) -> tuple[int, ...]:
        """First column of each party's block, plus d at the end."""
        return (0, *np.cumsum(self.widths).tolist())

    @property
    def active_share(self) -> float:
        """Fraction of the features the active party holds."""
        return self.widths[0] / self.dim

    def columns(self, j: int) -> slice:
        """The columns of party j."""
        if isinstance(j, bool) or not isinstance(j, numbers.Integral) or not 0 <= j < self.parties:
            raise config_error("j", j, f"a party index in [0, {self.parties})")
        return slice(self.offsets[j], self.offsets[j + 1])

    def split(self, items: np.ndarray) -> tuple[np.ndarray, ...]:
        """Views of (..., K, d) items, one (..., K, d_j) block per party (no copy)."""
        bounds = zip(self.offsets[:-1], self.offsets[1:], strict=True)
        return tuple(items[..., lo:hi] for lo, hi in bounds)

    def require_dim(self, dim: int) -> None:
        """Refuse an environment whose dimension is not sum(widths)."""
        if dim != self.dim:
            raise config_error(
                "widths", self.widths,
                f"integers >= 1 summing to the environment's dimension d={dim} "
                f"(they sum to {self.dim})",
            )


class VerticalSplit(Environment):
    """An environment whose contexts are held by M parties, one column block each.

    The wrapped environment still owns the world (rewards, regret); this
    wrapper only decides who sees which columns.  `observe(t)` never returns
    the full (K, d) items, so a protocol built on it cannot read them by
    accident.  `parts[0]` goes to the active party.
    """

    def __init__(self, env: Environment, split: "FeatureSplit | tuple | list") -> None:
        if not isinstance(env, Environment):
            raise config_error("env", env, "an Environment (envs.base)")
        split = split if isinstance(split, FeatureSplit) else FeatureSplit(split)
        split.require_dim(env.dim)
        self.env = env
        self.split = split

    @property
    def dim(self) -> int:
        return self.env.dim

    @property
    def n_items(self) -> int:
        return self.env.n_items

    @property
    def n_users(self) -> int:
        return self.env.n_users

    @property
    def widths(self) -> tuple[int, ...]:
        return self.split.widths

    def reset(self, rng: np.random.Generator) -> None:
        self.env.reset(rng)

    def observe(self, t: int) -> Round:
        """Round t as the parties see it: `items` is the tuple of the parties' read-only
        (K, d_j) blocks, party j's at index j."""
        rnd = self.env.observe(t)
        return Round(rnd.t, rnd.user, self.split.split(rnd.items))

    def act(self, t: int, action: Any) -> Outcome:
        return self.env.act(t, action)

    def true_clusters(self) -> np.ndarray | None:
        return self.env.true_clusters()

    def describe(self) -> dict[str, Any]:
        return {**self.env.describe(), "widths": list(self.widths)}


def seed003_environment(
    dim: int = 100,
    n_items: int = 10,
    *,
    rng: np.random.Generator,
    noise_var: float = 0.05,
    horizon: int | None = None,
    block: int | None = None,
) -> LinearUsersEnv:
    """Seed 003's synthetic world (Section 5.1, Appendix D.2): one user, Gaussian rewards.

    theta ~ N(0, 0.05 I) and every item x ~ N(0, 0.05 I), both normalised to
    unit L2 norm (the variance cancels: both are uniform on the sphere);
    reward x . theta + N(0, noise_var).  `rng` draws theta; the items and the
    reward noise come from the stream passed to `reset`.  The paper's run:
    d = 100, K = 10, T = 5000.
    """
    if not isinstance(rng, np.random.Generator):
        raise config_error("rng", rng, "a numpy.random.Generator")
    dim = check_dim("dim", dim)
    g = rng.standard_normal((1, dim)) * math.sqrt(0.05)
    theta = g / np.linalg.norm(g)
    return LinearUsersEnv(
        theta, SphereItems(dim, n_items), reward="gaussian",
        noise_sd=math.sqrt(check_positive("noise_var", noise_var)), horizon=horizon,
        block=block, name="seed003-synthetic",
    )


class ActivePartyView(Environment):
    """The world as the active party alone sees it: only its own d_0 columns.

    The partial-local baseline of seed 003 (Section 5.2, "partial ratio"):
    a centralized policy of dimension d_0 run on this view ignores the
    passive parties' features.  Rewards and regret are the full world's.
    """

    def __init__(self, env: Environment, split: "FeatureSplit | tuple | list") -> None:
        vertical = VerticalSplit(env, split)
        self.env = env
        self.split = vertical.split
        self._columns = self.split.columns(0)
        self.dim = self.split.widths[0]
        self.n_items = env.n_items
        self.n_users = env.n_users

    @property
    def prefetch(self) -> bool:
        """The wrapped environment's setting: it draws the rounds."""
        return self.env.prefetch

    @prefetch.setter
    def prefetch(self, on: bool) -> None:
        self.env.prefetch = on

    def reset(self, rng: np.random.Generator) -> None:
        self.env.reset(rng)

    def observe(self, t: int) -> Round:
        rnd = self.env.observe(t)
        return Round(rnd.t, rnd.user, rnd.items[:, self._columns])

    def act(self, t: int, action: Any) -> Outcome:
        return self.env.act(t, action)

    def true_clusters(self) -> np.ndarray | None:
        return self.env.true_clusters()

    def describe(self) -> dict[str, Any]:
        return {
            **self.env.describe(), "view": "active party only", "widths": list(self.split.widths),
            "active_share": self.split.active_share,
        }
