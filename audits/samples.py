"""Runs per side of an audit: the presets and how a setting names them.

Kept free of NumPy and of the accounting layer: the pytest plugin reads it
when pytest starts, in every project where privbandit is installed.
"""
from __future__ import annotations

import numbers

QUICK_SAMPLES = 10_000
FULL_SAMPLES = 200_000
SAMPLE_PRESETS = {"quick": QUICK_SAMPLES, "full": FULL_SAMPLES}


def parse_samples(spec: object) -> int | None:
    """Runs per side from "quick", "full", an int >= 4 or a string of one; None if invalid."""
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key in SAMPLE_PRESETS:
            return SAMPLE_PRESETS[key]
        if key.isdigit():
            spec = int(key)
    if isinstance(spec, numbers.Integral) and not isinstance(spec, bool) and spec >= 4:
        return int(spec)
    return None
