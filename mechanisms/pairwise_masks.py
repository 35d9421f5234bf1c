"""Pairwise and self masks that hide each party's share in a modular sum (double masking).

Not to be confused with `masks.py` (orthogonal masks of features, seed 003).

Arithmetic is modulo 2**64 (numpy uint64 wraps), reduced modulo m = 2**bits by
the caller, so every statement below holds modulo m too.  For one release,
party i adds to its encoded, noised vector

    p_i + sum_(j > i) r_ij - sum_(j < i) r_ji,

a self mask p_i and one pairwise mask r_ij per pair, all uniform.  Over all
parties the pairwise masks cancel.  One party's masked share is uniform to
whoever lacks its masks: p_i alone makes it so.

Dropouts (Bonawitz et al. 2017, "Practical secure aggregation for
privacy-preserving machine learning", double masking).  When the parties D
drop, the survivors S (at least `threshold` of them, else the round is
refused with `TooFewSurvivorsError` and nothing is revealed) reveal, for this
release only, the pairwise masks they share with D, and let the aggregator
rebuild the self masks of S.  Subtracting both from the sum of S's shares
leaves exactly the sum of S's noised vectors.  A share of a dropped party
that arrives late stays hidden: its self mask is never revealed (no honest
survivor reveals anything about the self mask of a party it was told had
dropped), so the late share is uniform even given every revealed pairwise
mask.  Masks are fresh per release, so what one release reveals says nothing
about another's.

Two schemes share this interface (`round(release, parties, entries,
threshold, rng) -> MaskRound`):

- `SimulatedMasks()`: every mask is drawn from the release's numpy Generator
  and the aggregator's reconstruction is computed directly: a SIMULATION for
  studies (no cryptography, one process plays every party; the statement of
  a run that uses it must say so).  It draws each party's self mask and
  pairwise total, 2 x parties x entries words per release, with the law the
  pairwise masks give them (`_SimulatedRound`); the masks the survivors
  reveal are drawn when asked.
- `agreed_masks.AgreedMasks` ('crypto' extra): pairwise seeds by X25519 key
  agreement and HKDF, masks expanded by SHAKE-256, self-mask seeds from the
  OS CSPRNG shared by Shamir's scheme with threshold `threshold`; the
  aggregator's reconstruction runs on the revealed seeds and shares.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count

from .errors import TooFewSurvivorsError


@dataclass(frozen=True)
class Revealed:
    """What the aggregator knows of one release's masks after unmasking.

    pair_masks: {(i, j): r_ij} (i < j) for every pair of one survivor and one
    dropped party; self_masks: {k: p_k} for every survivor k.  Nothing about a
    dropped party's self mask.
    """

    pair_masks: dict
    self_masks: dict


class MaskRound(ABC):
    """The masks of one release: `party_masks` (parties, entries) uint64, the unmasking, and
    their law as the aggregator meets it: `hidden` (parties,) bool, whether the pairwise
    masks hide the party's share (True: uniform modulo m given everything the aggregator
    learns, but for the survivors' sum; False: its share less its revealed self mask is
    the party's noised value itself).  Every pair of parties shares a mask in both schemes
    here, so every share is hidden; a scheme that leaves a party out says so, and an
    end-to-end audit charges that party's own noise for what its share shows."""

    def __init__(self, party_masks: np.ndarray, threshold: int,
                 hidden: np.ndarray | None = None) -> None:
        self.party_masks = party_masks
        self.threshold = threshold
        n = party_masks.shape[0]
        self.hidden = np.ones(n, dtype=bool) if hidden is None else np.asarray(hidden, bool)

    def check_survivors(self, survivors: np.ndarray) -> np.ndarray:
        """A boolean (parties,) mask with at least `threshold` survivors, or refuse."""
        alive = np.asarray(survivors, dtype=bool)
        if alive.shape != (self.party_masks.shape[0],):
            raise invalid("survivors", f"an array of shape {alive.shape}",
                          f"a boolean array of shape ({self.party_masks.shape[0]},)")
        if int(alive.sum()) < self.threshold:
            raise TooFewSurvivorsError(
                f"{int(alive.sum())} parties survived, fewer than the {self.threshold} the "
                "release needs: the survivors reveal nothing and nothing is released")
        return alive

    @abstractmethod
    def unmask(self, survivors: np.ndarray) -> np.ndarray:
        """(entries,) uint64: what to subtract from the survivors' summed shares."""

    @abstractmethod
    def revealed(self, survivors: np.ndarray) -> Revealed:
        """The aggregator's knowledge after unmasking (for audits and tests)."""


