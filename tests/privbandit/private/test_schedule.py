"""ReleaseSchedule: release rounds, counts, and refused settings."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.errors import ConfigError
from privbandit.private import ReleaseSchedule


def rounds(schedule):
    return [t for t in range(schedule.horizon) if schedule.is_release(t)]


def test_fixed_and_doubling_rounds():
    assert rounds(ReleaseSchedule("fixed", 100, 30)) == [29, 59, 89]
    assert rounds(ReleaseSchedule("doubling", 100, 4)) == [3, 7, 15, 31, 63]
    assert rounds(ReleaseSchedule("every-round", 5)) == [0, 1, 2, 3, 4]
    assert rounds(ReleaseSchedule("geometric", 40, 1, 1.25)) == [0, 1, 2, 3, 4, 6, 8, 11, 14,
                                                                 18, 23, 29, 37]
    assert rounds(ReleaseSchedule("geometric", 100, 10, 2.0)) == [9, 19, 39, 79]


@given(st.integers(1, 5000), st.integers(1, 50), st.floats(1.01, 4.0))
def test_a_geometric_model_always_holds_a_fixed_share_of_the_data(horizon, batch, growth):
    """After the first release, the rounds released are at least 1 / growth of the rounds
    played before the next release (up to the +1 step), and the longest batch is the
    largest gap between releases."""
    s = ReleaseSchedule("geometric", horizon, min(batch, horizon), growth)
    done = [t + 1 for t in rounds(s)]
    for a, b in zip(done, done[1:], strict=False):
        assert b <= max(a + 1, growth * a + 1)
    gaps = [b - a for a, b in zip([0, *done], done, strict=False)]
    assert s.longest_batch() == max(gaps) and s.releases == len(done)


@given(st.sampled_from(["fixed", "doubling", "geometric", "every-round"]), st.integers(1, 3000),
       st.integers(1, 200), st.integers(0, 3000))
def test_count_is_the_number_of_release_rounds(kind, horizon, batch, rounds_played):
    batch = min(batch, horizon)
    s = ReleaseSchedule(kind, horizon, batch)
    played = min(rounds_played, horizon)
    assert s.count(played) == sum(s.is_release(t) for t in range(played))
    assert s.releases == s.count(horizon)


@pytest.mark.parametrize("kind, horizon, batch, match", [
    ("weekly", 10, 1, "schedule must be one of"),
    ("fixed", 0, 1, "horizon must be an integer >= 1"),
    ("fixed", 10, 0, "batch must be an integer >= 1"),
    ("doubling", 10, 11, "batch must be at most the horizon 10"),
    ("fixed", 10, True, "batch must be an integer >= 1"),
])
def test_bad_settings_are_refused(kind, horizon, batch, match):
    with pytest.raises(ConfigError, match=match):
        ReleaseSchedule(kind, horizon, batch)
    for growth in (1.0, 0.5, float("nan"), True, "2"):
        with pytest.raises(ConfigError, match="growth must be a finite number > 1"):
            ReleaseSchedule("geometric", 10, 1, growth)
