"""The webhooks admin pages: an endpoint added with its signing secret shown once (and that secret verifies what a
real receiver gets), a private URL refused on its field, edit, disable and enable, the secret rotated (the new one
shown once, both signing meanwhile), a test delivery sent by a real RQ worker and shown in the log with its
attempt, a failed delivery replayed (one, and the failed ones of a period in the user's time zone), delete with
confirmation; analysts refused, another account's endpoint a 404."""
from __future__ import annotations

import html as html_mod
import re
import uuid
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select
from standardwebhooks.webhooks import Webhook

from app.extensions import db
from app.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.portal.conftest import text, uuid_in
from tests.webhooks.conftest import register
from tests.webhooks.receiver import receiver  # noqa: F401 (fixture)

SECRET_RE = re.compile(r'<code id="new-secret">(whsec_[A-Za-z0-9+/=]+)</code>')


@pytest.fixture(autouse=True)
def webhook_settings(app):
    """Loopback allowed (the receiver), retries compressed; restored afterwards."""
    keys = ("WEBHOOK_ALLOWED_NETWORKS", "WEBHOOK_RETRY_SCHEDULE", "WEBHOOK_TIMEOUT_SECONDS")
    saved = {k: app.config[k] for k in keys}
    app.config.update(WEBHOOK_ALLOWED_NETWORKS="127.0.0.0/8", WEBHOOK_RETRY_SCHEDULE="0", WEBHOOK_TIMEOUT_SECONDS=5)
    yield
    app.config.update(saved)


def add_endpoint(admin, url: str, *types: str, description: str = "Case management"):
    data = {"url": url, "description": description, "event_types": list(types or ["check.completed"])}
    return admin.post("/admin/webhooks", data)


def created(admin, receiver, *types: str) -> tuple[str, str]:
    """An endpoint added on the page: (its uuid, its secret)."""
    r = add_endpoint(admin, receiver.url + "/hooks", *types)
    assert r.status_code == 201, text(r)[:2000]
    page = text(r)
    secret = SECRET_RE.search(page).group(1)
    endpoint_uuid = uuid_in(re.search(r'href="/admin/webhooks/([0-9a-f-]{36})"', page).group(0))
    return endpoint_uuid, secret


def flashes(response) -> list[str]:
    return [html_mod.unescape(m) for m in re.findall(r'class="flash[^"]*"[^>]*>\s*<span>([^<]*)', text(response))]


def log_rows(page: str) -> list[str]:
    """The delivery log's rows (each with its attempts' row)."""
    table = page[page.find('data-testid="webhook-deliveries"'):]
    return re.findall(r'<tr data-delivery="[^"]+">.*?(?=<tr data-delivery=|</table>\s*</div>\s*<nav|\Z)', table,
                      re.S)


# ------------------------------------------------------------------ the list, adding one

def test_an_admin_adds_an_endpoint_and_sees_its_secret_once(admin, receiver, work):
    empty = text(admin.get("/admin/webhooks"))
    assert "No webhook endpoints" in empty and 'href="/admin/webhooks"' in empty  # the navigation's link
    for label, name in (("Check completed", "check.completed"), ("Event raised", "event.created"),
                        ("IDPass ended", "idpass.completed")):
        assert label in empty and f'value="{name}"' in empty
    assert 'value="webhook.test"' not in empty  # sent on request only: not a subscription

    r = add_endpoint(admin, receiver.url + "/hooks", "check.completed", "event.created")
    page = text(r)
    assert r.status_code == 201 and r.headers["Cache-Control"] == "no-store"
    secret = SECRET_RE.search(page).group(1)
    assert 'data-copy="new-secret"' in page
    for header in ("webhook-id", "webhook-timestamp", "webhook-signature"):
        assert f"<code>{header}</code>" in page

    listing = text(admin.get("/admin/webhooks"))
    assert secret not in listing and 'id="new-secret"' not in listing
    assert receiver.url + "/hooks" in listing and "Case management" in listing and "Enabled" in listing
    assert "Check completed" in listing and "Event raised" in listing

    # The secret shown is the one that signs: a test delivery verifies with it.
    endpoint_uuid = uuid_in(re.search(r'href="/admin/webhooks/([0-9a-f-]{36})"', listing).group(0))
    assert admin.post(f"/admin/webhooks/{endpoint_uuid}/test").status_code == 302
    work()
    [got] = receiver.wait(1)
    payload = Webhook(secret).verify(got.body, got.headers)
    assert payload["type"] == "webhook.test" and payload["data"]["endpoint_uuid"] == endpoint_uuid


