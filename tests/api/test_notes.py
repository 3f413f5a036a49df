"""Notes through the JSON API, and the service rules the portal shares (authorship, archive, restore)."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select, update

NOTE_FIELDS = {"uuid", "note_number", "note_text", "created_by", "is_immutable", "entity_uuid", "program_uuid",
               "event_uuid", "archived_at", "created_at", "updated_at"}


# ------------------------------------------------------------------ helpers

def make_entity(app, tenant, program_uuid: str, **fields) -> str:
    """An entity written through the ORM (independent of the entities API)."""
    from app.entities.models import Entity
    from app.extensions import db
    from app.programs.models import Program
    with app.app_context():
        program = db.session.scalar(select(Program).where(Program.uuid == uuid.UUID(program_uuid)))
        entity = Entity(account_id=tenant.account_id, program_id=program.id, entity_type="individual",
                        first_name="Jane", last_name="Doe", entity_name="Jane Doe", flags=[], **fields)
        db.session.add(entity)
        db.session.commit()
        return str(entity.uuid)


def set_row(app, model_path: str, row_uuid: str, **values) -> None:
    import importlib
    module, name = model_path.rsplit(".", 1)
    model = getattr(importlib.import_module(module), name)
    from app.extensions import db
    values.setdefault("updated_at", model.updated_at)  # a test fixture, not a change: keep updated_at
    with app.app_context():
        db.session.execute(update(model).where(model.uuid == uuid.UUID(row_uuid)).values(**values))
        db.session.commit()


def set_note(app, note_uuid: str, **values) -> None:
    set_row(app, "app.notes.models.Note", note_uuid, **values)


def user_actor(app, email: str):
    from app.accounts.models import User
    from app.accounts.services import user_actor as make
    from app.extensions import db
    with app.app_context():
        return make(db.session.scalar(select(User).where(User.email == email)))


def portal(app, fn_name: str, actor, *args):
    """Call a notes service as the portal would: one call, one commit; returns the note's uuid."""
    from app.core.transactions import commit, rollback
    from app.notes import services
    with app.app_context():
        try:
            note = getattr(services, fn_name)(actor, *args)
            commit()
            return str(note.uuid)
        except Exception:
            rollback()
            raise


def second_key(app, tenant, label="Second key"):
    from app.accounts.models import Account
    from app.accounts.services import cli_actor, create_api_key
    from app.core.transactions import commit
    from app.extensions import db
    from tests.factories import ApiClient
    with app.app_context():
        key, secret = create_api_key(cli_actor(db.session.get(Account, tenant.account_id)), label=label)
        key_uuid = str(key.uuid)
        commit()
    return ApiClient(app, secret), key_uuid


def audit_rows(app, target_uuid: str):
    from app.accounts.models import AuditLog
    from app.extensions import db
    with app.app_context():
        rows = db.session.scalars(select(AuditLog).where(AuditLog.target_uuid == uuid.UUID(target_uuid))
                                  .order_by(AuditLog.id)).all()
        return [(r.action, r.actor_type, str(r.actor_uuid), r.api_reference, r.changes) for r in rows]


@pytest.fixture
def setup(app, tenant):
    program = tenant.program()
    entity = make_entity(app, tenant, program["uuid"])
    return program["uuid"], entity


def add_note(tenant, entity_uuid, text="A note", **kw):
    r = tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": text}, **kw)
    assert r.status_code == 201, r.get_json()
    return r.get_json()["data"]


# ------------------------------------------------------------------ create

def test_create_note_shape(app, tenant, setup):
    program_uuid, entity_uuid = setup
    r = tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "  Spoke to the customer.  "})
    assert r.status_code == 201
    body = r.get_json()
    note = body["data"]
    assert set(note) == NOTE_FIELDS
    assert note["note_text"] == "Spoke to the customer."
    assert note["created_by"] == {"type": "api_key", "uuid": tenant.api_key_uuid, "label": "Default key"}
    assert note["entity_uuid"] == entity_uuid and note["program_uuid"] == program_uuid
    assert note["event_uuid"] is None and note["archived_at"] is None and note["is_immutable"] is False
    assert note["created_at"].endswith("Z") and note["updated_at"].endswith("Z")
    assert note["note_number"] and not note["note_number"].isdigit()
    assert body["api_reference"] == r.headers["X-Request-Id"]
    shown = tenant.api.get(f"/notes/{note['uuid']}")
    assert shown.status_code == 200 and shown.get_json()["data"] == note


def test_note_text_limits(tenant, setup):
    _, entity_uuid = setup
    assert tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "x" * 5000}).status_code == 201
    assert tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "é" * 5000}).status_code == 201
    for bad in ("x" * 5001, "", "   ", None, 42, ["a"], "nul\x00byte", "bell\x07"):
        r = tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": bad})
        assert r.status_code == 400, bad
        assert list(r.get_json()["errors"]) == ["note_text"], bad
    assert tenant.api.get("/notes").get_json()["meta"]["total"] == 2


