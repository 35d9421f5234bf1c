"""A progress line on stderr for long jobs (studies), terminal or not.

On a terminal the line is redrawn in place; elsewhere (CI logs, pipes) one
line is printed at most every `every` seconds, and always for the last item,
so a user watching a log still sees the job move.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Counts finished items out of `total` and reports them on `stream`."""

    def __init__(self, total: int, label: str = "runs", *, enabled: bool = True,
                 stream: TextIO | None = None, every: float = 5.0) -> None:
        self.total, self.label, self.enabled = total, label, enabled and total > 0
        self.stream = sys.stderr if stream is None else stream
        self.every = every
        self.done = 0
        self._start = time.monotonic()
        self._last = -float("inf")
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        last = self.done >= self.total
        if not (self._tty or last or now - self._last >= self.every):
            return
        self._last = now
        elapsed = now - self._start
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        line = (f"{self.label}: {self.done}/{self.total} ({100 * self.done / self.total:.0f}%)"
                f", {elapsed:.0f} s elapsed, ~{eta:.0f} s left")
        if self._tty:
            self.stream.write("\r" + line + ("\n" if last else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
