"""`privbandit audit`: audit every DP mechanism of `mechanisms/` and foreign ones.

Runs `privbandit.audits.standard_suite` (LaplaceMeans, GaussianVector,
SymmetricGaussianMatrix, TreePrivatizer and the Laplace option of
KAnonymousAggregator, each with the float-safe default sampler and the exact
one; OpenDP measurements and a chain, diffprivlib's Snapping, Geometric,
Exponential, and its float Laplace, Gaussian and tools.mean, which are
expected to be caught; with `--controls` the deliberately broken mechanisms
too) with the default battery of testers, each case at its own sample budget
unless `--samples` is given, prints a table, adds the attacks on the two
non-DP protections (masks, k-anonymity), and writes everything as JSON.  Exit
status: 0 when every verdict is as expected, 1 on a violation by a correct
mechanism, an expected violation that was not found, an end-to-end audit
that is inconclusive (no flip touched a release), or a private algorithm
without an audit profile (every private registry entry is audited by all
three algorithm audits; none is skipped).  The table's "dist"
and "float" columns give each kind of finding its own bound, and "kind"
names the kinds in violation (distributional: the mathematics;
floating-point: the sampler); `--distributional-only` searches the first
kind only.  `--end-to-end` adds the white-box audits of every private
algorithm on neighbouring environments (`privbandit.auditing.end_to_end`, on
every audit world of its profile), `--black-box N` the sampled-transcript ones
(`privbandit.auditing.black_box`).  `--one-run` audits the registry's private
algorithms in one run each with canaries instead (`privbandit.auditing.canaries`,
small sizes, seconds).
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
from dataclasses import replace
from typing import Any

import numpy as np

from privbandit.audits.attacks.anonymity import differencing_attack
from privbandit.audits.attacks.masks import recovery_curve
from privbandit.audits.cases import diffprivlib_missing
from privbandit.audits.defaults import DEFAULT_CONFIDENCE, DEFAULT_SAMPLES
from privbandit.audits.report import format_table
from privbandit.audits.suite import expected_verdict, run_cases, standard_suite, suite_summary


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register `audit` on the `privbandit` command's subparsers."""
    p = subparsers.add_parser(
        "audit", help="empirically audit the privacy claims of the mechanisms (and of OpenDP's "
                      "and diffprivlib's)",
        description="Test privacy claims by experiment.  Each mechanism (Laplace means, "
                    "Gaussian vectors and symmetric matrices, the tree, k-anonymous sums with "
                    "Laplace noise; with the float-safe default sampler and OpenDP's exact "
                    "one), OpenDP measurements and diffprivlib's mechanisms run many times on "
                    "two neighbouring inputs; a statistical test turns the difference into a "
                    "lower bound on epsilon at the stated confidence, set against the claimed "
                    "epsilon.  Prints a table (verdict, bound, kind of finding: distributional "
                    "or floating-point), the recovery attacks on orthogonal masks and "
                    "k-anonymous sums (neither is differential privacy), and writes a JSON "
                    "report.  Exit status 0 when every verdict is as expected; 1 when a correct "
                    "mechanism is refuted, a deliberately broken control is not, or an "
                    "end-to-end audit is inconclusive.")
    p.add_argument("--samples", type=_at_least(4), default=None,
                   help="runs per side of each neighbouring pair (default: each case's own "
                        f"budget, {DEFAULT_SAMPLES} unless its draws are slow)")
    p.add_argument("--confidence", type=_probability, default=DEFAULT_CONFIDENCE,
                   help=f"confidence of every lower bound (default {DEFAULT_CONFIDENCE})")
    p.add_argument("--seed", type=int, default=0, help="seed of the whole suite (default 0)")
    p.add_argument("--json", default="audit-report.json", metavar="PATH",
                   help="where to write the JSON report (default audit-report.json)")
    p.add_argument("--no-exact", action="store_true",
                   help="skip the exact (OpenDP) sampler variants of our mechanisms")
    p.add_argument("--controls", action="store_true",
                   help="also run the positive controls (each must be rejected)")
    p.add_argument("--end-to-end", action="store_true",
                   help="also audit every private algorithm end to end on neighbouring "
                        "environments (one reward flipped, releases forced; small worlds)")
    p.add_argument("--black-box", type=_at_least(8), default=None, metavar="N",
                   help="also audit every private algorithm black-box: N sampled transcripts "
                        "per neighbouring world (worlds fixed, coins fresh; small worlds)")
    p.add_argument("--distributional-only", action="store_true",
                   help="run the distributional testers only (no float-bit events, no "
                        "reachability); float controls are then expected consistent")
    p.add_argument("--one-run", action="store_true",
                   help="instead of the suite, audit every private bandit algorithm in one run "
                        "each, with planted canaries (small sizes, seconds)")
    p.set_defaults(func=run)
    return p


