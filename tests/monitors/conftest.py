"""Monitors fixtures: the checks' invented lists, real RQ worker and index holder (tests/checks/conftest.py)."""
from tests.checks.conftest import fresh_index_holder, lists  # noqa: F401
