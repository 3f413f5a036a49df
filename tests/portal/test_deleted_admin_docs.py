"""Recently deleted (restore is portal-only), admin pages (users, API keys), the public API reference."""
import re

from tests.portal.conftest import text


# ---------------------------------------------------------------- recently deleted

def test_deleted_entity_is_listed_and_restored(analyst, tenant):
    p = tenant.program()
    e = tenant.entity(p["uuid"], first_name="Gone", last_name="Soon")
    tenant.api.post(f"/entities/{e['uuid']}/notes", json={"note_text": "kept with the entity"})
    tenant.api.delete(f"/entities/{e['uuid']}")
    html = text(analyst.get("/deleted"))
    assert "Gone Soon" in html and f"/deleted/entities/{e['uuid']}/restore" in html and "in 30 days" in html
    r = analyst.post(f"/deleted/entities/{e['uuid']}/restore")
    assert r.status_code == 302 and e["uuid"] in r.headers["Location"]
    assert tenant.api.get(f"/entities/{e['uuid']}").status_code == 200
    assert tenant.api.get(f"/notes?filter[entity_uuid]={e['uuid']}").get_json()["meta"]["total"] == 1
    assert f"/deleted/entities/{e['uuid']}/restore" not in text(analyst.get("/deleted"))


def test_deleted_program_is_listed_and_restored_with_its_entities(analyst, viewer, tenant):
    p = tenant.program(program_name="Closed book")
    e = tenant.entity(p["uuid"])
    tenant.api.delete(f"/programs/{p['uuid']}")
    html = text(analyst.get("/deleted"))
    assert "Closed book" in html and f"/deleted/programs/{p['uuid']}/restore" in html
    # the entity went with its program: it is restored with it, not listed on its own
    assert f"/deleted/entities/{e['uuid']}/restore" not in html
    assert viewer.post(f"/deleted/programs/{p['uuid']}/restore").status_code == 403
    r = analyst.post(f"/deleted/programs/{p['uuid']}/restore")
    assert r.status_code == 302 and p["uuid"] in r.headers["Location"]
    assert tenant.api.get(f"/entities/{e['uuid']}").status_code == 200
    assert analyst.post(f"/deleted/programs/{p['uuid']}/restore").status_code == 404


def test_portal_pages_carry_security_headers(analyst, client):
    for response in (analyst.get("/deleted"), client.get("/api/docs"), client.get("/login")):
        assert "default-src 'self'" in response.headers["Content-Security-Policy"]
        assert response.headers["X-Frame-Options"] == "DENY"
    assert "Content-Security-Policy" not in client.get("/api/v1/openapi.json").headers


def test_deleted_note_is_restored_by_its_author(analyst, tenant):
    p = tenant.program()
    e = tenant.entity(p["uuid"])
    html = text(analyst.htmx_post(f"/entities/{e['uuid']}/notes", {"note_text": "Oops, deleted"}))
    note_id = re.search(r'id="note-([0-9a-f-]{36})"', html).group(1)
    analyst.htmx_post(f"/notes/{note_id}/delete")
    html = text(analyst.get("/deleted"))
    assert "Oops, deleted" in html and f"/deleted/notes/{note_id}/restore" in html
    r = analyst.post(f"/deleted/notes/{note_id}/restore")
    assert r.status_code == 302
    assert tenant.api.get(f"/notes/{note_id}").status_code == 200


def test_viewer_sees_deleted_records_but_cannot_restore(viewer, tenant):
    p = tenant.program()
    e = tenant.entity(p["uuid"], first_name="Gone", last_name="Soon")
    tenant.api.delete(f"/entities/{e['uuid']}")
    html = text(viewer.get("/deleted"))
    assert "Gone Soon" in html and "/restore" not in html
    assert viewer.post(f"/deleted/entities/{e['uuid']}/restore").status_code == 403
    assert tenant.api.get(f"/entities/{e['uuid']}").status_code == 404


# ---------------------------------------------------------------- admin: users

def test_admin_pages_are_for_admins_only(analyst, viewer):
    for client in (analyst, viewer):
        assert client.get("/admin/users").status_code == 403
        assert client.get("/admin/api-keys").status_code == 403
        assert client.post("/admin/users", {"email": "x@example.com", "password": "abc123def456",
                                            "role": "admin"}).status_code == 403
        assert client.post("/admin/api-keys", {"label": "sneaky"}).status_code == 403
        assert "/admin/users" not in text(client.get("/dashboard"))


def test_create_user_change_role_and_disable(app, admin, factory):
    r = admin.post("/admin/users", {"email": "New.Person@Example.com", "role": "viewer"})
    assert r.status_code == 302
    from tests.portal.test_invitations import _token
    token = _token(app, "new.person@example.com")
    fresh_client = app.test_client()
    from tests.factories import csrf_from
    csrf = csrf_from(fresh_client.get(f"/invitations/{token}").get_data(as_text=True))
    assert fresh_client.post(f"/invitations/{token}", data={"csrf_token": csrf, "password": "s3cure-pass-99",
                                                            "confirm": "s3cure-pass-99"}).status_code == 302
    html = text(admin.get("/admin/users"))
    assert "new.person@example.com" in html
    user_uuid = re.search(r'/admin/users/([0-9a-f-]{36})/role', html).group(1)
    fresh = factory.login("new.person@example.com", "s3cure-pass-99")
    assert fresh.get("/programs/new").status_code == 403
    assert admin.post(f"/admin/users/{user_uuid}/role", {"role": "analyst"}).status_code == 302
    assert fresh.get("/").status_code == 302  # a role change ends the user's sessions
    again = factory.login("new.person@example.com", "s3cure-pass-99")
    assert again.get("/programs/new").status_code == 200
    assert admin.post(f"/admin/users/{user_uuid}/disable", {"disabled": "1"}).status_code == 302
    assert again.get("/").status_code == 302
    assert "Enable" in text(admin.get("/admin/users"))