def test_create_note_bad_bodies_are_400(tenant, setup):
    _, entity_uuid = setup
    r = tenant.api.post(f"/entities/{entity_uuid}/notes", json={})
    assert r.status_code == 400 and "note_text" in r.get_json()["errors"]
    r = tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "ok", "is_immutable": True,
                                                               "event_uuid": str(uuid.uuid4())})
    assert r.status_code == 400 and {"is_immutable", "event_uuid"} <= set(r.get_json()["errors"])
    r = tenant.api.post(f"/entities/{entity_uuid}/notes", json=["note"])
    assert r.status_code == 400 and "body" in r.get_json()["errors"]
    r = tenant.api.post(f"/entities/{entity_uuid}/notes", data="{oops", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert tenant.api.get("/notes").get_json()["meta"]["total"] == 0


def test_create_note_on_unknown_or_foreign_or_deleted_entity_is_404(app, tenant, other_tenant, setup):
    foreign_program = other_tenant.program()
    foreign_entity = make_entity(app, other_tenant, foreign_program["uuid"])
    _, entity_uuid = setup
    for target in (str(uuid.uuid4()), foreign_entity):
        r = tenant.api.post(f"/entities/{target}/notes", json={"note_text": "x"})
        assert r.status_code == 404 and r.get_json()["message"]
    assert tenant.api.post("/entities/not-a-uuid/notes", json={"note_text": "x"}).status_code == 404
    set_row(app, "app.entities.models.Entity", entity_uuid, deleted_at=datetime.now(timezone.utc))
    assert tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "x"}).status_code == 404
    assert other_tenant.api.get("/notes").get_json()["data"] == []


def test_writes_on_archived_entity_or_program_are_409(app, tenant, setup):
    program_uuid, entity_uuid = setup
    note = add_note(tenant, entity_uuid)
    set_row(app, "app.entities.models.Entity", entity_uuid, archived_at=datetime.now(timezone.utc))
    assert tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "x"}).status_code == 409
    assert tenant.api.patch(f"/notes/{note['uuid']}", json={"note_text": "y"}).status_code == 409
    r = tenant.api.delete(f"/notes/{note['uuid']}")
    assert r.status_code == 409 and "archived" in r.get_json()["message"]
    set_row(app, "app.entities.models.Entity", entity_uuid, archived_at=None)
    assert tenant.api.patch(f"/programs/{program_uuid}", json={"status": "archived"}).status_code == 200
    assert tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "x"}).status_code == 409
    assert tenant.api.patch(f"/notes/{note['uuid']}", json={"note_text": "y"}).status_code == 409
    assert tenant.api.delete(f"/notes/{note['uuid']}").status_code == 409
    # reads still work, and nothing changed
    shown = tenant.api.get(f"/notes/{note['uuid']}").get_json()["data"]
    assert shown["note_text"] == "A note"
    assert tenant.api.get("/notes").get_json()["meta"]["total"] == 1


def test_archived_note_is_read_only_but_visible(app, tenant, setup):
    _, entity_uuid = setup
    note = add_note(tenant, entity_uuid)
    set_note(app, note["uuid"], archived_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
    shown = tenant.api.get(f"/notes/{note['uuid']}").get_json()["data"]
    assert shown["archived_at"] == "2026-01-02T03:04:05.000000Z"
    assert tenant.api.patch(f"/notes/{note['uuid']}", json={"note_text": "y"}).status_code == 409
    assert tenant.api.delete(f"/notes/{note['uuid']}").status_code == 409


def test_unauthenticated_is_401(client, tenant, setup):
    _, entity_uuid = setup
    note = add_note(tenant, entity_uuid)
    calls = [("POST", f"/api/v1/entities/{entity_uuid}/notes"), ("GET", "/api/v1/notes"),
             ("GET", f"/api/v1/notes/{note['uuid']}"), ("PATCH", f"/api/v1/notes/{note['uuid']}"),
             ("DELETE", f"/api/v1/notes/{note['uuid']}")]
    for method, path in calls:
        for headers in ({}, {"Authorization": "Bearer sk_test_unknown"}):
            r = client.open(path, method=method, json={"note_text": "x"}, headers=headers)
            assert r.status_code == 401, (method, path)
    assert tenant.api.get(f"/notes/{note['uuid']}").get_json()["data"]["note_text"] == "A note"


def test_idempotent_create(tenant, setup):
    _, entity_uuid = setup
    h = {"Idempotency-Key": "note-1"}
    r1 = tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "Once"}, headers=h)
    r2 = tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "Once"}, headers=h)
    assert r1.status_code == r2.status_code == 201
    assert r2.headers["Idempotent-Replay"] == "true" and r2.get_json() == r1.get_json()
    r3 = tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "Twice"}, headers=h)
    assert r3.status_code == 422 and "different" in r3.get_json()["message"]
    assert tenant.api.get("/notes").get_json()["meta"]["total"] == 1