def test_a_private_url_and_no_event_type_are_refused_on_their_fields(admin, app):
    r = add_endpoint(admin, "http://10.1.2.3/hooks", "check.completed")
    page = text(r)
    assert r.status_code == 422 and 'id="url-error"' in page
    error = page[page.find('id="url-error"'):][:400]
    assert "10.1.2.3" in error and "public addresses only" in error
    assert 'value="http://10.1.2.3/hooks"' in page  # the form keeps what was typed
    assert "whsec_" not in page

    r = admin.post("/admin/webhooks", {"url": "https://hooks.example.com/x", "description": ""})
    assert r.status_code == 422 and 'id="event_types-error"' in text(r)
    with app.app_context():
        assert db.session.scalar(select(WebhookEndpoint.id)) is None


# ------------------------------------------------------------------ an endpoint's page

def test_edit_disable_enable_and_rotate_the_secret(admin, receiver, work):
    endpoint_uuid, old_secret = created(admin, receiver, "check.completed")
    base = f"/admin/webhooks/{endpoint_uuid}"
    page = text(admin.get(base))
    assert old_secret not in page and receiver.url + "/hooks" in page and "No deliveries yet" in page

    r = admin.post(base, {"url": receiver.url + "/v2", "description": "Case management v2",
                          "event_types": ["event.created", "monitor_run.completed"]})
    assert r.status_code == 302
    page = text(admin.get(base))
    assert receiver.url + "/v2" in page and "Case management v2" in page
    assert re.search(r'value="event.created"\s+checked', page) and re.search(r'value="monitor_run.completed"\s+checked',
                                                                             page)
    assert not re.search(r'value="check.completed"\s+checked', page)

    r = admin.post(base, {"url": "http://169.254.169.254/latest", "event_types": ["event.created"]})
    assert r.status_code == 422 and 'id="url-error"' in text(r)
    assert receiver.url + "/v2" in text(admin.get(base))  # unchanged

    r = admin.post(f"{base}/enabled", {"enabled": "0"})
    assert r.status_code == 302
    page = text(admin.get(base))
    assert 'data-testid="disabled-reason"' in page and "Disabled by" in page and 'data-testid="send-test"' not in page
    r = admin.post(f"{base}/test", follow_redirects=True)
    assert any("disabled" in m for m in flashes(r))
    assert "Disabled by" in text(admin.get("/admin/webhooks"))
    admin.post(f"{base}/enabled", {"enabled": "1"})
    page = text(admin.get(base))
    assert 'data-testid="disabled-reason"' not in page and 'data-testid="send-test"' in page

    confirm = text(admin.get(f"{base}/rotate-secret"))
    assert "24 hours" in confirm and "whsec_" not in confirm
    r = admin.post(f"{base}/rotate-secret")
    page = text(r)
    assert r.status_code == 200 and r.headers["Cache-Control"] == "no-store"
    new_secret = SECRET_RE.search(page).group(1)
    assert new_secret != old_secret and "keeps signing beside it for 24 hours" in page
    again = text(admin.get(base))
    assert new_secret not in again and "Signs beside the new one until" in again

    admin.post(f"{base}/test")
    work()
    [got] = receiver.wait(1)
    assert len(got.headers["webhook-signature"].split()) == 2  # both secrets sign during the overlap
    Webhook(new_secret).verify(got.body, got.headers)
    Webhook(old_secret).verify(got.body, got.headers)


