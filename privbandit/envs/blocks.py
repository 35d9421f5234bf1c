"""`BlockRounds`: an optional accelerator that draws a world's rounds in blocks.

A world that mixes it in (`class World(BlockRounds, Environment)`) draws its
rounds B at a time: each block costs one RNG call per kind of randomness
(arrivals, items, reward noise), in a fixed order, so a seed fixes every
round bit for bit, and the items handed out are read-only views.  With
`env.prefetch = True` the next block is drawn on a worker thread while the
current one is played (`envs.pipeline`): the same rounds, sooner when a core
is free.  Worlds that need none of this implement `Environment` directly.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..errors import HorizonError, config_error
from .base import Round
from .pipeline import BlockPipeline

# Target number of float64 context entries per block (about 2 MB).
BLOCK_ENTRIES = 1 << 18


def block_rounds(per_round_entries: int, block: int | None) -> int:
    """Rounds per block: `block` if given, else about BLOCK_ENTRIES entries (16..4096)."""
    if block is None:
        return int(np.clip(BLOCK_ENTRIES // max(per_round_entries, 1), 16, 4096))
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise config_error("block", block, "None or an integer >= 1")
    return int(block)



class BlockRounds(ABC):
    """Serves `reset` and `observe` of a world from blocks of rounds drawn by `_draw_block`.

    A world mixes it in before `Environment` and implements `_draw_block`
    (returns a dict of arrays whose first axis is the round within the block;
    it must contain "users" (B,) and "items" (B, K, d)), `act` (reading its
    round's row with `_row(t)`) and `describe`.
    """

    n_users: int
    dim: int
    n_items: int
    horizon: int | None = None

    def __init__(self, block: int) -> None:
        self._block_size = block
        self._rng: np.random.Generator | None = None
        self._block: dict[str, np.ndarray] = {}
        self._start = 0
        self._next = 0
        self._rows = 0  # rounds in the current block; 0 = no block yet
        self._users: list[int] = []  # the block's arrivals as Python ints
        self._items = np.empty((0, 0, 0))
        self._prefetch = False
        self._pipeline = BlockPipeline()
        self._ring: list[dict[str, np.ndarray]] = []  # buffers blocks are drawn into, in turn
        self._turn = 0

    def __getstate__(self) -> dict[str, Any]:
        # a copy must hold the generator as the prefetched block's draw left it; it draws
        # into fresh arrays (another driver's buffers are not its to write)
        self._pipeline.settle()
        return {**self.__dict__, "_ring": [], "_turn": 0}

    def _edited(self, edit: Any) -> Any:
        """A neighbour's copy draws its own blocks (`Environment.neighbour`)."""
        world = super()._edited(edit)
        world._pipeline = BlockPipeline()
        world._block, world._rows, world._rng = {}, 0, None
        return world

    @property
    def prefetch(self) -> bool:
        """Draw the next block of rounds on a worker thread (see `envs.pipeline`)."""
        return self._prefetch

    @prefetch.setter
    def prefetch(self, on: bool) -> None:
        if not isinstance(on, bool):
            raise config_error("prefetch", on, "True or False")
        self._prefetch = on

    def reset(self, rng: np.random.Generator) -> None:
        """Start a fresh round stream from `rng` (the hidden world is unchanged)."""
        if not isinstance(rng, np.random.Generator):
            raise config_error("rng", rng, "a numpy.random.Generator")
        self._pipeline.discard()
        self._rng = rng
        self._block = {}
        self._start = 0
        self._next = 0
        self._rows = 0

    def observe(self, t: int) -> Round:
        """The round t: user and items.  Rounds must be observed in order 0, 1, 2, ..."""
        if t == self._next and t - self._start < self._rows and (
            self.horizon is None or t < self.horizon
        ):  # the common case: the next round of the current block
            i = t - self._start
        else:
            i = self._advance(t)
        self._next = t + 1
        return Round(t, self._users[i], self._items[i])

    def _advance(self, t: int) -> int:
        """Check that t is the next round within the horizon, draw a new block if the
        current one is used up, and return t's index in the block."""
        if self._rng is None:
            raise HorizonError("call reset(rng) before observe(t)")
        if t != self._next:
            raise HorizonError(f"rounds are served in order: expected t={self._next}; got t={t}")
        if self.horizon is not None and t >= self.horizon:
            raise HorizonError(f"t must be < horizon={self.horizon}; got t={t}")
        i = t - self._start
        if not self._block or i >= self._rows:
            self._start = t
            self._block = self.next_block(t)
            users = self._block["users"]
            self._rows = users.shape[0]
            self._users = users.tolist() if users.dtype.kind in "iu" else [int(u) for u in users]
            self._items = self._block["items"]
            i = 0
        return i

    def next_block(self, t: int) -> dict[str, np.ndarray]:
        """The block of rounds starting at round t: the prefetched one if any, else drawn
        now (and the one after it starts on the worker when `prefetch` is on).

        `observe` calls it; a driver that reads whole blocks itself (the lockstep
        driver, `envs.lockstep`) calls it instead of `observe`, with t = 0, B, 2B, ...
        """
        # prefetch the block after this one unless it would start at or past the horizon
        ahead = self._prefetch and (self.horizon is None or t + self._block_size < self.horizon)
        return self._pipeline.take(self._frozen_block, ahead)

    def draw_into(self, buffers: list[dict[str, np.ndarray]]) -> None:
        """Draw the blocks into these buffer sets in turn (each a dict of writeable arrays of
        the world's `block_layout`) instead of fresh arrays: no allocation per block, and a
        driver can hand views of its own stacked arrays (`envs.lockstep`).  The same values
        are drawn.  A block's arrays are overwritten when its buffer's turn comes again, so
        the driver must be done with a block by then: with `prefetch` the next block is
        drawn while the current one is played, which needs at least two sets.  An empty
        list goes back to fresh arrays.  For worlds whose `_draw_block` takes `out`
        (`LinearUsersEnv`)."""
        self._pipeline.discard()
        self._ring = list(buffers)
        self._turn = 0

    def _frozen_block(self) -> dict[str, np.ndarray]:
        """The next block from `_draw_block` (into the next buffer set, if any), its arrays
        read-only."""
        if not self._ring:
            block = self._draw_block(self._block_size, self._rng)
            for arr in block.values():
                arr.flags.writeable = False
            return block
        if self._prefetch and len(self._ring) < 2:
            raise config_error("buffers", len(self._ring),
                               "at least two buffer sets with prefetch on")
        out = self._ring[self._turn % len(self._ring)]
        self._turn += 1
        block = {k: v.view() for k, v in self._draw_block(self._block_size, self._rng,
                                                            out).items()}
        for arr in block.values():
            arr.flags.writeable = False
        return block

    def _row(self, t: int) -> int:
        """Index of round t in the current block (t must be the last observed round)."""
        if t != self._next - 1:
            raise HorizonError(f"act on the round just observed (t={self._next - 1}); got t={t}")
        return t - self._start

    @abstractmethod
    def _draw_block(self, size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Draw `size` rounds of arrivals, items and reward noise."""