def test_idempotency_key_in_flight_is_409(app, tenant, setup):
    """A request with the key still being processed (claimed, not finished) answers 409."""
    from app.core import idempotency
    _, entity_uuid = setup
    path = f"/api/v1/entities/{entity_uuid}/notes"
    body = b'{"note_text": "Slow"}'
    with app.app_context():
        idempotency.begin(tenant.account_id, "in-flight", "POST", path,
                          idempotency.request_fingerprint("POST", path, body), 24)
    r = tenant.api.post(f"/entities/{entity_uuid}/notes", data=body,
                        headers={"Idempotency-Key": "in-flight", "Content-Type": "application/json"})
    assert r.status_code == 409 and "already being processed" in r.get_json()["message"]
    assert tenant.api.get("/notes").get_json()["meta"]["total"] == 0


# ------------------------------------------------------------------ show, update, delete

def test_update_note_by_any_key_of_the_account(app, tenant, setup):
    _, entity_uuid = setup
    note = add_note(tenant, entity_uuid, "First draft")
    other_key, other_key_uuid = second_key(app, tenant)
    r = other_key.patch(f"/notes/{note['uuid']}", json={"note_text": "Second draft"})
    assert r.status_code == 200
    updated = r.get_json()["data"]
    assert updated["note_text"] == "Second draft"
    assert updated["created_by"]["uuid"] == tenant.api_key_uuid  # authorship does not move
    assert updated["updated_at"] > note["updated_at"] and updated["created_at"] == note["created_at"]
    # the deleting key may be another one too
    r = other_key.delete(f"/notes/{note['uuid']}")
    assert r.status_code == 200
    actions = audit_rows(app, note["uuid"])
    assert [a[0] for a in actions] == ["note.created", "note.updated", "note.deleted"]
    assert actions[1][2] == other_key_uuid and actions[1][4]["note_text"] == ["First draft", "Second draft"]
    assert actions[2][3] == r.get_json()["api_reference"]


def test_update_validation(tenant, setup):
    _, entity_uuid = setup
    note = add_note(tenant, entity_uuid)
    for body in ({}, {"note_text": ""}, {"note_text": None}, {"note_text": "x" * 5001},
                 {"note_text": "ok", "entity_uuid": entity_uuid}):
        r = tenant.api.patch(f"/notes/{note['uuid']}", json=body)
        assert r.status_code == 400, body
        assert r.get_json()["errors"]
    assert tenant.api.get(f"/notes/{note['uuid']}").get_json()["data"]["note_text"] == "A note"


def test_unchanged_text_is_not_audited(app, tenant, setup):
    _, entity_uuid = setup
    note = add_note(tenant, entity_uuid, "Same")
    r = tenant.api.patch(f"/notes/{note['uuid']}", json={"note_text": "Same"})
    assert r.status_code == 200 and r.get_json()["data"]["updated_at"] == note["updated_at"]
    assert [a[0] for a in audit_rows(app, note["uuid"])] == ["note.created"]


def test_delete_note_returned_once_then_404(app, tenant, setup):
    _, entity_uuid = setup
    note = add_note(tenant, entity_uuid)
    r = tenant.api.delete(f"/notes/{note['uuid']}")
    assert r.status_code == 200
    deleted = r.get_json()["data"]
    assert set(deleted) == NOTE_FIELDS | {"deleted_at"} and deleted["deleted_at"].endswith("Z")
    assert deleted["uuid"] == note["uuid"] and deleted["note_text"] == note["note_text"]
    assert tenant.api.get(f"/notes/{note['uuid']}").status_code == 404
    assert tenant.api.patch(f"/notes/{note['uuid']}", json={"note_text": "x"}).status_code == 404
    assert tenant.api.delete(f"/notes/{note['uuid']}").status_code == 404
    assert tenant.api.get("/notes").get_json()["meta"]["total"] == 0
    assert tenant.api.get(f"/notes?filter[entity_uuid]={entity_uuid}").get_json()["data"] == []


def test_unknown_note_is_404(tenant):
    for method in ("get", "patch", "delete"):
        kw = {"json": {"note_text": "x"}} if method == "patch" else {}
        r = getattr(tenant.api, method)(f"/notes/{uuid.uuid4()}", **kw)
        assert r.status_code == 404 and r.get_json()["message"] == "Note not found."


