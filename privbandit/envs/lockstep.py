"""`StackedRounds`: the rounds of R linear worlds of one kind, block by block, stacked.

Replicates in lockstep (`runtime.lockstep`) play R worlds -- one per seed,
each with its own round generator -- in one vectorized pass.  Each world
draws its blocks exactly as it does in a run of its own (`BlockRounds.next_block`,
same generator, same sizes, same order, prefetching included when its
`prefetch` is on), so replicate r sees the rounds a separate run of its seed
sees, bit for bit.  The blocks are copied into buffers allocated once,
(R, B, ...), and the outcome of R actions is computed in one call with the
arithmetic of `LinearUsersEnv.act`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..errors import config_error
from .linear import LinearUsersEnv

_STACKED = ("users", "items", "means", "best", "noise")


def _shape(env: LinearUsersEnv) -> tuple:
    return (env.n_users, env.dim, env.n_items, env._block_size, env.reward_model, env.noise_sd,
            env.horizon)


def stackable(envs: Sequence[object]) -> bool:
    """True for one or more `LinearUsersEnv` worlds of one shape."""
    envs = list(envs)
    return (bool(envs) and all(type(e) is LinearUsersEnv for e in envs)
            and len({_shape(e) for e in envs}) == 1)


def _check_alike(envs: Sequence[object]) -> list[LinearUsersEnv]:
    envs = list(envs)
    if not envs or not all(type(e) is LinearUsersEnv for e in envs):
        raise config_error("envs", [type(e).__name__ for e in envs],
                           "one or more LinearUsersEnv worlds")
    shape = {_shape(e) for e in envs}
    if len(shape) != 1:
        raise config_error("envs", sorted(shape, key=str),
                           "worlds of one shape (users, dim, items, block, reward, noise, horizon)")
    return envs


class StackedRounds:
    """Blocks of R alike `LinearUsersEnv` worlds, stacked on a leading replicate axis.

    After `reset(rngs)` (one round generator per world), `block(t)` for
    t = 0, B, 2B, ... fills and returns the buffers: users (R, B), items
    (R, B, K, d), means (R, B, K), best (R, B), noise (R, B).
    """

    def __init__(self, envs: Sequence[LinearUsersEnv]) -> None:
        self.envs = _check_alike(envs)
        first = self.envs[0]
        self.size = first._block_size
        self.bernoulli = first.reward_model == "bernoulli"
        self.noise_sd = first.noise_sd
        self._buffers: dict[str, np.ndarray] = {}
        self._rows = np.arange(len(self.envs))

    @property
    def n(self) -> int:
        return len(self.envs)

    def reset(self, rngs: Sequence[np.random.Generator]) -> None:
        if len(rngs) != self.n:
            raise config_error("rngs", len(rngs), f"{self.n} generators, one per world")
        for env, rng in zip(self.envs, rngs, strict=True):
            env.reset(rng)

    def block(self, t: int, check: Callable[[np.ndarray], object] | None = None
              ) -> dict[str, np.ndarray]:
        """Every world's block starting at round t, in the reused buffers; `check` is
        called with each world's items as (B * K, d) before they are copied (the
        policy's item check: free for blocks their item source validated)."""
        for r, env in enumerate(self.envs):
            drawn = env.next_block(t)
            if check is not None:
                check(drawn["items"].reshape(-1, drawn["items"].shape[-1]))
            if not self._buffers:
                self._buffers = {k: np.empty((self.n, *drawn[k].shape), drawn[k].dtype)
                                 for k in _STACKED}
            for key in _STACKED:
                self._buffers[key][r] = drawn[key]
        return self._buffers

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
