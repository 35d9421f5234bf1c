"""FCLUB family: CDP-FCLUB-DC speed, and how communication grows with T, in one run.

Setting: seed 000's synthetic world at the public code's setting (d = 10,
m = 4 clusters, 20 users, 5 local servers, 10 fresh items per round), one
seed, driven by `privbandit.run` (environment included).

- speed: CDP-FCLUB-DC (epsilon = 1, delta = 0.1, tight calibration) for T
  rounds (wall and CPU seconds; the ratio uses CPU time), against LinUCB
  with one model per user (`policies.LinUCB`) on the same world and
  rounds -- the ratio measures the federated, private machinery
  (tree privatizer per local cluster, det-ratio triggers, phase detection) over
  a plain per-user ridge model.  The authors' public code runs about 2,200
  rounds/s at this setting (figure quoted in issue #7), not measured here;
  it is only printed for scale.
- communication: messages (uploads + downloads, the paper's C(T)) and rounds
  with any communication of FCLUB, FCLUB-DC and CDP-FCLUB-DC at each horizon
  of --comm-horizons (add 1000000 for the 10^6 point; about 3 minutes).

- private_over_plain: rounds per CPU second of the guarded private FCLUB-DC
  ("cdp-fclub-dc+" with its study defaults: the matrix-factorisation
  mechanism, delta = 1e-5) over those of non-private FCLUB-DC, through the
  study entries (world included), --private-rounds rounds, median of
  --repeats alternating repeats.

Usage: python bench/bench_fclub.py [--rounds 100000] [--epsilon 1]
                                   [--comm-horizons 10000,100000]
                                   [--private-rounds 20000] [--repeats 3]
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import statistics
import time

from privbandit.envs import seed000_environment
from privbandit.fclub import make_policy
from privbandit.fclub.study import run_algorithm
from privbandit.policies import LinUCB
from privbandit.registry import get_algorithm
from privbandit.runtime import run, seed_streams
from privbandit.schema import fill

AUTHORS_ROUNDS_PER_SECOND = 2200.0
SETTING = {"dim": 10, "n_users": 20, "n_servers": 5}


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
            "cdp_rounds_per_second": horizon / cdp_s, "ratio_to_linucb": cdp_cpu / ref_cpu}


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
            run_algorithm(name, config, seed)
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
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--comm-horizons", default="10000,100000")
    parser.add_argument("--private-rounds", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    figures = speed(args.rounds, args.epsilon, args.seed)
    figures.update(private_cost(args.private_rounds, args.epsilon, args.seed, args.repeats))
    horizons = [int(h) for h in args.comm_horizons.split(",") if h]
    figures.update(communication(horizons, args.epsilon, args.seed))
    figures["speedup_vs_authors_quoted"] = (figures["cdp_rounds_per_second"]
                                            / AUTHORS_ROUNDS_PER_SECOND)
    for key, value in figures.items():
        print(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}")


if __name__ == "__main__":
    main()
