"""Webhook fixtures: the real HTTP receiver (tests/webhooks/receiver.py), the app allowed to send to loopback
(WEBHOOK_ALLOWED_NETWORKS) with the retry schedule compressed by configuration."""
from __future__ import annotations

import pytest

from tests.checks.conftest import fresh_index_holder  # noqa: F401 (autouse: list changes seen by the next check)
from tests.webhooks.receiver import Received, receiver, verify  # noqa: F401 (fixture and helpers for the tests)


FAST = "0,0,0,0"  # four attempts, no waiting: a burst worker runs the retries in the same burst


@pytest.fixture(autouse=True)
def webhook_settings(app):
    """Loopback allowed (the receiver), the schedule compressed; restored afterwards."""
    saved = {k: app.config[k] for k in ("WEBHOOK_ALLOWED_NETWORKS", "WEBHOOK_RETRY_SCHEDULE",
                                        "WEBHOOK_DISABLE_AFTER_SECONDS", "WEBHOOK_TIMEOUT_SECONDS")}
    app.config.update(WEBHOOK_ALLOWED_NETWORKS="127.0.0.0/8", WEBHOOK_RETRY_SCHEDULE=FAST,
                      WEBHOOK_TIMEOUT_SECONDS=5)
    yield app.config
    app.config.update(saved)


def register(tenant, url: str, *types: str, expect: int = 201) -> dict:
    r = tenant.api.post("/webhook-endpoints", json={"url": url, "event_types": list(types or ["check.completed"])})
    assert r.status_code == expect, r.get_json()
    return r.get_json()["data"]
