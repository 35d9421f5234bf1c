"""FedC3UCB-H speed at seed 001's full scale: one run, rounds per second, against two references.

Setting: |U| = 40 users, J = 10 clusters, d = 20, 200 items per round, lists
of K = 4, T = 10^6 rounds (the paper's synthetic experiment), default
parameters of `privbandit.cascade.study`.

- the run: the "fedc3ucb-h" entry's `run`, i.e. the environment (contexts
  drawn in blocks) and the policy driven by `privbandit.run`; target:
  under 3 minutes;
- the same run with `prefetch=True` (blocks of rounds drawn on a second
  core while the policy plays; the script checks the regret is identical);
- reference 1, the environment alone (same rounds, a fixed list each round):
  the floor any policy pays for the 200 x 20 contexts and the click draws;
- reference 2, the policy alone on pre-drawn rounds (2000 recorded rounds
  replayed in a cycle), with the determinant-lemma trigger (ours) and with a
  fresh determinant ratio per round (slogdet of Sigma_u + Sigma_loc and of
  Sigma_u): what the lemma saves.

- the entries that start from going alone (--entries, default
  "fedc3ucb-sets" and "cdp-fedc3ucb-sets" at epsilon 4) and FedInd, each one
  run of --entry-rounds rounds on the same world: CPU seconds per round, as a
  ratio to FedInd's in the same process (what the set detection, the phases
  and the releases add to going alone).

Wall-clock and CPU seconds are both printed (the machine is shared; CPU
seconds are what the process itself used).

Usage: python bench/bench_cascade.py [--rounds 1000000] [--ref-rounds 50000]
       [--entries fedc3ucb-sets cdp-fedc3ucb-sets] [--entry-rounds 131071]
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from privbandit.cascade import LocalBuffers, fedc3ucb_h
from privbandit.cascade.study import build_environment
from privbandit.registry import get_algorithm
from privbandit.runtime import seed_streams

SETTING = {"users": 40, "clusters": 10, "dim": 20, "items": 200, "list_len": 4}


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def environment_only(rounds: int, seed: np.random.SeedSequence):
    """The environment's own cost: observe and act with a fixed list, nothing kept."""
    env = build_environment(SETTING, seed_streams(seed)["world"])
    env.reset(seed_streams(seed)["rounds"])
    action = np.arange(env.list_len)

    def loop():
        for t in range(rounds):
            env.observe(t)
            env.act(t, action)

    return timed(loop)


def recorded_rounds(count: int, seed: np.random.SeedSequence) -> list:
    """`count` rounds (user, items copy, feedback) to replay to the policy alone."""
    env = build_environment(SETTING, seed_streams(seed)["world"])
    env.reset(seed_streams(seed)["rounds"])
    action = np.arange(env.list_len)
    records = []
    for t in range(count):
        _, user, items = env.observe(t)
        records.append((user, items.copy(), env.act(t, action).feedback))
    return records


class FreshDeterminantBuffers(LocalBuffers):
    """The same buffers with the trigger computed the direct way: two slogdets per round."""

    def __init__(self, n_users, dim, alpha_c, lam):
        super().__init__(n_users, dim, alpha_c, lam)
        self.decision = np.tile(np.eye(dim) * lam, (n_users, 1, 1))

    def add(self, agent, observed, clicked):
        self.gram[agent] += observed.T @ observed
        if clicked is not None:
            self.moment[agent] += observed[clicked]
        self.count[agent] += observed.shape[0]

    def exceeded(self, agent):
        d = self.decision[agent]
        ratio = np.linalg.slogdet(d + self.gram[agent])[1] - np.linalg.slogdet(d)[1]
        return bool(ratio > self.log_threshold)

    def reset(self, agent, decision_inv):
        super().reset(agent, decision_inv)
        self.decision[agent] = np.linalg.inv(decision_inv)


# the study entry's parameters, as a study run passes them
DEFAULTS = {k: v for k, v in get_algorithm("fedc3ucb-h").defaults.items()
            if k not in ("cluster_points", "prefetch")}


