"""Deliveries on a real RQ worker to a real HTTP receiver: signed as Standard Webhooks says (verified by the
`standardwebhooks` and `svix` libraries), written with the change (the outbox), retried on the schedule with the
same webhook-id, ended by 410 (the endpoint disabled) or another 4xx, refused when the address is not allowed,
replayed, and signed by two secrets during a rotation."""
from __future__ import annotations

from datetime import timedelta

import pytest
from standardwebhooks.webhooks import WebhookVerificationError
from sqlalchemy import select

from app.core.types import utcnow
from app.extensions import db
from app.notify.models import ReportEmail
from app.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.checks.conftest import save_lists
from tests.webhooks.conftest import register, verify


def deliveries(tenant, endpoint_uuid: str, **filters) -> list[dict]:
    query = "&".join(f"filter[{k}]={v}" for k, v in filters.items())
    r = tenant.api.get(f"/webhook-endpoints/{endpoint_uuid}/deliveries?{query}")
    assert r.status_code == 200, r.get_json()
    return r.get_json()["data"]


def test_a_test_delivery_is_signed_and_verifies_with_both_libraries(tenant, receiver, work):
    hook = register(tenant, receiver.url + "/hooks", "check.completed")
    r = tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    assert r.status_code == 202, r.get_json()
    sent = r.get_json()["data"]
    assert sent["status"] == "pending" and sent["event_type"] == "webhook.test" and sent["attempts"] == []
    work()
    [got] = receiver.wait(1)
    assert got.path == "/hooks" and got.headers["content-type"] == "application/json"
    payload = verify(got, hook["secret"])
    assert payload["type"] == "webhook.test" and payload["data"]["endpoint_uuid"] == hook["uuid"]
    assert got.webhook_id == sent["webhook_id"] and got.headers["webhook-signature"].startswith("v1,")
    [logged] = deliveries(tenant, hook["uuid"])
    assert logged["status"] == "delivered" and len(logged["attempts"]) == 1
    assert logged["attempts"][0]["status_code"] == 200 and logged["attempts"][0]["response_excerpt"] == '{"ok": true}'
    with pytest.raises(WebhookVerificationError):  # a wrong secret does not verify: the check above means something
        verify(got, "whsec_" + "QUJD" * 8)


def test_a_hit_sends_check_completed_and_event_created_with_the_api_shapes(app, tenant, receiver, work):
    save_lists(app)
    hook = register(tenant, receiver.url, "check.completed", "event.created")
    register(tenant, receiver.url + "/events-only", "event.created")
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                           birth_date="1961-03-14")
    launched = tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
    check_uuid = launched.get_json()["data"]["uuid"]
    work()
    done = receiver.of_type("check.completed")
    assert len(done) == 1 and done[0].path == "/"
    payload = verify(done[0], hook["secret"])
    shown = tenant.api.get(f"/checks/{check_uuid}").get_json()["data"]
    assert payload["data"]["uuid"] == check_uuid and payload["data"]["status"] == "complete"
    assert payload["data"]["outcome"] == shown["outcome"] == "warning"
    assert payload["data"]["entity_uuid"] == entity["uuid"] and "details" not in payload["data"]
    events = tenant.api.get(f"/entities/{entity['uuid']}/events").get_json()["data"]
    created = receiver.of_type("event.created")
    assert events and len(created) == 2 * len(events)  # both endpoints subscribe to event.created
    assert {r.path for r in created} == {"/", "/events-only"}
    first = [r for r in created if r.path == "/"][0]
    body = verify(first, hook["secret"])
    assert body["data"]["uuid"] == events[0]["uuid"] and body["data"]["check_uuid"] == check_uuid
    assert body["data"]["status"] == "new" and set(body) == {"type", "timestamp", "data"}


