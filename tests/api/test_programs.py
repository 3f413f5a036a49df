import uuid


def test_create_program_defaults_and_shape(tenant):
    r = tenant.api.post("/programs", json={"program_name": "Retail"})
    assert r.status_code == 201
    body = r.get_json()
    assert body["api_reference"] == r.headers["X-Request-Id"]
    p = body["data"]
    assert p["status"] == "active" and p["report_emails"] == [] and p["data_retention_months"] == 12
    assert p["event_grouping"] == "separate" and p["max_separate_events"] == 10
    assert p["default_risk_level"] == "low"
    assert p["created_at"].endswith("Z") and uuid.UUID(p["uuid"])
    assert p["program_number"] and not p["program_number"].isdigit()
    assert "id" not in p


def test_create_program_validation_reports_each_field(tenant):
    r = tenant.api.post("/programs", json={
        "program_name": "x", "status": "archived", "report_emails": ["a@example.com"] * 3 + ["bad", "c@d.com", "e@f.com"],
        "data_retention_months": 5, "max_separate_events": 4, "colour": "red"})
    assert r.status_code == 400
    errors = r.get_json()["errors"]
    for field in ("program_name", "status", "data_retention_months", "max_separate_events", "colour"):
        assert field in errors, field
    assert any(k.startswith("report_emails") for k in errors)
    assert r.get_json()["message"]


def test_grouped_program_has_no_max_events(tenant):
    p = tenant.program(event_grouping="grouped", max_separate_events=50)
    assert p["max_separate_events"] is None
    r = tenant.api.patch(f"/programs/{p['uuid']}", json={"event_grouping": "separate"})
    assert r.get_json()["data"]["max_separate_events"] == 10
    r = tenant.api.patch(f"/programs/{p['uuid']}", json={"max_separate_events": None})
    assert r.status_code == 400 and "max_separate_events" in r.get_json()["errors"]


def test_separate_requires_max_events_when_null(tenant):
    r = tenant.api.post("/programs", json={"program_name": "Ab", "max_separate_events": None})
    assert r.status_code == 400 and "max_separate_events" in r.get_json()["errors"]


def test_update_only_supplied_fields_and_status_transitions(tenant):
    p = tenant.program(report_emails=["A@example.com"])
    assert p["report_emails"] == ["a@example.com"]
    r = tenant.api.patch(f"/programs/{p['uuid']}", json={"status": "paused"})
    assert r.status_code == 200 and r.get_json()["data"]["status"] == "paused"
    assert r.get_json()["data"]["report_emails"] == ["a@example.com"]
    r = tenant.api.patch(f"/programs/{p['uuid']}", json={"status": "archived"})
    assert r.get_json()["data"]["status"] == "archived"
    # an archived program is read-only except for its status
    r = tenant.api.patch(f"/programs/{p['uuid']}", json={"program_name": "New name"})
    assert r.status_code == 409
    r = tenant.api.patch(f"/programs/{p['uuid']}", json={"status": "active"})
    assert r.status_code == 200 and r.get_json()["data"]["status"] == "active"


def test_archived_programs_hidden_from_default_list(tenant):
    a = tenant.program()
    b = tenant.program()
    tenant.api.patch(f"/programs/{b['uuid']}", json={"status": "archived"})
    default = [p["uuid"] for p in tenant.api.get("/programs").get_json()["data"]]
    assert default == [a["uuid"]]
    only = [p["uuid"] for p in tenant.api.get("/programs?archived=true").get_json()["data"]]
    assert only == [b["uuid"]]
    by_status = tenant.api.get("/programs?filter[status]=archived").get_json()["data"]
    assert [p["uuid"] for p in by_status] == [b["uuid"]]


def test_list_sort_and_pagination(tenant):
    for name in ("Charlie", "Alpha", "Bravo"):
        tenant.program(program_name=name)
    r = tenant.api.get("/programs?sort=program_name&per_page=2")
    body = r.get_json()
    assert [p["program_name"] for p in body["data"]] == ["Alpha", "Bravo"]
    assert body["meta"] == {"current_page": 1, "per_page": 2, "total": 3, "last_page": 2}
    r = tenant.api.get("/programs?sort=-program_name&page=2&per_page=2")
    assert [p["program_name"] for p in r.get_json()["data"]] == ["Alpha"]
    r = tenant.api.get("/programs?page=9")
    assert r.status_code == 200 and r.get_json()["data"] == []


def test_delete_program_then_404(tenant):
    p = tenant.program()
    r = tenant.api.delete(f"/programs/{p['uuid']}")
    assert r.status_code == 200 and r.get_json()["data"]["deleted_at"]
    assert tenant.api.get(f"/programs/{p['uuid']}").status_code == 404
    assert tenant.api.patch(f"/programs/{p['uuid']}", json={"status": "paused"}).status_code == 404
    assert tenant.api.delete(f"/programs/{p['uuid']}").status_code == 404
    assert tenant.api.get("/programs").get_json()["meta"]["total"] == 0


def test_program_of_another_account_is_404(tenant, other_tenant):
    p = other_tenant.program()
    for method in ("get", "patch", "delete"):
        kw = {"json": {"status": "paused"}} if method == "patch" else {}
        assert getattr(tenant.api, method)(f"/programs/{p['uuid']}", **kw).status_code == 404
    assert tenant.api.get("/programs").get_json()["data"] == []


def test_program_writes_are_audited(tenant, app):
    from sqlalchemy import select
    from app.accounts.models import AuditLog
    from app.extensions import db
    r = tenant.api.post("/programs", json={"program_name": "Audited"})
    ref = r.get_json()["api_reference"]
    with app.app_context():
        row = db.session.scalar(select(AuditLog).where(AuditLog.api_reference == ref))
        assert row.action == "program.created" and row.actor_type == "api_key"
        assert str(row.actor_uuid) == tenant.api_key_uuid


def test_restore_program_brings_back_what_was_deleted_with_it(app, tenant):
    from app.accounts.models import Account
    from app.accounts.services import cli_actor
    from app.core.errors import NotFound
    from app.core.transactions import commit
    from app.extensions import db
    from app.programs import queries, services
    import pytest
    p = tenant.program()
    tenant.api.delete(f"/programs/{p['uuid']}")
    with app.app_context():
        actor = cli_actor(db.session.get(Account, tenant.account_id))
        assert [x.uuid for x in queries.list_deleted_programs(actor)] == [uuid.UUID(p["uuid"])]
        services.restore_program(actor, uuid.UUID(p["uuid"]))
        commit()
        with pytest.raises(NotFound):
            services.restore_program(actor, uuid.UUID(p["uuid"]))
    assert tenant.api.get(f"/programs/{p['uuid']}").status_code == 200
