"""`StackedRounds`: the rounds of R linear worlds of one kind, block by block, stacked.

Replicates in lockstep (`runtime.lockstep`) play R worlds -- one per seed,
each with its own round generator -- in one vectorized pass.  Each world
draws its blocks exactly as it does in a run of its own (`BlockRounds.next_block`,
same generator, same sizes, same order, prefetching included when its
`prefetch` is on), so replicate r sees the rounds a separate run of its seed
sees, bit for bit.  The worlds draw straight into buffers allocated once,
(R, B, ...) (two sets when prefetching), and the outcome of R actions is
computed in one call with the arithmetic of `LinearUsersEnv.act`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import config_error
from ..validation import mark_validated
from .linear import LinearUsersEnv


def _shape(env: LinearUsersEnv) -> tuple:
    return (env.n_users, env.dim, env.n_items, env._block_size, env.reward_model, env.noise_sd,
            env.horizon)


def _plain(env: object) -> bool:
    """A `LinearUsersEnv` that is no neighbour or planted copy (those edit `act`)."""
    return type(env) is LinearUsersEnv and env._edit is None


def stackable(envs: Sequence[object]) -> bool:
    """True for one or more plain `LinearUsersEnv` worlds of one shape."""
    envs = list(envs)
    return bool(envs) and all(map(_plain, envs)) and len({_shape(e) for e in envs}) == 1


def _check_alike(envs: Sequence[object]) -> list[LinearUsersEnv]:
    envs = list(envs)
    if not envs or not all(map(_plain, envs)):
        raise config_error("envs", [type(e).__name__ for e in envs],
                           "one or more plain LinearUsersEnv worlds (no neighbours)")
    shape = {_shape(e) for e in envs}
    if len(shape) != 1:
        raise config_error("envs", sorted(shape, key=str),
                           "worlds of one shape (users, dim, items, block, reward, noise, horizon)")
    return envs


class StackedRounds:
    """Blocks of R alike `LinearUsersEnv` worlds, stacked on a leading replicate axis.

    After `reset(rngs)` (one round generator per world), `block(t)` for
    t = 0, B, 2B, ... returns the buffers: users (R, B), items (R, B, K, d),
    means (R, B, K), best (R, B), noise (R, B).  Each world draws its blocks
    straight into its row of these buffers (`BlockRounds.draw_into`): nothing
    is allocated or copied per block.  With prefetch on, two sets alternate,
    one played while the worlds' workers draw the next into the other.
    `release()` gives the worlds back their own fresh arrays.
    """

    def __init__(self, envs: Sequence[LinearUsersEnv]) -> None:
        self.envs = _check_alike(envs)
        first = self.envs[0]
        self.size = first._block_size
        self.bernoulli = first.reward_model == "bernoulli"
        self.noise_sd = first.noise_sd
        self._sets: list[dict[str, np.ndarray]] = []
        self._buffers: dict[str, np.ndarray] = {}
        self._blocks = 0  # blocks served since reset
        self._rows = np.arange(len(self.envs))

    @property
    def n(self) -> int:
        return len(self.envs)

    def reset(self, rngs: Sequence[np.random.Generator]) -> None:
        if len(rngs) != self.n:
            raise config_error("rngs", len(rngs), f"{self.n} generators, one per world")
        if not self._sets:
            layout = self.envs[0].block_layout()
            count = 2 if any(env.prefetch for env in self.envs) else 1
            self._sets = [{k: np.empty((self.n, *shape), dtype)
                           for k, (shape, dtype) in layout.items()} for _ in range(count)]
        for r, (env, rng) in enumerate(zip(self.envs, rngs, strict=True)):
            env.reset(rng)
            env.draw_into([{k: a[r] for k, a in bufs.items()} for bufs in self._sets])
        self._blocks = 0

    def release(self) -> None:
        """Detach the worlds from the stacked buffers (they draw fresh arrays again)."""
        for env in self.envs:
            env.draw_into([])

    def block(self, t: int, check: Callable[[np.ndarray], object] | None = None
              ) -> dict[str, np.ndarray]:
        """Every world's block starting at round t, in the stacked buffers; `check` is
        called with each world's items as (B * K, d) (the policy's item check).  When
        every world's item source measured its items' norms, the stacked items are
        recorded as validated (`mark_validated`, the largest of those norms), so the
        check is free, as it is for a run of its own."""
        norms = [float(env.next_block(t)["item_norm"]) for env in self.envs]
        self._buffers = self._sets[self._blocks % len(self._sets)]
        self._blocks += 1
        items = self._buffers["items"]
        if all(math.isfinite(v) for v in norms):
            mark_validated(items, max(norms))
        else:
            items.flags.writeable = True  # not recorded: any earlier record is ignored
        if check is not None:
            for r in range(self.n):
                check(items[r].reshape(-1, items.shape[-1]))
        return self._buffers

    def pair_outcomes(self, replicates: np.ndarray, rows: np.ndarray, actions: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
        """(rewards, regrets), (N,), of actions (N,) of replicates (N,) at rows (N,) of the
        current block (the arithmetic of `LinearUsersEnv.act`)."""
        buf = self._buffers
        mean = buf["means"][replicates, rows, actions]
        noise = buf["noise"][replicates, rows]
        if self.bernoulli:
            reward = (noise < mean).astype(np.float64)
        else:
            reward = mean + self.noise_sd * noise
        return reward, buf["best"][replicates, rows] - mean

    def outcomes(self, i: int, actions: np.ndarray, reward: np.ndarray, regret: np.ndarray
                 ) -> None:
        """Write the rewards and regrets, (R,), of actions (R,) at row i of the current
        block into `reward` and `regret` (the arithmetic of `LinearUsersEnv.act`)."""
        buf = self._buffers
        mean = buf["means"][self._rows, i, actions]
        noise = buf["noise"][:, i]
        if self.bernoulli:
            reward[:] = noise < mean
        else:
            np.add(mean, self.noise_sd * noise, out=reward)
        np.subtract(buf["best"][:, i], mean, out=regret)
