"""Paired comparisons over seeds: the t interval, Fieller's FGR interval, break-even."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from privbandit.errors import ConfigError
from privbandit.studies.paired import (
    break_even,
    compare,
    fieller_interval,
    mean_interval,
    t_quantile,
)


def records(label, finals, epsilon=None, seeds=None):
    """Hand-made run records: `finals[i]` is the final regret of seed index seeds[i]."""
    cell = {} if epsilon is None else {"epsilon": epsilon}
    seeds = range(len(finals)) if seeds is None else seeds
    return [{"run_id": f"{label}-{epsilon}-{s}", "final_regret": f,
             "run": {"label": label, "algorithm": label, "cell": cell, "seed_index": s,
                     "base_seed": 7}} for s, f in zip(seeds, finals, strict=True)]


ALONE = [100.0, 140.0, 90.0, 120.0, 110.0]


def test_mean_interval_is_the_paired_t_tests_interval():
    d = np.array([-3.0, 1.5, -7.2, -0.4, -2.9])
    mean, low, high = mean_interval(d)
    reference = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert mean == pytest.approx(d.mean())
    assert (low, high) == pytest.approx((reference.low, reference.high))


def test_a_consistent_gain_is_significant_and_a_mixed_one_is_not():
    clear = [a - 10 + k for a, k in zip(ALONE, [0, 1, -1, 2, -2], strict=True)]  # 10 below
    mixed = [a + k for a, k in zip(ALONE, [-30, 25, -20, 28, -5], strict=True)]
    recs = records("alone", ALONE) + records("p", clear, 1.0) + records("p", mixed, 2.0)
    one, two = compare(recs, "p", "alone")
    assert one.epsilon == 1.0 and one.pairs == 5
    assert one.diff == pytest.approx(-10.0) and one.diff_high < 0 < one.diff_high + 10
    assert one.significant == "below"
    assert one.ratio == pytest.approx(np.mean(clear) / np.mean(ALONE))
    assert one.ratio_low < one.ratio < one.ratio_high < 1  # Fieller's, alone as denominator
    assert two.ratio_low < 1 < two.ratio_high
    assert two.diff_low < 0 < two.diff_high and two.significant == "no"
    assert break_even([one, two]) == 1.0
    assert math.isnan(one.fgr)  # no federated reference


def test_significantly_above_and_no_break_even():
    worse = [a + 20 + k for a, k in zip(ALONE, [0, 1, -1, 2, -2], strict=True)]
    recs = records("alone", ALONE) + records("p", worse, 4.0)
    (p,) = compare(recs, "p", "alone")
    assert p.significant == "above"
    assert break_even([p]) == math.inf


def test_runs_pair_by_seed_not_by_order():
    # the private runs of seeds 1..4 come in another order and seed 0 is missing
    private = records("p", [ALONE[s] - 5 for s in (3, 1, 4, 2)], 1.0, seeds=[3, 1, 4, 2])
    (p,) = compare(records("alone", ALONE) + private, "p", "alone")
    assert p.pairs == 4
    assert (p.diff, p.diff_low, p.diff_high) == pytest.approx((-5.0, -5.0, -5.0))
    assert p.significant == "below"


def test_one_pair_has_no_interval():
    (p,) = compare(records("alone", [3.0]) + records("p", [1.0], 1.0), "p", "alone")
    assert (p.diff, p.diff_low, p.diff_high) == (-2.0, -math.inf, math.inf)
    assert (p.ratio, p.ratio_low, p.ratio_high) == pytest.approx((1 / 3, -math.inf, math.inf))
    assert p.significant == "no"


def test_fgr_of_proportional_records_is_exact():
    # alone = 2c, federated = c, private = c (1 + 1/eps): FGR = 1 - 1/eps at every seed
    c = np.array([5.0, 6.5, 4.2, 7.1])
    recs = records("alone", 2 * c) + records("fed", c)
    for eps in (1.0, 4.0):
        recs += records("p", c * (1 + 1 / eps), eps)
    got = compare(recs, "p", "alone", "fed")
    for p, eps in zip(got, (1.0, 4.0), strict=True):
        assert (p.fgr, p.fgr_low, p.fgr_high) == pytest.approx((1 - 1 / eps,) * 3)


def test_fieller_interval_is_where_the_paired_t_test_does_not_reject():
    rng = np.random.default_rng(3)
    den = 50 + rng.normal(0, 8, 6)
    num = 0.4 * den + rng.normal(0, 5, 6)
    ratio, low, high = fieller_interval(num, den)
    assert ratio == pytest.approx(num.mean() / den.mean())
    assert low < ratio < high

    def t_stat(rho):
        d = num - rho * den
        return abs(d.mean()) / (d.std(ddof=1) / math.sqrt(d.size))

    assert t_stat(low) == pytest.approx(t_quantile(6)) == t_stat(high)
    assert t_stat(ratio) < t_quantile(6)
    assert t_stat(high + 0.05) > t_quantile(6) < t_stat(low - 0.05)


def test_fgr_is_unbounded_when_federation_gains_nothing_significant():
    alone = np.array(ALONE)
    fed = alone + np.array([-12.0, 9.0, -8.0, 11.0, -3.0])  # alone - fed: mixed signs
    private = alone - 2.0
    recs = records("alone", alone) + records("fed", fed) + records("p", private, 1.0)
    (p,) = compare(recs, "p", "alone", "fed")
    assert (p.fgr_low, p.fgr_high) == (-math.inf, math.inf)
    assert p.fgr == pytest.approx(2.0 / (alone - fed).mean())


def test_a_reference_with_several_cells_or_no_runs_is_named():
    recs = records("alone", ALONE) + records("p", ALONE, 1.0) + records("p", ALONE, 2.0)
    with pytest.raises(ConfigError, match="break_even.baseline.*2 cells"):
        compare(recs, "alone", "p")
    with pytest.raises(ConfigError, match="break_even.federated.*0 cells; got 'fed'"):
        compare(recs, "p", "alone", "fed")


reals = st.integers(0, 10**6).map(lambda k: k / 100)  # regrets to a hundredth


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_swapping_labels_negates_the_difference_and_its_interval(data):
    a = data.draw(st.lists(reals, min_size=2, max_size=8))
    b = data.draw(st.lists(reals, min_size=len(a), max_size=len(a)))
    recs = records("a", a, 1.0) + records("b", b, 1.0)
    (ab,), (ba,) = compare(recs, "a", "b"), compare(recs, "b", "a")
    assert ba.diff == pytest.approx(-ab.diff, abs=1e-9)
    assert (ba.diff_low, ba.diff_high) == pytest.approx((-ab.diff_high, -ab.diff_low), abs=1e-9)
    assert ab.diff_low <= ab.diff <= ab.diff_high
    assert {ab.significant, ba.significant} in ({"no"}, {"below", "above"})