def test_notes_of_a_deleted_entity_are_gone(app, tenant, setup):
    _, entity_uuid = setup
    note = add_note(tenant, entity_uuid)
    set_row(app, "app.entities.models.Entity", entity_uuid, deleted_at=datetime.now(timezone.utc))
    assert tenant.api.get(f"/notes/{note['uuid']}").status_code == 404
    assert tenant.api.get("/notes").get_json()["data"] == []


def test_notes_of_a_deleted_program_are_gone(tenant, setup):
    program_uuid, entity_uuid = setup
    note = add_note(tenant, entity_uuid)
    assert tenant.api.delete(f"/programs/{program_uuid}").status_code == 200
    assert tenant.api.get(f"/notes/{note['uuid']}").status_code == 404
    assert tenant.api.get("/notes").get_json()["meta"]["total"] == 0


def test_portal_user_note_is_read_only_through_the_api(app, factory, tenant, setup):
    _, entity_uuid = setup
    email = factory.user(tenant, role="analyst")
    note_uuid = portal(app, "create_note", user_actor(app, email), uuid.UUID(entity_uuid), {"note_text": "Mine"})
    shown = tenant.api.get(f"/notes/{note_uuid}").get_json()["data"]
    assert shown["created_by"]["type"] == "user" and shown["created_by"]["username"] == email
    assert set(shown["created_by"]) == {"type", "uuid", "username"}
    r = tenant.api.patch(f"/notes/{note_uuid}", json={"note_text": "Hijack"})
    assert r.status_code == 403 and "portal user" in r.get_json()["message"]
    assert tenant.api.delete(f"/notes/{note_uuid}").status_code == 403
    # forbidden wins over validation: the caller learns it may not edit at all
    assert tenant.api.patch(f"/notes/{note_uuid}", json={}).status_code == 403
    assert tenant.api.get(f"/notes/{note_uuid}").get_json()["data"]["note_text"] == "Mine"


def test_immutable_note_is_403_everywhere(app, factory, tenant, setup):
    _, entity_uuid = setup
    api_note = add_note(tenant, entity_uuid, "Status changed to investigating")
    set_note(app, api_note["uuid"], is_immutable=True)
    assert tenant.api.get(f"/notes/{api_note['uuid']}").get_json()["data"]["is_immutable"] is True
    r = tenant.api.patch(f"/notes/{api_note['uuid']}", json={"note_text": "x"})
    assert r.status_code == 403 and "immutable" in r.get_json()["message"]
    assert tenant.api.delete(f"/notes/{api_note['uuid']}").status_code == 403
    # in the portal too, even for an admin and even for the author
    from app.core.errors import Forbidden
    admin = user_actor(app, tenant.email)
    user_note = portal(app, "create_note", admin, uuid.UUID(entity_uuid), {"note_text": "audit"})
    set_note(app, user_note, is_immutable=True)
    for fn, args in (("update_note", ({"note_text": "x"},)), ("delete_note", ())):
        with pytest.raises(Forbidden):
            portal(app, fn, admin, uuid.UUID(user_note), *args)


def test_legacy_note_without_author_is_read_only(app, tenant, setup):
    _, entity_uuid = setup
    note = add_note(tenant, entity_uuid)
    set_note(app, note["uuid"], created_by_type=None, created_by_api_key_id=None)
    assert tenant.api.get(f"/notes/{note['uuid']}").get_json()["data"]["created_by"] is None
    assert tenant.api.patch(f"/notes/{note['uuid']}", json={"note_text": "x"}).status_code == 403
    assert tenant.api.delete(f"/notes/{note['uuid']}").status_code == 403


def test_another_accounts_note_is_404(app, tenant, other_tenant, setup):
    _, entity_uuid = setup
    note = add_note(tenant, entity_uuid, "Private")
    assert other_tenant.api.get(f"/notes/{note['uuid']}").status_code == 404
    assert other_tenant.api.patch(f"/notes/{note['uuid']}", json={"note_text": "x"}).status_code == 404
    assert other_tenant.api.delete(f"/notes/{note['uuid']}").status_code == 404
    assert other_tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "x"}).status_code == 404
    assert other_tenant.api.get("/notes").get_json()["data"] == []
    assert other_tenant.api.get(f"/notes?filter[entity_uuid]={entity_uuid}").get_json()["data"] == []
    assert tenant.api.get(f"/notes/{note['uuid']}").get_json()["data"]["note_text"] == "Private"
    assert tenant.api.get("/notes").get_json()["meta"]["total"] == 1


def test_writes_are_audited_with_the_api_reference(app, tenant, setup):
    _, entity_uuid = setup
    r = tenant.api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "Audited"})
    note = r.get_json()["data"]
    [(action, actor_type, actor_uuid, ref, changes)] = audit_rows(app, note["uuid"])
    assert (action, actor_type, actor_uuid) == ("note.created", "api_key", tenant.api_key_uuid)
    assert ref == r.get_json()["api_reference"]
    assert changes["note_text"] == "Audited" and changes["entity_uuid"] == entity_uuid