class _SimulatedRound(MaskRound):
    """One release of simulated masks (`SimulatedMasks`).

    Each party's mask is its self mask plus its pairwise total; the pairwise
    totals of all parties are uniform subject to summing to 0, which is exactly
    the law the pairwise masks of every pair give them (the complete graph's
    signed incidence map is onto the vectors that sum to 0, and maps the
    uniform law to the uniform law on its image).  Unmasking is what the
    protocol's reconstruction yields: the survivors' summed masks.  The
    pairwise masks the survivors reveal are drawn only when asked
    (`revealed`), from their law given the totals: uniform subject to one
    constraint, the dropped parties' totals (every other pair's mask absorbs
    the rest).
    """

    def __init__(self, own: np.ndarray, totals: np.ndarray, seed: int, threshold: int) -> None:
        super().__init__(own + totals, threshold)
        self._own, self._totals, self._seed = own, totals, seed

    def unmask(self, survivors: np.ndarray) -> np.ndarray:
        alive = self.check_survivors(survivors)
        return self.party_masks[alive].sum(axis=0, dtype=np.uint64)

    def revealed(self, survivors: np.ndarray) -> Revealed:
        alive = self.check_survivors(survivors)
        n = alive.size
        cross = [(i, j) for i in range(n) for j in range(i + 1, n) if alive[i] != alive[j]]
        own = {int(k): self._own[k].copy() for k in np.flatnonzero(alive)}
        if not cross:
            return Revealed({}, own)
        raw = np.random.default_rng(self._seed).bit_generator.random_raw(
            len(cross) * self._own.shape[1]).reshape(len(cross), -1)
        # a dropped party's total holds +r_ij when it is i (the smaller index), -r_ij when j
        signs = [not alive[i] for i, _ in cross]
        gap = self._totals[~alive].sum(axis=0, dtype=np.uint64)
        for r, plus in zip(raw[:-1], signs[:-1], strict=True):
            gap = gap - r if plus else gap + r
        raw[-1] = gap if signs[-1] else np.uint64(0) - gap
        return Revealed({pair: raw[k] for k, pair in enumerate(cross)}, own)


class SimulatedMasks:
    """Masks drawn from the release's Generator: a simulation, not cryptography (module
    docstring).  Stateless; the released sums never depend on the masks (they cancel)."""

    simulated = True
    description = ("simulated masks: self masks and pairwise totals drawn from the run's numpy "
                   "generator in one process, no key agreement or secret sharing (a study, "
                   "not a deployment)")

    def round(self, release: int, parties: int, entries: int, threshold: int,
              rng: np.random.Generator) -> MaskRound:
        check_count("release", release, 0)
        n, e = check_count("parties", parties), check_count("entries", entries, 0)
        raw = rng.bit_generator.random_raw(2 * n * e + 1)
        words = raw[:-1].reshape(2 * n, e)
        totals = words[n:]
        totals[-1] = np.uint64(0) - totals[:-1].sum(axis=0, dtype=np.uint64)
        return _SimulatedRound(words[:n], totals, int(raw[-1]), check_count("threshold",
                                                                              threshold))

    def __eq__(self, other: object) -> bool:
        return type(other) is SimulatedMasks

    def __hash__(self) -> int:
        return hash(SimulatedMasks)

    def __repr__(self) -> str:
        return "SimulatedMasks()"
