"""Webhooks on real worker processes (`flask jobs worker` with RQ's scheduler, `flask jobs scheduler` running the
recovery sweeper), as in production: the retry schedule's delays (compressed by configuration) are kept by RQ's
scheduler, and a worker SIGKILLed in the middle of a delivery loses nothing: the sweeper queues the delivery
again and the receiver gets it with the same webhook-id, verified by both libraries."""
from __future__ import annotations

import threading
import time

import pytest

from tests.jobs.test_recovery_drills import Stack
from tests.webhooks.conftest import register, verify

pytestmark = pytest.mark.integration


@pytest.fixture
def stack(app, tmp_path, webhook_settings):
    s = Stack(app, tmp_path)
    s.env.update(WEBHOOK_ALLOWED_NETWORKS="127.0.0.0/8", WEBHOOK_RETRY_SCHEDULE="0,1,2", WEBHOOK_TIMEOUT_SECONDS="20",
                 SECRET_KEY=app.config["SECRET_KEY"])  # the secrets are sealed with it
    s.args["worker"] = ["jobs", "worker", "--queue", "webhooks", "--queue", "maintenance"]
    yield s
    s.close()


def ended(tenant, path: str, timeout: float = 15) -> dict:
    """The delivery once its last attempt is logged (the receiver answers before the worker writes it down)."""
    deadline = time.monotonic() + timeout
    while True:
        data = tenant.api.get(path).get_json()["data"]
        shown = data[0] if isinstance(data, list) else data
        if shown["status"] != "pending" or time.monotonic() > deadline:
            return shown
        time.sleep(0.1)


def test_retries_wait_the_scheduled_delays(tenant, receiver, stack):
    receiver.script = [500, 500]
    stack.start("worker")
    stack.worker_ready()
    hook = register(tenant, receiver.url)
    tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    got = receiver.wait(3, timeout=30)
    assert len(got) == 3, stack.logs()
    # 1 s, then 2 s, each jittered by at most 20%. RQ's scheduler moves a due job to its queue on a 1 s tick, so a
    # retry may start up to a second after its time, which shortens the next gap as much: their sum is the bound.
    gaps = [b.at - a.at for a, b in zip(got, got[1:])]
    assert 0.8 <= gaps[0] and 0.8 + 1.6 <= sum(gaps), gaps
    assert len({r.webhook_id for r in got}) == 1 and all(verify(r, hook["secret"]) for r in got)
    shown = ended(tenant, f"/webhook-endpoints/{hook['uuid']}/deliveries")
    assert shown["status"] == "delivered" and [a["status_code"] for a in shown["attempts"]] == [500, 500, 200]


def test_a_worker_killed_mid_delivery_loses_nothing(tenant, receiver, stack):
    receiver.hold = threading.Event()  # the first request stays open: the worker is inside the delivery
    stack.start("worker")
    stack.start("scheduler")
    stack.worker_ready()
    hook = register(tenant, receiver.url)
    sent = tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test").get_json()["data"]
    assert receiver.wait(1, timeout=20), stack.logs()
    stack.kill("worker")
    receiver.hold.set()
    receiver.hold = None
    stack.start("worker")
    got = receiver.wait(2, timeout=40)
    assert len(got) >= 2, stack.logs()
    assert {r.webhook_id for r in got} == {sent["webhook_id"]}
    verify(got[-1], hook["secret"])
    shown = ended(tenant, f"/webhook-deliveries/{sent['uuid']}")
    assert shown["status"] == "delivered", shown
    assert shown["attempts"][-1]["trigger"] == "recovery" and shown["attempts"][-1]["status_code"] == 200
