"""A small seed 001 world shared by the cascade tests."""
import pytest

SMALL_ENV = {"users": 6, "clusters": 2, "dim": 5, "items": 12, "list_len": 3}


@pytest.fixture
def small_env():
    return dict(SMALL_ENV)
