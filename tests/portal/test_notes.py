"""Notes on the entity page through htmx: add, edit, delete as fragments; 422 fragments on bad input;
API-key and immutable notes are read-only in the portal."""
import re
import uuid

from tests.portal.conftest import text


def _entity(tenant):
    p = tenant.program()
    return tenant.entity(p["uuid"], first_name="Jane", last_name="Citizen")


def _note_uuid(html: str) -> str:
    return re.search(r'id="note-([0-9a-f-]{36})"', html).group(1)


def test_add_note_through_htmx_returns_the_notes_fragment(analyst, tenant):
    e = _entity(tenant)
    r = analyst.htmx_post(f"/entities/{e['uuid']}/notes", {"note_text": "  Passport checked.  "})
    html = text(r)
    assert r.status_code == 200
    assert "<html" not in html and "Passport checked." in html
    assert 'data-testid="notes-count">1<' in html
    assert 'name="note_text"' in html and "Passport checked.</textarea>" not in html  # a fresh form
    assert r.headers["X-Portal-Notice"]
    notes = tenant.api.get(f"/notes?filter[entity_uuid]={e['uuid']}").get_json()["data"]
    assert [n["note_text"] for n in notes] == ["Passport checked."]
    assert notes[0]["created_by"] == {"type": "user", "uuid": notes[0]["created_by"]["uuid"],
                                      "username": analyst.email}


def test_invalid_note_is_a_422_fragment_with_the_error(analyst, tenant):
    e = _entity(tenant)
    r = analyst.htmx_post(f"/entities/{e['uuid']}/notes", {"note_text": "   "})
    assert r.status_code == 422
    html = text(r)
    assert "<html" not in html and 'id="new-note-error"' in html and 'aria-invalid="true"' in html
    r = analyst.htmx_post(f"/entities/{e['uuid']}/notes", {"note_text": "x" * 5001})
    assert r.status_code == 422 and "5000" in text(r)
    assert tenant.api.get(f"/notes?filter[entity_uuid]={e['uuid']}").get_json()["meta"]["total"] == 0


def test_add_note_without_htmx_redirects_back(analyst, tenant):
    e = _entity(tenant)
    r = analyst.post(f"/entities/{e['uuid']}/notes", {"note_text": "Plain form post"})
    assert r.status_code == 302 and f"/entities/{e['uuid']}#note-" in r.headers["Location"]
    assert "Plain form post" in text(analyst.get(f"/entities/{e['uuid']}"))


def test_htmx_note_post_without_csrf_header_is_refused(analyst, tenant):
    e = _entity(tenant)
    r = analyst.client.post(f"/entities/{e['uuid']}/notes", data={"note_text": "x"}, headers={"HX-Request": "true"})
    assert r.status_code == 400
    assert tenant.api.get(f"/notes?filter[entity_uuid]={e['uuid']}").get_json()["meta"]["total"] == 0


def test_edit_note_through_htmx(analyst, tenant):
    e = _entity(tenant)
    note_id = _note_uuid(text(analyst.htmx_post(f"/entities/{e['uuid']}/notes", {"note_text": "First draft"})))
    r = analyst.htmx_get(f"/notes/{note_id}/edit")
    assert r.status_code == 200 and "First draft</textarea>" in text(r) and "<html" not in text(r)
    r = analyst.htmx_post(f"/notes/{note_id}", {"note_text": "Final text"})
    assert r.status_code == 200 and "Final text" in text(r) and f'id="note-{note_id}"' in text(r)
    r = analyst.htmx_post(f"/notes/{note_id}", {"note_text": ""})
    assert r.status_code == 422 and f'id="note-error-{note_id}"' in text(r)
    assert tenant.api.get(f"/notes/{note_id}").get_json()["data"]["note_text"] == "Final text"
    r = analyst.htmx_get(f"/notes/{note_id}")  # cancel
    assert r.status_code == 200 and "Final text" in text(r) and "textarea" not in text(r)


def test_delete_note_through_htmx(analyst, tenant):
    e = _entity(tenant)
    note_id = _note_uuid(text(analyst.htmx_post(f"/entities/{e['uuid']}/notes", {"note_text": "Mistake"})))
    r = analyst.htmx_post(f"/notes/{note_id}/delete")
    assert r.status_code == 200 and "Mistake" not in text(r) and 'data-testid="notes-count">0<' in text(r)
    assert tenant.api.get(f"/notes/{note_id}").status_code == 404