def test_an_event_decision_sends_one_event_updated(app, tenant, receiver, work):
    save_lists(app)
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                           birth_date="1961-03-14")
    tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
    work()
    hook = register(tenant, receiver.url, "event.updated")
    event = tenant.api.get(f"/entities/{entity['uuid']}/events").get_json()["data"][0]
    r = tenant.api.patch(f"/events/{event['uuid']}", json={"status": "investigating", "note": "Looking into it."})
    assert r.status_code == 200, r.get_json()
    work()
    [got] = receiver.wait(1, "event.updated")  # a status with its reason note: one delivery, the state after both
    payload = verify(got, hook["secret"])
    assert payload["data"]["uuid"] == event["uuid"] and payload["data"]["status"] == "investigating"
    assert receiver.of_type("event.created") == []  # not subscribed


def test_retries_keep_the_webhook_id_until_delivered(tenant, receiver, work):
    receiver.script = [500, (503, {"Retry-After": "0"}), 200]
    hook = register(tenant, receiver.url)
    tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    got = receiver.wait(3)
    assert len(got) == 3 and len({r.webhook_id for r in got}) == 1
    for one in got:
        verify(one, hook["secret"])
    [logged] = deliveries(tenant, hook["uuid"])
    assert logged["status"] == "delivered"
    assert [a["status_code"] for a in logged["attempts"]] == [500, 503, 200]
    assert [a["trigger"] for a in logged["attempts"]] == ["event", "retry", "retry"]
    assert logged["attempts"][1]["response_headers"]["Retry-After"] == "0"
    shown = tenant.api.get(f"/webhook-endpoints/{hook['uuid']}").get_json()["data"]
    assert shown["failing_since"] is None and shown["enabled"] is True


MOVED = (302, {"Location": "/elsewhere"})


@pytest.mark.parametrize("answers, attempts", [([500] * 4, 4), ([MOVED] * 4, 4), ([400], 1), ([404], 1)])
def test_what_is_retried_and_what_ends_the_delivery(tenant, receiver, work, answers, attempts):
    """5xx and 3xx are retried to the schedule's end (4 attempts here; a redirect is never followed); other 4xx
    end the delivery at once."""
    receiver.script = list(answers)
    hook = register(tenant, receiver.url + "/hooks")
    tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    [logged] = deliveries(tenant, hook["uuid"])
    assert logged["status"] == "failed" and len(logged["attempts"]) == attempts == len(receiver.got)
    assert {r.path for r in receiver.got} == {"/hooks"}
    status = answers[0][0] if isinstance(answers[0], tuple) else answers[0]
    assert logged["last_error"] == f"The endpoint answered {status}."
    shown = tenant.api.get(f"/webhook-endpoints/{hook['uuid']}").get_json()["data"]
    assert shown["enabled"] is True and shown["failing_since"] is not None


def test_a_closed_port_is_logged_as_a_refused_connection_not_a_timeout(tenant, work, webhook_settings):
    webhook_settings["WEBHOOK_RETRY_SCHEDULE"] = "0"
    hook = register(tenant, "http://127.0.0.1:9/nobody-listens")
    tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    [logged] = deliveries(tenant, hook["uuid"])
    assert logged["status"] == "failed" and logged["attempts"][0]["status_code"] is None
    assert logged["attempts"][0]["error"].startswith("Connection failed") and "refused" in logged["last_error"].lower()


def test_a_receiver_slower_than_the_timeout_is_a_failed_attempt(tenant, receiver, work, webhook_settings):
    import threading
    webhook_settings.update(WEBHOOK_TIMEOUT_SECONDS=1, WEBHOOK_RETRY_SCHEDULE="0,0")
    receiver.hold = threading.Event()  # the receiver never answers in time
    hook = register(tenant, receiver.url)
    tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    [logged] = deliveries(tenant, hook["uuid"])
    assert logged["status"] == "failed" and len(logged["attempts"]) == 2  # a timeout is retried
    assert all(a["error"] == "No answer within 1 s (timeout)." and a["status_code"] is None
               for a in logged["attempts"])
    assert all(a["latency_ms"] < 5000 for a in logged["attempts"])