def test_a_test_delivery_shows_in_the_log_and_a_failed_one_is_replayed(admin, receiver, work, app):
    endpoint_uuid, _ = created(admin, receiver, "check.completed")
    base = f"/admin/webhooks/{endpoint_uuid}"
    r = admin.post(f"{base}/test", follow_redirects=True)
    assert any(m.startswith("Test delivery msg_") for m in flashes(r))
    work()
    assert len(receiver.wait(1)) == 1
    [row] = log_rows(text(admin.get(base)))
    webhook_id = receiver.got[0].webhook_id
    assert webhook_id in row and "Delivered" in row and "Test delivery" in row
    assert "1 attempt<" in row and "200" in row and "First attempt" in row
    assert "{&#34;ok&#34;: true}" in row and "Content-Length: 12" in row

    receiver.status = 400  # a 4xx other than 408/425/429: the delivery ends failed, no retry
    admin.post(f"{base}/test")
    work()
    page = text(admin.get(f"{base}?status=failed"))
    [failed] = log_rows(page)
    assert "Failed" in failed and "400" in failed and "The endpoint answered 400." in failed
    failed_uuid = re.search(r'data-delivery="([0-9a-f-]{36})"', failed).group(1)
    assert f"/deliveries/{failed_uuid}/replay" in failed
    assert len(log_rows(text(admin.get(f"{base}?status=delivered")))) == 1
    assert "No delivery matches" in text(admin.get(f"{base}?event_type=check.completed"))

    receiver.status = 200
    r = admin.post(f"{base}/deliveries/{failed_uuid}/replay", follow_redirects=True)
    assert any("queued again" in m for m in flashes(r))
    work()
    assert len(receiver.wait(3)) == 3
    with app.app_context():
        delivery = db.session.scalar(select(WebhookDelivery).where(WebhookDelivery.uuid == uuid.UUID(failed_uuid)))
        assert delivery.status == "delivered" and [a.trigger for a in delivery.attempt_log] == ["event", "replay"]
    [replayed] = [row for row in log_rows(text(admin.get(base))) if failed_uuid in row]
    assert "Delivered" in replayed and "2 attempts" in replayed and "Replay" in replayed
    assert receiver.got[2].webhook_id == receiver.got[1].webhook_id  # the same message

    # The failed ones of a period, the times typed in the user's zone (the browser's, here Auckland's).
    receiver.status = 400
    admin.post(f"{base}/test")
    work()
    receiver.status = 200
    admin.client.set_cookie("tz", "Pacific/Auckland")
    now = datetime.now(ZoneInfo("Pacific/Auckland"))
    window = {"since": (now - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M"),
              "until": (now + timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M")}
    r = admin.post(f"{base}/replay", window, follow_redirects=True)
    assert flashes(r)[-1] == "1 failed delivery queued again."
    work()
    assert len(receiver.wait(5)) == 5
    assert "Failed" not in "".join(log_rows(text(admin.get(base))))

    r = admin.post(f"{base}/replay", {"since": window["until"], "until": window["since"]})
    assert r.status_code == 422 and "Until must be after since." in text(r)
    r = admin.post(f"{base}/replay", {"since": ""})
    assert r.status_code == 422 and 'id="since-error"' in text(r)


def test_delete_with_confirmation(admin, receiver):
    endpoint_uuid, _ = created(admin, receiver, "check.completed")
    base = f"/admin/webhooks/{endpoint_uuid}"
    confirm = text(admin.get(f"{base}/delete"))
    assert "Delete this endpoint?" in confirm and receiver.url + "/hooks" in confirm
    assert admin.get(base).status_code == 200  # GET never deletes
    r = admin.post(f"{base}/delete")
    assert r.status_code == 302 and r.headers["Location"].endswith("/admin/webhooks")
    assert admin.get(base).status_code == 404
    assert "No webhook endpoints" in text(admin.get("/admin/webhooks"))


# ------------------------------------------------------------------ who may

def test_analysts_are_refused(analyst, admin, receiver):
    endpoint_uuid, _ = created(admin, receiver, "check.completed")
    assert analyst.get("/admin/webhooks").status_code == 403
    assert add_endpoint(analyst, receiver.url).status_code == 403
    assert analyst.get(f"/admin/webhooks/{endpoint_uuid}").status_code == 403
    assert analyst.post(f"/admin/webhooks/{endpoint_uuid}/delete").status_code == 403
    assert analyst.post(f"/admin/webhooks/{endpoint_uuid}/rotate-secret").status_code == 403
    assert "/admin/webhooks" not in text(analyst.get("/dashboard"))
    assert admin.get(f"/admin/webhooks/{endpoint_uuid}").status_code == 200  # nothing changed


def test_another_accounts_endpoint_is_not_found(admin, other_tenant, receiver, app):
    hook = register(other_tenant, receiver.url + "/theirs", "check.completed")
    base = f"/admin/webhooks/{hook['uuid']}"
    assert admin.get(base).status_code == 404
    assert admin.post(base, {"url": receiver.url + "/mine", "event_types": ["event.created"]}).status_code == 404
    assert admin.post(f"{base}/delete").status_code == 404
    assert admin.post(f"{base}/rotate-secret").status_code == 404
    assert admin.post(f"{base}/test").status_code == 404
    assert "/theirs" not in text(admin.get("/admin/webhooks"))
    with app.app_context():
        endpoint = db.session.scalar(select(WebhookEndpoint).where(WebhookEndpoint.uuid == uuid.UUID(hook["uuid"])))
        assert endpoint.url == receiver.url + "/theirs" and endpoint.previous_secret_sealed is None
        assert db.session.scalar(select(WebhookDelivery.id)) is None