# ------------------------------------------------------------------ list: filters, sort, pages

@pytest.fixture
def corpus(app, factory, tenant):
    """Two programs, three entities, notes by two keys and a portal user at known times."""
    p1, p2 = tenant.program(), tenant.program()
    e1 = make_entity(app, tenant, p1["uuid"])
    e2 = make_entity(app, tenant, p1["uuid"])
    e3 = make_entity(app, tenant, p2["uuid"])
    key2, key2_uuid = second_key(app, tenant)
    email = factory.user(tenant, role="analyst")
    analyst = user_actor(app, email)
    n = {
        "a": add_note(tenant, e1, "a")["uuid"],
        "b": add_note(tenant, e1, "b")["uuid"],
        "c": key2.post(f"/entities/{e2}/notes", json={"note_text": "c"}).get_json()["data"]["uuid"],
        "d": portal(app, "create_note", analyst, uuid.UUID(e2), {"note_text": "d"}),
        "e": portal(app, "create_note", analyst, uuid.UUID(e3), {"note_text": "e"}),
    }
    base = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)
    # created_at: a < b < c < d < e, one day apart; updated_at in the reverse order
    for i, name in enumerate("abcde"):
        set_note(app, n[name], created_at=base + timedelta(days=i), updated_at=base + timedelta(days=10 - i))
    event_uuid = str(uuid.uuid4())
    set_note(app, n["c"], event_uuid=uuid.UUID(event_uuid))
    with app.app_context():
        from app.accounts.models import User
        from app.extensions import db
        user_uuid = str(db.session.scalar(select(User.uuid).where(User.email == email)))
    return {"notes": n, "p1": p1["uuid"], "p2": p2["uuid"], "e1": e1, "e2": e2, "e3": e3, "key2": key2_uuid,
            "user": user_uuid, "event": event_uuid, "base": base}


def texts(tenant, query=""):
    r = tenant.api.get(f"/notes{query}")
    assert r.status_code == 200, r.get_json()
    return [n["note_text"] for n in r.get_json()["data"]]


def test_list_default_sort_is_newest_first(tenant, corpus):
    assert texts(tenant) == ["e", "d", "c", "b", "a"]
    body = tenant.api.get("/notes").get_json()
    assert body["meta"] == {"current_page": 1, "per_page": 30, "total": 5, "last_page": 1}
    assert all(set(n) == NOTE_FIELDS for n in body["data"])


@pytest.mark.parametrize("sort,expected", [
    ("created_at", "abcde"), ("-created_at", "edcba"), ("updated_at", "edcba"), ("-updated_at", "abcde")])
def test_list_sorts(tenant, corpus, sort, expected):
    assert texts(tenant, f"?sort={sort}") == list(expected)


def test_filter_by_entity_program_event(tenant, corpus):
    assert texts(tenant, f"?filter[entity_uuid]={corpus['e1']}") == ["b", "a"]
    assert texts(tenant, f"?filter[entity_uuid]={corpus['e2']}") == ["d", "c"]
    assert texts(tenant, f"?filter[program_uuid]={corpus['p1']}") == ["d", "c", "b", "a"]
    assert texts(tenant, f"?filter[program_uuid]={corpus['p2']}") == ["e"]
    assert texts(tenant, f"?filter[event_uuid]={corpus['event']}") == ["c"]
    assert texts(tenant, f"?filter[program_uuid]={corpus['p1']}&filter[entity_uuid]={corpus['e3']}") == []


def test_filter_by_author(tenant, corpus):
    assert texts(tenant, "?filter[created_by]=user") == ["e", "d"]
    assert texts(tenant, "?filter[created_by]=api_key") == ["c", "b", "a"]
    assert texts(tenant, f"?filter[created_by_user_uuid]={corpus['user']}") == ["e", "d"]
    assert texts(tenant, f"?filter[created_by_api_key_uuid]={tenant.api_key_uuid}") == ["b", "a"]
    assert texts(tenant, f"?filter[created_by_api_key_uuid]={corpus['key2']}") == ["c"]
    assert texts(tenant, f"?filter[created_by]=user&filter[created_by_api_key_uuid]={corpus['key2']}") == []


