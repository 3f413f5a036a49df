"""Programs in the portal: list, filters, htmx fragments, create/edit with the API's validation, status, delete."""
from tests.portal.conftest import text, uuid_in


def test_list_shows_live_programs_and_hides_archived_by_default(admin, tenant):
    tenant.program(program_name="Retail onboarding")
    old = tenant.program(program_name="Legacy book")
    tenant.api.patch(f"/programs/{old['uuid']}", json={"status": "archived"})
    html = text(admin.get("/programs"))
    assert "Retail onboarding" in html and "Legacy book" not in html
    html = text(admin.get("/programs?archived=true"))
    assert "Legacy book" in html and "Retail onboarding" not in html
    html = text(admin.get("/programs?status=archived"))
    assert "Legacy book" in html


def test_status_filter_and_search(admin, tenant):
    tenant.program(program_name="Alpha")
    paused = tenant.program(program_name="Beta")
    tenant.api.patch(f"/programs/{paused['uuid']}", json={"status": "paused"})
    html = text(admin.get("/programs?status=paused"))
    assert "Beta" in html and "Alpha" not in html
    html = text(admin.get("/programs?q=alp"))
    assert "Alpha" in html and "Beta" not in html


def test_bad_filter_value_is_reset_not_an_error(admin, tenant):
    tenant.program(program_name="Alpha")
    r = admin.get("/programs?status=bogus")
    assert r.status_code == 200
    assert "Alpha" in text(r) and "were not valid" in text(r)


def test_htmx_list_request_gets_the_table_fragment(admin, tenant):
    tenant.program(program_name="Alpha")
    r = admin.htmx_get("/programs?q=Alpha")
    html = text(r)
    assert r.status_code == 200 and "Alpha" in html
    assert "<html" not in html and "<table" in html
    assert "HX-Request" in r.headers["Vary"]


def test_create_program_writes_and_redirects(admin, app):
    r = admin.post("/programs/new", {
        "program_name": "Payments", "status": "paused", "report_emails": "Ops@Example.com\nrisk@example.com",
        "data_retention_months": "24", "event_grouping": "separate", "max_separate_events": "25",
        "default_risk_level": "high"})
    assert r.status_code == 302
    program_uuid = uuid_in(r.headers["Location"])
    page = text(admin.get(r.headers["Location"]))
    assert "Payments" in page and "Program “Payments” created." in page
    from app.extensions import db
    from app.programs.models import Program
    from sqlalchemy import select
    import uuid
    with app.app_context():
        p = db.session.scalar(select(Program).where(Program.uuid == uuid.UUID(program_uuid)))
        assert (p.status, p.data_retention_months, p.max_separate_events, p.default_risk_level) == \
            ("paused", 24, 25, "high")
        assert p.report_emails == ["ops@example.com", "risk@example.com"]


def test_create_program_shows_the_api_errors_next_to_fields(admin, tenant):
    r = admin.post("/programs/new", {
        "program_name": "x", "status": "active", "report_emails": "a@example.com\nnot-an-email",
        "data_retention_months": "12", "event_grouping": "separate", "max_separate_events": "3",
        "default_risk_level": ""})
    html = text(r)
    assert r.status_code == 422
    assert 'id="program_name-error"' in html and "at least 2 characters" in html
    assert 'id="max_separate_events-error"' in html
    assert 'id="report_emails-error"' in html and "Item 2:" in html
    assert 'aria-invalid="true"' in html
    assert 'value="x"' in html  # what was typed is kept
    assert tenant.api.get("/programs").get_json()["meta"]["total"] == 0


def test_grouped_program_ignores_max_events(admin, tenant):
    r = admin.post("/programs/new", {"program_name": "Grouped", "status": "active", "data_retention_months": "12",
                                     "event_grouping": "grouped", "max_separate_events": "", "default_risk_level": ""})
    assert r.status_code == 302
    p = tenant.api.get("/programs").get_json()["data"][0]
    assert p["event_grouping"] == "grouped" and p["max_separate_events"] is None and p["default_risk_level"] is None


