"""Fixtures of the provider adapters' tests."""
from __future__ import annotations

import pytest

from tests.providers.gateway import LocalGateway


@pytest.fixture
def gateway(monkeypatch):
    """A local HTTP server answering as an ID-check gateway (tests/providers/gateway.py), with no proxy between."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with LocalGateway() as running:
        yield running