def _at_least(minimum: int):
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}; got {text!r}")
        return value
    return parse


def _probability(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}")
    return value


def _attacks(rng: np.random.Generator) -> dict[str, Any]:
    """Headline figures of the attacks on masks and on k-anonymous elicitation."""
    g_mask, g_anon = rng.spawn(2)
    masks = [r.as_dict() for r in recovery_curve(3, 10, [1, 2, 3, 5], g_mask)]
    anonymity = [differencing_attack(10, 0.5, 4000, g, laplace_epsilon=eps).as_dict()
                 for eps, g in zip((None, 1.0), g_anon.spawn(2), strict=True)]
    return {"mask_known_plaintext_d3_in_10": masks, "anonymity_differencing_C10_p05": anonymity}


def _write_json(path: str, data: dict) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".audit-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=2, allow_nan=False)
    os.replace(tmp, path)  # atomic: a reader never sees half a report


def _profiled(failures: list[str], audit: str):
    """The private registry entries with an audit profile, as (name, entry); an entry
    without one is a failure of `audit` (never skipped)."""
    from privbandit.auditing.end_to_end import private_entries

    for name, entry in private_entries():
        if entry.audit is None:
            print(f"{audit} {name}: no audit profile")
            failures.append(f"{audit} {name}: no audit profile (AlgorithmEntry.audit)")
        else:
            yield name, entry


def _end_to_end(failures: list[str]) -> dict[str, Any]:
    """Forced-replay audits of the registry's private algorithms; a violated interactive
    claim is a failure, and so is an audit in which no flip touched a release
    (inconclusive: it tested nothing)."""
    from privbandit.auditing.end_to_end import entry_audits

    reports = {}
    for name, entry in _profiled(failures, "end to end"):
        reports.update(entry_audits(name, entry))
    out = {}
    for name, report in reports.items():
        print(f"end to end {name}: {report.describe()}")
        worst = report.worst
        out[name] = {"verdict": report.verdict, "claimed_epsilon": report.claimed_epsilon,
                     "delta": report.delta, "flips": len(report.findings),
                     "flips_touching_releases": report.touched, "scope": report.scope,
                     "worst_epsilon": None if worst is None or worst.diverged else worst.epsilon}
        if report.verdict == "violation":
            failures.append(f"end to end {name}: {worst.describe()}")
        elif report.verdict == "inconclusive":
            failures.append(f"end to end {name}: inconclusive, no flip touched a release "
                            f"({len(report.findings)} tried)")
    return out


def _black_box(n: int, seed: int, confidence: float, failures: list[str]) -> dict[str, Any]:
    """Sampled-transcript audits of the registry's private algorithms, each with its power on
    planted leaks at its size; a violated interactive claim is a failure."""
    from privbandit.auditing.black_box import audit_entries_transcripts, power_line

    out: dict[str, Any] = {}
    entries = dict(_profiled(failures, "black box"))
    for name, report in audit_entries_transcripts(entries, n, rng=seed,
                                                  confidence=confidence).items():
        print(f"black box {name}: {report.verdict}, epsilon >= "
              f"{report.epsilon_lower_bound:.3g} against {report.claimed_epsilon:g} "
              f"({report.samples_per_side} transcripts per world); {power_line(report)}")
        out[name] = report.to_dict()
        if report.violation:
            failures.append(f"black box {name}: epsilon >= {report.epsilon_lower_bound:.3g}")
    return out