def test_filter_by_created_at_bounds_are_inclusive(tenant, corpus):
    base = corpus["base"]
    b_at = (base + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    d_at = (base + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert texts(tenant, f"?filter[created_at_from]={b_at}") == ["e", "d", "c", "b"]
    assert texts(tenant, f"?filter[created_at_to]={d_at}") == ["d", "c", "b", "a"]
    assert texts(tenant, f"?filter[created_at_from]={b_at}&filter[created_at_to]={d_at}") == ["d", "c", "b"]
    assert texts(tenant, f"?filter[created_at_from]={b_at}&filter[created_at_to]={b_at}") == ["b"]
    # one microsecond past a bound excludes the note on it
    just_after_b = (base + timedelta(days=1, microseconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert texts(tenant, f"?filter[created_at_from]={just_after_b}") == ["e", "d", "c"]
    # offsets are honoured (+ must be URL-encoded; a raw + decodes to a space, which is accepted too)
    assert texts(tenant, "?filter[created_at_to]=2026-03-02T14:00:00%2B02:00") == ["b", "a"]
    assert texts(tenant, "?filter[created_at_to]=2026-03-02T14:00:00+02:00") == ["b", "a"]
    # a bare date as the upper bound covers that whole day
    assert texts(tenant, "?filter[created_at_to]=2026-03-02") == ["b", "a"]
    assert texts(tenant, "?filter[created_at_from]=2026-03-02&filter[created_at_to]=2026-03-02") == ["b"]


def test_list_serves_the_exact_created_at_back_as_a_filter(tenant, corpus):
    newest = tenant.api.get("/notes?per_page=1").get_json()["data"][0]
    assert texts(tenant, f"?filter[created_at_from]={newest['created_at']}") == [newest["note_text"]]


def test_unknown_or_foreign_filter_uuids_give_an_empty_page(tenant, other_tenant, corpus):
    foreign_program = other_tenant.program()
    for name in ("entity_uuid", "event_uuid", "program_uuid", "created_by_user_uuid", "created_by_api_key_uuid"):
        r = tenant.api.get(f"/notes?filter[{name}]={uuid.uuid4()}")
        assert r.status_code == 200 and r.get_json()["data"] == [] and r.get_json()["meta"]["total"] == 0, name
    assert texts(tenant, f"?filter[program_uuid]={foreign_program['uuid']}") == []
    assert texts(tenant, f"?filter[created_by_api_key_uuid]={other_tenant.api_key_uuid}") == []
    # the other account's key does see the first account's rows through these uuids
    assert other_tenant.api.get(f"/notes?filter[entity_uuid]={corpus['e1']}").get_json()["data"] == []
    assert other_tenant.api.get(f"/notes?filter[created_by_user_uuid]={corpus['user']}").get_json()["data"] == []
    assert other_tenant.api.get(
        f"/notes?filter[created_by_api_key_uuid]={tenant.api_key_uuid}").get_json()["data"] == []


@pytest.mark.parametrize("query,field", [
    ("filter[entity_uuid]=nope", "filter[entity_uuid]"), ("filter[event_uuid]=1", "filter[event_uuid]"),
    ("filter[program_uuid]=", "filter[program_uuid]"), ("filter[created_by]=robot", "filter[created_by]"),
    ("filter[created_by_user_uuid]=x", "filter[created_by_user_uuid]"),
    ("filter[created_by_api_key_uuid]=x", "filter[created_by_api_key_uuid]"),
    ("filter[created_at_from]=yesterday", "filter[created_at_from]"),
    ("filter[created_at_to]=2026-13-01", "filter[created_at_to]"),
    ("filter[created_at_from]=2026-03-05&filter[created_at_to]=2026-03-01", "filter[created_at_from]"),
    ("filter[note_text]=a", "filter[note_text]"), ("sort=note_text", "sort"), ("sort=-entity_name", "sort"),
    ("per_page=501", "per_page"), ("per_page=0", "per_page"), ("page=0", "page"), ("archived=maybe", "archived"),
    ("colour=red", "colour")])
def test_bad_list_parameters_are_400(tenant, query, field):
    r = tenant.api.get(f"/notes?{query}")
    assert r.status_code == 400
    assert field in r.get_json()["errors"]


def test_pagination(tenant, corpus):
    r = tenant.api.get("/notes?per_page=2&sort=created_at").get_json()
    assert [n["note_text"] for n in r["data"]] == ["a", "b"]
    assert r["meta"] == {"current_page": 1, "per_page": 2, "total": 5, "last_page": 3}
    assert texts(tenant, "?per_page=2&page=2&sort=created_at") == ["c", "d"]
    assert texts(tenant, "?per_page=2&page=3&sort=created_at") == ["e"]
    r = tenant.api.get("/notes?per_page=2&page=4").get_json()
    assert r["data"] == [] and r["meta"]["total"] == 5 and r["meta"]["current_page"] == 4


def test_archived_filter(app, tenant, corpus):
    set_note(app, corpus["notes"]["b"], archived_at=corpus["base"])
    set_note(app, corpus["notes"]["e"], archived_at=corpus["base"])
    assert texts(tenant) == ["e", "d", "c", "b", "a"]
    for value in ("true", "1", "'true'"):
        assert texts(tenant, f"?archived={value}") == ["e", "b"]
    for value in ("false", "0", "'false'"):
        assert texts(tenant, f"?archived={value}") == ["d", "c", "a"]
    assert texts(tenant, f"?archived=true&filter[entity_uuid]={corpus['e1']}") == ["b"]


# ------------------------------------------------------------------ the portal's rules (services)

def test_portal_author_and_admin_rules(app, factory, tenant, setup):
    from app.core.errors import Forbidden
    from app.extensions import db
    from app.notes import queries, services
    _, entity_uuid = setup
    ent = uuid.UUID(entity_uuid)
    alice = user_actor(app, factory.user(tenant, role="analyst"))
    bob = user_actor(app, factory.user(tenant, role="analyst"))
    viewer = user_actor(app, factory.user(tenant, role="viewer"))
    admin = user_actor(app, tenant.email)
    note = uuid.UUID(portal(app, "create_note", alice, ent, {"note_text": "Alice's"}))
    api_note = uuid.UUID(add_note(tenant, entity_uuid, "From the API")["uuid"])

    with app.app_context():
        n = queries.get_note(alice, note)
        assert services.can_edit(alice, n) and services.can_edit(admin, n)
        assert not services.can_edit(bob, n) and not services.can_edit(viewer, n)
        a = queries.get_note(alice, api_note)
        assert not any(services.can_edit(x, a) for x in (alice, bob, admin))
        db.session.rollback()

    assert portal(app, "update_note", alice, note, {"note_text": "Alice's, edited"}) == str(note)
    with pytest.raises(Forbidden):
        portal(app, "update_note", bob, note, {"note_text": "Bob was here"})
    with pytest.raises(Forbidden):
        portal(app, "delete_note", viewer, note)
    with pytest.raises(Forbidden):
        portal(app, "create_note", viewer, ent, {"note_text": "viewers read only"})
    with pytest.raises(Forbidden, match="through the API"):
        portal(app, "update_note", admin, api_note, {"note_text": "not in the portal"})
    with pytest.raises(Forbidden):
        portal(app, "delete_note", alice, api_note)
    portal(app, "update_note", admin, note, {"note_text": "Edited by an admin"})
    shown = tenant.api.get(f"/notes/{note}").get_json()["data"]
    assert shown["note_text"] == "Edited by an admin" and shown["created_by"]["uuid"] == str(alice.uuid)
    portal(app, "delete_note", admin, note)
    assert tenant.api.get(f"/notes/{note}").status_code == 404
    assert tenant.api.get(f"/notes/{api_note}").get_json()["data"]["note_text"] == "From the API"


def test_archive_and_unarchive_are_portal_only(app, factory, tenant, setup):
    from app.accounts.models import ApiKey
    from app.accounts.services import api_key_actor
    from app.core.errors import Conflict, Forbidden
    from app.extensions import db
    _, entity_uuid = setup
    note = uuid.UUID(add_note(tenant, entity_uuid)["uuid"])
    analyst = user_actor(app, factory.user(tenant, role="analyst"))
    with app.app_context():
        key_actor = api_key_actor(db.session.scalar(select(ApiKey).where(ApiKey.uuid == uuid.UUID(tenant.api_key_uuid))))
    with pytest.raises(Forbidden):
        portal(app, "archive_note", key_actor, note)
    portal(app, "archive_note", analyst, note)
    first = tenant.api.get(f"/notes/{note}").get_json()["data"]["archived_at"]
    assert first is not None
    portal(app, "archive_note", analyst, note)  # repeating is a no-op
    assert tenant.api.get(f"/notes/{note}").get_json()["data"]["archived_at"] == first
    assert [a[0] for a in audit_rows(app, str(note))] == ["note.created", "note.archived"]
    # an archived entity keeps its notes archived
    set_row(app, "app.entities.models.Entity", entity_uuid, archived_at=datetime.now(timezone.utc))
    with pytest.raises(Conflict):
        portal(app, "unarchive_note", analyst, note)
    set_row(app, "app.entities.models.Entity", entity_uuid, archived_at=None)
    portal(app, "unarchive_note", analyst, note)
    assert tenant.api.get(f"/notes/{note}").get_json()["data"]["archived_at"] is None
    assert tenant.api.patch(f"/notes/{note}", json={"note_text": "editable again"}).status_code == 200


def test_restore_within_the_window(app, factory, tenant, setup):
    from app.accounts.models import ApiKey
    from app.accounts.services import api_key_actor
    from app.core.errors import Forbidden, NotFound
    from app.extensions import db
    from app.notes import queries
    _, entity_uuid = setup
    ent = uuid.UUID(entity_uuid)
    alice = user_actor(app, factory.user(tenant, role="analyst"))
    bob = user_actor(app, factory.user(tenant, role="analyst"))
    admin = user_actor(app, tenant.email)
    mine = uuid.UUID(portal(app, "create_note", alice, ent, {"note_text": "Alice's"}))
    api_note = add_note(tenant, entity_uuid, "API note")["uuid"]
    portal(app, "delete_note", alice, mine)
    assert tenant.api.delete(f"/notes/{api_note}").status_code == 200

    with app.app_context():
        assert [str(n.uuid) for n in queries.list_deleted_notes(alice)] == [str(mine)]
        assert [n.note_text for n in queries.list_deleted_notes(admin)] == ["API note", "Alice's"]
        assert queries.list_deleted_notes(bob) == []
        key_actor = api_key_actor(db.session.scalar(select(ApiKey).where(ApiKey.uuid == uuid.UUID(tenant.api_key_uuid))))
        db.session.rollback()
    with pytest.raises(Forbidden):
        portal(app, "restore_note", bob, mine)
    with pytest.raises(Forbidden):
        portal(app, "restore_note", key_actor, mine)
    with pytest.raises(NotFound):  # a live note cannot be "restored"
        portal(app, "restore_note", admin, uuid.UUID(add_note(tenant, entity_uuid)["uuid"]))
    portal(app, "restore_note", alice, mine)
    assert tenant.api.get(f"/notes/{mine}").get_json()["data"]["note_text"] == "Alice's"
    # the API note, deleted 31 days ago, is past the window even for an admin
    set_note(app, api_note, deleted_at=datetime.now(timezone.utc) - timedelta(days=31))
    with app.app_context():
        assert queries.list_deleted_notes(admin) == []
    with pytest.raises(NotFound):
        portal(app, "restore_note", admin, uuid.UUID(api_note))
    set_note(app, api_note, deleted_at=datetime.now(timezone.utc) - timedelta(days=29))
    portal(app, "restore_note", admin, uuid.UUID(api_note))
    assert tenant.api.get(f"/notes/{api_note}").status_code == 200
    assert [a[0] for a in audit_rows(app, api_note)] == ["note.created", "note.deleted", "note.restored"]


def test_notes_for_entity_oldest_first_and_scoped(app, tenant, other_tenant, setup):
    from app.core.errors import NotFound
    from app.notes import queries
    _, entity_uuid = setup
    first = add_note(tenant, entity_uuid, "first")
    add_note(tenant, entity_uuid, "second")
    gone = add_note(tenant, entity_uuid, "deleted")
    tenant.api.delete(f"/notes/{gone['uuid']}")
    set_note(app, first["uuid"], archived_at=datetime.now(timezone.utc))
    from app.accounts.services import api_key_actor
    from app.accounts.models import ApiKey
    from app.extensions import db
    with app.app_context():
        mine = api_key_actor(db.session.scalar(select(ApiKey).where(ApiKey.uuid == uuid.UUID(tenant.api_key_uuid))))
        theirs = api_key_actor(db.session.scalar(
            select(ApiKey).where(ApiKey.uuid == uuid.UUID(other_tenant.api_key_uuid))))
        assert [n.note_text for n in queries.notes_for_entity(mine, uuid.UUID(entity_uuid))] == ["first", "second"]
        with pytest.raises(NotFound):
            queries.notes_for_entity(theirs, uuid.UUID(entity_uuid))


def test_event_note_created_by_a_service_is_manageable_by_any_key(app, tenant, setup):
    """The event update creates notes through create_note(..., event=...); they behave like API notes."""
    from types import SimpleNamespace
    from app.accounts.models import ApiKey
    from app.accounts.services import api_key_actor
    from app.extensions import db
    _, entity_uuid = setup
    event = SimpleNamespace(id=None, uuid=uuid.uuid4())
    with app.app_context():
        key = api_key_actor(db.session.scalar(select(ApiKey).where(ApiKey.uuid == uuid.UUID(tenant.api_key_uuid))))
    note = portal(app, "create_note", key, uuid.UUID(entity_uuid), {"note_text": "Looked into it"}, )
    with app.app_context():
        from app.core.transactions import commit
        from app.notes import services
        ev_note = services.create_note(key, uuid.UUID(entity_uuid), {"note_text": "On the event"}, event=event)
        ev_uuid = str(ev_note.uuid)
        commit()
    assert texts(tenant, f"?filter[event_uuid]={event.uuid}") == ["On the event"]
    shown = tenant.api.get(f"/notes/{ev_uuid}").get_json()["data"]
    assert shown["event_uuid"] == str(event.uuid) and shown["created_by"]["type"] == "api_key"
    other, _ = second_key(app, tenant)
    assert other.patch(f"/notes/{ev_uuid}", json={"note_text": "Edited"}).status_code == 200
    assert tenant.api.get(f"/notes/{note}").status_code == 200
