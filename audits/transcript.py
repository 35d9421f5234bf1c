"""Black-box end-to-end audits: sample whole transcripts on two neighbouring worlds.

    Release(round, values, channel=0)
    Transcript(releases); Transcript.of([(round, values), (round, values, channel), ...])
    audit_transcripts(sample, n, claim, *, rng, confidence=0.95, delta=None, name=...,
                      relation=..., pair=..., ridge=0.1, gaussian=False) -> AuditReport

A transcript is what other parties receive over a whole run: a sequence of
releases, each a `Release(round, values, channel)` -- the round (or release
index) it left at, the released array, and which channel sent it (a party
or a stream, numbered by the algorithm; 0 when there is one).  Rounds never
decrease along a transcript.  `sample(which, rng) -> transcript` draws one
whole transcript on world 0 or on its neighbour 1 (worlds fixed, the
algorithm's coins and noise fresh from `rng`); it may return a `Transcript`
or any sequence of (round, values) or (round, values, channel) tuples.

The audit needs no knowledge of the mechanisms.  It draws `n` transcripts
per world (each world from its own child of `rng`, so a seed reproduces the
report bit for bit) and splits each sample into a fit half and a test half.
Two statistics are learned on the fit halves, each tested on the test halves
at confidence 1 - (1 - confidence) / 2 (union bound, as the battery does):

- schedule (discrete): the release schedule -- the number of releases and
  each one's (round, channel, size) -- as a row; `EventSearchTester` picks
  its events (a whole schedule as an atom, bins of the count) on the fit
  half.  A schedule that depends on the data leaks by itself, whatever the
  noise on the values.
- values (continuous): the releases aligned into one vector (coordinates
  keyed by round, channel and order within the round, laid out from the fit
  half, zeros where a transcript has no such release), scored along the
  mean difference whitened by a regularised pooled covariance (Fisher's
  direction, `LinearDiscriminant(ridge)`) or, when the vector is too long
  for the fit half to estimate a covariance, standardised per coordinate;
  `ThresholdTester` chooses the threshold on the fit half.

On the test half Clopper-Pearson bounds on the chosen event's probabilities
under the two worlds give eps >= ln((p_hi_lower - delta) / p_lo_upper), which
holds with probability >= `confidence` for any algorithm (no assumption on
it).  `gaussian=True` adds a third statistic, "values-gdp": the same score
read through `GaussianDPTester` (mu from the two probabilities, then epsilon
at delta), far tighter when the algorithm's noise is Gaussian and valid
only when the score's trade-off curve is (checked on the fit half); the
failure probability is then split three ways.

The report is an `AuditReport`: `tester` names the statistic that found the
bound ("schedule", "values" or "values-gdp"), its one finding is
distributional (the schedule is part of the view), and
`details["statistics"]` lists every statistic's bound and evidence.

What it can see.  A bound of 0 ("consistent, eps >= 0") is evidence of
privacy only as far as the audit has power at its size, and the report
says how far (`details["ceiling"]`, `details["power"]`):

- ceiling: the largest bound `n` transcripts per world can ever give (every
  test run separated perfectly);
- power (`power=(eps_1, eps_2, ...)`): the same transcripts, each led by one
  planted release of a known leak -- which world it came from (0 or 1) plus
  Gaussian noise calibrated to (eps_i, delta), or Laplace noise of scale
  1/eps_i when the claim is pure -- audited by the same statistics.  The
  planted leak costs exactly eps_i, so the bound found on it is what the
  audit can see of a leak that size among this algorithm's releases.  No
  extra runs are made (the leak's noise comes from a child of `rng` drawn
  after the worlds', so the main bound is unchanged).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.calibration import calibrate_gaussian_sigma
from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_positive

from .binomial import cp_lower, cp_upper
from .defaults import coerce_claim, coerce_rng
from .events import EventSearchTester
from .findings import DISTRIBUTIONAL, Finding
from .report import AuditReport
from .statistics import LinearDiscriminant, Projection
from .testers import GaussianDPTester, ThresholdTester, check_confidence, split_runs

HALF = 0.5  # the fit half: the share of each sample that learns the statistics
# Above this many coordinates per fit run (pooled over both worlds) a covariance is not
# estimable from the fit half: the values are standardised per coordinate instead.
_WHITEN_SHARE = 0.25
RELATION = "interactive: one user-round's reward differs; the view is every release of the run"


@dataclass(frozen=True, eq=False)
class Release:
    """One release: the round it left at, the released array, the channel that sent it."""

    round: int
    values: np.ndarray
    channel: int = 0

    def __post_init__(self) -> None:
        for name in ("round", "channel"):
            object.__setattr__(self, name, check_count(name, getattr(self, name), minimum=0))
        try:
            v = np.array(self.values, dtype=float)
        except (TypeError, ValueError):
            raise invalid("values", self.values, "a numeric array") from None
        if not np.all(np.isfinite(v)):
            raise invalid("values", self.values, "finite numbers (a release is what was sent)")
        v.setflags(write=False)
        object.__setattr__(self, "values", v)

    @property
    def key(self) -> tuple[int, int, int]:
        """(round, channel, size): this release's place in the schedule."""
        return self.round, self.channel, self.values.size


