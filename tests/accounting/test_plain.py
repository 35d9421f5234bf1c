"""`to_plain`: NumPy values in nested containers as plain Python for JSON."""
import json
import math

import numpy as np

from privbandit.accounting.plain import to_plain

NESTED = {
    1: (np.int64(3), np.float32(0.5)),
    "a": np.array([[1.0, np.inf], [np.nan, -np.inf]]),
    "b": [np.float64(-np.inf), {"c": np.bool_(True)}],
}


def test_numpy_values_and_tuples_become_plain_python():
    out = to_plain(NESTED)
    assert out["1"] == [3, 0.5] and type(out["1"][0]) is int and type(out["1"][1]) is float
    assert out["b"][1] == {"c": True} and type(out["b"][1]["c"]) is bool
    assert out["a"][0][1] == math.inf and math.isnan(out["a"][1][0])
    assert json.loads(json.dumps(out))["b"][0] == -math.inf  # Python's json keeps them


def test_strict_json_writes_non_finite_floats_as_strings():
    out = to_plain(NESTED, strict_json=True)
    assert out["a"] == [[1.0, "inf"], ["nan", "-inf"]] and out["b"][0] == "-inf"
    json.dumps(out, allow_nan=False)  # raises if any non-finite float were left
