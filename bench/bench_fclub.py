"""FCLUB family: CDP-FCLUB-DC speed, and how communication grows with T, in one run.

Setting: seed 000's synthetic world at the public code's setting (d = 10,
m = 4 clusters, 20 users, 5 local servers, 10 fresh items per round), one
seed, driven by `privbandit.run` (environment included).

- speed: CDP-FCLUB-DC (epsilon = 1, delta = 0.1, tight calibration) for T
  rounds (wall and CPU seconds; the ratio uses CPU time), against LinUCB
  with one model per user (`policies.LinUCB`) on the same world and
  rounds -- the ratio measures the federated, private machinery
  (tree privatizer per local cluster, det-ratio triggers, phase detection) over
  a plain per-user ridge model.
- reference, measured in the same run: `Straightforward`, FCLUB-DC written
  plainly in this script as the authors' public code writes it (a matrix
  inverse and a determinant per round, a Python loop over items, edges and
  clusters; noiseless, as that code's uploads are), for --ref-rounds rounds;
  FCLUB-DC and CDP-FCLUB-DC rounds per CPU second are divided by its
  (`fclub_dc_over_straightforward`: the median of --repeats alternating
  repeats' ratios).  The
  authors' own figure, about 2,200 rounds/s on their machine, is printed
  only as `authors_rounds_per_second_quoted` (quoted, not measured).
- communication: messages (uploads + downloads, the paper's C(T)) and rounds
  with any communication of FCLUB, FCLUB-DC and CDP-FCLUB-DC at each horizon
  of --comm-horizons (add 1000000 for the 10^6 point; about 3 minutes).

- machinery: the per-round cost, in microseconds, of the run loop
  (`loop_overhead_us_per_round`: `play` with its observers due only at the
  end, over a plain Python loop making the same calls), of its observers
  (`observers_us_per_round`: at the default schedule, 100 checkpoints, over
  due only at the end) and of the communication log
  (`comm_log_us_per_round`: one `CommLog.record` per round), each measured
  with a trivial policy on a trivial world (--machinery-rounds rounds, best
  of three).

- private_over_plain: rounds per CPU second of the guarded private FCLUB-DC
  ("cdp-fclub-dc+" with its study defaults: the matrix-factorisation
  mechanism, delta = 1e-5) over those of non-private FCLUB-DC, through the
  study entries (world included), --private-rounds rounds, median of
  --repeats alternating repeats.

Usage: python bench/bench_fclub.py [--rounds 100000] [--ref-rounds 20000] [--epsilon 1]
                                   [--comm-horizons 10000,100000]
                                   [--private-rounds 20000] [--repeats 3]
                                   [--machinery-rounds 200000] [--smoke]
(--smoke: every part at a tiny size, seconds; the tests run it.)
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

from privbandit.comm import UPLOAD, CommLog
from privbandit.envs import Environment, Outcome, Round, seed000_environment
from privbandit.fclub import make_policy
from privbandit.policies import LinUCB
from privbandit.policies.base import Policy
from privbandit.registry import get_algorithm
from privbandit.runtime import play, run, seed_streams
from privbandit.schema import fill

AUTHORS_ROUNDS_PER_SECOND = 2200.0  # quoted (issue #7, the authors' machine)
SETTING = {"dim": 10, "n_users": 20, "n_servers": 5}


class Straightforward(Policy):
    """FCLUB-DC (seed 000, Algorithms 1-2) without vectorization: the speed reference.

    Servers hold contiguous blocks of users; phase s starts at round 2^s - 2 with
    local edge deletion (eq. 3), connected components, a global merge of local
    clusters (eq. 4) and fresh statistics; a round serves the user from its local
    cluster's synchronized copy plus its upload buffer with the OFUL radius, uploads
    when det grows by `up`, and other local clusters of the global cluster download
    when theirs lags by `down`.
    """

    name = "fclub-dc-straightforward"

    def __init__(self, dim: int, n_users: int, n_servers: int, alpha: float = 1.5,
                 alpha2: float = 2.0, up: float = 1.01, down: float = 1.01,
                 lam: float = 1.0) -> None:
        self.d, self.n, self.lam = dim, n_users, lam
        self.alpha, self.alpha2, self.up, self.down = alpha, alpha2, up, down
        self.server = np.arange(n_users) * n_servers // n_users
        self.adj = self.server[:, None] == self.server[None, :]
        np.fill_diagonal(self.adj, False)
        self.V, self.b = np.zeros((n_users, dim, dim)), np.zeros((n_users, dim))
        self.T = np.zeros(n_users)
        self.next_phase, self.phase = 0, 0

    def _theta(self, V, b):
        return np.linalg.solve(self.lam * np.eye(self.d) + V, b)

    def _components(self) -> list[int]:
        label = [-1] * self.n
        for start in range(self.n):
            if label[start] < 0:
                label[start], stack = start, [start]
                while stack:
                    u = stack.pop()
                    for v in np.flatnonzero(self.adj[u]):
                        if label[v] < 0:
                            label[v] = start
                            stack.append(v)
        return label

    def _regroup(self) -> None:
        conf = np.sqrt((1 + np.log1p(self.T)) / (1 + self.T))
        theta = [self._theta(self.V[u], self.b[u]) for u in range(self.n)]
        for i in range(self.n):
            for j in range(i + 1, self.n):
                gap = np.linalg.norm(theta[i] - theta[j])
                if self.adj[i, j] and gap > self.alpha * (conf[i] + conf[j]):
                    self.adj[i, j] = self.adj[j, i] = False
        locals_ = sorted(set(self._components()))
        self.local = {c: k for k, c in enumerate(locals_)}
        label = self._components()
        self.user_local = [self.local[c] for c in label]
        members = [[u for u in range(self.n) if self.user_local[u] == k]
                   for k in self.local.values()]
        lv = [sum(self.V[u] for u in m) for m in members]
        lb = [sum(self.b[u] for u in m) for m in members]
        lt = [sum(self.T[u] for u in m) for m in members]
        glob = list(range(len(members)))  # union of local clusters by eq. 4
        for a in range(len(members)):
            for c in range(a + 1, len(members)):
                fa = math.sqrt((1 + math.log1p(lt[a])) / (1 + lt[a]))
                fc = math.sqrt((1 + math.log1p(lt[c])) / (1 + lt[c]))
                if np.linalg.norm(self._theta(lv[a], lb[a]) - self._theta(lv[c], lb[c])) < (
                        self.alpha2 * (fa + fc)):
                    old, new = glob[c], glob[a]
                    glob = [new if g == old else g for g in glob]
        self.glob = glob
        self.GV = {g: sum(lv[k] for k in range(len(lv)) if glob[k] == g) for g in set(glob)}
        self.Gb = {g: sum(lb[k] for k in range(len(lb)) if glob[k] == g) for g in set(glob)}
        self.SV = [self.GV[g].copy() for g in glob]
        self.Sb = [self.Gb[g].copy() for g in glob]
        self.BV = [np.zeros((self.d, self.d)) for _ in glob]
        self.Bb = [np.zeros(self.d) for _ in glob]

    def select(self, items, user, t, rng):
        if t == self.next_phase:
            self._regroup()
            self.phase += 1
            self.next_phase = 2 ** (self.phase + 1) - 2
        c = self.user_local[user]
        V = self.lam * np.eye(self.d) + self.SV[c] + self.BV[c]
        inv = np.linalg.inv(V)
        theta = inv @ (self.Sb[c] + self.Bb[c])
        logdet = np.linalg.slogdet(V)[1] - self.d * math.log(self.lam)
        beta = 0.5 * math.sqrt(2 * math.log(10) + logdet) + math.sqrt(self.lam)
        scores = [x @ theta + beta * math.sqrt(x @ inv @ x) for x in items]
        return int(np.argmax(scores))

    def update(self, items, user, action, feedback, t):
        x, y = items[action], float(feedback)
        xx = np.outer(x, x)
        self.V[user] += xx
        self.b[user] += y * x
        self.T[user] += 1
        c = self.user_local[user]
        self.BV[c] += xx
        self.Bb[c] += y * x
        base = self.lam * np.eye(self.d) + self.SV[c]
        if np.linalg.det(base + self.BV[c]) / np.linalg.det(base) <= self.up:
            return
        g = self.glob[c]
        self.GV[g] += self.BV[c]
        self.Gb[g] += self.Bb[c]
        self.BV[c], self.Bb[c] = np.zeros((self.d, self.d)), np.zeros(self.d)
        full = np.linalg.det(self.lam * np.eye(self.d) + self.GV[g])
        for k, gk in enumerate(self.glob):
            if gk == g and (k == c or full / np.linalg.det(
                    self.lam * np.eye(self.d) + self.SV[k]) > self.down):
                self.SV[k], self.Sb[k] = self.GV[g].copy(), self.Gb[g].copy()


def timed(policy, horizon: int, seed: int, cpu: bool = False) -> tuple[float, object]:
    """Seconds (wall, or CPU of this process: robust on a shared machine) and the result."""
    clock = time.process_time if cpu else time.perf_counter
    env = seed000_environment(seed_streams(seed)["world"])
    start = clock()
    result = run(policy, env, horizon, seed)
    return clock() - start, result


def speed(horizon: int, epsilon: float, seed: int) -> dict[str, float]:
    def private():
        return make_policy("cdp-fclub-dc", **SETTING, horizon=horizon, epsilon=epsilon,
                           delta=0.1)

    cdp_s, cdp = timed(private(), horizon, seed)
    cdp_cpu, _ = timed(private(), horizon, seed, cpu=True)
    ref_s, ref = timed(LinUCB(10, 20), horizon, seed)
    ref_cpu, _ = timed(LinUCB(10, 20), horizon, seed, cpu=True)
    print(f"CDP-FCLUB-DC  T={horizon}: {cdp_s:7.2f} s wall, {cdp_cpu:7.2f} s CPU "
          f"({horizon / cdp_cpu:8.0f} rounds per CPU second), regret {cdp.total_regret:9.1f}, "
          f"messages {cdp.comm['messages']}")
    print(f"LinUCB/user   T={horizon}: {ref_s:7.2f} s wall, {ref_cpu:7.2f} s CPU, "
          f"regret {ref.total_regret:9.1f}")
    return {"cdp_seconds": cdp_s, "cdp_cpu_seconds": cdp_cpu,
            "cdp_rounds_per_second": horizon / cdp_s, "ratio_to_linucb": cdp_cpu / ref_cpu,
            "cdp_rounds_per_cpu_second": horizon / cdp_cpu}


def reference(horizon: int, seed: int, repeats: int) -> dict[str, float]:
    """Rounds per CPU second of the straightforward FCLUB-DC and of ours, same world;
    repeats alternate the two (the figures are medians: a shared machine's load moves)."""
    ref_cpu, ours_cpu = [], []
    for _ in range(repeats):
        seconds, ref = timed(Straightforward(SETTING["dim"], SETTING["n_users"],
                                             SETTING["n_servers"]), horizon, seed, cpu=True)
        ref_cpu.append(seconds)
        seconds, ours = timed(make_policy("fclub-dc", **SETTING), horizon, seed, cpu=True)
        ours_cpu.append(seconds)
    ref_s, ours_s = statistics.median(ref_cpu), statistics.median(ours_cpu)
    print(f"straightforward FCLUB-DC T={horizon}: {ref_s:7.2f} s CPU "
          f"({horizon / ref_s:8.0f} rounds per CPU second), regret {ref.total_regret:9.1f}")
    print(f"FCLUB-DC                 T={horizon}: {ours_s:7.2f} s CPU "
          f"({horizon / ours_s:8.0f} rounds per CPU second), regret {ours.total_regret:9.1f}")
    return {"straightforward_rounds_per_cpu_second": horizon / ref_s,
            "fclub_dc_rounds_per_cpu_second": horizon / ours_s,
            "fclub_dc_over_straightforward": statistics.median(
                r / o for r, o in zip(ref_cpu, ours_cpu, strict=True))}


class Still(Environment):
    """A trivial world for timing the machinery: every round offers user 0 the same two
    items, every action gets the same outcome; its users form one cluster."""

    def __init__(self, users: int = 20) -> None:
        self._items = np.zeros((2, SETTING["dim"]))
        self._outcome = Outcome(0.0, 0.0, 0.0, 0.0)
        self._clusters = np.zeros(users, dtype=np.int64)

    def reset(self, rng: np.random.Generator) -> None:
        return None

    def observe(self, t: int) -> Round:
        return Round(t, 0, self._items)

    def act(self, t: int, action) -> Outcome:
        return self._outcome

    def describe(self) -> dict:
        return {"name": "still"}

    def true_clusters(self) -> np.ndarray:
        return self._clusters


class Idle(Policy):
    """A trivial policy: item 0, all users in one cluster; with `talk`, one upload of
    `nbytes` bytes logged per round."""

    name = "idle"

    def __init__(self, talk: bool = False, users: int = 20, nbytes: int = 888) -> None:
        self.talk, self.nbytes = talk, nbytes
        self._comm = CommLog()
        self._labels = np.zeros(users, dtype=np.int64)

    def select(self, items, user, t, rng):
        return 0

    def update(self, items, user, action, feedback, t):
        if self.talk:
            self._comm.record(UPLOAD, 1, self.nbytes, round=t)

    @property
    def comm(self) -> CommLog:
        return self._comm

    def cluster_labels(self) -> np.ndarray:
        return self._labels


def plain_loop(policy: Policy, env: Environment, horizon: int, rng) -> None:
    """The rounds of `play` written plainly: the same calls, no observers, no result."""
    regret, reward = np.empty(horizon), np.empty(horizon)
    for t in range(horizon):
        _, user, items = env.observe(t)
        action = policy.select(items, user, t, rng)
        out = env.act(t, action)
        policy.update(items, user, action, out.feedback, t)
        regret[t], reward[t] = out.regret, out.reward


def machinery(horizon: int, seed: int) -> dict[str, float]:
    """Microseconds per round of the loop, its observers and the communication log (best
    CPU time of three runs of each, a trivial policy on a trivial world)."""
    rng = np.random.default_rng(seed)
    runs = {
        "plain": lambda: plain_loop(Idle(), Still(), horizon, rng),
        "loop": lambda: play(Idle(), Still(), horizon, rng=rng, cluster_every=horizon),
        "observed": lambda: play(Idle(), Still(), horizon, rng=rng),
        "talking": lambda: play(Idle(talk=True), Still(), horizon, rng=rng),
    }
    best = dict.fromkeys(runs, math.inf)
    for _ in range(3):
        for name, go in runs.items():
            start = time.process_time()
            go()
            best[name] = min(best[name], time.process_time() - start)
    per_round = {k: v / horizon * 1e6 for k, v in best.items()}
    print(f"machinery T={horizon}: " + ", ".join(f"{k} {v:.3f} us/round"
                                                  for k, v in per_round.items()))
    return {"loop_overhead_us_per_round": per_round["loop"] - per_round["plain"],
            "observers_us_per_round": per_round["observed"] - per_round["loop"],
            "comm_log_us_per_round": per_round["talking"] - per_round["observed"]}


def study_config(name: str, **values) -> dict:
    """The configuration a study gives `name` by default (seed 000's world), with `values`."""
    entry = get_algorithm(name)
    return {**entry.defaults, "environment": fill({"setting": "seed000"}, entry.environment),
            **values}


def private_cost(horizon: int, epsilon: float, seed: int, repeats: int) -> dict[str, float]:
    """Rounds per CPU second of the guarded private FCLUB-DC ("cdp-fclub-dc+", its study
    defaults: matrix-factorisation mechanism) over those of FCLUB-DC, same world and
    rounds; repeats alternate the two, the figure is the median of per-repeat ratios."""
    configs = {name: study_config(name, horizon=horizon)
               for name in ("fclub-dc", "cdp-fclub-dc+")}
    configs["cdp-fclub-dc+"]["epsilon"] = epsilon
    ratios = []
    for _ in range(repeats):
        cpu = {}
        for name, config in configs.items():
            start = time.process_time()
            get_algorithm(name).run(config, seed)
            cpu[name] = time.process_time() - start
        ratios.append(cpu["fclub-dc"] / cpu["cdp-fclub-dc+"])
        print(f"cdp-fclub-dc+ {horizon / cpu['cdp-fclub-dc+']:8.0f} rounds per CPU second, "
              f"fclub-dc {horizon / cpu['fclub-dc']:8.0f} (T={horizon}, epsilon={epsilon:g})")
    return {"private_over_plain": statistics.median(ratios)}


def communication(horizons: list[int], epsilon: float, seed: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for name in ("fclub", "fclub-dc", "cdp-fclub-dc"):
        for horizon in horizons:
            if name == "fclub" and horizon > 100_000:
                continue  # linear by construction: every round communicates
            kw = {"horizon": horizon, "epsilon": epsilon, "delta": 0.1} if name.startswith(
                "cdp") else {}
            seconds, result = timed(make_policy(name, **SETTING, **kw), horizon, seed)
            msgs, rounds = result.comm["messages"], result.comm["rounds"]
            print(f"{name:13s} T={horizon:>8d}: messages {msgs:>8d}  rounds {rounds:>7d}  "
                  f"({seconds:6.1f} s)")
            out[f"{name}_messages_T{horizon}"] = msgs
            out[f"{name}_rounds_T{horizon}"] = rounds
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--ref-rounds", type=int, default=20_000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--comm-horizons", default="10000,100000")
    parser.add_argument("--private-rounds", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--machinery-rounds", type=int, default=200_000)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.ref_rounds, args.private_rounds = 300, 200, 300
        args.comm_horizons, args.repeats, args.machinery_rounds = "300", 1, 2000
    figures = speed(args.rounds, args.epsilon, args.seed)
    figures.update(private_cost(args.private_rounds, args.epsilon, args.seed, args.repeats))
    horizons = [int(h) for h in args.comm_horizons.split(",") if h]
    figures.update(communication(horizons, args.epsilon, args.seed))
    figures.update(reference(args.ref_rounds, args.seed, args.repeats))
    ref = figures["straightforward_rounds_per_cpu_second"]
    figures["cdp_over_straightforward"] = figures["cdp_rounds_per_cpu_second"] / ref
    figures.update(machinery(args.machinery_rounds, args.seed))
    figures["authors_rounds_per_second_quoted"] = AUTHORS_ROUNDS_PER_SECOND
    for key, value in figures.items():
        print(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}")


if __name__ == "__main__":
    main()
