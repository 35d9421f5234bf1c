"""The runtime: one run loop for every family (`run`), its seeds and observers."""
from .loop import STREAMS, run, seed_streams

__all__ = ["STREAMS", "run", "seed_streams"]