@dataclass(frozen=True, eq=False)
class Transcript:
    """Every release of one run, in the order sent (rounds never decrease)."""

    releases: tuple[Release, ...]

    def __post_init__(self) -> None:
        releases = tuple(self.releases)
        if not all(isinstance(r, Release) for r in releases):
            raise invalid("releases", self.releases, "a sequence of Release")
        rounds = [r.round for r in releases]
        if any(np.diff(rounds) < 0):
            raise invalid("releases", rounds, "rounds in non-decreasing order (the order sent)")
        object.__setattr__(self, "releases", releases)

    @classmethod
    def of(cls, items: Iterable[Any]) -> Transcript:
        """From Releases or (round, values) / (round, values, channel) tuples."""
        try:
            return cls(tuple(r if isinstance(r, Release) else Release(*r) for r in items))
        except TypeError:
            raise invalid("transcript", items, "a Transcript, or a sequence of (round, values)"
                          " or (round, values, channel) tuples") from None

    @property
    def schedule(self) -> tuple[tuple[int, int, int], ...]:
        """(round, channel, size) of every release: when, who and how much was sent."""
        return tuple(r.key for r in self.releases)

    def __len__(self) -> int:
        return len(self.releases)


def as_transcript(obj: Any) -> Transcript:
    """`obj` itself if a Transcript, else `Transcript.of(obj)`."""
    return obj if isinstance(obj, Transcript) else Transcript.of(obj)


def schedule_rows(transcripts: list[Transcript]) -> np.ndarray:
    """(n, 1 + 3K): the number of releases, then each release's (round, channel, size),
    padded with -1 up to the longest transcript's K releases."""
    width = max((len(t) for t in transcripts), default=0)
    rows = np.full((len(transcripts), 1 + 3 * width), -1.0)
    for i, t in enumerate(transcripts):
        rows[i, 0] = len(t)
        if len(t):
            rows[i, 1:1 + 3 * len(t)] = np.ravel(t.schedule)
    return rows


def _slots(t: Transcript):
    """((round, channel, order within that round and channel), release) for each release."""
    seen: dict[tuple[int, int], int] = {}
    for r in t.releases:
        j = seen.get((r.round, r.channel), 0)
        seen[(r.round, r.channel)] = j + 1
        yield (r.round, r.channel, j), r


def layout(fit: list[Transcript]) -> dict[tuple[int, int, int], tuple[int, int]]:
    """slot -> (offset, size) in the aligned vector: every slot the fit transcripts use,
    in time order, each as wide as its largest release there."""
    widths: dict[tuple[int, int, int], int] = {}
    for t in fit:
        for slot, r in _slots(t):
            widths[slot] = max(widths.get(slot, 0), r.values.size)
    out, offset = {}, 0
    for slot in sorted(widths):
        out[slot] = (offset, widths[slot])
        offset += widths[slot]
    return out


def aligned(transcripts: list[Transcript], places: dict) -> np.ndarray:
    """(n, D): each transcript's releases at their slots' places, zeros elsewhere (a slot
    the fit half never used is dropped: the statistic is fixed by the fit half)."""
    width = max((o + s for o, s in places.values()), default=0)
    out = np.zeros((len(transcripts), max(width, 1)))
    for i, t in enumerate(transcripts):
        for slot, r in _slots(t):
            if slot in places:
                offset, size = places[slot]
                v = r.values.ravel()[:size]  # cut to the widest release the fit half saw
                out[i, offset:offset + v.size] = v
    return out


@dataclass(frozen=True)
class Standardised:
    """The mean difference over the per-coordinate pooled variance (a diagonal discriminant):
    the whitened direction when the fit half is too small to estimate a covariance."""

    ridge: float = 0.1
    name: str = "standardised-difference"

    def fit(self, selection0: np.ndarray, selection1: np.ndarray) -> Projection:
        x0, x1, gap = _gap(selection0, selection1)
        var = 0.5 * (x0.var(axis=0) + x1.var(axis=0))
        scale = float(var.mean())
        return _direction(gap / (var + self.ridge * scale) if scale > 0 else gap, self.name)


