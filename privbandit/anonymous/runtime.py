"""What Algorithms 1 and 2 share: the played timeline, elicitation into sums, the private ledger.

Every piece of feedback comes from `privbandit.mechanisms.anonymous.elicit_feedback` on the
environment's aggregator; with the Laplace option the aggregator charges the
ledger before each release.  The assignments played -- computed from released
aggregates and public coins -- are published (`Timeline.publication`).
"""
from __future__ import annotations

import numpy as np

from privbandit.accounting.ledger import Ledger
from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.mechanisms.anonymous import elicit_feedback
from privbandit.mechanisms.publication import Publication

from ..comm import RELEASE, CommLog
from ..envs.anonymous import AnonymousBanditEnv
from ..errors import config_error
from ..private.plan import LAPLACE, ReleasePlan
from ..protocol import StepProtocol


class Timeline:
    """The clock of what was played, up to the horizon, and the step's runs of rounds."""

    def __init__(self, horizon: int) -> None:
        self.horizon = horizon
        self.used = 0
        self._values: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.publication = Publication("learner")  # the assignments it plays

    @property
    def remaining(self) -> int:
        return self.horizon - self.used

    def play(self, env: AnonymousBanditEnv, assignments: np.ndarray, rounds: np.ndarray) -> None:
        """Assignment p (P, N) is played for rounds[p] consecutive rounds (cut at the horizon);
        the environment's aggregator may then release those rounds (`env.play`)."""
        rounds = np.asarray(rounds, dtype=np.int64)
        ends = np.minimum(np.cumsum(rounds), self.remaining)
        lengths = np.diff(ends, prepend=0)
        keep = lengths > 0
        if keep.any():
            played = np.asarray(assignments)[keep]
            self.publication.value("assignments", np.column_stack((played, lengths[keep])))
            env.play(played, lengths[keep])
            self._values.append((env.regret(played), env.expected_reward(played), lengths[keep]))
            self.used += int(lengths.sum())

    def take_runs(self) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """What was played since the last call, as one run of per-round (regret, expected
        reward) for the run loop (`protocol.StepProtocol`); empty when nothing was."""
        if not self._values:
            return []
        reg, rew, lengths = (np.concatenate(v) for v in zip(*self._values, strict=True))
        self._values = []
        return [(np.repeat(reg, lengths), np.repeat(rew, lengths), 1)]


class Elicitor:
    """Runs the feedback-eliciting sub-algorithm and adds its estimates to (N, K) sums/counts."""

    def __init__(
        self, env: AnonymousBanditEnv, rng: np.random.Generator, ledger: Ledger | None
    ) -> None:
        self.env = env
        self.rng = rng
        self.ledger = ledger
        self.comm = CommLog()
        self.rounds = 2 * env.threshold + 2
        self.calls = 0

    def elicit(self, assignment: np.ndarray, sums: np.ndarray, counts: np.ndarray) -> None:
        """2C + 2 rounds on `assignment` (N,), already played (`Timeline.play`); covered
        users get one estimate each."""
        e = elicit_feedback(self.env.aggregator, assignment, self.rng, ledger=self.ledger)
        users = np.flatnonzero(e.covered)
        sums[users, assignment[users]] += e.estimates[users]
        counts[users, assignment[users]] += 1
        start = self.calls * self.rounds
        for r in range(self.rounds):  # one release of S group sums per round
            self.comm.record(RELEASE, messages=e.aggregates.shape[1],
                             nbytes=e.aggregates[r].nbytes, round=start + r)
        self.calls += 1


def estimate_variance(env: AnonymousBanditEnv) -> float:
    """Variance proxy of one elicited estimate r_{s,0} - r_{s,k} (groups of up to 2C + 1).

    (2|G| - 1) reward draws enter the difference, so at most (4C + 1) reward
    proxies; with Laplace noise of scale b on each sum, add 2 * 2 b^2 (its variance).
    """
    v = (4 * env.threshold + 1) * env.reward_variance
    if env.aggregator.noisy:
        v += 4.0 * env.aggregator.scale**2
    return v


