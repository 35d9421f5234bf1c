"""Foreign objects passed directly, the documented adapters, categorical outputs."""
import numpy as np
import opendp.prelude as dp
import pytest
from diffprivlib.mechanisms import Exponential, Laplace, Snapping
from diffprivlib.tools import mean

from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits import (
    DiffprivlibFunction,
    DiffprivlibMechanism,
    NeighbouringPair,
    as_mechanism,
    run_audit,
)
from privbandit.mechanisms import LaplaceMeans

dp.enable_features("contrib")
PAIR = NeighbouringPair(0.0, 1.0, "scalars at distance 1")


def test_a_diffprivlib_instance_or_its_randomise_is_audited_directly():
    mech = Snapping(epsilon=1.0, sensitivity=1.0, lower=-10, upper=10)
    a = run_audit(mech, PAIR, 1.0, samples=3000, rng=0)
    b = run_audit(mech.randomise, PAIR, 1.0, samples=3000, rng=0)
    assert a.verdict == "consistent" and a.epsilon_lower_bound == b.epsilon_lower_bound
    with pytest.raises(InvalidParameterError, match=r"an instance, or DiffprivlibMechanism"):
        as_mechanism(Laplace)


def test_an_opendp_measurement_and_an_object_with_release_are_audited_directly():
    meas = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                             scale=1.0)
    assert run_audit(meas, PAIR, 1.0, samples=500, rng=0).verdict == "consistent"
    means = LaplaceMeans(1.0, 0.0, 1.0, 2)
    pair = NeighbouringPair(np.zeros((1, 2)), np.array([[0.0, 1.0]]), "one reward replaced")
    assert run_audit(means, pair, means.event, samples=2000, rng=0).verdict == "consistent"


def test_a_wrong_call_shape_names_the_adapters():
    with pytest.raises(TypeError, match=r"mechanism\(dataset, rng, n\).*DiffprivlibFunction"):
        run_audit(lambda x: x, PAIR, 1.0, samples=100)


def test_exponential_mechanism_outputs_are_mapped_to_indices():
    def params(utility):
        return {"epsilon": 1.0, "sensitivity": 1.0, "utility": list(utility),
                "candidates": ["a", "b", "c"]}

    mech = DiffprivlibMechanism(Exponential, "exp", params, value=False,
                                sample_input=[0.0, 0.0, 0.0])
    pair = NeighbouringPair([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], "utilities, sensitivity 1")
    r = run_audit(mech, pair, mech.claim(), samples=20000, rng=0)
    assert r.details["categories"] == ["a", "b", "c"]
    assert r.verdict == "consistent" and r.epsilon_lower_bound > 0.15  # true loss here: 0.38


def test_diffprivlib_tools_through_their_adapter():
    tool = DiffprivlibFunction(mean, "mean", {"epsilon": 1.0, "bounds": (0.0, 1.0)})
    out = tool([0.0, 1.0], np.random.default_rng(0), 5)
    assert out.shape == (5,) and np.array_equal(out, tool([0.0, 1.0], np.random.default_rng(0), 5))
    assert tool.claim().epsilon == 1.0
