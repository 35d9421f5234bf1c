"""The differencing attack on C-anonymous feedback elicitation (seed 004, Section 3.1).

The feedback-eliciting sub-algorithm observes a group G_s in full (r_{s,0})
and, k rounds later, without its k-th member (r_{s,k}); r_{s,0} - r_{s,k} is
that member's reward plus the other members' reward fluctuation between the
two rounds.  An attacker who sees the aggregates (the learner, or anyone who
reads its log) guesses a canary user's binary reward y in round 0 as
1[r_{s,0} - r_{s,k} > 1/2].  With C other members of reward rate p,
r_{s,0} - r_{s,k} = y + S_0 - S_k with S_0, S_k independent Binomial(C, p);
that noise is symmetric and unimodal, so 1/2 is the Bayes-optimal cut at a
uniform prior, and the exact accuracy is (1 + P(S_0 = S_k)) / 2
(`exact_accuracy`): 0.588 for C = 10, p = 0.5.  With the aggregator's Laplace
option, both sums carry Laplace noise and the estimate is still unbiased.

`differencing_mechanism(C, p, ...)` is the attacker's view as an audit
mechanism: dataset = the canary's round-0 reward (0 or 1), output = its
difference estimate, drawn by running the real `KAnonymousAggregator` and
`elicit_feedback` on n independent groups at once (one arm per group).
Neighbouring relation: record level, the canary's reward in round 0 (the
canary's other rounds do not enter the difference, so simulating a canary
whose every reward is y gives the same output law).  `differencing_attack`
reports accuracy, advantage and an empirical epsilon lower bound from the
threshold tester; with Laplace noise the record-level claim is the
aggregator's per-round epsilon.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, xlog1py, xlogy

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_positive
from privbandit.mechanisms.anonymous import KAnonymousAggregator, elicit_feedback

from ..testers import ThresholdTester

RELATION = "record-level: the canary's binary reward in round 0 (0 vs 1)"


def _check_rate(rate: object) -> float:
    real = isinstance(rate, numbers.Real) and not isinstance(rate, (bool, np.bool_))
    r = float(rate) if real else -1.0  # type: ignore[arg-type]
    if not 0.0 <= r <= 1.0:
        raise invalid("rate", rate, "a reward rate in [0, 1]")
    return r


def exact_accuracy(threshold: int, rate: float) -> float:
    """Accuracy of the 1/2 cut without noise: (1 + sum_k Bin(C, p)(k)^2) / 2."""
    c, p = check_count("threshold", threshold), _check_rate(rate)
    k = np.arange(c + 1)
    # the binomial pmf in log space (scipy's pmf overflows on subnormal rates)
    log_pmf = (gammaln(c + 1) - gammaln(k + 1) - gammaln(c - k + 1)
               + xlogy(k, p) + xlog1py(c - k, -p))
    return float(0.5 * (1.0 + np.sum(np.exp(2.0 * log_pmf))))


@dataclass(frozen=True, eq=False)
class DifferencingMechanism:
    """Audit mechanism: canary reward y in {0, 1} -> n draws of r_{s,0} - r_{s,k}.

    Each draw is one elicitation on a group of the canary (first member, so
    k = 1) and C others of reward rate `rate`, through the real aggregator.
    """

    threshold: int
    rate: float
    laplace_epsilon: "float | None" = None
    name: str = "k-anonymous differencing"

    def __post_init__(self) -> None:
        object.__setattr__(self, "threshold", check_count("threshold", self.threshold))
        object.__setattr__(self, "rate", _check_rate(self.rate))
        if self.laplace_epsilon is not None:
            object.__setattr__(self, "laplace_epsilon",
                               check_positive("laplace_epsilon", self.laplace_epsilon))

    def aggregator(self, canary_reward: float) -> KAnonymousAggregator:
        """The aggregator over n groups of C + 1 users; user g (C + 1) is a canary."""
        size = self.threshold + 1

        def rewards(users: np.ndarray, arms: np.ndarray, rng: np.random.Generator):
            means = np.where(users % size == 0, canary_reward, self.rate)
            return (rng.random(users.shape) < means).astype(float)

        noise = {} if self.laplace_epsilon is None else {
            "laplace_epsilon": self.laplace_epsilon, "reward_bounds": (0.0, 1.0)}
        return KAnonymousAggregator(self.threshold, rewards, **noise)

    def __call__(self, dataset: object, rng: np.random.Generator, n: int) -> np.ndarray:
        y = float(dataset)  # type: ignore[arg-type]
        if y not in (0.0, 1.0):
            raise invalid("dataset", dataset, "the canary's binary reward, 0 or 1")
        size = self.threshold + 1
        assignment = np.repeat(np.arange(n), size)  # group g plays arm g
        found = elicit_feedback(self.aggregator(y), assignment, rng)
        return found.estimates[::size]


@dataclass(frozen=True)
class DifferencingResult:
    """How well the differencing attack guesses the canary's reward."""

    threshold: int
    rate: float
    laplace_epsilon: "float | None"
    runs: int
    accuracy: float
    advantage: float
    true_positive_rate: float
    false_positive_rate: float
    exact_accuracy: "float | None"
    epsilon_lower_bound: float
    confidence: float

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def differencing_attack(threshold: int, rate: float, runs: int, rng: np.random.Generator, *,
                        laplace_epsilon: "float | None" = None,
                        confidence: float = 0.95) -> DifferencingResult:
    """Run the attack `runs` times per canary value; accuracy at a uniform prior."""
    mech = DifferencingMechanism(threshold, rate, laplace_epsilon)
    runs = check_count("runs", runs, minimum=4)
    g0, g1 = rng.spawn(2)
    d0, d1 = mech(0, g0, runs), mech(1, g1, runs)
    tpr, fpr = float(np.mean(d1 > 0.5)), float(np.mean(d0 > 0.5))
    bound = ThresholdTester().bound(d0, d1, delta=0.0, confidence=confidence)
    return DifferencingResult(
        threshold=mech.threshold, rate=mech.rate, laplace_epsilon=mech.laplace_epsilon,
        runs=runs, accuracy=0.5 * (1.0 + tpr - fpr), advantage=tpr - fpr,
        true_positive_rate=tpr, false_positive_rate=fpr,
        exact_accuracy=exact_accuracy(threshold, rate) if laplace_epsilon is None else None,
        epsilon_lower_bound=bound.epsilon, confidence=bound.confidence,
    )
