"""The runtime: one run loop for every family (`run`, `play`), its seeds and observers."""
from .lockstep import run_lockstep
from .loop import STREAMS, play, run, seed_int, seed_sequence, seed_streams
from .observers import Checkpoints, Communication, LedgerTrace, Observer, RunState

__all__ = [
    "STREAMS", "Checkpoints", "Communication", "LedgerTrace", "Observer", "RunState", "play",
    "run", "run_lockstep", "seed_int", "seed_sequence", "seed_streams",
]
