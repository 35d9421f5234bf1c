"""Batched policies: R replicates of one policy played round by round in one pass.

A `BatchedPolicy` holds the statistics of R fresh, alike policies stacked on
a leading replicate axis and makes every replicate's decision of a round in
one vectorized call: scores, argmax and the rank-one updates.  The
replicates' own objects stay the reporting side (params, ledgers, detected
clusters): their arrays are views into the stacked ones, so they always
describe their replicate.  Each replicate chooses the actions a separate run
of its policy with the same generators chooses; values agree to rounding
(batched and single BLAS calls may sum in different orders).

A twin reaches a policy's state only through the policy's public contract:
`replicate_state()` and `bind_replicate_state(views)` (`stack_state` does
both for alike policies), and the public steps the policy names for its
data-dependent work (a phase or stage start, a split, a rebuild); never
through a private attribute.

`runtime.lockstep` drives them and holds the registry of twins by policy
class (`register_batched`); no policy class imports its twin.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from ..errors import config_error
from ..kernels import sherman_morrison
from ..validation import check_items
from .base import Policy
from .linear import LinTS, LinUCB


def check_replicates(policies: Sequence[Policy], kind: type) -> list[Policy]:
    """Fresh policies of class `kind` with equal parameters (what lockstep needs)."""
    policies = list(policies)
    if not policies or any(type(p) is not kind for p in policies):
        raise config_error("policies", [type(p).__name__ for p in policies],
                           f"one or more {kind.__name__} policies")
    if any(p.params() != policies[0].params() for p in policies):
        raise config_error("policies", "mixed parameters", "replicates with equal parameters")
    return policies


def stack_state(policies: Sequence[Policy]) -> dict[str, np.ndarray]:
    """The `replicate_state()` arrays of alike policies stacked on a replicate axis, name ->
    (R, ...); each policy then keeps its slices (`bind_replicate_state`)."""
    states = [p.replicate_state() for p in policies]
    stacked = {name: np.stack([state[name] for state in states]) for name in states[0]}
    for r, p in enumerate(policies):
        p.bind_replicate_state({name: arr[r] for name, arr in stacked.items()})
    return stacked


def part(stacked: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """The arrays of `stacked` whose names start with `prefix`, named without it."""
    return {name[len(prefix):]: arr for name, arr in stacked.items()
            if name.startswith(prefix)}


class BatchedPolicy(ABC):
    """R replicates of a per-round policy in lockstep (see the module docstring).

    items (R, K, d) -- replicate r's round items; users (R,); actions (R,)
    ints; rewards (R,) floats.
    """

    def __init__(self, policies: Sequence[Policy]) -> None:
        self.policies = list(policies)
        self.replicates = np.arange(len(self.policies))

    def check_items(self, items: np.ndarray) -> None:
        """Refuse items (n, d) the replicates' own `select` would refuse."""
        first = self.policies[0]
        check_items(items, first.dim, first.item_bound)

    @abstractmethod
    def select(self, items: np.ndarray, users: np.ndarray, t: int,
               rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """Every replicate's action at round t, (R,)."""

    @abstractmethod
    def update(self, items: np.ndarray, users: np.ndarray, actions: np.ndarray,
               rewards: np.ndarray, t: int) -> None:
        """Learn every replicate's feedback of round t (same items and users as `select`)."""

    def finish(self) -> None:
        """Bring the replicates' own state up to date after the last round."""
        return None

    #: True when a replicate's round reads and writes only the model of that round's user
    #: and draws nothing from its generator: rounds of distinct users are then independent,
    #: and the driver may play them together in waves (`select_pairs`, `update_pairs`).
    plays_waves = False

    def select_pairs(self, items: np.ndarray, replicates: np.ndarray, users: np.ndarray
                     ) -> np.ndarray:
        """Actions (N,) of N (replicate, round) pairs whose models are distinct: items
        (N, K, d), their replicates (N,) and users (N,).  Only when `plays_waves`."""
        raise NotImplementedError(f"{type(self).__name__} does not play waves")

    def update_pairs(self, items: np.ndarray, actions: np.ndarray, rewards: np.ndarray
                     ) -> None:
        """Learn the feedback of the pairs of the last `select_pairs`."""
        raise NotImplementedError(f"{type(self).__name__} does not play waves")


class BatchedLinear(BatchedPolicy):
    """LinUCB or LinTS replicates: per replicate, one ridge model per user (or one shared).

    The stacked arrays are kept flat over (replicate, model): replicate r's
    model m is row r * n_models + m, so a round gathers its R served models
    with one index.
    """

    def __init__(self, policies: Sequence[Policy], kind: type) -> None:
        super().__init__(check_replicates(policies, kind))
        first = self.policies[0]
        self.shared, self.lam, n = first.shared, first.models.lam, first.models.n_models
        flat = {k: a.reshape(-1, *a.shape[2:])
                for k, a in part(stack_state(self.policies), "models.").items()}
        self.inv, self.b, self.theta = flat["inv"], flat["b"], flat["theta"]
        self.logdet, self.count = flat["logdet"], flat["count"]
        self._first = self.replicates * n  # row of each replicate's model 0
        self._rows = self._first
        self._inv = self.inv[self._rows]  # the served models' inverses, gathered by `select`

    def _serve(self, users: np.ndarray) -> np.ndarray:
        """Gather the inverses of the models serving `users` (kept for `update`)."""
        self._rows = self._first if self.shared else self._first + users
        self._inv = self.inv[self._rows]
        return self._inv

    def update(self, items: np.ndarray, users: np.ndarray, actions: np.ndarray,
               rewards: np.ndarray, t: int) -> None:
        rows, inv = self._rows, self._inv
        x = items[self.replicates, actions]
        quad = sherman_morrison(inv, x)
        self.inv[rows] = inv
        b = self.b[rows] + rewards[:, None] * x
        self.b[rows] = b
        self.theta[rows] = np.matmul(inv, b[..., None])[..., 0]
        self.logdet[rows] += np.log1p(quad)
        self.count[rows] += 1


class BatchedLinUCB(BatchedLinear):
    """`LinUCB` replicates in lockstep.

    The round's products P = X V^-1 serve twice: the widths x_k^T V^-1 x_k and
    the means P b = X theta_hat, and, for the chosen item, the Sherman-Morrison
    vector V^-1 x and its quadratic form.  theta_hat itself is then only
    needed by the reporting side: `finish` recomputes it from V^-1 and b.

    With one model per user, a round reads and writes only its user's model and
    LinUCB draws nothing at random, so rounds of distinct users of any replicates
    are independent: `plays_waves`, and `select_pairs` / `update_pairs` score and
    update any set of (replicate, round) pairs whose models are distinct in one call.
    """

    def __init__(self, policies: Sequence[Policy]) -> None:
        super().__init__(policies, LinUCB)
        self.radius = self.policies[0].radius
        self.plays_waves = not self.shared and self.policies[0].models.n_models > 1
        self._products = np.empty(0)
        self._quads = np.empty(0)
        self._pairs = self.replicates

    def select(self, items: np.ndarray, users: np.ndarray, t: int,
               rngs: Sequence[np.random.Generator]) -> np.ndarray:
        self._serve(users)
        return self._scores(items)

    def select_pairs(self, items: np.ndarray, replicates: np.ndarray, users: np.ndarray
                     ) -> np.ndarray:
        self._rows = self._first[replicates] + users
        self._inv = self.inv[self._rows]
        return self._scores(items)

    def _scores(self, items: np.ndarray) -> np.ndarray:
        """Argmax of the UCBs of items (N, K, d) under the served models (`_rows`, `_inv`)."""
        rows, inv = self._rows, self._inv
        if self._pairs.size != items.shape[0]:
            self._pairs = np.arange(items.shape[0])
        self._products = products = items @ inv
        self._quads = quads = np.einsum("rkd,rkd->rk", products, items)
        means = np.matmul(products, self.b[rows][..., None])[..., 0]
        beta = self.radius.many(self.logdet[rows], self.lam)
        np.maximum(quads, 0.0, out=quads)
        scores = np.sqrt(quads)
        scores *= beta[:, None]
        scores += means
        return scores.argmax(axis=1)

    def update(self, items: np.ndarray, users: np.ndarray, actions: np.ndarray,
               rewards: np.ndarray, t: int) -> None:
        self.update_pairs(items, actions, rewards)

    def update_pairs(self, items: np.ndarray, actions: np.ndarray, rewards: np.ndarray
                     ) -> None:
        r, rows, inv = self._pairs, self._rows, self._inv
        x = items[r, actions]
        u = self._products[r, actions]  # x^T V^-1 = (V^-1 x)^T: V^-1 is symmetric
        quad = self._quads[r, actions]
        inv -= u[:, :, None] * (u / (1.0 + quad)[:, None])[:, None, :]
        self.inv[rows] = inv
        self.b[rows] += rewards[:, None] * x
        self.logdet[rows] += np.log1p(quad)
        self.count[rows] += 1

    def finish(self) -> None:
        np.matmul(self.inv, self.b[..., None], out=self.theta[..., None])


class BatchedLinTS(BatchedLinear):
    """`LinTS` replicates in lockstep: d normals from each replicate's generator per round."""

    def __init__(self, policies: Sequence[Policy]) -> None:
        super().__init__(policies, LinTS)
        self.v = self.policies[0].v
        self.dim = self.policies[0].dim

    def select(self, items: np.ndarray, users: np.ndarray, t: int,
               rngs: Sequence[np.random.Generator]) -> np.ndarray:
        inv = self._serve(users)
        z = np.stack([rng.standard_normal(self.dim) for rng in rngs])
        factor = np.linalg.cholesky(inv)
        sample = self.theta[self._rows] + self.v * (factor @ z[..., None])[..., 0]
        return np.matmul(items, sample[..., None])[..., 0].argmax(axis=1)
