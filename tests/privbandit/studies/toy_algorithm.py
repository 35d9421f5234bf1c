"""A toy registered algorithm for study tests: cheap, seeded, with a ledger.

Its regret per round is a draw scaled by 1/epsilon, so tighter budgets cost
more; each run charges one Laplace release to one ledger.  Used by the study
tests only (registered on import).
"""
from __future__ import annotations

import time

import numpy as np

from privbandit.accounting import LaplaceEvent, Ledger, PrivacyStatement
from privbandit.envs import Environment, Outcome, Round
from privbandit.protocol import Protocol
from privbandit.registry import _REGISTRY, AlgorithmEntry, register_algorithm
from privbandit.runtime import Setup
from privbandit.schema import Param


class ToyWorld(Environment):
    """Nothing to observe: the toy protocol writes its regret itself."""

    def reset(self, rng):
        return None

    def observe(self, t):
        return Round(t, 0, None)

    def act(self, t, action):
        return Outcome(0.0, 0.0, 0.0, 0.0)

    def describe(self):
        return {"name": "toy"}


class Toy(Protocol):
    """Regret draws scaled by 1/epsilon, one Laplace release charged to one ledger."""

    name = "toy"

    def __init__(self, config):
        self.config = config
        eps = config.get("epsilon")
        self.scale = (1.0 if eps is None else 1.0 + 1.0 / eps) * config["scale"]
        if config.get("calibration") == "paper":
            self.scale *= 2.0
        self.ledger = None if eps is None else Ledger("toy-user", epsilon=eps)

    def start(self, env, horizon, rng):
        time.sleep(self.config["sleep"])
        if self.ledger is not None:
            self.ledger.charge(LaplaceEvent(1.0 / self.config["epsilon"], 1.0))

    def advance(self, env, t, regret, reward, rng):
        rounds = np.arange(t + 1, t + 1 + regret.size)
        regret[:] = rng.random(regret.size) * self.scale / np.sqrt(rounds)
        reward[:] = -regret
        return regret.size

    def params(self):
        return {k: v for k, v in self.config.items() if k != "environment"}

    def comm_details(self):
        return {"rounds": 3, "messages": 6}

    def ledgers(self):
        return [] if self.ledger is None else [self.ledger]

    def privacy(self):
        return PrivacyStatement.none("toy")


def build_toy(config, streams):
    # a planted failure by seed index: a stream's SeedSequence is child (index, stream)
    index = streams["world"].bit_generator.seed_seq.spawn_key[-2]
    if index in config["fail_seeds"]:
        raise RuntimeError("planted failure")
    return Setup(Toy(config), ToyWorld(), config["horizon"])


PARAMS = (Param("sleep", float, 0.0, "seconds to sleep", range="[0, inf)"),
          Param("fail_seeds", list, [], "seed indices that raise"),
          Param("scale", float, 1.0, "factor on the regret", range="(0, inf)"))
TOY = AlgorithmEntry("toy", build_toy, private=True, calibrations=("tight", "paper"),
                     params=PARAMS)
TOY_PLAIN = AlgorithmEntry("toy-plain", build_toy, params=PARAMS)
for entry in (TOY, TOY_PLAIN):
    if entry.name not in _REGISTRY:
        register_algorithm(entry)