def policy_only(records, rounds: int, horizon: int, fresh: bool):
    """CPU seconds of `rounds` select + update of FedC3UCB-H, replaying `records` in a cycle."""
    policy = fedc3ucb_h(SETTING["dim"], SETTING["users"], SETTING["items"],
                        SETTING["list_len"], horizon, **DEFAULTS)
    if fresh:
        policy.buffers = FreshDeterminantBuffers(policy.n_users, policy.dim, policy.alpha_c,
                                                 policy.lam)
    rng = np.random.default_rng(0)

    def loop():
        for t in range(rounds):
            user, items, feedback = records[t % len(records)]
            action = policy.select(items, user, t, rng)
            policy.update(items, user, action, feedback, t)
        return policy.comm.rounds

    return timed(loop)


def entry_cpu(name: str, rounds: int, seed: np.random.SeedSequence) -> tuple[float, float]:
    """(CPU seconds, final regret) of one run of entry `name` (private ones at epsilon 4)."""
    config = {"horizon": rounds, "environment": dict(SETTING)}
    if get_algorithm(name).private:
        config["epsilon"] = 4.0
    result, _, cpu = timed(lambda: get_algorithm(name).run(config, seed))
    return cpu, result.total_regret


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--ref-rounds", type=int, default=50_000)
    parser.add_argument("--entries", nargs="*", default=["fedc3ucb-sets", "cdp-fedc3ucb-sets"])
    parser.add_argument("--entry-rounds", type=int, default=131_071)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.ref_rounds, args.entry_rounds = 1000, 500, 1000
    seed = np.random.SeedSequence(2024)
    alone_cpu, _ = entry_cpu("fedind", args.entry_rounds, seed)
    entries = {name: entry_cpu(name, args.entry_rounds, seed) for name in args.entries}

    _, _, env_cpu = environment_only(args.ref_rounds, seed)
    records = recorded_rounds(2000, seed)
    comm_lemma, _, lemma_cpu = policy_only(records, args.ref_rounds, args.rounds, fresh=False)
    comm_fresh, _, fresh_cpu = policy_only(records, args.ref_rounds, args.rounds, fresh=True)
    config = {"horizon": args.rounds, "environment": dict(SETTING)}
    result, wall, cpu = timed(lambda: get_algorithm("fedc3ucb-h").run(config, seed))
    piped, pipe_wall, pipe_cpu = timed(
        lambda: get_algorithm("fedc3ucb-h").run({**config, "prefetch": True}, seed))
    if piped.total_regret != result.total_regret:
        raise SystemExit(f"prefetch changed the run: {piped.total_regret} != {result.total_regret}")

    per = 1e6 / args.ref_rounds  # microseconds per round from seconds over ref_rounds
    print(f"run: {args.rounds} rounds in {wall:.1f} s wall ({cpu:.1f} s CPU), "
          f"regret {result.total_regret:.1f}, {result.comm['rounds']} communications")
    print(f"run with prefetch: {pipe_wall:.1f} s wall ({pipe_cpu:.1f} s CPU), same regret")
    print(f"environment alone: {per * env_cpu:.1f} us CPU per round")
    print(f"policy alone ({args.ref_rounds} rounds), determinant lemma: {per * lemma_cpu:.1f} us "
          f"CPU per round ({comm_lemma} comms); fresh determinants: {per * fresh_cpu:.1f} us "
          f"({comm_fresh} comms)")
    print(f"rounds_per_second: {args.rounds / wall:.0f}")
    print(f"rounds_per_cpu_second: {args.rounds / cpu:.0f}")
    print(f"run_wall_seconds: {wall:.1f}")
    print(f"run_cpu_seconds: {cpu:.1f}")
    print(f"under_3_minutes_cpu: {'yes' if cpu < 180 else 'no'}")
    print(f"prefetch_rounds_per_second: {args.rounds / pipe_wall:.0f}")
    print(f"prefetch_speedup_wall: {wall / pipe_wall:.2f}")
    print(f"run_vs_environment_alone: {cpu / args.rounds / (env_cpu / args.ref_rounds):.2f}")
    print(f"fresh_determinant_vs_lemma_policy: {fresh_cpu / lemma_cpu:.2f}")
    print(f"fedind_us_per_round: {1e6 * alone_cpu / args.entry_rounds:.1f}")
    for name, (cpu_s, regret) in entries.items():
        key = name.replace("-", "_")
        print(f"{key}_us_per_round: {1e6 * cpu_s / args.entry_rounds:.1f}")
        print(f"{key}_over_fedind_cpu: {cpu_s / alone_cpu:.2f}")
        print(f"{key}_regret_T{args.entry_rounds}: {regret:.1f}")


if __name__ == "__main__":
    main()
