"""What VFUCB/VFTS traffic leaks: the audit layer's mask attacks on this protocol's messages.

`TrafficRecorder` sets up a run of the federation with a recorded
transcript and, once the runner has played it, returns for one passive
party j what the active party received (the
masked rows Q^j x^j of every item of every round) next to the plaintext
rows x^j (the ground truth, for scoring only) and the true block Q^j.
The attacks are those of `privbandit.audits.attacks.masks`:

- known plaintext: the active party somehow knows k of party j's rows
  (public items, a leaked record); with k >= d_j it recovers Q^j and then
  decodes every other row of the traffic exactly;
- PCA (known sample): no pairs, only the traffic and an unpaired sample of
  the population; it recovers span(Q^j) as rounds accumulate, and Q^j
  itself when the population's features are skewed with distinct variances;
- Gram: with nothing known, every norm and inner product of party j's rows
  is read off the traffic exactly.

Masks are not differential privacy; these numbers say how far they are from it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privbandit.audits.attacks.masks import (
    MaskRecovery,
    gram_leakage,
    known_plaintext,
    pca_recovery,
)

from ..envs.base import Round
from ..envs.vertical import VerticalSplit
from ..errors import config_error
from ..policies.base import Policy
from ..runtime import Setup
from ..validation import check_dim
from .federation import VerticalFederation


@dataclass(frozen=True, eq=False)
class Traffic:
    """Party j's traffic as the active party saw it, with the truth to score attacks.

    plain (n, d_j) and masked (n, d): row i is one item of one round, in
    order (round-major); rounds: rounds played; n_items: K; block: Q^j (d, d_j).
    """

    party: int
    rounds: int
    n_items: int
    plain: np.ndarray
    masked: np.ndarray
    block: np.ndarray


class _Recording(VerticalSplit):
    """The split world, keeping one party's plain blocks as rounds are observed."""

    def __init__(self, env: VerticalSplit, party: int) -> None:
        super().__init__(env.env, env.split)
        self.party = party
        self.plain: list[np.ndarray] = []

    def observe(self, t: int) -> Round:
        rnd = super().observe(t)
        self.plain.append(np.array(rnd.items[self.party]))
        return rnd


class TrafficRecorder:
    """A run of the protocol that keeps passive party `party`'s traffic.

    `setup` is the run (`runtime.Setup`; the mask drawn from `masks`); once the
    runner has played it (`privbandit.runtime.run_setup(recorder.setup, seed)`),
    `traffic()` returns what the active party received from that party.
    """

    def __init__(self, policy: Policy, env: VerticalSplit, horizon: int,
                 masks: np.random.Generator, *, party: int = 1,
                 seal_traffic: bool = True) -> None:
        if not isinstance(env, VerticalSplit):
            raise config_error("env", env, "a VerticalSplit (envs.vertical)")
        parties = env.split.parties
        if isinstance(party, bool) or not isinstance(party, int) or not 1 <= party < parties:
            raise config_error("party", party, f"a passive party index in [1, {parties})")
        self.party, self.n_items = party, env.n_items
        self.federation = VerticalFederation(env.split, policy, rng=masks,
                                             seal_traffic=seal_traffic, record=True)
        self._seen = _Recording(env, party)
        self.setup = Setup(self.federation, self._seen, horizon)

    def traffic(self) -> Traffic:
        """Party j's traffic of the played run."""
        plain, transcript = self._seen.plain, self.federation.transcript
        if not plain:
            raise config_error("run", "not played", "the recorder's setup played by the "
                               "runner (runtime.run_setup) before reading its traffic")
        masked = np.concatenate([parts[self.party - 1] for parts in transcript])
        return Traffic(self.party, len(plain), self.n_items, np.concatenate(plain), masked,
                       np.array(self.federation.passive[self.party - 1].block))


def known_plaintext_curve(
    traffic: Traffic, pairs: list[int], *, method: str = "procrustes"
) -> list[MaskRecovery]:
    """Attack error against k known (plaintext, masked) pairs, scored on the other rows."""
    n = traffic.plain.shape[0]
    out = []
    for k in pairs:
        k = check_dim("pairs[...]", k)
        if k >= n:
            raise config_error("pairs", pairs, f"counts below the {n} rows of traffic")
        found = known_plaintext(traffic.plain[:k], traffic.masked[:k], method)
        out.append(found.scored(traffic.block, traffic.plain[k:]))
    return out


def pca_curve(traffic: Traffic, rounds: list[int], known_sample: np.ndarray) -> list[MaskRecovery]:
    """PCA attack error against the number of rounds of traffic observed.

    known_sample (m, d_j): unpaired plaintext rows from the same population
    (see `population_sample`).  `observed` in each result counts rounds.
    """
    out = []
    for r in rounds:
        r = check_dim("rounds[...]", r)
        if r > traffic.rounds:
            raise config_error("rounds", rounds, f"counts up to the {traffic.rounds} rounds played")
        rows = r * traffic.n_items
        found = pca_recovery(traffic.masked[:rows], known_sample)
        scored = found.scored(traffic.block, traffic.plain)
        out.append(MaskRecovery(scored.method, r, scored.block, scored.block_error,
                                scored.subspace_error, scored.context_error))
    return out


def gram_error(traffic: Traffic, rows: int = 1000) -> float:
    """Max |<z_a, z_b> - <x_a, x_b>| over the first `rows` rows: ~0 (rounding) = an exact leak.

    `rows` bounds the (rows, rows) Gram matrix held in memory.
    """
    n = min(check_dim("rows", rows), traffic.plain.shape[0])
    return gram_leakage(traffic.masked[:n]).error(traffic.plain[:n])


def population_sample(
    env: VerticalSplit, party: int, rounds: int, rng: np.random.Generator
) -> np.ndarray:
    """Party `party`'s rows of `rounds` fresh rounds of `env`, drawn from `rng` ((rounds*K, d_j)).

    The unpaired sample a PCA attacker is assumed to have; resets `env`.
    """
    rounds = check_dim("rounds", rounds)
    env.reset(rng)
    return np.concatenate([np.array(env.observe(t).items[party]) for t in range(rounds)])
