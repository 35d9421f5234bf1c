"""The defaults every entry point shares, and the forms of claim and seed they accept.

`run_audit`, `assert_consistent` and `privbandit audit` use the same
confidence (`DEFAULT_CONFIDENCE` = 0.99), the same tester (the battery of
`privbandit.audits.battery`) and accept the same claims and seeds:

- claim: an `audits.Claim`, an epsilon (float or int), an (epsilon, delta)
  tuple, or a privacy event (`mech.event`) read through the pure-DP, the
  exact-Gaussian or (secure sums) the zCDP accountant at `delta`;
- rng: a `numpy.random.Generator` or an int seed >= 0.

Sample budgets (runs per side of each pair): `DEFAULT_SAMPLES` = 100,000
for `run_audit` and the command line (enough for an atom of mass 1e-3, see
docs/audits.md), `QUICK_SAMPLES` = 10,000 for `assert_consistent` in CI.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from privbandit.accounting.errors import InvalidParameterError, invalid
from privbandit.accounting.events import PrivacyEvent

from .claims import Claim

DEFAULT_CONFIDENCE = 0.99
DEFAULT_SAMPLES = 100_000


def coerce_claim(claimed: Any, delta: "float | None" = None, name: str = "claim") -> Claim:
    """A `Claim` from any accepted form (see the module docstring); `name` for messages."""
    if isinstance(claimed, Claim):
        if delta is not None:
            raise invalid("delta", delta, f"None when {name} is a Claim (it carries its delta)")
        return claimed
    if isinstance(claimed, PrivacyEvent):
        at = 0.0 if delta is None else delta
        try:
            return Claim.from_event(claimed, at)
        except InvalidParameterError:  # infinite epsilon: not pure DP, and delta too small
            raise invalid("delta", delta, f"a delta in (0, 1) at which {claimed!r} has a finite "
                          "epsilon (it is not pure epsilon-DP)") from None
    if isinstance(claimed, tuple) and len(claimed) == 2 and delta is None:
        return Claim(claimed[0], claimed[1], "claimed (epsilon, delta)")
    if isinstance(claimed, numbers.Real) and not isinstance(claimed, bool):
        return Claim(claimed, 0.0 if delta is None else delta, "claimed epsilon")
    raise invalid(name, claimed,
                  "an audits.Claim, an epsilon, an (epsilon, delta) tuple or a PrivacyEvent")


def coerce_rng(rng: object) -> np.random.Generator:
    """A Generator from a Generator or an int seed >= 0."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise invalid("rng", rng, "a numpy.random.Generator or a seed (an int >= 0)")