def test_410_disables_the_endpoint(tenant, receiver, work):
    receiver.status = 410
    hook = register(tenant, receiver.url)
    tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    assert len(receiver.got) == 1
    shown = tenant.api.get(f"/webhook-endpoints/{hook['uuid']}").get_json()["data"]
    assert shown["enabled"] is False and "410" in shown["disabled_reason"]
    assert tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test").status_code == 409
    r = tenant.api.patch(f"/webhook-endpoints/{hook['uuid']}", json={"enabled": True})
    assert r.get_json()["data"]["enabled"] is True and r.get_json()["data"]["disabled_reason"] is None


def test_an_endpoint_failing_for_five_days_is_disabled_and_the_admins_told(app, tenant, receiver, work):
    receiver.status = 500
    hook = register(tenant, receiver.url)
    with app.app_context():
        endpoint = db.session.scalar(select(WebhookEndpoint).where(WebhookEndpoint.uuid == hook["uuid"]))
        endpoint.failing_since = utcnow() - timedelta(days=5, minutes=1)
        db.session.commit()
    tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    assert len(receiver.got) == 1  # no retry once the endpoint is disabled
    shown = tenant.api.get(f"/webhook-endpoints/{hook['uuid']}").get_json()["data"]
    assert shown["enabled"] is False and "5 days" in shown["disabled_reason"]
    with app.app_context():
        [mail] = db.session.scalars(select(ReportEmail).where(ReportEmail.kind == "webhook_disabled")).all()
        assert mail.recipients == [tenant.email] and hook["uuid"] in mail.body and mail.status == "sent"


def test_an_address_that_is_not_allowed_is_refused_at_delivery_too(app, tenant, receiver, work,
                                                                   webhook_settings):
    """The check is made again before each attempt, after DNS resolution: an endpoint registered while loopback
    was allowed gets nothing once it is not."""
    hook = register(tenant, receiver.url)
    webhook_settings["WEBHOOK_ALLOWED_NETWORKS"] = ""
    webhook_settings["WEBHOOK_RETRY_SCHEDULE"] = "0"
    tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    assert receiver.got == []
    [logged] = deliveries(tenant, hook["uuid"])
    assert logged["status"] == "failed" and logged["attempts"][0]["status_code"] is None
    assert "127.0.0.1" in logged["attempts"][0]["error"] and "public addresses" in logged["attempts"][0]["error"]


def test_rotation_signs_with_both_secrets_for_a_day(app, tenant, receiver, work):
    hook = register(tenant, receiver.url)
    r = tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/rotate-secret")
    assert r.status_code == 200
    rotated = r.get_json()["data"]
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != hook["secret"]
    assert rotated["secret_rotated_until"] is not None
    tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    [got] = receiver.wait(1)
    assert len(got.headers["webhook-signature"].split()) == 2
    verify(got, hook["secret"])
    verify(got, rotated["secret"])
    with app.app_context():  # the day is over: the old secret no longer signs
        endpoint = db.session.scalar(select(WebhookEndpoint).where(WebhookEndpoint.uuid == hook["uuid"]))
        endpoint.previous_secret_expires_at = utcnow() - timedelta(seconds=1)
        db.session.commit()
    tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    later = receiver.wait(2)[1]
    assert len(later.headers["webhook-signature"].split()) == 1
    verify(later, rotated["secret"])
    with pytest.raises(WebhookVerificationError):
        verify(later, hook["secret"])


def test_replay_sends_the_same_webhook_id_with_a_fresh_signature(app, tenant, receiver, work):
    receiver.status = 500
    hook = register(tenant, receiver.url)
    sent = tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test").get_json()["data"]
    assert tenant.api.post(f"/webhook-deliveries/{sent['uuid']}/replay").status_code == 409  # in flight
    work()
    assert deliveries(tenant, hook["uuid"])[0]["status"] == "failed"
    receiver.status = 200
    r = tenant.api.post(f"/webhook-deliveries/{sent['uuid']}/replay")
    assert r.status_code == 202 and r.get_json()["data"]["status"] == "pending"
    work()
    last = receiver.got[-1]
    assert last.webhook_id == sent["webhook_id"] and verify(last, hook["secret"])["type"] == "webhook.test"
    shown = tenant.api.get(f"/webhook-deliveries/{sent['uuid']}").get_json()["data"]
    assert shown["status"] == "delivered" and shown["attempts"][-1]["trigger"] == "replay"
    assert len(shown["attempts"]) == 5 and len(receiver.got) == 5


