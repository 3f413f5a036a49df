"""Webhook endpoints through the API: registration with its one-time secret, no request forgery (private,
loopback, link-local and metadata addresses refused, after DNS resolution, unless the operator allows the
network), updates, deletion, the caller's account only, and the OpenAPI document's webhooks section."""
from __future__ import annotations

import socket

import pytest
from sqlalchemy import select

from app.extensions import db
from app.webhooks import network
from app.webhooks.models import WebhookEndpoint
from tests.webhooks.conftest import register

REFUSED = ["http://169.254.169.254/latest/meta-data", "http://10.1.2.3/hook", "http://192.168.0.10/h",
           "http://172.16.5.4/h", "http://100.64.0.1/h", "http://[::1]/h", "http://[fd00::1]/h",
           "http://[::ffff:10.0.0.1]/h", "http://0.0.0.0/h", "http://224.0.0.1/h", "ftp://example.com/hook",
           "not a url", "http:///nohost", "http://user:pass@127.0.0.1/h", "https://127.0.0.1/h#frag",
           "http://no-such-host.invalid/h"]


@pytest.mark.parametrize("url", REFUSED)
def test_urls_that_could_forge_requests_or_are_not_urls_are_refused(tenant, webhook_settings, url):
    webhook_settings["WEBHOOK_ALLOWED_NETWORKS"] = "127.0.0.0/8"
    r = tenant.api.post("/webhook-endpoints", json={"url": url, "event_types": ["check.completed"]})
    assert r.status_code == 400, r.get_json()
    assert list(r.get_json()["errors"]) == ["url"]


def test_loopback_is_refused_unless_the_operator_allows_it(tenant, webhook_settings):
    webhook_settings["WEBHOOK_ALLOWED_NETWORKS"] = ""
    r = tenant.api.post("/webhook-endpoints", json={"url": "http://127.0.0.1:8080/h", "event_types": ["event.created"]})
    assert r.status_code == 400 and "public addresses" in r.get_json()["errors"]["url"][0]
    webhook_settings["WEBHOOK_ALLOWED_NETWORKS"] = "10.0.0.0/8, 127.0.0.0/8"
    assert register(tenant, "http://127.0.0.1:8080/h", "event.created")["url"] == "http://127.0.0.1:8080/h"


def test_a_name_is_judged_by_every_address_it_resolves_to(monkeypatch):
    """DNS decides nothing for us: one private address among public ones refuses the URL."""
    answers = {"mixed.example": ["93.184.216.34", "10.0.0.7"], "public.example": ["93.184.216.34"]}

    def lookup(host, port, type=0):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers[host]]
    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    with pytest.raises(network.Refused, match="10.0.0.7"):
        network.resolve("https://mixed.example/h", allowed=())
    target = network.resolve("https://public.example:8443/h?x=1", allowed=())
    assert (target.address, target.host, target.port, target.path) == ("93.184.216.34", "public.example", 8443,
                                                                         "/h?x=1")


def test_the_secret_is_shown_once_and_kept_sealed(app, tenant):
    hook = register(tenant, "http://127.0.0.1:9/h", "check.completed", "event.created", "check.completed")
    assert hook["secret"].startswith("whsec_") and len(hook["secret"]) > 40
    assert hook["event_types"] == ["check.completed", "event.created"] and hook["enabled"] is True
    shown = tenant.api.get(f"/webhook-endpoints/{hook['uuid']}").get_json()["data"]
    assert "secret" not in shown and hook["secret"] not in str(tenant.api.get("/webhook-endpoints").get_json())
    with app.app_context():
        sealed = db.session.scalar(select(WebhookEndpoint.secret_sealed))
        assert hook["secret"].encode() not in bytes(sealed)


def test_field_errors_for_bad_bodies(tenant):
    cases = [({"url": "http://127.0.0.1/h"}, "event_types"),
             ({"url": "http://127.0.0.1/h", "event_types": []}, "event_types"),
             ({"url": "http://127.0.0.1/h", "event_types": ["check.exploded"]}, "event_types.0"),
             ({"url": "http://127.0.0.1/h", "event_types": ["check.completed"], "secret": "mine"}, "secret"),
             ({"url": 42, "event_types": ["check.completed"]}, "url")]
    for body, field in cases:
        r = tenant.api.post("/webhook-endpoints", json=body)
        assert r.status_code == 400 and field in r.get_json()["errors"], (body, r.get_json())
    both = tenant.api.post("/webhook-endpoints", json={"url": "http://10.0.0.1/h", "event_types": []})
    assert set(both.get_json()["errors"]) == {"url", "event_types"}  # every field's errors at once
    hook = register(tenant, "http://127.0.0.1:9/h")
    r = tenant.api.patch(f"/webhook-endpoints/{hook['uuid']}", json={})
    assert r.status_code == 400
    r = tenant.api.patch(f"/webhook-endpoints/{hook['uuid']}", json={"url": "http://169.254.169.254/"})
    assert r.status_code == 400 and "url" in r.get_json()["errors"]
    r = tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/replay", json={"since": "yesterday"})
    assert r.status_code == 400 and "since" in r.get_json()["errors"]
    assert tenant.api.get(f"/webhook-endpoints/{hook['uuid']}/deliveries?filter[status]=lost").status_code == 400