def _gap(selection0: np.ndarray, selection1: np.ndarray):
    """(rows of world 0, rows of world 1, the mean difference) of two fit samples."""
    x0 = selection0.reshape(len(selection0), -1)
    x1 = selection1.reshape(len(selection1), -1)
    return x0, x1, x1.mean(axis=0) - x0.mean(axis=0)


def _direction(w: np.ndarray, name: str) -> Projection:
    """The unit projection along `w` (any direction when the fit half shows no signal)."""
    if not np.any(w):
        w = np.ones_like(w)
    return Projection(w / np.linalg.norm(w), name=name)


def standardised(x0: np.ndarray, x1: np.ndarray, fit: int) -> tuple[np.ndarray, np.ndarray]:
    """Both worlds' aligned values, each coordinate divided by its pooled standard deviation
    on the fit halves (coordinates without spread there are left as they are): the
    statistics' ridges, relative to the mean variance, then treat every coordinate alike,
    so a precise coordinate among noisy ones keeps its weight."""
    sd = np.sqrt(0.5 * (x0[:fit].var(axis=0) + x1[:fit].var(axis=0)))
    sd[sd == 0] = 1.0
    return x0 / sd, x1 / sd


@dataclass(frozen=True)
class Sparse:
    """The mean difference on the `keep` coordinates whose (standardised) gap is largest on
    the fit half, zero elsewhere: a leak concentrated in a few released entries (one record
    of one release) stands out of thousands of noisy ones, where a direction over all of
    them drowns it."""

    keep: int = 4
    name: str = "largest-gaps"

    def fit(self, selection0: np.ndarray, selection1: np.ndarray) -> Projection:
        _, _, gap = _gap(selection0, selection1)
        w = np.zeros_like(gap)
        top = np.argsort(-np.abs(gap), kind="stable")[: self.keep]
        w[top] = gap[top]
        return _direction(w, self.name)


def values_statistic(coordinates: int, fit_runs: int, ridge: float):
    """Fisher's whitened direction when the pooled fit half can estimate a covariance of
    `coordinates` entries, else the per-coordinate standardised one (decided by shapes)."""
    if coordinates <= _WHITEN_SHARE * 2 * fit_runs:
        return LinearDiscriminant(ridge, name="whitened-difference")
    return Standardised(ridge)


def audit_transcripts(
    sample: Callable[[int, np.random.Generator], Any],
    n: int,
    claim: Any,
    *,
    rng: "np.random.Generator | int",
    confidence: float = 0.95,
    delta: "float | None" = None,
    name: str = "transcript",
    relation: str = RELATION,
    pair: str = "world 0 and its neighbour 1",
    ridge: float = 0.1,
    gaussian: bool = False,
    power: Sequence[float] = (),
) -> AuditReport:
    """Sample `n` whole transcripts per world and bound epsilon (see the module docstring).

    claim: a `Claim`, an epsilon, an (epsilon, delta) tuple or a privacy event
    (read at `delta`).  The bound holds with probability >= `confidence`.
    gaussian: also read the values' score through the Gaussian-DP tester (a third
    statistic, "values-gdp", when the claim's delta > 0): far tighter for algorithms
    whose noise is Gaussian, valid only if the score's trade-off curve is Gaussian
    (checked on the fit half; it falls back to the threshold bound otherwise).
    power: the epsilons of known leaks planted in the same transcripts (see the module
    docstring); `details["power"]` lists the bound found on each.
    """
    if not callable(sample):
        raise invalid("sample", sample, "a callable sample(which, rng) -> transcript")
    n = check_count("n", n, minimum=8)
    claim = coerce_claim(claim, delta)
    confidence = check_confidence(confidence)
    ridge = check_positive("ridge", ridge)
    rng = coerce_rng(rng)
    power = tuple(check_positive("power", e) for e in power)
    start = time.perf_counter()
    worlds = [_draw(sample, which, g, n) for which, g in enumerate(rng.spawn(2))]
    fit = len(split_runs(np.empty(n), HALF, n, "n")[0])
    testers = {"values": ThresholdTester}
    if gaussian and claim.delta > 0:
        testers["values-gdp"] = GaussianDPTester
    each = 1.0 - (1.0 - confidence) / (2 + len(testers))  # schedule, sparse, the rest
    bounds = {"schedule": _schedule_bound(worlds, n, claim.delta, each),
              **_values_bounds(worlds, n, fit, ridge, testers, claim.delta, each)}
    found_by = max(bounds, key=lambda k: bounds[k].epsilon)  # the first of equals: schedule
    best = bounds[found_by]
    evidence = f"{found_by}: {best.details.get('evidence', '')}"
    details = dict(best.details, evidence=evidence, found_by=found_by,
                   confidence_per_statistic=each, fit_runs=fit, test_runs=n - fit,
                   statistics=[{"statistic": k, "epsilon_lower_bound": b.epsilon,
                                "evidence": b.details.get("evidence", "")}
                               for k, b in bounds.items()],
                   ceiling=ceiling(n - fit, claim.delta, each))
    if power:
        details["power"] = _power(worlds, power, rng.spawn(1)[0], n, fit, ridge, testers,
                                  claim.delta, each, bounds["schedule"].epsilon)
    return AuditReport(
        mechanism=name, relation=relation, pair=pair, claimed_epsilon=claim.epsilon,
        claimed_delta=claim.delta, claim_source=claim.source, tester=found_by,
        assumptions=("none (any algorithm; worlds fixed, its coins fresh in every sample)"
                     if found_by != "values-gdp" else best.assumptions),
        epsilon_lower_bound=float(best.epsilon), confidence=confidence, samples_per_side=n,
        pairs_tested=1, wall_time_s=time.perf_counter() - start, details=details,
        findings=[Finding(DISTRIBUTIONAL, float(best.epsilon), found_by, evidence)])


