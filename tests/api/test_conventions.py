"""API conventions shared by every endpoint: auth, errors, lists, idempotency, rate limits, OpenAPI."""
import threading

import pytest


def test_missing_malformed_unknown_revoked_keys_are_401(client, tenant, app):
    assert client.get("/api/v1/programs").status_code == 401
    for header in ("Bearer", "Basic abc", "Bearer sk_test_nope", "Bearer " + tenant.api_key + "x"):
        r = client.get("/api/v1/programs", headers={"Authorization": header})
        assert r.status_code == 401, header
        assert r.get_json()["message"] and r.get_json()["api_reference"] == r.headers["X-Request-Id"]
    from app.accounts.services import cli_actor, revoke_api_key
    from app.accounts.models import Account
    from app.core.transactions import commit
    from app.extensions import db
    import uuid
    with app.app_context():
        revoke_api_key(cli_actor(db.session.get(Account, tenant.account_id)), uuid.UUID(tenant.api_key_uuid))
        commit()
    assert tenant.api.get("/programs").status_code == 401


def test_unknown_route_and_method_are_json(tenant):
    r = tenant.api.get("/nope")
    assert r.status_code == 404 and r.get_json()["message"]
    r = tenant.api.request("PUT", "/programs")
    assert r.status_code == 405 and r.get_json()["message"]