def private_ledger(env: AnonymousBanditEnv, horizon: int) -> Ledger | None:
    """A pure-DP ledger for one user (user-level: every round a user is grouped costs epsilon).

    None without the Laplace option (then the aggregator's guarantee is
    C-anonymity, not DP).  The budget, epsilon per round times T, is what a user
    grouped in every round could spend; the ledger reports what was spent.
    """
    if not env.aggregator.noisy:
        return None
    plan, unit = release_plan(env, horizon), "any one user (user-level)"
    total = plan.epsilon * horizon
    return plan.ledger(unit, budget=total, statement=plan.statement(
        Relation.USER, unit, f"{plan.epsilon:g}-DP per round a user is released in",
        epsilon=total))


def release_plan(env: AnonymousBanditEnv, horizon: int) -> ReleasePlan:
    """The family's release plan: the aggregator's pure epsilon per user-round, one Laplace
    release of group sums per released round (the world's aggregator adds the noise)."""
    return ReleasePlan(env.aggregator.event.pure_epsilon, 0.0, horizon, LAPLACE,
                       "every-round", sampler=env.sampler)


def privacy_statement(env: AnonymousBanditEnv, ledger: Ledger | None,
                      horizon: int) -> PrivacyStatement:
    """The stated guarantee of a run, for `RunResult.privacy`."""
    anonymity = f"every observation sums >= C={env.threshold} users' rewards (seed 004)"
    details = {"threshold": env.threshold, "anonymity": anonymity,
               "differencing": "elicitation differences sums across rounds by design"}
    if ledger is None:
        return PrivacyStatement(
            Relation.K_ANONYMITY, unit="one user's reward in one round", details=details,
            summary=f"C-anonymity, not differential privacy: {anonymity}")
    eps, _ = ledger.spent()
    plan = release_plan(env, horizon)
    record = plan.epsilon
    details.update(record_epsilon=record, user_epsilon=eps, user_unit=ledger.unit)
    # Interactive: the algorithm acts on released sums only, a played round is released
    # once, and a user is in one group of a round: one user-round's reward moves one
    # release by at most hi - lo (the end-to-end audit measures exactly `record`).
    return plan.statement(
        Relation.INTERACTIVE, "one user-round's reward in the environment", details=details,
        summary=f"{record:g}-DP (pure) for one user-round's reward, actions adapting: each "
                "released round's group sums are Laplace-noised and every action follows "
                f"released sums only; everything one user contributes: {eps:g}-DP (user "
                "level, composed over the rounds the user was released in)")


def check_env(env: object, n_users: int, n_arms: int, threshold: int) -> AnonymousBanditEnv:
    """The run's environment must match the algorithm's declared N, K, C."""
    if not isinstance(env, AnonymousBanditEnv):
        raise config_error("env", env, "an AnonymousBanditEnv")
    got = (env.n_users, env.n_arms, env.threshold)
    if got != (n_users, n_arms, threshold):
        raise config_error(
            "env", f"(N, K, C) = {got}", f"the algorithm's (N, K, C) = "
            f"{(n_users, n_arms, threshold)}"
        )
    return env


class ElicitingProtocol(StepProtocol):
    """What the anonymous protocols report: the elicitor's communication, the ledger of its
    Laplace releases (if any) and the guarantee.  Subclasses set `elicitor` and `_ledger`."""

    elicitor: Elicitor
    _ledger: Ledger | None

    @property
    def comm(self) -> CommLog:
        return self.elicitor.comm

    def ledgers(self) -> list[Ledger]:
        return [] if self._ledger is None else [self._ledger]

    def privacy(self) -> PrivacyStatement:
        return privacy_statement(self.elicitor.env, self._ledger, self.timeline.horizon)
