"""A federated MAB algorithm played on a world, with what its protocol kept."""
from privbandit.fedmab import FedMABRun
from privbandit.runtime import play


def simulate(algorithm, env, rng) -> FedMABRun:
    """`algorithm` on `env` with the generator `rng`: the result, pulls and epochs."""
    protocol = algorithm.protocol(env)
    return FedMABRun.of(protocol, play(protocol, env, algorithm.horizon, rng=rng))
