"""The runtime: one run loop for every family (`run`, `play`), its seeds and observers,
and the runner's side of a registry entry (`Setup`, `play_setup`, `run_setups`)."""
from .lockstep import run_lockstep
from .loop import STREAMS, play, run, seed_int, seed_sequence, seed_streams
from .observers import Checkpoints, Communication, LedgerTrace, Observer, RunState
from .setup import Setup, play_algorithm, play_setup, run_setup, run_setups, runs_in_lockstep

__all__ = [
    "STREAMS", "Checkpoints", "Communication", "LedgerTrace", "Observer", "RunState", "Setup",
    "play", "play_algorithm", "play_setup", "run", "run_lockstep", "run_setup", "run_setups",
    "runs_in_lockstep", "seed_int", "seed_sequence", "seed_streams",
]