def test_edit_program_settings(admin, tenant):
    p = tenant.program(program_name="Retail")
    page = text(admin.get(f"/programs/{p['uuid']}/edit"))
    assert 'value="Retail"' in page
    r = admin.post(f"/programs/{p['uuid']}/edit", {
        "program_name": "Retail AU", "report_emails": "", "data_retention_months": "6",
        "event_grouping": "separate", "max_separate_events": "50", "default_risk_level": "medium"})
    assert r.status_code == 302
    data = tenant.api.get(f"/programs/{p['uuid']}").get_json()["data"]
    assert (data["program_name"], data["data_retention_months"], data["max_separate_events"]) == ("Retail AU", 6, 50)
    r = admin.post(f"/programs/{p['uuid']}/edit", {"program_name": "", "data_retention_months": "6",
                                                   "event_grouping": "separate", "max_separate_events": "50"})
    assert r.status_code == 422 and 'id="program_name-error"' in text(r)


def test_status_change_and_archived_program_is_read_only(admin, tenant):
    p = tenant.program(program_name="Retail")
    r = admin.post(f"/programs/{p['uuid']}/status", {"status": "archived"})
    assert r.status_code == 302
    assert tenant.api.get(f"/programs/{p['uuid']}").get_json()["data"]["status"] == "archived"
    page = text(admin.get(f"/programs/{p['uuid']}"))
    assert "archived and read-only" in page and "Add entity" not in page
    r = admin.post(f"/programs/{p['uuid']}/edit", {"program_name": "Renamed", "data_retention_months": "12",
                                                   "event_grouping": "separate", "max_separate_events": "10"})
    assert r.status_code == 302
    assert tenant.api.get(f"/programs/{p['uuid']}").get_json()["data"]["program_name"] == "Retail"
    admin.post(f"/programs/{p['uuid']}/status", {"status": "active"})
    assert tenant.api.get(f"/programs/{p['uuid']}").get_json()["data"]["status"] == "active"


def test_delete_program_with_confirmation(admin, tenant):
    p = tenant.program(program_name="Doomed")
    tenant.entity(p["uuid"])
    page = text(admin.get(f"/programs/{p['uuid']}/delete"))
    assert "Delete “Doomed”?" in page and "<strong>1</strong> entity" in page
    assert tenant.api.get(f"/programs/{p['uuid']}").status_code == 200  # GET never deletes
    r = admin.post(f"/programs/{p['uuid']}/delete")
    assert r.status_code == 302 and r.headers["Location"] == "/programs"
    assert tenant.api.get(f"/programs/{p['uuid']}").status_code == 404


def test_viewer_sees_no_write_buttons_and_gets_403(viewer, tenant):
    p = tenant.program(program_name="Retail")
    html = text(viewer.get("/programs"))
    assert "New program" not in html
    html = text(viewer.get(f"/programs/{p['uuid']}"))
    assert "Add entity" not in html and "Import CSV" not in html and "Settings" not in html
    assert viewer.get("/programs/new").status_code == 403
    assert viewer.post("/programs/new", {"program_name": "Sneaky"}).status_code == 403
    assert viewer.get(f"/programs/{p['uuid']}/edit").status_code == 403
    assert viewer.post(f"/programs/{p['uuid']}/status", {"status": "paused"}).status_code == 403
    assert viewer.post(f"/programs/{p['uuid']}/delete").status_code == 403
    assert tenant.api.get(f"/programs/{p['uuid']}").get_json()["data"]["status"] == "active"


def test_analyst_can_create_programs(analyst, tenant):
    r = analyst.post("/programs/new", {"program_name": "By analyst", "status": "active", "data_retention_months": "12",
                                       "event_grouping": "separate", "max_separate_events": "10"})
    assert r.status_code == 302
    assert tenant.api.get("/programs").get_json()["data"][0]["program_name"] == "By analyst"


def test_write_without_csrf_token_is_refused(admin, tenant):
    r = admin.post("/programs/new", {"program_name": "No token", "status": "active"}, csrf=False)
    assert r.status_code == 400
    r = admin.client.post("/programs/new", data={"program_name": "No token"}, headers={"HX-Request": "true"})
    assert r.status_code == 400
    assert tenant.api.get("/programs").get_json()["meta"]["total"] == 0


def test_another_accounts_program_is_404(admin, other_tenant):
    p = other_tenant.program(program_name="Theirs")
    assert admin.get(f"/programs/{p['uuid']}").status_code == 404
    assert admin.post(f"/programs/{p['uuid']}/delete").status_code == 404
    assert other_tenant.api.get(f"/programs/{p['uuid']}").status_code == 200
