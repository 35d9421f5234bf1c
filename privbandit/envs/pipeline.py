"""`BlockPipeline`: draw an environment's next block of rounds on a worker thread.

A block of rounds (contexts, arrivals, reward noise) depends only on the
environment's round generator, never on the policy's actions, so it can be
drawn while the policy plays the previous block.  NumPy's generators release
the GIL while they fill large arrays, so with a free core the draws (the
largest single cost of a linear bandit round at K = 200, d = 20) overlap the
policy's work instead of adding to it.

Blocks are still drawn one after another from the one generator, in the same
order and with the same sizes, so a seed gives the same rounds bit for bit
with or without the pipeline.  The only visible difference: the pipeline draws
one block ahead, so when a run stops early the generator has advanced by one
block more (and reset() waits for that draw to finish, then discards it).
"""
from __future__ import annotations

import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

Block = dict[str, Any]


class BlockPipeline:
    """One worker thread that draws the next block while the current one is played."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._pending: Future[Block] | None = None

    def take(self, draw: Callable[[], Block], ahead: bool) -> Block:
        """The next block (the prefetched one, else `draw()` now); then start drawing
        the block after it on the worker if `ahead`."""
        block = draw() if self._pending is None else self._pending.result()
        self._pending = self._worker().submit(draw) if ahead else None
        return block

    def settle(self) -> None:
        """Wait until no draw is in flight (the generator is then not in use)."""
        if self._pending is not None:
            wait([self._pending])

    def discard(self) -> None:
        """Wait for a prefetched block, if any, and drop it (errors included)."""
        self.settle()
        self._pending = None

    def _worker(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="privbandit-blocks")
            # the thread ends when the pipeline (its environment) is collected
            weakref.finalize(self, self._executor.shutdown, False)
        return self._executor

    def __getstate__(self) -> dict[str, Any]:
        # a copy holds the prefetched block itself: its draw has already advanced the generator
        return {"ready": None if self._pending is None else self._pending.result()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._executor = None
        self._pending = None
        if state["ready"] is not None:
            self._pending = Future()
            self._pending.set_result(state["ready"])