def run_one_run(args: argparse.Namespace) -> int:
    """One-run audits of the registry's private algorithms; 0 unless one is refuted."""
    from privbandit.auditing.canaries import registry_cases
    from privbandit.audits.one_run import format_one_run_table, one_run_audit

    cases = registry_cases()
    streams = np.random.default_rng(args.seed).spawn(len(cases))
    reports = [_measured(one_run_audit(c.protocol, c.claim, rng=g, confidence=args.confidence,
                                       method=c.method), c.measured)
               for c, g in zip(cases, streams, strict=True) if c.protocol is not None]
    print(format_one_run_table(reports))
    skipped = [c for c in cases if c.protocol is None]
    failures = [f"{r.pipeline}: violation" for r in reports if r.violation]
    failures += [f"one run {c.algorithm}: {c.note}" for c in skipped]
    _write_json(args.json, {"one_run": [r.to_dict() for r in reports],
                            "not_audited": {c.algorithm: c.note for c in skipped},
                            "settings": {"confidence": args.confidence, "seed": args.seed}})
    for line in failures:
        print(f"FAIL {line}")
    print(f"one-run audits: {len(reports)}, failures: {len(failures)}, json: {args.json}")
    return 1 if failures else 0


def _measured(report: Any, why: str) -> Any:
    """`report`, its verdict "measured" when `why` says its claim is a reference only."""
    return replace(report, details={**report.details, "measured": why}) if why else report


def run(args: argparse.Namespace) -> int:
    """Run the suite; 0 if every verdict is as expected, else 1."""
    if getattr(args, "one_run", False):
        return run_one_run(args)
    kinds = "distributional" if getattr(args, "distributional_only", False) else None
    rng = np.random.default_rng(args.seed)
    g_suite, g_attacks = rng.spawn(2)
    missing = diffprivlib_missing()
    if missing:
        print(f"note: diffprivlib cases skipped: {missing.split(' (import failed')[0]}")
    cases = standard_suite(exact=not args.no_exact, controls=args.controls)
    reports = run_cases(cases, samples=args.samples, rng=g_suite, confidence=args.confidence,
                        kinds=kinds)
    expected = {c.name: expected_verdict(c, kinds) for c in cases}
    print(format_table(reports, expected))
    summary = suite_summary(cases, reports, kinds)
    summary["attacks"] = _attacks(g_attacks)
    summary["settings"] = {"samples": args.samples, "confidence": args.confidence,
                           "seed": args.seed, "exact": not args.no_exact,
                           "controls": args.controls, "kinds": kinds or "all"}
    for row in summary["attacks"]["mask_known_plaintext_d3_in_10"]:
        print(f"mask attack: {row['observed']} known pairs -> block error "
              f"{row['block_error']:.3g}")
    for row in summary["attacks"]["anonymity_differencing_C10_p05"]:
        print(f"anonymity attack (C=10, rate 0.5, laplace eps={row['laplace_epsilon']}): "
              f"accuracy {row['accuracy']:.3f}, eps lower bound {row['epsilon_lower_bound']:.3g}")
    if args.end_to_end:
        summary["end_to_end"] = _end_to_end(summary["failures"])
    if getattr(args, "black_box", None):
        summary["black_box"] = _black_box(args.black_box, args.seed, args.confidence,
                                          summary["failures"])
    _write_json(args.json, summary)
    for line in summary["failures"]:
        print(f"FAIL {line}")
    print(f"audits: {len(reports)}, failures: {len(summary['failures'])}, json: {args.json}")
    return 1 if summary["failures"] else 0
