"""`to_plain`: NumPy values nested in dicts, lists and tuples as plain Python, for JSON.

Shared by every layer's reports (run results, audit reports).  Keys become
strings, tuples lists, arrays nested lists, NumPy scalars Python scalars.
With `strict_json` non-finite floats become the strings "inf", "-inf" and
"nan", so `json.dumps(..., allow_nan=False)` accepts the result; otherwise
they stay floats (Python's json writes and reads them as Infinity / NaN).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np


def to_plain(value: Any, *, strict_json: bool = False) -> Any:
    """`value` with every NumPy scalar or array and every tuple made plain Python."""
    if isinstance(value, dict):
        return {str(k): to_plain(v, strict_json=strict_json) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v, strict_json=strict_json) for v in value]
    if isinstance(value, np.ndarray):
        return to_plain(value.tolist(), strict_json=True) if strict_json else value.tolist()
    if isinstance(value, np.generic):
        value = value.item()
    if strict_json and isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
