"""Bad parameters raise named errors whose message names the parameter, the value and the rule."""
import numpy as np
import pytest

from privbandit.accounting.errors import InvalidParameterError
from privbandit.cascade import (
    CascadeServer,
    FederatedCascadeUCB,
    LocalBuffers,
    cdp_fedc3ucb_h,
    fed_ind,
    fed_linucb,
    fedc3ucb_h,
    force_comm,
    no_auxiliary,
)
from privbandit.errors import ShapeError

ARGS = (4, 3, 10, 2, 100)  # dim, n_users, n_items, list_len, horizon

BAD = [
    (fedc3ucb_h, {"alpha_c": 0.0}, "alpha_c must be"),
    (fedc3ucb_h, {"alpha_c": -1.0}, "alpha_c must be"),
    (no_auxiliary, {"alpha_c": float("nan")}, "alpha_c must be"),
    (fedc3ucb_h, {"alpha_d": 0.0}, "alpha_d must be"),
    (force_comm, {"alpha_d": -0.5}, "alpha_d must be"),
    (fedc3ucb_h, {"lam": 0.0}, "lam must be"),
    (fed_linucb, {"lam": -1.0}, "lam must be"),
    (fed_ind, {"lam": 0.0}, "lam must be"),
    (fedc3ucb_h, {"beta": -0.1}, "beta must be"),
    (fedc3ucb_h, {"beta": "oful"}, "beta must be 'lemma6' or a finite number"),
    (fedc3ucb_h, {"beta_scale": -1.0}, "beta_scale must be"),
    (fedc3ucb_h, {"confidence": 1.5}, "confidence must be a failure probability in \\(0, 1\\)"),
    (fedc3ucb_h, {"item_bound": 0.0}, "item_bound must be"),
]


@pytest.mark.parametrize(("factory", "kwargs", "message"), BAD)
def test_bad_parameter_is_named(factory, kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        factory(*ARGS, **kwargs)


@pytest.mark.parametrize("factory", [fedc3ucb_h, force_comm, no_auxiliary, fed_linucb, fed_ind])
def test_list_longer_than_the_item_count_is_refused(factory):
    with pytest.raises(InvalidParameterError,
                       match=r"list_len must be at most the number of items per round "
                             r"\(n_items=10\); got 11"):
        factory(4, 3, 10, 11, 100)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"epsilon": 0.0, "delta": 1e-5}, "epsilon must be"),
    ({"epsilon": 1.0, "delta": 0.0}, "delta must be a number in \\(0, 1\\)"),
    ({"epsilon": 1.0, "delta": 1.0}, "delta must be"),
    ({"epsilon": 1.0, "delta": 1e-5, "sampler": "numpy"}, "sampler must be a Sampler"),
    ({"epsilon": 1.0, "delta": 1e-5, "calibration": "loose"}, "calibration must be"),
    ({"epsilon": 1.0, "delta": 1e-5, "noise_level": 1.0}, "noise_level must be"),
    ({"epsilon": 1.0, "delta": 1e-5, "alpha_c": 0.0}, "alpha_c must be"),
])
def test_bad_privacy_parameter_is_named(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        cdp_fedc3ucb_h(*ARGS, **kwargs)


@pytest.mark.parametrize(("builder", "message"), [
    (lambda: LocalBuffers(2, 3, alpha_c=0.0, lam=1.0), "alpha_c must be"),
    (lambda: LocalBuffers(2, 3, alpha_c=1.0, lam=0.0), "lam must be"),
    (lambda: CascadeServer(2, 3, lam=1.0, alpha_d=0.0), "alpha_d must be"),
    (lambda: CascadeServer(2, 3, lam=-1.0, alpha_d=1.0), "lam must be"),
    (lambda: FederatedCascadeUCB(4, 3, 10, 2, 100, auxiliary="sometimes"),
     "auxiliary must be one of"),
    (lambda: FederatedCascadeUCB(4, 3, 10, 2, 100, clustering=1), "clustering must be"),
])
def test_bad_role_parameter_is_named(builder, message):
    with pytest.raises(InvalidParameterError, match=message):
        builder()


def test_items_of_the_wrong_shape_are_refused():
    policy = fedc3ucb_h(*ARGS)
    with pytest.raises(ShapeError, match=r"items must be an array of shape \(10, 4\)"):
        policy.select(np.zeros((9, 4)), 0, 0, np.random.default_rng(0))

