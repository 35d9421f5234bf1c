"""A small seed 001 world shared by the cascade tests."""
import pytest

SMALL_ENV = {"n_users": 6, "n_clusters": 2, "dim": 5, "n_items": 12, "list_len": 3}


@pytest.fixture
def small_env():
    return dict(SMALL_ENV)
