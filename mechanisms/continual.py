"""Continual release of prefix sums, one interface, mechanisms chosen by name.

    continual_release(mechanism, shape, horizon, **options) -> ContinualRelease
    mech.add(increment, rng) -> noisy prefix sum (same shape)
    mech.event, mech.prefix_variance(step=None), mech.prefix_variances(),
    mech.max_prefix_variance(), mech.error_bound(alpha, step=None, uniform=False),
    mech.user_level_event(k), mech.sigma, mech.steps, mech.horizon, mech.shift

Mechanisms (the options are `TreePrivatizer`'s: sigma, or epsilon and delta
with tight calibration; l2_sensitivity, clip_norm, on_excess, symmetric,
psd_shift, psd_alpha, sampler; "mf" adds buffers):

- "tree": the binary mechanism (`tree.TreePrivatizer`), one noisy node per
  step, prefix variance popcount(t) sigma**2;
- "honaker": Honaker's variance-optimal estimate over the full dyadic tree
  (`honaker.HonakerTree`), same event, about half the variance;
- "mf": the square-root Toeplitz factorization streamed through a
  buffered-linear-Toeplitz factor (`factorization.MatrixFactorization`),
  bounded memory, worst-prefix std about 0.28 times the tree's at 10**5 steps.

The horizon counts releases (`add` calls), not rounds: a caller that
releases only at upload events sets it to its largest number of releases.
Every mechanism's PSD shift comes from its own prefix-noise variance
(`noise_bounds`); `TreePrivatizer` built directly keeps Shariff & Sheffet's
worst-case shift for existing callers.
"""
from __future__ import annotations

import inspect

from privbandit.accounting.errors import invalid

from ._checks import check_choice
from .factorization import MatrixFactorization
from .honaker import HonakerTree
from .streaming import ContinualRelease
from .tree import TreePrivatizer

CONTINUAL_MECHANISMS: dict[str, type[ContinualRelease]] = {
    "tree": TreePrivatizer,
    "honaker": HonakerTree,
    "mf": MatrixFactorization,
}


def continual_release(mechanism: str, shape: object, horizon: int, **options) -> ContinualRelease:
    """A continual-release mechanism by name: "tree", "honaker" or "mf" (module docstring)."""
    cls = CONTINUAL_MECHANISMS[check_choice("mechanism", mechanism, CONTINUAL_MECHANISMS)]
    allowed = keyword_options(ContinualRelease, cls)
    for name in options:
        if name not in allowed:
            raise invalid("options", name, f"an option of {mechanism!r}: one of {allowed}")
    if cls is TreePrivatizer:
        options.setdefault("shift_bound", "covariance")
    return cls(shape, horizon, **options)


def keyword_options(base: type, cls: type) -> list[str]:
    """The keyword options a mechanism class takes: its base's, then its own."""
    names: list[str] = []
    for owner in (base, cls):
        names += [name for name, p in inspect.signature(owner.__init__).parameters.items()
                  if p.kind is p.KEYWORD_ONLY and name not in names]
    return names
