"""Shared fixtures. Telemetry and hub access are off for every test."""

import pytest

from pipeline.env import offline

offline()


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary Prefect backend (SQLite in a temp dir) shared by every flow test in the session."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield
