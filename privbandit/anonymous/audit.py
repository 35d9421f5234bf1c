"""The attacker's view of Algorithm 1's own elicitation, as an audit mechanism.

`ElicitationObserver(means, assignment, threshold, canary)` is the plain callable
`(dataset, rng, n) -> outputs` the audit layer takes (`privbandit.audits.run_audit`).  It
replays, n times independently, the feedback-eliciting sub-algorithm on the
group that `privbandit.mechanisms.anonymous.split_groups` forms for the canary under
`assignment` (same members, same order, same arm, the environment's means), through
the real `KAnonymousAggregator` and `elicit_feedback`.

Neighbouring relation (record level): dataset = the canary's reward in round 0
of the elicitation (0 or 1); its other rounds and the other members draw from
their means.  Outputs: view "estimate" (n,) the canary's estimate
r_{s,0} - r_{s,k} (what the learner computes), or view "transcript" (n, 2C + 2)
every aggregate of the canary's group (everything the attacker sees that depends
on the canary: the other groups' sums are independent of it).

Without the Laplace option the estimate's only noise is the other members'
reward fluctuation, so the canary's reward is guessed well above chance (no DP
claim exists; C-anonymity does not stop differencing).  With it, the round-0
release is `laplace_epsilon`-DP for the canary's reward (the aggregator's event).

`anonymous_protocol(epsilon, sampler)` is the one-run audit anonymous-base-laplace's
audit profile declares (`registry.AuditProfile.canaries`): one round of
C-anonymous aggregation with Laplace noise (`KAnonymousAggregator`, as the
environment builds it); each group of C users holds one canary user whose
reward is planted, the others' rewards are 0; the view is the released group
sums.  Guarantee audited: the aggregator's epsilon per round.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_positive
from privbandit.audits.one_run import CanaryProtocol
from privbandit.audits.one_run_protocols import user_round_canaries
from privbandit.mechanisms.anonymous import KAnonymousAggregator, elicit_feedback, split_groups

from ..errors import ShapeError
from ..privacy import DEFAULT_SAMPLER, resolve_sampler
from .algorithm1 import AnonymousBaSE
from .decompositions import DECOMPOSITIONS, random_active_arms
from .errors import assumption_error

VIEWS = ("estimate", "transcript")
RELATION = "record-level: the canary's reward in round 0 of one elicitation (0 vs 1)"


@dataclass(frozen=True, eq=False)
class ElicitationObserver:
    """Audit mechanism: canary's round-0 reward -> n observations of its group's elicitation."""

    means: np.ndarray
    assignment: np.ndarray
    threshold: int
    canary: int
    laplace_epsilon: float | None = None
    view: str = "estimate"

    def __post_init__(self) -> None:
        means = np.asarray(self.means, dtype=np.float64)
        assignment = np.asarray(self.assignment, dtype=np.int64)
        if means.ndim != 2 or assignment.shape != (means.shape[0],):
            raise ShapeError(f"means must be (N, K) and assignment (N,); got {means.shape} "
                             f"and {assignment.shape}")
        c = check_count("threshold", self.threshold)
        if self.view not in VIEWS:
            raise invalid("view", self.view, f"one of {VIEWS}")
        if self.laplace_epsilon is not None:
            check_positive("laplace_epsilon", self.laplace_epsilon)
        groups, arms = split_groups(assignment, c)
        hit = np.argwhere(groups == self.canary)
        if hit.size == 0:
            raise assumption_error(
                "the canary must be covered (on an arm with >= C + 1 users)", "canary",
                self.canary, f"a user on an arm holding at least C + 1 = {c + 1} users",
            )
        s, _ = hit[0]
        members = groups[s][groups[s] >= 0]
        object.__setattr__(self, "_members", members)
        object.__setattr__(self, "_arm", int(arms[s]))
        object.__setattr__(self, "_position", int(np.flatnonzero(members == self.canary)[0]))

    @property
    def group(self) -> np.ndarray:
        """The canary's group G_s (users in elicitation order)."""
        return self._members.copy()

    def aggregator(self, canary_reward: float) -> KAnonymousAggregator:
        """Aggregator over n copies of the group: virtual user c m + r is member r of copy c."""
        size = self._members.size
        mu = self.means[self._members, self._arm]
        position = self._position

        def rewards(users: np.ndarray, arms: np.ndarray, rng: np.random.Generator):
            r = (rng.random(users.shape) < mu[users % size]).astype(np.float64)
            canary = np.flatnonzero(users % size == position)
            copies = np.unique(users[canary] // size).size
            r[canary[:copies]] = canary_reward  # round-major: the first copies are round 0
            return r

        noise = {} if self.laplace_epsilon is None else {
            "laplace_epsilon": self.laplace_epsilon, "reward_bounds": (0.0, 1.0)}
        return KAnonymousAggregator(self.threshold, rewards, **noise)

    def __call__(self, dataset: object, rng: np.random.Generator, n: int) -> np.ndarray:
        if isinstance(dataset, bool) or dataset not in (0, 1):
            raise invalid("dataset", dataset, "the canary's round-0 reward, 0 or 1")
        n = check_count("n", n)
        size = self._members.size
        tiled = np.repeat(np.arange(n), size)  # copy c plays its own arm c: one group each
        found = elicit_feedback(self.aggregator(float(dataset)), tiled, rng)
        if self.view == "estimate":
            return found.estimates[np.arange(n) * size + self._position]
        return np.ascontiguousarray(found.aggregates.T)


def algorithm_assignment(algorithm: AnonymousBaSE, rng: np.random.Generator) -> np.ndarray:
    """An assignment Algorithm 1 elicits on in its first batch (all arms active), (N,)."""
    if not isinstance(algorithm, AnonymousBaSE):
        raise invalid("algorithm", algorithm, "an AnonymousBaSE")
    active = np.ones((algorithm.n_users, algorithm.n_arms), dtype=bool)
    first = int(np.asarray(algorithm.base_grid())[0])
    dec = DECOMPOSITIONS[algorithm.decomposition](active, first, algorithm.threshold, rng)
    return dec.filled(active, random_active_arms(active, len(dec.patterns), rng)).patterns[0]


def anonymous_protocol(epsilon: float, sampler: object = DEFAULT_SAMPLER, threshold: int = 5,
                       groups: int = 400,
                       name: str = "group sums") -> CanaryProtocol:
    """One canary user per group of one C-anonymous round (see the module docstring)."""
    c, m = check_count("threshold", threshold), check_count("groups", groups)
    members = np.arange(m * c).reshape(1, m, c)  # one round, m groups of c users

    def run(planted: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        def source(users, arms, g):
            return np.where(users % c == 0, planted[users // c], 0.0)
        agg = KAnonymousAggregator(c, source, laplace_epsilon=epsilon, reward_bounds=(0.0, 1.0),
                                   sampler=resolve_sampler(sampler))
        return agg.aggregate(members, np.zeros((1, m), dtype=np.int64), rng)[0]

    return user_round_canaries(run, lambda sums: sums, m, name=name,
                               relation="record-level: one user's reward in one round (a "
                                        "canary user-round, 1 vs 0)")

