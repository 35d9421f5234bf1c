"""Seed 000's synthetic comparison (Figure 2a) at the public code's setting, noise included.

FCLUB, FCLUB-DC and CDP-FCLUB-DC (epsilon = 1, delta = 0.1, tight
calibration) against CLUB and SCLUB run per local server, LinUCB per user,
Homo and Homo-DC; d = 10, m = 4, 20 users, 5 local servers, 10 items per
round, alpha = 1.5, alpha2 = 2, U = D = 1.01, T = 10^5, 5 seeds.

Prints the mean (sd over seeds) final regret and communication of each
algorithm, the communication of the federated ones at T = 10^4 and 10^5
(messages = uploads + downloads, the paper's C(T); rounds = time steps with
any message), and draws `fclub_regret.png` (cumulative regret, mean and one
sd) and `fclub_communication.png` (rounds with communication against T).

The paper places CDP-FCLUB-DC below every baseline; its public code never let
the noise reach the shared statistics.  Here every upload is noised and the
trigger reads noisy statistics only -- see where it lands, and
`examples/fclub_budget.py` for the epsilon at which it beats CLUB.

Usage: python examples/fclub_synthetic.py [--horizon 100000] [--seeds 5]
       [--workers 2] [--out fclub_results]
A quick check: --horizon 5000 --seeds 2.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from fclub_common import LABELS, band, final, groups, mean_sd, pyplot, run

BASELINES = ("club-per-server", "sclub-per-server", "linucb", "homo", "homo-dc")
FEDERATED = ("fclub", "fclub-dc", "cdp-fclub-dc")
PRIVATE = {"epsilon": 1.0, "delta": 0.1}


SCALED = "CDP-FCLUB-DC (beta x 0.1)"


def algorithms(names, scaled: bool = False) -> list[dict]:
    out = []
    for name in names:
        spec = {"name": name, "label": LABELS[name]}
        if name == "cdp-fclub-dc":
            spec["params"] = dict(PRIVATE)
        out.append(spec)
    if scaled:  # the authors' code scales its private radius by 0.005; here 0.1
        out.append({"name": "cdp-fclub-dc", "label": SCALED,
                    "params": {**PRIVATE, "beta_scale": 0.1}})
    return out


def report(records, short) -> None:
    by = groups(records)
    print(f"\n== T = {records[0]['horizon']}: mean (sd) over {len(by[('FCLUB',)])} seeds ==")
    print(f"{'algorithm':14s} {'final regret':>20s} {'messages':>18s} {'comm rounds':>16s}")
    for name in FEDERATED + BASELINES:
        group = by[(LABELS[name],)]
        reg = final(group)
        line = f"{LABELS[name]:14s} {reg[0]:11.1f} ({reg[1]:6.1f})"
        if group[0]["comm"]:
            msg = mean_sd(r["comm"]["messages"] for r in group)
            rnd = mean_sd(r["comm"]["rounds"] for r in group)
            line += f" {msg[0]:10.0f} ({msg[1]:5.0f}) {rnd[0]:8.0f} ({rnd[1]:5.0f})"
        print(line)
    club = final(by[("CLUB",)])[0]
    cdp = final(by[("CDP-FCLUB-DC",)])[0]
    print(f"CDP-FCLUB-DC (epsilon = 1, noise in place) / CLUB final regret: {cdp / club:.2f}")
    if (SCALED,) in by:
        scaled = final(by[(SCALED,)])
        print(f"{SCALED}: {scaled[0]:.1f} ({scaled[1]:.1f}), / CLUB: {scaled[0] / club:.2f}")
    short_by = groups(short)
    print(f"\ncommunication, mean over seeds (messages / rounds) at T = {short[0]['horizon']} "
          f"and T = {records[0]['horizon']}:")
    for name in FEDERATED:
        a, b = short_by[(LABELS[name],)], by[(LABELS[name],)]
        print(f"  {LABELS[name]:14s} "
              f"{mean_sd(r['comm']['messages'] for r in a)[0]:9.0f} / "
              f"{mean_sd(r['comm']['rounds'] for r in a)[0]:7.0f}   ->  "
              f"{mean_sd(r['comm']['messages'] for r in b)[0]:9.0f} / "
              f"{mean_sd(r['comm']['rounds'] for r in b)[0]:7.0f}")


def plot(records, out: Path) -> list[Path]:
    plt = pyplot()
    by = groups(records)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name in FEDERATED + BASELINES:
        band(ax, by[(LABELS[name],)], "cumulative_regret", LABELS[name],
             linestyle="-" if name in FEDERATED else "--")
    if (SCALED,) in by:
        band(ax, by[(SCALED,)], "cumulative_regret", SCALED, linestyle="-.")
    ax.set(xlabel="round", ylabel="cumulative regret", yscale="log",
           title="seed 000 synthetic setting (CDP: epsilon = 1, delta = 0.1)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    paths = [out / "fclub_regret.png"]
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, names, yscale in ((axes[0], FEDERATED + ("homo", "homo-dc"), "log"),
                              (axes[1], ("fclub-dc", "cdp-fclub-dc", "homo-dc"), "linear")):
        for name in names:
            band(ax, by[(LABELS[name],)], "comm_rounds_curve", LABELS[name])
        ax.set(xlabel="round T", ylabel="rounds with communication", xscale="log",
               yscale=yscale)
        ax.legend(fontsize=8)
    axes[0].set_title("communication (mean, one sd)")
    axes[1].set_title("delayed variants: log T growth is a straight line")
    fig.tight_layout()
    paths.append(out / "fclub_communication.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--short-horizon", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("fclub_results"))
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.horizon, args.short_horizon, args.seeds, args.workers = 1000, 500, 2, 1
    records = run("fclub-synthetic", args.horizon, args.seeds,
                  algorithms(FEDERATED + BASELINES, scaled=True), args.out, args.workers)
    short = run("fclub-synthetic-short", args.short_horizon, args.seeds,
                algorithms(FEDERATED), args.out, args.workers)
    report(records, short)
    for path in plot(records, args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