def test_replay_of_a_window_replays_its_failed_deliveries_only(app, tenant, receiver, work):
    receiver.status = 400
    hook = register(tenant, receiver.url)
    for _ in range(3):
        tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    receiver.status = 200
    tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    assert sorted(d["status"] for d in deliveries(tenant, hook["uuid"])) == ["delivered", "failed", "failed",
                                                                             "failed"]
    since = (utcnow() - timedelta(minutes=5)).isoformat()
    r = tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/replay", json={"since": since})
    assert r.status_code == 202 and r.get_json()["data"] == {"replayed": 3, "skipped_in_flight": 0}
    work()
    assert {d["status"] for d in deliveries(tenant, hook["uuid"])} == {"delivered"}
    assert len(receiver.got) == 3 + 1 + 3
    future = (utcnow() + timedelta(minutes=5)).isoformat()
    r = tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/replay", json={"since": future})
    assert r.get_json()["data"]["replayed"] == 0
    bad = tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/replay", json={"since": future, "until": since})
    assert bad.status_code == 400


def test_a_rolled_back_change_sends_nothing(app, tenant, receiver, work):
    """The outbox: deliveries are written in the change's transaction, so a change that does not commit (here a
    check completion rolled back) leaves no delivery."""
    from app import signals
    from app.checks.models import Check
    from app.core.transactions import rollback
    register(tenant, receiver.url, "check.completed")
    with app.app_context():
        check = Check(account_id=tenant.account_id, kind="adhoc", check_type="email_check", status="complete",
                      subject={}, credits=0)
        db.session.add(check)
        db.session.flush()
        signals.announce(check, "check.completed")
        rollback()
        db.session.commit()
        assert db.session.scalar(select(WebhookDelivery.id)) is None


def test_deliveries_wait_in_the_table_while_redis_is_down_and_the_sweeper_sends_them(app, tenant, receiver, work):
    """A change committed while the queue is unreachable still writes its delivery; the recovery sweeper queues it
    once Redis answers (the web request is not refused for a notification)."""
    from app import jobs
    from app.recovery import sweep
    hook = register(tenant, receiver.url, "check.completed")
    original = jobs.enqueue_many_now

    def down(name, *args, **kwargs):  # Redis gone for the deliveries' enqueue, after the check's commit
        if name == "deliver_webhook":
            raise ConnectionError("redis down")
        return original(name, *args, **kwargs)
    jobs.enqueue_many_now = down
    try:
        r = tenant.api.post("/adhoc-checks", json={"check_types": ["pep_sanction_check"],
                                                   "data": {"first_name": "Ada", "last_name": "Nobody"}})
        assert r.status_code == 202, r.get_json()
        work()
    finally:
        jobs.enqueue_many_now = original
    assert receiver.got == []
    with app.app_context():
        assert sweep(now=utcnow() + timedelta(seconds=60), grace=30)["webhook_delivery"]["redispatched"] == 1
    work()
    [got] = receiver.wait(1)
    assert verify(got, hook["secret"])["type"] == "check.completed"
    assert deliveries(tenant, hook["uuid"])[0]["attempts"][0]["trigger"] == "event"


def test_the_log_is_purged_after_30_days(app, tenant, receiver, work):
    from app.webhooks.jobs import purge_webhook_log
    hook = register(tenant, receiver.url)
    for _ in range(2):
        tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test")
    work()
    with app.app_context():
        old = db.session.scalars(select(WebhookDelivery)).first()
        old.created_at = utcnow() - timedelta(days=31)
        db.session.commit()
        assert purge_webhook_log() == 1
    assert len(deliveries(tenant, hook["uuid"])) == 1