def test_create_user_errors_on_fields(admin):
    r = admin.post("/admin/users", {"email": "not-an-email", "role": "admin"})
    html = text(r)
    assert r.status_code == 422
    assert 'id="email-error"' in html
    assert "not-an-email" in html


def test_admin_cannot_demote_or_disable_themselves(admin, tenant, app):
    from sqlalchemy import select

    from app.accounts.models import User
    from app.extensions import db
    with app.app_context():
        me = db.session.scalar(select(User.uuid).where(User.email == tenant.email))
    html = text(admin.get("/admin/users"))
    assert f"/admin/users/{me}/disable" not in html
    r = admin.post(f"/admin/users/{me}/role", {"role": "viewer"})
    assert r.status_code == 302
    assert "cannot demote or disable yourself" in text(admin.get("/admin/users"))
    assert admin.get("/admin/users").status_code == 200


# ---------------------------------------------------------------- admin: API keys

def test_api_key_secret_is_shown_once_and_works(admin, client):
    r = admin.post("/admin/api-keys", {"label": "Onboarding service"})
    html = text(r)
    assert r.status_code == 201 and r.headers["Cache-Control"] == "no-store"
    secret = re.search(r'<code id="new-secret">(sk_test_[A-Za-z0-9_-]+)</code>', html).group(1)
    assert client.get("/api/v1/programs", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    listing = text(admin.get("/admin/api-keys"))
    assert "Onboarding service" in listing and secret not in listing and secret[:12] in listing


def test_api_key_label_is_required(admin):
    r = admin.post("/admin/api-keys", {"label": "  "})
    assert r.status_code == 422 and 'id="label-error"' in text(r)


def test_revoke_api_key_with_confirmation(admin, tenant):
    page = text(admin.get(f"/admin/api-keys/{tenant.api_key_uuid}/revoke"))
    assert "Revoke “Default key”?" in page
    assert tenant.api.get("/programs").status_code == 200  # GET never revokes
    r = admin.post(f"/admin/api-keys/{tenant.api_key_uuid}/revoke")
    assert r.status_code == 302
    assert tenant.api.get("/programs").status_code == 401
    assert "Revoked" in text(admin.get("/admin/api-keys"))


# ---------------------------------------------------------------- API reference

def test_api_docs_are_public_and_cover_every_operation(client, app):
    r = client.get("/api/docs")
    html = text(r)
    assert r.status_code == 200
    assert 'href="/api/v1/openapi.json"' in html
    doc = client.get("/api/v1/openapi.json").get_json()
    for path, methods in doc["paths"].items():
        for method in methods:
            assert f'<span class="op-path" id="{method}-' in html
            assert path in html, path
    for section in ("authentication", "errors", "idempotency", "rate-limits", "lists"):
        assert f'id="{section}"' in html
    assert "Idempotency-Key" in html and "Retry-After" in html and "Bearer" in html


def test_api_docs_show_body_fields_with_types_and_constraints(client):
    html = text(client.get("/api/docs"))
    body = html[html.index('id="post-programs"'):]
    body = body[:body.index("</article>")]
    assert "ProgramCreate" in body and ">program_name<" in body and "min length 2 · max length 255" in body
    assert "Required" in body and "one of: active, paused" in body and "max 5 items" in body
    assert "<code>Authorization: Bearer &lt;api key&gt;</code>" in html  # backticks become code, escaped


def test_unit_apply_errors_maps_service_paths_onto_fields(app):
    from app.portal.base import apply_errors
    from app.portal.forms import ProgramForm
    with app.test_request_context("/"):
        form = ProgramForm(formdata=None)
        rest = apply_errors(form, {"program_name": ["Too short."], "report_emails.2": ["Bad address."],
                                   "colour": ["Unknown field."]})
        assert form.program_name.errors == ["Too short."]
        assert form.report_emails.errors == ["Item 3: Bad address."]
        assert rest == ["colour: Unknown field."] and form.form_errors == rest
        form = ProgramForm(formdata=None)
        apply_errors(form, {"data.program_name": ["Missing."]}, prefix="data.")
        assert form.program_name.errors == ["Missing."]


def test_unit_csv_error_report_sorts_rows():
    from app.portal.entities import error_report
    rows, other = error_report({"rows.10.first_name": ["Required."], "rows.2": ["Too many cells."],
                                "file": ["Empty."]})
    assert [(r["line"], r["field"]) for r in rows] == [(2, ""), (10, "first_name")]
    assert other == ["Empty."]
