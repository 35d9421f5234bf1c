"""Items validated once per block: the per-round check is skipped, never weakened."""
from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit import validation
from privbandit.envs import BiasedSphereItems, LinearUsersEnv, PoolItems, SphereItems
from privbandit.errors import HorizonError, NormBoundError
from privbandit.policies import CLUB, LinUCB
from privbandit.runtime import run
from privbandit.validation import check_items, mark_validated

POOL = np.random.default_rng(0).standard_normal((40, 4))  # row norms up to about 3.6
POOL_MAX = float(np.linalg.norm(POOL, axis=1).max())
SOURCES = [SphereItems(4, 6), BiasedSphereItems(4, 6), PoolItems(POOL, 6)]


def outcome(items, dim, bound):
    """What check_items does: ("ok", the returned object's id) or (error type, message)."""
    try:
        return ("ok", id(check_items(items, dim, bound)))
    except NormBoundError as exc:
        return (type(exc), str(exc))


@pytest.mark.parametrize("source", SOURCES, ids=["sphere", "biased", "pool"])
def test_drawn_blocks_are_read_only_and_their_rounds_skip_the_norm_pass(source):
    block = source.draw(5, np.random.default_rng(1))
    assert not block.flags.writeable
    bound = POOL_MAX if isinstance(source, PoolItems) else 1.0
    for view in (block[2], block[2][1:4], block[3][:, 1:3]):
        assert validation._validated_view(view, bound)
        assert validation._validated_view(view, None)
    # anything but a plain row-major view of the block takes the full check
    for other in (block[2].copy(), block[2][::-1], block[2][:, ::2], block.reshape(-1, 2),
                  block[2].T, block[2][[0, 1]]):
        assert not validation._validated_view(other, bound)


def test_a_bound_below_the_blocks_largest_norm_gets_the_full_check_and_its_error():
    block = PoolItems(POOL, 40).draw(1, np.random.default_rng(2))
    assert not validation._validated_view(block[0], 1.0)
    with pytest.raises(NormBoundError, match=r"L2 norm <= 1 \(the declared item_bound\)"):
        check_items(block[0], 4, 1.0)
    view = block[0]
    assert validation._validated_view(view, POOL_MAX)
    assert check_items(view, 4, POOL_MAX) is view


def test_bad_blocks_are_not_trusted_and_still_raise_the_named_errors():
    nan_block = np.ones((2, 3, 3)) * 0.5
    nan_block[1, 2, 0] = np.nan
    mark_validated(nan_block, float("nan"))  # a NaN measurement records nothing
    assert not validation._validated_view(nan_block[1], None)
    with pytest.raises(NormBoundError, match="items must be finite"):
        check_items(nan_block[1], 3, None)
    big = mark_validated(np.full((2, 3, 3), 0.9), float(np.sqrt(3 * 0.81)))
    with pytest.raises(NormBoundError, match="got an item of norm 1.55885"):
        check_items(big[0], 3, 1.0)


def test_a_writeable_block_is_not_trusted_and_records_die_with_their_block():
    block = SphereItems(3, 4).draw(2, np.random.default_rng(3))
    key = id(block)
    record = validation._VALIDATED[key][0]
    assert record() is block
    block.flags.writeable = True  # the owner may unfreeze it: then it is checked again
    assert not validation._validated_view(block[0], 1.0)
    block[0, 0] = [3.0, 4.0, 0.0]
    with pytest.raises(NormBoundError, match="got an item of norm 5"):
        check_items(block[0], 3, 1.0)
    del block
    gc.collect()
    assert record() is None and key not in validation._VALIDATED


@settings(max_examples=60, deadline=None)
@given(
    scale=st.floats(0.1, 3.0),
    bound=st.one_of(st.none(), st.floats(0.05, 4.0)),
    poison=st.sampled_from([None, np.nan, np.inf]),
    seed=st.integers(0, 2**32 - 1),
)
def test_check_items_accepts_and_refuses_exactly_as_without_the_record(scale, bound, poison, seed):
    rng = np.random.default_rng(seed)
    block = rng.standard_normal((3, 5, 4)) * scale
    if poison is not None:
        block[rng.integers(3), rng.integers(5), rng.integers(4)] = poison
    measured = float(np.sqrt(np.einsum("...d,...d->...", block, block).max()))
    mark_validated(block, measured)
    for view in (block[0], block[1], block[2][:, 1:]):
        plain = view.copy()
        got, expected = outcome(view, view.shape[1], bound), outcome(plain, view.shape[1], bound)
        assert got[0] == expected[0]
        assert got[1] == (id(view) if got[0] == "ok" else expected[1])


class UnmarkedSphere(SphereItems):
    """The same items, as fresh unrecorded copies: every round takes the full check."""

    def draw(self, rounds, rng):
        return super().draw(rounds, rng).copy()


@pytest.mark.parametrize("make", [lambda: LinUCB(5, 3), lambda: CLUB(5, 3, beta=0.4)])
def test_runs_are_bit_for_bit_the_same_with_and_without_validated_blocks(make):
    theta = np.random.default_rng(4).standard_normal((3, 5)) * 0.4
    results = []
    for source in (SphereItems(5, 30), UnmarkedSphere(5, 30)):
        policy = make()
        result = run(policy, LinearUsersEnv(theta, source, block=16), 300, 9)
        results.append((result.regret, result.reward, policy.params()))
    (r1, w1, p1), (r2, w2, p2) = results
    assert np.array_equal(r1, r2) and np.array_equal(w1, w2) and p1 == p2


def test_environment_serves_python_int_users_and_checks_order_and_horizon_inside_a_block():
    env = LinearUsersEnv(np.eye(3)[:2] * 0.5, SphereItems(3, 4), block=10, horizon=4)
    env.reset(np.random.default_rng(5))
    for t in range(4):
        rnd = env.observe(t)
        assert type(rnd.user) is int and not rnd.items.flags.writeable
        env.act(t, 0)
    with pytest.raises(HorizonError, match="t must be < horizon=4; got t=4"):
        env.observe(4)
    env.reset(np.random.default_rng(5))
    env.observe(0)
    with pytest.raises(HorizonError, match="expected t=1; got t=2"):
        env.observe(2)