def test_update_disable_enable_and_delete(app, tenant):
    hook = register(tenant, "http://127.0.0.1:9/h")
    r = tenant.api.patch(f"/webhook-endpoints/{hook['uuid']}", json={
        "url": "http://127.0.0.2:9/other", "event_types": ["event.updated"], "description": "Case system",
        "enabled": False})
    changed = r.get_json()["data"]
    assert r.status_code == 200 and changed["url"] == "http://127.0.0.2:9/other"
    assert changed["event_types"] == ["event.updated"] and changed["enabled"] is False
    assert changed["disabled_reason"].startswith("Disabled by") and changed["description"] == "Case system"
    assert tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test").status_code == 409
    again = tenant.api.patch(f"/webhook-endpoints/{hook['uuid']}", json={"enabled": True}).get_json()["data"]
    assert again["enabled"] is True and again["disabled_reason"] is None
    assert tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test").status_code == 202
    assert tenant.api.delete(f"/webhook-endpoints/{hook['uuid']}").status_code == 200
    assert tenant.api.get(f"/webhook-endpoints/{hook['uuid']}").status_code == 404
    assert tenant.api.get("/webhook-endpoints").get_json()["meta"]["total"] == 0


def test_another_accounts_endpoints_and_deliveries_are_not_found(tenant, other_tenant):
    hook = register(tenant, "http://127.0.0.1:9/h")
    delivery = tenant.api.post(f"/webhook-endpoints/{hook['uuid']}/test").get_json()["data"]
    intruder = other_tenant.api
    for method, path in [("GET", f"/webhook-endpoints/{hook['uuid']}"),
                         ("PATCH", f"/webhook-endpoints/{hook['uuid']}"),
                         ("DELETE", f"/webhook-endpoints/{hook['uuid']}"),
                         ("POST", f"/webhook-endpoints/{hook['uuid']}/test"),
                         ("POST", f"/webhook-endpoints/{hook['uuid']}/rotate-secret"),
                         ("GET", f"/webhook-endpoints/{hook['uuid']}/deliveries"),
                         ("POST", f"/webhook-deliveries/{delivery['uuid']}/replay"),
                         ("GET", f"/webhook-deliveries/{delivery['uuid']}")]:
        body = {"enabled": False} if method == "PATCH" else None
        assert intruder.request(method, path, json=body).status_code == 404, (method, path)
    assert intruder.get("/webhook-endpoints").get_json()["data"] == []


def test_an_analyst_in_the_portal_may_not_manage_endpoints(app, tenant, factory):
    """The rule the portal asks (`rules.can_manage`): admins and API keys, not analysts or viewers."""
    from app.core.actor import Actor
    from app.core.errors import Forbidden
    from app.webhooks import services
    with app.app_context():
        for role in ("analyst", "viewer"):
            person = Actor(account_id=tenant.account_id, kind="user", id=1, uuid=None, name="x", role=role,
                           via="portal")
            with pytest.raises(Forbidden):
                services.create_endpoint(person, {"url": "http://127.0.0.1/h", "event_types": ["check.completed"]},
                                         app.config)


def test_the_openapi_document_describes_every_event_type(client):
    from app.webhooks.registry import EVENT_TYPES
    doc = client.get("/api/v1/openapi.json").get_json()
    assert set(doc["webhooks"]) == set(EVENT_TYPES)
    done = doc["webhooks"]["check.completed"]["post"]
    schema = done["requestBody"]["content"]["application/json"]["schema"]
    assert schema["properties"]["type"]["const"] == "check.completed"
    assert {r["$ref"] for r in schema["properties"]["data"]["oneOf"]} == {"#/components/schemas/CheckOut",
                                                                          "#/components/schemas/AdhocCheckOut"}
    assert {p["name"] for p in done["parameters"]} == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    example = done["requestBody"]["content"]["application/json"]["example"]
    assert example["type"] == "check.completed" and example["data"]["uuid"]
    assert "/webhook-endpoints/{endpoint_uuid}/rotate-secret" in doc["paths"]
