"""A toy registered algorithm for study tests: cheap, seeded, with a ledger.

Its regret per round is a draw scaled by 1/epsilon, so tighter budgets cost
more; each run charges one Laplace release to one ledger.  Used by the study
tests only (registered on import).
"""
from __future__ import annotations

import time

import numpy as np

from privbandit.accounting import LaplaceEvent, Ledger, PrivacyStatement
from privbandit.registry import _REGISTRY, AlgorithmEntry, register_algorithm
from privbandit.result import RunResult
from privbandit.schema import Param


def run_toy(config, seed):
    rng = np.random.default_rng(seed)
    horizon = config["horizon"]
    time.sleep(config.get("sleep", 0.0))
    if seed.spawn_key[-1] in config.get("fail_seeds", ()):
        raise RuntimeError("planted failure")
    eps = config.get("epsilon")
    scale = 1.0 if eps is None else 1.0 + 1.0 / eps
    if config.get("calibration") == "paper":
        scale *= 2.0
    scale *= config.get("scale", 1.0)
    regret = rng.random(horizon) * scale / np.sqrt(np.arange(1, horizon + 1))
    ledgers = []
    if eps is not None:
        ledger = Ledger("toy-user", epsilon=eps)
        ledger.charge(LaplaceEvent(1.0 / eps, 1.0))
        ledgers.append(ledger.summary())
    return RunResult("toy", dict(config), regret, -regret, comm={"rounds": 3, "messages": 6},
                     ledgers=ledgers, privacy=PrivacyStatement.none("toy"))


PARAMS = (Param("sleep", float, 0.0, "seconds to sleep", range="[0, inf)"),
          Param("fail_seeds", list, [], "seed indices that raise"),
          Param("scale", float, 1.0, "factor on the regret", range="(0, inf)"))
TOY = AlgorithmEntry("toy", run_toy, private=True, calibrations=("tight", "paper"),
                     params=PARAMS)
TOY_PLAIN = AlgorithmEntry("toy-plain", run_toy, params=PARAMS)
for entry in (TOY, TOY_PLAIN):
    if entry.name not in _REGISTRY:
        register_algorithm(entry)