# The planted leak's place: round 0 (so it leads every transcript) on a channel of its own
PLANTED_CHANNEL = 2**31 - 1


def planted(worlds: list[list[Transcript]], epsilon: float, delta: float,
            rng: np.random.Generator) -> list[list[Transcript]]:
    """The transcripts of both worlds, each led by one planted release of a known leak:
    the world's index plus noise that makes it (epsilon, delta)-DP (Gaussian, the analytic
    calibration at sensitivity 1), or epsilon-DP when delta is 0 (Laplace, scale 1/epsilon)."""
    if delta > 0:
        sigma = calibrate_gaussian_sigma(epsilon, delta, 1.0)
        noise = [rng.normal(0.0, sigma, len(w)) for w in worlds]
    else:
        noise = [rng.laplace(0.0, 1.0 / epsilon, len(w)) for w in worlds]
    return [[Transcript((Release(0, [which + z], PLANTED_CHANNEL), *t.releases))
             for t, z in zip(w, noise[which], strict=True)] for which, w in enumerate(worlds)]


def ceiling(test_runs: int, delta: float, confidence: float) -> float:
    """The largest bound one statistic can give on `test_runs` runs per world at
    `confidence`: every test run of one world in its event, none of the other's."""
    alpha = (1.0 - confidence) / 2.0
    hi = float(cp_lower(test_runs, test_runs, alpha))
    lo = float(cp_upper(0, test_runs, alpha))
    return max(0.0, math.log(max(hi - delta, 1e-300) / lo))


def _power(worlds, power, rng, n, fit, ridge, testers, delta, confidence, schedule):
    """The bound found on each planted leak (the schedule's bound is unchanged by it)."""
    out = []
    for epsilon, g in zip(power, rng.spawn(len(power)), strict=True):
        found = _values_bounds(planted(worlds, epsilon, delta, g), n, fit, ridge, testers,
                               delta, confidence)
        out.append({"planted_epsilon": epsilon,
                    "noise": "gaussian" if delta > 0 else "laplace",
                    "epsilon_lower_bound": max(schedule, *(b.epsilon for b in found.values()))})
    return out


def _draw(sample, which: int, rng: np.random.Generator, n: int) -> list[Transcript]:
    return [as_transcript(sample(which, rng)) for _ in range(n)]


def _schedule_bound(worlds, n: int, delta: float, confidence: float):
    rows = schedule_rows(worlds[0] + worlds[1])
    count = np.zeros(rows.shape[1])
    count[0] = 1.0
    tester = EventSearchTester(Projection(count, name="release count"), bins=(8, 32),
                               atoms=256, keep=16, holdout=HALF, max_selection=n,
                               float_bits=False)
    return tester.bound(rows[:n], rows[n:], delta=delta, confidence=confidence)


def _values_bounds(worlds, n: int, fit: int, ridge: float, testers: dict, delta: float,
                   confidence: float) -> dict:
    places = layout(worlds[0][:fit] + worlds[1][:fit])
    x0, x1 = standardised(aligned(worlds[0], places), aligned(worlds[1], places), fit)
    statistic = values_statistic(x0.shape[1], fit, ridge)
    out = {name: tester(statistic, holdout=HALF, max_selection=n).bound(
        x0, x1, delta=delta, confidence=confidence) for name, tester in testers.items()}
    out["values-sparse"] = ThresholdTester(Sparse(), holdout=HALF, max_selection=n).bound(
        x0, x1, delta=delta, confidence=confidence)
    return out
