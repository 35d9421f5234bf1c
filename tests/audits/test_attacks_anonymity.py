"""The differencing attack on C-anonymous feedback elicitation."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits.attacks.anonymity import (
    DifferencingMechanism,
    differencing_attack,
    exact_accuracy,
)


def test_exact_accuracy_reference_values():
    assert exact_accuracy(10, 0.5) == pytest.approx(0.5881, abs=1e-4)
    assert exact_accuracy(1, 0.5) == pytest.approx(0.75)
    assert exact_accuracy(10, 0.0) == 1.0  # the others are silent: the sum is the canary


@given(c=st.integers(1, 60), p=st.floats(0.0, 1.0))
def test_exact_accuracy_falls_with_the_crowd(c, p):
    a = exact_accuracy(c, p)
    assert 0.5 < a <= 1.0
    assert exact_accuracy(c + 1, p) <= a + 1e-12


def test_simulated_attack_matches_the_formula_at_c10_rate_half():
    r = differencing_attack(10, 0.5, 6000, np.random.default_rng(0))
    sd = np.sqrt(0.25 / 6000)
    assert abs(r.accuracy - 0.588) < 4 * sd
    assert r.advantage == pytest.approx(r.true_positive_rate - r.false_positive_rate)
    assert r.exact_accuracy == pytest.approx(0.5881, abs=1e-4)
    assert r.epsilon_lower_bound > 0.3  # k-anonymity is no DP guarantee


def test_laplace_noise_weakens_the_attack_and_respects_its_epsilon():
    plain = differencing_attack(2, 0.5, 6000, np.random.default_rng(1))
    noisy = differencing_attack(2, 0.5, 6000, np.random.default_rng(1), laplace_epsilon=0.5)
    assert noisy.accuracy < plain.accuracy - 0.05
    assert noisy.exact_accuracy is None
    # the record-level claim of one round is epsilon = 0.5; the bound stays below it
    assert noisy.epsilon_lower_bound <= 0.5 < plain.epsilon_lower_bound


def test_mechanism_output_is_the_elicited_difference():
    mech = DifferencingMechanism(3, 0.0)
    # others never earn: the difference is the canary's reward exactly
    assert mech(1, np.random.default_rng(2), 5).tolist() == [1.0] * 5
    assert mech(0, np.random.default_rng(2), 5).tolist() == [0.0] * 5


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: DifferencingMechanism(0, 0.5), "threshold must be an integer >= 1; got 0"),
        (lambda: DifferencingMechanism(2, 1.5), r"rate must be a reward rate in \[0, 1\]; got 1.5"),
        (lambda: DifferencingMechanism(2, 0.5, laplace_epsilon=0.0),
         "laplace_epsilon must be a finite number > 0; got 0.0"),
        (lambda: DifferencingMechanism(2, 0.5)(0.5, np.random.default_rng(0), 3),
         "dataset must be the canary's binary reward, 0 or 1; got 0.5"),
        (lambda: differencing_attack(2, 0.5, 3, np.random.default_rng(0)),
         "runs must be an integer >= 4; got 3"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(InvalidParameterError, match=match):
        call()