def test_api_key_notes_are_read_only_in_the_portal(admin, tenant):
    e = _entity(tenant)
    note = tenant.api.post(f"/entities/{e['uuid']}/notes", json={"note_text": "Written by the API"}).get_json()["data"]
    html = text(admin.get(f"/entities/{e['uuid']}"))
    assert "Written by the API" in html and "API key" in html and "Read-only" in html
    assert f"/notes/{note['uuid']}/edit" not in html
    assert admin.get(f"/notes/{note['uuid']}/edit").status_code == 403
    r = admin.htmx_post(f"/notes/{note['uuid']}", {"note_text": "Hijacked"})
    assert r.status_code == 403 and r.headers["X-Portal-Message"]
    assert admin.post(f"/notes/{note['uuid']}/delete").status_code == 403
    assert tenant.api.get(f"/notes/{note['uuid']}").get_json()["data"]["note_text"] == "Written by the API"


def test_immutable_notes_are_read_only(app, admin, tenant):
    e = _entity(tenant)
    from sqlalchemy import select

    from app.accounts.models import User
    from app.accounts.services import user_actor
    from app.core.transactions import commit
    from app.extensions import db
    from app.notes.services import create_note
    with app.app_context():
        user = db.session.scalar(select(User).where(User.email == admin.email))
        note = create_note(user_actor(user), uuid.UUID(e["uuid"]), {"note_text": "Status changed"}, is_immutable=True)
        commit()
        note_uuid = str(note.uuid)
    html = text(admin.get(f"/entities/{e['uuid']}"))
    assert "Audit entry" in html and "Immutable" in html and f"/notes/{note_uuid}/edit" not in html
    assert admin.htmx_post(f"/notes/{note_uuid}", {"note_text": "Changed"}).status_code == 403


def test_viewer_cannot_add_notes(viewer, tenant):
    e = _entity(tenant)
    assert viewer.htmx_post(f"/entities/{e['uuid']}/notes", {"note_text": "Nope"}).status_code == 403
    assert tenant.api.get(f"/notes?filter[entity_uuid]={e['uuid']}").get_json()["meta"]["total"] == 0


def test_analyst_cannot_edit_another_users_note_but_admin_can(admin, analyst, tenant, factory, login):
    e = _entity(tenant)
    note_id = _note_uuid(text(analyst.htmx_post(f"/entities/{e['uuid']}/notes", {"note_text": "Mine"})))
    colleague = login(factory.user(tenant, "analyst"))
    assert f"/notes/{note_id}/edit" not in text(colleague.get(f"/entities/{e['uuid']}"))
    assert colleague.htmx_post(f"/notes/{note_id}", {"note_text": "Not mine"}).status_code == 403
    other = text(admin.get(f"/entities/{e['uuid']}"))
    assert f"/notes/{note_id}/edit" in other  # admins may edit any user's note
    assert admin.htmx_post(f"/notes/{note_id}", {"note_text": "Edited by admin"}).status_code == 200


def test_notes_are_archived_and_unarchived_in_the_portal(analyst, tenant):
    """Spec "Note": archived_at is set in the portal only: the entity page offers Archive / Unarchive."""
    e = _entity(tenant)
    r = analyst.htmx_post(f"/entities/{e['uuid']}/notes", {"note_text": "Old address on file."})
    note = _note_uuid(text(r))
    assert f"/notes/{note}/archive" in text(analyst.get(f"/entities/{e['uuid']}"))
    r = analyst.htmx_post(f"/notes/{note}/archive")
    assert r.status_code == 200 and "Archived" in text(r) and f"/notes/{note}/unarchive" in text(r)
    assert tenant.api.get(f"/notes/{note}").get_json()["data"]["archived_at"]
    assert analyst.post(f"/notes/{note}/unarchive").status_code == 302  # without htmx: back to the entity
    assert tenant.api.get(f"/notes/{note}").get_json()["data"]["archived_at"] is None


def test_viewers_get_no_archive_button(viewer, analyst, tenant):
    e = _entity(tenant)
    note = _note_uuid(text(analyst.htmx_post(f"/entities/{e['uuid']}/notes", {"note_text": "x"})))
    assert f"/notes/{note}/archive" not in text(viewer.get(f"/entities/{e['uuid']}"))
    assert viewer.post(f"/notes/{note}/archive").status_code == 403
