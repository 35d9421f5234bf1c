"""C-anonymous aggregation of rewards and the feedback-eliciting sub-algorithm.

The learner may observe users' rewards only as sums over groups of at least C
distinct users who all played the same arm in that round (seed 004, Esfandiari,
Mirrokni and Schneider, Anonymous Bandits for Multi-User Systems, Section 2.1).
`KAnonymousAggregator` enforces that rule: it draws the hidden per-user rewards
from the environment itself and hands back only group sums, or raises and
releases nothing.  `elicit_feedback` turns one assignment of users to arms into
unbiased per-user estimates over 2C + 2 rounds (seed 004, Section 3.1).

Groups are given as a padded integer array `members` of shape (..., S, G):
row s lists the users of group s, padded with -1; leading axes index rounds
(one release each).  `arms` has shape (..., S): the arm group s plays.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.events import LaplaceEvent, NotDifferentiallyPrivate, PrivacyEvent
from privbandit.accounting.ledger import Ledger
from privbandit.accounting.validation import as_array, check_count, check_positive

from ._checks import check_choice, check_rng
from .errors import AnonymityError, OutOfBoundsError, ShapeError
from .samplers import resolve_sampler
from .tape import constructed, laplace_loss, tap

PAD = -1

RewardSource = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


def _int_array(name: str, value: object, min_ndim: int) -> np.ndarray:
    a = as_array(name, value)
    if a.size == 0 and a.dtype.kind == "f":
        a = a.astype(np.int64)
    if a.dtype.kind not in "iu" or a.ndim < min_ndim:
        raise ShapeError(
            f"{name} must be an integer array with at least {min_ndim} axes; "
            f"got dtype {a.dtype}, shape {a.shape}"
        )
    return a.astype(np.int64, copy=False)


def _check_range(name: str, a: np.ndarray, lo: int, hi: int | None, allowed: str) -> None:
    bad = (a < lo) if hi is None else ((a < lo) | (a >= hi))
    if np.any(bad):
        raise invalid(name, int(a[bad].flat[0]), allowed)


def pack_groups(groups: "list | tuple", width: int | None = None) -> np.ndarray:
    """A list of user-index sequences as the padded (S, G) array `aggregate` takes."""
    rows = [np.asarray(g, dtype=np.int64).ravel() for g in groups]
    g = max((len(r) for r in rows), default=0) if width is None else width
    out = np.full((len(rows), g), PAD, dtype=np.int64)
    for s, r in enumerate(rows):  # construction helper, not a per-round hot path
        if len(r) > g:
            raise ShapeError(f"group {s} has {len(r)} members, more than width={g}")
        out[s, : len(r)] = r
    return out


class KAnonymousAggregator:
    """Answers only with sums over groups of at least `threshold` = C distinct users.

    `reward_source(users, arms, rng)` is the environment's hidden draw: `users`
    and `arms` are equal-length 1-D integer arrays, one entry per draw (a user
    appears at most once per round, possibly in several rounds of one batch),
    and it returns a float array of the same length whose entries are
    independent reward draws.  The aggregator calls it only after every check
    passed, so a refused request draws and releases nothing.

    With `require_play=True` (what `AnonymousBanditEnv` builds) the aggregator
    releases only rounds that were actually played: `grant(assignments,
    rounds)` records that assignment p (N,) (user i on arm p[i]) was played
    for rounds[p] rounds, and each `aggregate` call of R rounds must fit in
    the unreleased rounds of one played assignment whose arms its groups
    follow; it consumes them, so at most one aggregate per group per played
    round is ever released, and a request for more is refused
    (`AnonymityError`, nothing released).  Without it the caller vouches that
    every requested round was played (audits and tests that replay one
    elicitation many times).

    With `laplace_epsilon`, rewards are clipped to (or, with
    out_of_bounds="reject", must lie in) `reward_bounds` = (lo, hi) and every
    group sum gets independent Laplace noise of scale (hi - lo) / epsilon from
    `sampler` (default: the float-safe grid sampler `samplers.GRID`, as for
    every mechanism; `samplers.FAST` for a faster simulation that is not
    floating-point safe, `OpenDPSampler()` for OpenDP's exact noise; a grid's
    slack is added to the sensitivity and the scale).

    Privacy guarantee
    -----------------
    Without noise: not differential privacy (`event` is `NotDifferentiallyPrivate`).
    The guarantee is C-anonymity of observations (seed 004, Section 2.1): every
    released number is a sum over >= C distinct users who played one arm in one
    round, and groups of one round never overlap.  It does not stop
    differencing across rounds: two sums over groups that differ in one user
    reveal that user's reward difference, which is exactly what
    `elicit_feedback` exploits (see the differencing attack in `audits/`).

    With Laplace noise: epsilon-DP per round (pure DP, `event` a `LaplaceEvent`).
    Neighbouring relation: one user's reward in one round changes (record
    level).  Sensitivity: rewards are clipped to [lo, hi], and a user is in at
    most one group of a round, so the vector of the round's group sums moves by
    at most hi - lo in L1.  Every round is one release; a record appears in
    one round only, while a user-level unit composes over the rounds the user
    takes part in (charge `event` once per round to the user's ledger; the
    `ledger` argument does this).  The noise keeps the eliciting estimates
    unbiased for the clipped rewards.  Source: seed 004, Section 5 (combining
    anonymity with differential privacy is left open there); Dwork et al. 2006
    for the Laplace mechanism.
    """

    __slots__ = ("_threshold", "_source", "_bounds", "_out_of_bounds", "_n_users", "_n_arms",
                 "_epsilon", "_sampler", "_event", "_played")

    def __init__(
        self,
        threshold: int,
        reward_source: RewardSource,
        *,
        laplace_epsilon: float | None = None,
        reward_bounds: tuple[float, float] | None = None,
        out_of_bounds: str = "clip",
        n_users: int | None = None,
        n_arms: int | None = None,
        sampler: object | None = None,
        require_play: bool = False,
    ) -> None:
        self._threshold = check_count("threshold", threshold, minimum=1)
        if not callable(reward_source):
            raise invalid("reward_source", reward_source, "a callable (users, arms, rng)")
        self._source = reward_source
        self._bounds = None if reward_bounds is None else _check_bounds(reward_bounds)
        self._out_of_bounds = check_choice("out_of_bounds", out_of_bounds, ("clip", "reject"))
        self._n_users = None if n_users is None else check_count("n_users", n_users)
        self._n_arms = None if n_arms is None else check_count("n_arms", n_arms)
        self._epsilon = None
        if laplace_epsilon is not None:
            self._epsilon = check_positive("laplace_epsilon", laplace_epsilon)
            if self._bounds is None:
                raise invalid("reward_bounds", None,
                              "a (lo, hi) pair with lo < hi when laplace_epsilon is set")
        self._sampler = resolve_sampler(sampler)  # None: the float-safe default
        self._event = self._make_event()
        if not isinstance(require_play, bool):
            raise invalid("require_play", require_play, "True or False")
        # played, unreleased rounds: [assignment (N,), rounds left]; None: not tied to play
        self._played: list[list] | None = [] if require_play else None
        constructed(self)

    def _make_event(self) -> PrivacyEvent:
        if self._epsilon is None:
            return NotDifferentiallyPrivate(
                f"C-anonymous aggregation (seed 004), C={self._threshold}: sums over >= C "
                "distinct users; differencing across rounds is possible; not differential privacy"
            )
        lo, hi = self._bounds
        # One changed reward moves one group sum; the exact sampler's grid adds its slack.
        sensitivity = (hi - lo) + self._sampler.l1_slack(1)
        return LaplaceEvent(scale=sensitivity / self._epsilon, l1_sensitivity=sensitivity)

    @property
    def threshold(self) -> int:
        """C, the least number of distinct users any released sum covers."""
        return self._threshold

    @property
    def event(self) -> PrivacyEvent:
        """What one round (one release of S group sums) costs."""
        return self._event

    @property
    def n_users(self) -> int | None:
        return self._n_users

    @property
    def n_arms(self) -> int | None:
        return self._n_arms

    @property
    def noisy(self) -> bool:
        return self._epsilon is not None

    @property
    def scale(self) -> float | None:
        """Laplace scale per group sum, or None without noise."""
        return self._event.scale if self.noisy else None

    @property
    def reward_bounds(self) -> tuple[float, float] | None:
        return self._bounds

    def check(self, members: object, arms: object) -> tuple[np.ndarray, np.ndarray]:
        """Validate a request; raise (ShapeError, InvalidParameterError, AnonymityError)."""
        m = _int_array("members", members, 2)
        a = _int_array("arms", arms, 1)
        if a.shape != m.shape[:-1]:
            raise ShapeError(
                f"arms must have shape members.shape[:-1] = {m.shape[:-1]}; got {a.shape}"
            )
        _check_range("members", m, PAD, self._n_users,
                     f"a user index in [0, {self._n_users or 'n_users'}) or {PAD} for padding")
        _check_range("arms", a, 0, self._n_arms, f"an arm index in [0, {self._n_arms or 'K'})")
        self._check_anonymity(m)
        return m, a

    def _check_anonymity(self, m: np.ndarray) -> None:
        sizes = np.count_nonzero(m != PAD, axis=-1)
        small = sizes < self._threshold
        if np.any(small):
            where = tuple(int(i) for i in np.argwhere(small)[0])
            raise AnonymityError(
                f"anonymity check failed: group {where} has {int(sizes[where])} members, "
                f"fewer than the threshold C={self._threshold}; nothing was released"
            )
        # A user twice in one round (within or across groups) would let sums be differenced.
        flat = np.sort(m.reshape(m.shape[:-2] + (-1,)), axis=-1)
        dup = (flat[..., 1:] == flat[..., :-1]) & (flat[..., 1:] != PAD)
        if np.any(dup):
            where = np.argwhere(dup)[0]
            user = int(flat[tuple(where[:-1]) + (where[-1] + 1,)])
            raise AnonymityError(
                f"overlap check failed: user {user} appears more than once in release "
                f"{tuple(int(i) for i in where[:-1])}; groups of one round must be disjoint, "
                "nothing was released"
            )

    @property
    def unreleased_rounds(self) -> int | None:
        """Played rounds not yet released (None when not tied to play)."""
        return None if self._played is None else sum(left for _, left in self._played)

    def grant(self, assignments: object, rounds: object) -> None:
        """Record that assignment p of (P, N) was played for rounds[p] rounds (P,)."""
        if self._played is None:
            raise invalid("grant", "a call", "only on an aggregator built with require_play=True")
        p = _int_array("assignments", assignments, 2)
        r = _int_array("rounds", rounds, 1)
        if p.ndim != 2 or r.shape != p.shape[:1]:
            raise ShapeError(f"assignments must be (P, N) and rounds (P,); got shapes "
                             f"{p.shape} and {r.shape}")
        _check_range("assignments", p, 0, self._n_arms,
                     f"an arm index in [0, {self._n_arms or 'K'})")
        _check_range("rounds", r, 0, None, "a count >= 0")
        self._played.extend([row.copy(), int(n)] for row, n in zip(p, r, strict=True) if n > 0)

    def _take_played(self, m: np.ndarray, a: np.ndarray, rounds: int) -> list | None:
        """The played entry these rounds are released from, or refuse (nothing released)."""
        if self._played is None or rounds == 0:
            return None
        present = m != PAD
        users, arms = m[present], np.broadcast_to(a[..., None], m.shape)[present]
        for entry in self._played:  # few entries: each elicitation consumes its own
            row, left = entry
            if users.size and users.max() >= row.size:
                continue
            if left >= rounds and np.array_equal(row[users], arms):
                return entry
        raise AnonymityError(
            f"play check failed: {rounds} round(s) of these groups were asked for, but no "
            f"played assignment has its users on these arms with that many unreleased "
            f"rounds (unreleased: {self.unreleased_rounds}); an aggregate is released at "
            "most once per round actually played, nothing was released"
        )

    def aggregate(self, members: object, arms: object, rng: np.random.Generator, *,
                  ledger: Ledger | None = None) -> np.ndarray:
        """Sum the rewards of each group: members (..., S, G), arms (..., S) -> (..., S).

        Every leading index is one round (one release).  With `ledger`, the
        releases are charged (DP) or noted (not DP) before any draw; a refused
        request raises and releases nothing.  With require_play, the rounds
        come out of a played assignment's unreleased rounds.
        """
        m, a = self.check(members, arms)
        rng = check_rng(rng)
        # A round without groups releases nothing and costs nothing.
        rounds = int(np.prod(m.shape[:-2], dtype=np.int64)) if m.shape[-2] else 0
        entry = self._take_played(m, a, rounds)
        if ledger is not None:
            self._charge(ledger, rounds)
        present = m != PAD
        users = m[present]
        rewards = self._draw(users, np.broadcast_to(a[..., None], m.shape)[present], rng)
        per_slot = np.zeros(m.shape, dtype=np.float64)
        per_slot[present] = rewards
        sums = per_slot.sum(axis=-1)
        if self.noisy and sums.size:
            sums = tap(self, sums, self._sampler.add_laplace(sums, self.scale, rng))
        if entry is not None:  # released: those played rounds are spent
            entry[1] -= rounds
            self._played = [e for e in self._played if e[1] > 0]
        return sums

    @property
    def reward_source(self) -> RewardSource:
        """The hidden draw `(users, arms, rng) -> rewards`; replaceable (an audit's
        neighbouring world wraps it), never called before a request's checks pass."""
        return self._source

    @reward_source.setter
    def reward_source(self, source: RewardSource) -> None:
        if not callable(source):
            raise invalid("reward_source", source, "a callable (users, arms, rng)")
        self._source = source

    def pair_loss(self, first: list[np.ndarray], second: list[np.ndarray]
                  ) -> tuple[float, float]:
        """(0, epsilon): the pure-DP loss of two sequences of pre-noise group sums
        (`tape.pair_loss`), the sum of ||difference||_1 / scale (basic composition)."""
        return laplace_loss(first, second, self.scale)

    def _charge(self, ledger: Ledger, rounds: int) -> None:
        if not isinstance(ledger, Ledger):
            raise invalid("ledger", ledger, "an accounting.Ledger or None")
        if rounds == 0:
            return
        if self.noisy:
            ledger.charge(self._event, count=rounds)
        else:
            ledger.note(self._event)

    def _draw(self, users: np.ndarray, arms: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if users.size == 0:
            return np.zeros(0)
        r = np.asarray(self._source(users, arms, rng), dtype=np.float64)
        if r.shape != users.shape:
            raise ShapeError(
                f"reward_source must return one reward per requested user, shape "
                f"{users.shape}; got shape {r.shape}"
            )
        if not np.all(np.isfinite(r)):
            raise invalid("reward_source output", "NaN or infinite rewards", "finite rewards")
        if self._bounds is None:
            return r
        lo, hi = self._bounds
        if self._out_of_bounds == "reject" and np.any((r < lo) | (r > hi)):
            bad = float(r[(r < lo) | (r > hi)][0])
            raise OutOfBoundsError(
                f"rewards must lie in reward_bounds [{lo:g}, {hi:g}] (out_of_bounds='reject'); "
                f"got {bad!r}; nothing was released"
            )
        return np.clip(r, lo, hi)


def _check_bounds(bounds: object) -> tuple[float, float]:
    try:
        lo, hi = (float(b) for b in bounds)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise invalid("reward_bounds", bounds, "a (lo, hi) pair of finite numbers") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise invalid("reward_bounds", bounds, "a (lo, hi) pair of finite numbers with lo < hi")
    return lo, hi


@dataclass(frozen=True, eq=False)
class Elicitation:
    """What `elicit_feedback` learned from one assignment.

    estimates (N,): r_{s,0} - r_{s,k} for covered users, NaN elsewhere.
    covered (N,): True where an estimate exists.  groups (S, 2C+1): the groups
    G_s (padded with -1, members in order k = 1, 2, ...); group_arms (S,);
    aggregates (2C+2, S): row 0 the full groups, row k the groups without
    their k-th member.  rounds: 2C + 2, the rounds the assignment is played.
    """

    assignment: np.ndarray
    estimates: np.ndarray
    covered: np.ndarray
    groups: np.ndarray
    group_arms: np.ndarray
    aggregates: np.ndarray
    rounds: int

    def __post_init__(self) -> None:
        for name in ("assignment", "estimates", "covered", "groups", "group_arms", "aggregates"):
            getattr(self, name).setflags(write=False)

    @property
    def uncovered(self) -> np.ndarray:
        """Users assigned to an arm with at most C users: no estimate for them."""
        return np.flatnonzero((self.assignment != PAD) & ~self.covered)


def split_groups(assignment: np.ndarray, threshold: int) -> tuple[np.ndarray, np.ndarray]:
    """Split each arm's users into groups of C+1 ... 2C+1 (arms with <= C users skipped).

    Returns (groups (S, 2C+1) padded with -1, group_arms (S,)).  An arm with n
    users gets floor(n / (C+1)) groups whose sizes differ by at most one; users
    keep increasing index order.  Vectorized: no loop over users or arms.
    """
    c1 = threshold + 1
    assigned = np.flatnonzero(assignment != PAD)
    order = assigned[np.argsort(assignment[assigned], kind="stable")]
    arm_ids, starts, counts = np.unique(assignment[order], return_index=True, return_counts=True)
    per_arm = counts // c1
    n = np.repeat(counts, counts)
    s = np.repeat(per_arm, counts)
    pos = np.arange(order.size) - np.repeat(starts, counts)
    ok = s > 0
    local = pos[ok] * s[ok] // n[ok]
    first = -(-(local * n[ok]) // s[ok])  # ceil(local * n / s): where the group starts
    gid = np.repeat(np.cumsum(per_arm) - per_arm, counts)[ok] + local
    groups = np.full((int(per_arm.sum()), 2 * threshold + 1), PAD, dtype=np.int64)
    groups[gid, pos[ok] - first] = order[ok]
    return groups, np.repeat(arm_ids, per_arm)


def elicit_feedback(aggregator: KAnonymousAggregator, assignment: object,
                    rng: np.random.Generator, *, ledger: Ledger | None = None) -> Elicitation:
    """The feedback-eliciting sub-algorithm of seed 004, Section 3.1 (Lemma 2).

    `assignment` (N,) gives each user's arm (-1: user not assigned).  For every
    arm with at least C+1 users, its users are split into groups G_s of C+1 ...
    2C+1; round 0 observes every G_s in full, round k = 1 ... 2C+1 observes
    G_s without its k-th member (G_s itself when it has fewer than k members).
    User i, the k-th member of G_s, gets the estimate r_{s,0} - r_{s,k}, which
    is unbiased for its mean reward on its arm (O(C)-subgaussian).  Users of
    arms with at most C users get no estimate (`Elicitation.uncovered`).

    All 2C+2 rounds go to the aggregator as one batched request (one call of
    `reward_source`, round-major), so either every round is released or none.
    Every user plays its arm in all 2C+2 rounds; the aggregator draws only the
    rewards it sums, so the environment accounts for the removed member's
    reward (e.g. in regret) itself.  The privacy guarantee is the aggregator's,
    once per round: see `KAnonymousAggregator`.
    """
    if not isinstance(aggregator, KAnonymousAggregator):
        raise invalid("aggregator", aggregator, "a KAnonymousAggregator")
    rng = check_rng(rng)
    c = aggregator.threshold
    a = _int_array("assignment", assignment, 1)
    if a.ndim != 1:
        raise ShapeError(f"assignment must be a 1-D array (N,) of arms; got shape {a.shape}")
    n_arms = aggregator.n_arms
    _check_range("assignment", a, PAD, n_arms,
                 f"an arm index in [0, {n_arms or 'K'}) or {PAD} for unassigned")
    groups, group_arms = split_groups(a, c)
    rounds = 2 * c + 2
    batch = np.repeat(groups[None], rounds, axis=0)
    k = np.arange(2 * c + 1)
    batch[k + 1, :, k] = PAD  # round k drops each group's k-th member
    arms = np.broadcast_to(group_arms, (rounds, group_arms.size))
    if groups.shape[0]:
        aggregates = aggregator.aggregate(batch, arms, rng, ledger=ledger)
    else:
        aggregates = np.zeros((rounds, 0))
    present = groups != PAD
    gid, rank = np.nonzero(present)
    estimates = np.full(a.size, np.nan)
    estimates[groups[present]] = aggregates[0, gid] - aggregates[rank + 1, gid]
    covered = np.zeros(a.size, dtype=bool)
    covered[groups[present]] = True
    return Elicitation(a.copy(), estimates, covered, groups, group_arms, aggregates, rounds)
