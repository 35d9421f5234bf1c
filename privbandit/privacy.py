"""Privacy settings every private family shares: the default noise sampler and sampler names.

`DEFAULT_SAMPLER` is the sampler every private algorithm of privbandit draws
its noise from unless told otherwise -- one constant, so switching every
family to another default is one line here.  It is the float-safe grid
sampler (`mechanisms.samplers.GRID`): what a deployment would use, seedable
(same seed, same numbers), and its privacy statements say `float_safe=True`.
Pass `sampler="fast"` for the NumPy float sampler (faster simulation, NOT
floating-point safe; statements then say `float_safe=False`).

Algorithms take one `sampler` argument: a `Sampler`, or a name of
`SAMPLERS` (what a study file can spell), or None for the mechanisms' own
float-safe default.
"""
from __future__ import annotations

from privbandit.mechanisms import samplers
from privbandit.mechanisms.samplers import Sampler

from .errors import config_error

DEFAULT_SAMPLER: Sampler = samplers.GRID

# name -> sampler, for study files; "grid" only where the mechanisms layer offers one
SAMPLERS: dict[str, Sampler] = {
    name: value for name, value in (
        ("fast", samplers.FAST), ("exact", samplers.EXACT),
        ("grid", getattr(samplers, "GRID", None)),
    ) if value is not None
}


def resolve_sampler(sampler: Sampler | str | None) -> Sampler:
    """A `Sampler` from a sampler, one of the names of `SAMPLERS`, or None (the
    mechanisms' own float-safe default)."""
    if isinstance(sampler, Sampler):
        return sampler
    if sampler is None:
        return samplers.resolve_sampler(None)
    if isinstance(sampler, str) and sampler in SAMPLERS:
        return SAMPLERS[sampler]
    raise config_error("sampler", sampler, f"a Sampler, None or one of {sorted(SAMPLERS)}")


def is_float_safe(sampler: Sampler) -> bool:
    """Whether the sampler's releases are safe against floating-point attacks."""
    return bool(getattr(sampler, "float_safe", sampler.exact))


def sampler_name(sampler: Sampler) -> str:
    """The name a study uses for `sampler`, else its repr (for recorded parameters)."""
    for name, known in SAMPLERS.items():
        if known is sampler:
            return name
    return repr(sampler)