def test_invalid_json_and_non_object_bodies_are_400(tenant):
    r = tenant.api.post("/programs", data="{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "body" in r.get_json()["errors"]
    r = tenant.api.post("/programs", json=[1, 2])
    assert r.status_code == 400


@pytest.mark.parametrize("query,field", [
    ("per_page=0", "per_page"), ("per_page=501", "per_page"), ("page=0", "page"), ("page=x", "page"),
    ("sort=colour", "sort"), ("filter[colour]=red", "filter[colour]"), ("archived=maybe", "archived"),
    ("filter[status]=gone", "filter[status]"), ("bogus=1", "bogus")])
def test_bad_list_parameters_are_400(tenant, query, field):
    r = tenant.api.get(f"/programs?{query}")
    assert r.status_code == 400
    assert field in r.get_json()["errors"]


@pytest.mark.parametrize("value,expected", [("true", True), ("1", True), ("'true'", True), ("false", False),
                                            ("0", False), ("'false'", False)])
def test_archived_accepts_every_spelling(tenant, value, expected):
    tenant.program(program_name="Live")
    archived = tenant.program(program_name="Old")
    tenant.api.patch(f"/programs/{archived['uuid']}", json={"status": "archived"})
    names = [p["program_name"] for p in tenant.api.get(f"/programs?archived={value}").get_json()["data"]]
    assert names == (["Old"] if expected else ["Live"])


def test_idempotent_replay_same_body_any_key_order(tenant):
    headers = {"Idempotency-Key": "abc-1"}
    r1 = tenant.api.post("/programs", json={"program_name": "Once", "status": "paused"}, headers=headers)
    assert r1.status_code == 201 and "Idempotent-Replay" not in r1.headers
    raw = '{ "status": "paused",   "program_name": "Once" }'
    r2 = tenant.api.post("/programs", data=raw, headers={**headers, "Content-Type": "application/json"})
    assert r2.status_code == 201 and r2.headers["Idempotent-Replay"] == "true"
    assert r2.get_json() == r1.get_json()
    assert r2.headers["X-Request-Id"] == r1.get_json()["api_reference"]
    assert tenant.api.get("/programs").get_json()["meta"]["total"] == 1


def test_idempotency_key_reuse_with_other_body_is_422(tenant):
    tenant.api.post("/programs", json={"program_name": "First"}, headers={"Idempotency-Key": "k"})
    r = tenant.api.post("/programs", json={"program_name": "Second"}, headers={"Idempotency-Key": "k"})
    assert r.status_code == 422 and "different" in r.get_json()["message"]


def test_idempotency_keys_are_scoped_to_the_account(tenant, other_tenant):
    r1 = tenant.api.post("/programs", json={"program_name": "Mine"}, headers={"Idempotency-Key": "shared"})
    r2 = other_tenant.api.post("/programs", json={"program_name": "Mine"}, headers={"Idempotency-Key": "shared"})
    assert r1.status_code == r2.status_code == 201
    assert r1.get_json()["data"]["uuid"] != r2.get_json()["data"]["uuid"]


def test_idempotency_key_too_long_is_400(tenant):
    r = tenant.api.post("/programs", json={"program_name": "Long"}, headers={"Idempotency-Key": "k" * 256})
    assert r.status_code == 400 and "Idempotency-Key" in r.get_json()["errors"]


def test_failed_validation_is_replayed_not_reexecuted(tenant):
    h = {"Idempotency-Key": "bad-body"}
    r1 = tenant.api.post("/programs", json={"program_name": "x"}, headers=h)
    r2 = tenant.api.post("/programs", json={"program_name": "x"}, headers=h)
    assert r1.status_code == r2.status_code == 400 and r2.headers.get("Idempotent-Replay") == "true"


def test_idempotency_header_ignored_on_patch(tenant):
    p = tenant.program()
    h = {"Idempotency-Key": "patch-key"}
    tenant.api.patch(f"/programs/{p['uuid']}", json={"program_name": "One"}, headers=h)
    r = tenant.api.patch(f"/programs/{p['uuid']}", json={"program_name": "Two"}, headers=h)
    assert r.status_code == 200 and r.get_json()["data"]["program_name"] == "Two"


def test_concurrent_requests_with_one_key_create_one_record(app, tenant, database_url):
    """Real concurrency on PostgreSQL: one request holds the key, the others are answered 409 while it does.

    Synchronised with events, not sleeps: the winner waits inside the service until the three others have
    been answered, then finishes."""
    from app.programs import services
    original = services.create_program
    entered, release = threading.Event(), threading.Event()
    answered = threading.Condition()
    results: list[int] = []

    def slow_create(actor, data):
        entered.set()
        assert release.wait(10)
        return original(actor, data)

    def call():
        from tests.factories import ApiClient
        status = ApiClient(app, tenant.api_key).post("/programs", json={"program_name": "Race"},
                                                     headers={"Idempotency-Key": "race"}).status_code
        with answered:
            results.append(status)
            answered.notify_all()

    services.create_program = slow_create
    try:
        winner = threading.Thread(target=call)
        winner.start()
        assert entered.wait(10), "the first request never reached the service"
        others = [threading.Thread(target=call) for _ in range(3)]
        for t in others:
            t.start()
        with answered:
            assert answered.wait_for(lambda: len(results) == 3, timeout=10)
        assert results == [409, 409, 409]  # answered while the key was held
        release.set()
        for t in [winner, *others]:
            t.join(10)
    finally:
        services.create_program = original
    assert sorted(results) == [201, 409, 409, 409]
    assert tenant.api.get("/programs").get_json()["meta"]["total"] == 1


def test_rate_limit_429_with_headers(app, tenant):
    from app.accounts.models import Account
    from app.core.transactions import commit
    from app.extensions import db
    with app.app_context():
        db.session.get(Account, tenant.account_id).rate_limit_per_minute = 3
        commit()
    codes = [tenant.api.get("/programs") for _ in range(4)]
    assert [r.status_code for r in codes[:3]] == [200, 200, 200]
    assert codes[0].headers["RateLimit-Limit"] == "3"
    assert codes[0].headers["RateLimit-Remaining"] == "2"
    limited = codes[3]
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) > 0
    for h in ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"):
        assert h in limited.headers
    assert limited.get_json()["message"] and limited.get_json()["api_reference"]


def test_openapi_document_is_public_and_covers_routes(client):
    r = client.get("/api/v1/openapi.json")
    assert r.status_code == 200
    doc = r.get_json()
    assert doc["openapi"].startswith("3.1")
    post = doc["paths"]["/programs"]["post"]
    schema_name = post["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    schema = doc["components"]["schemas"][schema_name]
    assert "program_name" in schema["required"] and schema["additionalProperties"] is False
    assert "Idempotency-Key" in [p["name"] for p in post["parameters"]]


def test_openapi_document_is_valid(client):
    from openapi_spec_validator import validate
    validate(client.get("/api/v1/openapi.json").get_json())
