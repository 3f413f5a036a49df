"""Entities through the JSON API, and the entity services and queries the portal shares."""
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import select

ENTITY_FIELDS = {
    "uuid", "entity_number", "reference_number", "entity_type", "entity_name", "first_name", "middle_name",
    "last_name", "birth_date", "business_name", "business_number", "business_number_type", "vessel_name",
    "property_name", "address_line1", "address_line2", "address_suburb", "address_state", "address_postcode",
    "address_country", "phone1", "phone2", "phone3", "phone4", "email1", "email2", "email3", "email4", "flags",
    "risk_level", "archived_at", "deleted_at", "program_uuid", "created_at", "updated_at"}


# ---------------------------------------------------------------- helpers

def audit_rows(app, target_uuid, action=None):
    from app.accounts.models import AuditLog
    from app.extensions import db
    with app.app_context():
        stmt = select(AuditLog).where(AuditLog.target_uuid == uuid.UUID(target_uuid)).order_by(AuditLog.id)
        if action:
            stmt = stmt.where(AuditLog.action == action)
        return [(row.action, row.changes, row.api_reference) for row in db.session.scalars(stmt)]


def add_note(app, entity_uuid, **fields):
    from app.core.transactions import commit
    from app.entities.models import Entity
    from app.extensions import db
    from app.notes.models import Note
    with app.app_context():
        entity = db.session.scalar(select(Entity).where(Entity.uuid == uuid.UUID(entity_uuid)))
        note = Note(account_id=entity.account_id, entity_id=entity.id, program_id=entity.program_id,
                    note_text="A note", created_by_type=None, is_immutable=False, **fields)
        db.session.add(note)
        commit()
        return note.id


def note_state(app, note_id):
    from app.extensions import db
    from app.notes.models import Note
    with app.app_context():
        note = db.session.get(Note, note_id)
        return note.archived_at, note.deleted_at


def actor_for(tenant, role="analyst"):
    from app.core.actor import Actor
    return Actor(account_id=tenant.account_id, kind="user", id=None, uuid=uuid.uuid4(), name="analyst@example.com",
                 role=role, via="portal")


@pytest.fixture
def program(tenant):
    return tenant.program()


# ---------------------------------------------------------------- create

def test_create_returns_the_full_entity_resource(tenant, program):
    r = tenant.api.post(f"/programs/{program['uuid']}/entities", json={
        "entity_type": "individual", "first_name": "Jane", "middle_name": "Mary", "last_name": "Citizen",
        "birth_date": "1980-04-01", "reference_number": "CUST-1", "address_line1": "1 George St",
        "address_suburb": "Sydney", "address_state": "nsw", "address_postcode": "2000", "address_country": "au",
        "phone1": "0412 345 678", "email1": "Jane@Example.com", "flags": ["pep", "fraud", "pep"]})
    assert r.status_code == 201, r.get_json()
    body = r.get_json()
    e = body["data"]
    assert set(e) == ENTITY_FIELDS  # every field, archived_at and deleted_at always (spec, Entity)
    assert e["deleted_at"] is None
    assert body["api_reference"] == r.headers["X-Request-Id"]
    assert e["entity_name"] == "Jane Mary Citizen" and e["birth_date"] == "1980-04-01"
    assert e["address_country"] == "AU" and e["address_state"] == "NSW"
    assert e["phone1"] == "+61412345678" and e["email1"] == "Jane@example.com"
    assert e["flags"] == ["pep", "fraud"] and e["archived_at"] is None
    assert e["program_uuid"] == program["uuid"] and e["risk_level"] == "low"
    assert e["created_at"].endswith("Z") and e["updated_at"].endswith("Z")
    assert e["entity_number"] and not e["entity_number"].isdigit()
    assert tenant.api.get(f"/entities/{e['uuid']}").get_json()["data"] == e


def test_create_audited_with_values(app, tenant, program):
    r = tenant.api.post(f"/programs/{program['uuid']}/entities",
                        json={"entity_type": "vessel", "vessel_name": "Sea Spirit"})
    e = r.get_json()["data"]
    [(action, changes, reference)] = audit_rows(app, e["uuid"])
    assert action == "entity.created" and changes["vessel_name"] == "Sea Spirit"
    assert reference == r.get_json()["api_reference"]


def test_risk_level_defaults_to_program_default(tenant):
    medium = tenant.program(default_risk_level="medium")
    none = tenant.program(default_risk_level=None)
    assert tenant.entity(medium["uuid"])["risk_level"] == "medium"
    assert tenant.entity(none["uuid"])["risk_level"] is None
    assert tenant.entity(none["uuid"], risk_level="high")["risk_level"] == "high"
    assert tenant.entity(medium["uuid"], risk_level=None)["risk_level"] is None  # explicit null: no risk


def test_create_validation_errors_are_field_keyed(tenant, program):
    r = tenant.api.post(f"/programs/{program['uuid']}/entities", json={
        "entity_type": "business", "first_name": "Jane", "business_number": "123", "email2": "bad",
        "address_country": "XX", "entity_name": "computed", "id": 3})
    assert r.status_code == 400
    errors = r.get_json()["errors"]
    assert {"first_name", "business_name", "business_number_type", "email2", "address_country", "entity_name",
            "id"} <= set(errors)
    assert tenant.api.get(f"/programs/{program['uuid']}/entities").get_json()["meta"]["total"] == 0


def test_create_rejects_bodies_that_are_not_objects(tenant, program):
    path = f"/programs/{program['uuid']}/entities"
    assert tenant.api.post(path, json=["individual"]).status_code == 400
    r = tenant.api.post(path, data="{oops", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "body" in r.get_json()["errors"]
    assert tenant.api.post(path).status_code == 415  # no JSON body at all
    assert tenant.api.post(path, json={}).get_json()["errors"]["entity_type"] == ["This field is required."]


def test_reference_number_unique_among_live_entities(tenant, program):
    first = tenant.entity(program["uuid"], reference_number="R-1")
    r = tenant.api.post(f"/programs/{program['uuid']}/entities",
                        json={"entity_type": "vessel", "vessel_name": "V", "reference_number": "R-1"})
    assert r.status_code == 409 and "R-1" in r.get_json()["message"]
    assert "errors" not in r.get_json()
    # another program may use it, and so may a new entity once the first is deleted
    assert tenant.entity(tenant.program()["uuid"], reference_number="R-1")["reference_number"] == "R-1"
    tenant.api.delete(f"/entities/{first['uuid']}")
    assert tenant.entity(program["uuid"], reference_number="R-1")["reference_number"] == "R-1"


def test_create_in_archived_program_is_409_and_paused_is_fine(tenant, program):
    tenant.api.patch(f"/programs/{program['uuid']}", json={"status": "paused"})
    tenant.entity(program["uuid"])
    tenant.api.patch(f"/programs/{program['uuid']}", json={"status": "archived"})
    r = tenant.api.post(f"/programs/{program['uuid']}/entities",
                        json={"entity_type": "vessel", "vessel_name": "V"})
    assert r.status_code == 409 and "archived" in r.get_json()["message"]


def test_create_idempotency_replay_and_key_reuse(tenant, program):
    path = f"/programs/{program['uuid']}/entities"
    body = {"entity_type": "property", "property_name": "1 Main St"}
    r1 = tenant.api.post(path, json=body, headers={"Idempotency-Key": "ent-1"})
    r2 = tenant.api.post(path, json=body, headers={"Idempotency-Key": "ent-1"})
    assert r1.status_code == r2.status_code == 201 and r2.headers["Idempotent-Replay"] == "true"
    assert r2.get_json() == r1.get_json()
    r3 = tenant.api.post(path, json={**body, "property_name": "2 Main St"}, headers={"Idempotency-Key": "ent-1"})
    assert r3.status_code == 422
    assert tenant.api.get(path).get_json()["meta"]["total"] == 1


# ---------------------------------------------------------------- authentication and tenancy

def test_every_endpoint_needs_an_api_key(client, tenant, program):
    e = tenant.entity(program["uuid"])
    calls = [("POST", f"/programs/{program['uuid']}/entities"), ("GET", f"/programs/{program['uuid']}/entities"),
             ("POST", f"/programs/{program['uuid']}/entities/bulk"), ("GET", f"/entities/{e['uuid']}"),
             ("PATCH", f"/entities/{e['uuid']}"), ("DELETE", f"/entities/{e['uuid']}"),
             ("POST", f"/entities/{e['uuid']}/archive")]
    for method, path in calls:
        r = client.open(f"/api/v1{path}", method=method, json={})
        assert r.status_code == 401, (method, path)
    assert tenant.api.get(f"/entities/{e['uuid']}").get_json()["data"]["archived_at"] is None


def test_another_accounts_program_and_entity_are_404_everywhere(tenant, other_tenant, program):
    e = tenant.entity(program["uuid"], reference_number="MINE")
    api = other_tenant.api
    pu, eu = program["uuid"], e["uuid"]
    assert api.post(f"/programs/{pu}/entities", json={"entity_type": "vessel", "vessel_name": "V"}).status_code == 404
    assert api.get(f"/programs/{pu}/entities").status_code == 404
    assert api.post(f"/programs/{pu}/entities/bulk", data="entity_type,vessel_name\nvessel,V\n",
                    headers={"Content-Type": "text/csv"}).status_code == 404
    assert api.get(f"/entities/{eu}").status_code == 404
    assert api.patch(f"/entities/{eu}", json={"first_name": "Mallory"}).status_code == 404
    assert api.delete(f"/entities/{eu}").status_code == 404
    assert api.post(f"/entities/{eu}/archive").status_code == 404
    after = tenant.api.get(f"/entities/{eu}").get_json()["data"]
    assert after["first_name"] == "Jane" and after["archived_at"] is None


def test_unknown_uuids_are_404(tenant):
    missing = uuid.uuid4()
    assert tenant.api.get(f"/programs/{missing}/entities").status_code == 404
    assert tenant.api.post(f"/programs/{missing}/entities", json={}).status_code == 404
    assert tenant.api.get(f"/entities/{missing}").status_code == 404
    assert tenant.api.patch(f"/entities/{missing}", json={}).status_code == 404
    assert tenant.api.delete(f"/entities/{missing}").status_code == 404
    assert tenant.api.post(f"/entities/{missing}/archive").status_code == 404
    assert tenant.api.get("/entities/not-a-uuid").status_code == 404


# ---------------------------------------------------------------- update

def test_patch_changes_only_supplied_fields(app, tenant, program):
    e = tenant.entity(program["uuid"], middle_name="Q", email1="a@example.com", address_country="NZ",
                      reference_number="R1", flags=["pep"])
    r = tenant.api.patch(f"/entities/{e['uuid']}", json={"last_name": "Smith", "email2": "b@example.com"})
    assert r.status_code == 200
    after = r.get_json()["data"]
    changed = {k for k in ENTITY_FIELDS if after[k] != e[k]}
    assert changed == {"last_name", "email2", "entity_name", "updated_at"}
    assert after["entity_name"] == "Jane Q Smith"
    [(action, changes, _)] = audit_rows(app, e["uuid"], "entity.updated")
    assert changes["last_name"] == [e["last_name"], "Smith"] and changes["email2"] == [None, "b@example.com"]
    assert "first_name" not in changes


MSG = "Give a first name or a last name (a person known by a single name needs only one)."


def test_individuals_known_by_one_name(tenant, program):
    for body in ({"first_name": "Madonna"}, {"last_name": "Suharto"}):
        r = tenant.api.post(f"/programs/{program['uuid']}/entities", json={"entity_type": "individual", **body})
        assert r.status_code == 201, r.get_json()
        assert r.get_json()["data"]["entity_name"] == next(iter(body.values()))
    r = tenant.api.post(f"/programs/{program['uuid']}/entities", json={"entity_type": "individual"})
    assert r.get_json()["errors"] == {"first_name": [MSG], "last_name": [MSG]}


def test_patch_can_clear_optional_fields_but_not_required_ones(tenant, program):
    e = tenant.entity(program["uuid"], middle_name="Q", flags=["pep", "fraud"])
    r = tenant.api.patch(f"/entities/{e['uuid']}", json={"middle_name": None, "flags": []})
    assert r.status_code == 200
    assert r.get_json()["data"]["middle_name"] is None and r.get_json()["data"]["flags"] == []
    r = tenant.api.patch(f"/entities/{e['uuid']}", json={"first_name": None})  # a mononym is allowed
    assert r.status_code == 200 and r.get_json()["data"]["entity_name"] == e["last_name"]
    r = tenant.api.patch(f"/entities/{e['uuid']}", json={"last_name": None})
    assert r.status_code == 400
    assert r.get_json()["errors"] == {"first_name": [MSG], "last_name": [MSG]}


def test_patch_empty_body_changes_nothing_and_is_not_audited(app, tenant, program):
    e = tenant.entity(program["uuid"])
    r = tenant.api.patch(f"/entities/{e['uuid']}", json={})
    assert r.status_code == 200 and r.get_json()["data"] == e
    assert [a for a, _, _ in audit_rows(app, e["uuid"])] == ["entity.created"]


def test_entity_type_is_immutable(tenant, program):
    e = tenant.entity(program["uuid"])
    r = tenant.api.patch(f"/entities/{e['uuid']}", json={"entity_type": "business", "business_name": "Acme"})
    assert r.status_code == 400 and "entity_type" in r.get_json()["errors"]
    r = tenant.api.patch(f"/entities/{e['uuid']}", json={"entity_type": "individual", "first_name": "Ann"})
    assert r.status_code == 200 and r.get_json()["data"]["first_name"] == "Ann"


def test_patch_validates_with_the_stored_entity(tenant, program):
    business = tenant.entity(program["uuid"], entity_type="business", business_name="Acme", first_name=None,
                             last_name=None, business_number_type="au_abn", business_number="51824753556")
    # a new number is checked against the stored type
    r = tenant.api.patch(f"/entities/{business['uuid']}", json={"business_number": "12345678901"})
    assert r.status_code == 400 and list(r.get_json()["errors"]) == ["business_number"]
    r = tenant.api.patch(f"/entities/{business['uuid']}", json={"business_number_type": "au_acn",
                                                                  "business_number": "004 085 616"})
    assert r.status_code == 200 and r.get_json()["data"]["business_number"] == "004085616"
    r = tenant.api.patch(f"/entities/{business['uuid']}", json={"first_name": "Jane", "colour": "red"})
    assert r.status_code == 400 and set(r.get_json()["errors"]) == {"first_name", "colour"}
    # a state is checked against the stored country
    person = tenant.entity(program["uuid"], address_country="AU")
    r = tenant.api.patch(f"/entities/{person['uuid']}", json={"address_state": "Texas"})
    assert r.status_code == 400 and "address_state" in r.get_json()["errors"]
    r = tenant.api.patch(f"/entities/{person['uuid']}", json={"address_state": "wa", "phone1": "(08) 9123 4567"})
    assert r.get_json()["data"]["address_state"] == "WA" and r.get_json()["data"]["phone1"] == "+61891234567"


def test_patch_reference_number_conflict_is_409(tenant, program):
    tenant.entity(program["uuid"], reference_number="TAKEN")
    e = tenant.entity(program["uuid"], reference_number="MINE")
    r = tenant.api.patch(f"/entities/{e['uuid']}", json={"reference_number": "TAKEN"})
    assert r.status_code == 409
    assert tenant.api.get(f"/entities/{e['uuid']}").get_json()["data"]["reference_number"] == "MINE"
    r = tenant.api.patch(f"/entities/{e['uuid']}", json={"reference_number": "MINE", "first_name": "Zed"})
    assert r.status_code == 200


def test_archived_entity_and_archived_program_are_read_only(tenant, program):
    e = tenant.entity(program["uuid"])
    tenant.api.post(f"/entities/{e['uuid']}/archive")
    r = tenant.api.patch(f"/entities/{e['uuid']}", json={"first_name": "New"})
    assert r.status_code == 409 and "archived" in r.get_json()["message"]
    live = tenant.entity(program["uuid"])
    tenant.api.patch(f"/programs/{program['uuid']}", json={"status": "archived"})
    assert tenant.api.patch(f"/entities/{live['uuid']}", json={"first_name": "New"}).status_code == 409
    assert tenant.api.post(f"/entities/{live['uuid']}/archive").status_code == 409
    assert tenant.api.delete(f"/entities/{live['uuid']}").status_code == 409
    assert tenant.api.get(f"/entities/{live['uuid']}").get_json()["data"]["first_name"] == "Jane"


# ---------------------------------------------------------------- delete

def test_delete_returns_entity_once_then_404_and_cascades_to_notes(app, tenant, program):
    e = tenant.entity(program["uuid"])
    keep = tenant.entity(program["uuid"])
    note = add_note(app, e["uuid"])
    other_note = add_note(app, keep["uuid"])
    r = tenant.api.delete(f"/entities/{e['uuid']}")
    assert r.status_code == 200
    data = r.get_json()["data"]
    assert data["uuid"] == e["uuid"] and data["deleted_at"].endswith("Z")
    assert set(data) == ENTITY_FIELDS
    assert tenant.api.get(f"/entities/{e['uuid']}").status_code == 404
    assert tenant.api.patch(f"/entities/{e['uuid']}", json={"first_name": "X"}).status_code == 404
    assert tenant.api.delete(f"/entities/{e['uuid']}").status_code == 404
    assert tenant.api.post(f"/entities/{e['uuid']}/archive").status_code == 404
    listed = [x["uuid"] for x in tenant.api.get(f"/programs/{program['uuid']}/entities").get_json()["data"]]
    assert listed == [keep["uuid"]]
    _, deleted_at = note_state(app, note)
    assert deleted_at is not None and deleted_at.isoformat().replace("+00:00", "Z") == data["deleted_at"]
    assert note_state(app, other_note) == (None, None)
    [(action, changes, _)] = audit_rows(app, e["uuid"], "entity.deleted")
    assert changes["cascaded"] == {"notes": 1}


# ---------------------------------------------------------------- archive

def test_archive_sets_archived_at_cascades_and_audits_once(app, tenant, program):
    e = tenant.entity(program["uuid"])
    note = add_note(app, e["uuid"])
    r = tenant.api.post(f"/entities/{e['uuid']}/archive")
    assert r.status_code == 200
    archived = r.get_json()["data"]
    assert archived["archived_at"].endswith("Z") and archived["deleted_at"] is None
    archived_note_at, _ = note_state(app, note)
    assert archived_note_at.isoformat().replace("+00:00", "Z") == archived["archived_at"]
    # a note written after archiving is not touched by a second call (no re-cascade)
    late_note = add_note(app, e["uuid"])
    again = tenant.api.post(f"/entities/{e['uuid']}/archive")
    assert again.status_code == 200 and again.get_json()["data"] == archived
    assert note_state(app, late_note) == (None, None)
    rows = audit_rows(app, e["uuid"], "entity.archived")
    assert len(rows) == 1 and rows[0][1]["cascaded"] == {"checks": 0, "events": 0, "id_checks": 0, "idpasses": 0,
                                                         "notes": 1}
    assert tenant.api.get(f"/entities/{e['uuid']}").get_json()["data"]["archived_at"] == archived["archived_at"]


def test_archived_entity_can_still_be_deleted(tenant, program):
    e = tenant.entity(program["uuid"])
    tenant.api.post(f"/entities/{e['uuid']}/archive")
    r = tenant.api.delete(f"/entities/{e['uuid']}")
    assert r.status_code == 200 and r.get_json()["data"]["archived_at"] is not None


def test_archive_idempotency_key(tenant, program):
    e = tenant.entity(program["uuid"])
    r1 = tenant.api.post(f"/entities/{e['uuid']}/archive", headers={"Idempotency-Key": "arch"})
    r2 = tenant.api.post(f"/entities/{e['uuid']}/archive", headers={"Idempotency-Key": "arch"})
    assert r2.headers.get("Idempotent-Replay") == "true" and r2.get_json() == r1.get_json()
    r3 = tenant.api.post(f"/entities/{e['uuid']}/archive", json={"x": 1}, headers={"Idempotency-Key": "arch"})
    assert r3.status_code == 422


# ---------------------------------------------------------------- list

@pytest.fixture
def population(tenant, program):
    """Five entities of several types, risks and flags, created in this order."""
    pu = program["uuid"]
    made = [
        tenant.entity(pu, first_name="Carol", last_name="Young", flags=["pep"], reference_number="A1"),
        tenant.entity(pu, entity_type="business", first_name=None, last_name=None, business_name="Acme Ltd",
                      risk_level="high", flags=["fraud", "pep"]),
        tenant.entity(pu, entity_type="vessel", first_name=None, last_name=None, vessel_name="Zephyr",
                      risk_level=None),
        tenant.entity(pu, first_name="Bob", last_name="Brown", risk_level="medium"),
        tenant.entity(pu, entity_type="property", first_name=None, last_name=None, property_name="Manor House",
                      risk_level=None, flags=["deceased"]),
    ]
    tenant.api.post(f"/entities/{made[3]['uuid']}/archive")
    return [m["uuid"] for m in made]


def listed(tenant, program, query=""):
    r = tenant.api.get(f"/programs/{program['uuid']}/entities{query}")
    assert r.status_code == 200, r.get_json()
    return [e["uuid"] for e in r.get_json()["data"]]


def test_list_default_sort_is_newest_first(tenant, program, population):
    assert listed(tenant, program) == population[::-1]
    assert listed(tenant, program, "?sort=created_at") == population
    assert listed(tenant, program, "?sort=-created_at") == population[::-1]


def test_list_sort_by_entity_name(tenant, program, population):
    by_name = [population[i] for i in (1, 3, 0, 4, 2)]  # Acme, Bob, Carol, Manor, Zephyr
    assert listed(tenant, program, "?sort=entity_name") == by_name
    assert listed(tenant, program, "?sort=-entity_name") == by_name[::-1]


def test_list_filters(tenant, program, population):
    p = population
    assert listed(tenant, program, "?filter[entity_type]=individual&sort=created_at") == [p[0], p[3]]
    assert listed(tenant, program, "?filter[risk_level]=high") == [p[1]]
    assert listed(tenant, program, "?filter[risk_level]=none&sort=created_at") == [p[2], p[4]]
    assert listed(tenant, program, "?filter[risk_level]=low") == [p[0]]
    assert listed(tenant, program, "?filter[flags]=pep&sort=created_at") == [p[0], p[1]]
    assert listed(tenant, program, "?filter[flags]=sanction") == []
    assert listed(tenant, program, "?filter[reference_number]=A1") == [p[0]]
    assert listed(tenant, program, "?filter[reference_number]=a1") == []
    assert listed(tenant, program, "?filter[entity_type]=individual&filter[flags]=pep") == [p[0]]


def test_list_archived_parameter(tenant, program, population):
    assert listed(tenant, program, "?archived=true") == [population[3]]
    assert population[3] not in listed(tenant, program, "?archived=false")
    assert len(listed(tenant, program, "?archived=false")) == 4
    assert population[3] in listed(tenant, program)


def test_list_pagination(tenant, program, population):
    r = tenant.api.get(f"/programs/{program['uuid']}/entities?per_page=2&page=2&sort=created_at")
    body = r.get_json()
    assert [e["uuid"] for e in body["data"]] == population[2:4]
    assert body["meta"] == {"current_page": 2, "per_page": 2, "total": 5, "last_page": 3}
    r = tenant.api.get(f"/programs/{program['uuid']}/entities?page=9")
    assert r.status_code == 200 and r.get_json()["data"] == [] and r.get_json()["meta"]["total"] == 5


@pytest.mark.parametrize("query,field", [
    ("filter[entity_type]=person", "filter[entity_type]"), ("filter[risk_level]=null", "filter[risk_level]"),
    ("filter[flags]=terrorist", "filter[flags]"), ("filter[name]=x", "filter[name]"), ("sort=risk_level", "sort"),
    ("per_page=501", "per_page"), ("page=0", "page"), ("archived=perhaps", "archived"), ("q=jane", "q")])
def test_list_bad_parameters_are_400(tenant, program, query, field):
    r = tenant.api.get(f"/programs/{program['uuid']}/entities?{query}")
    assert r.status_code == 400 and field in r.get_json()["errors"]


def test_list_only_shows_the_programs_entities(tenant, program):
    mine = tenant.entity(program["uuid"])
    tenant.entity(tenant.program()["uuid"])
    assert listed(tenant, program) == [mine["uuid"]]


# ---------------------------------------------------------------- services and queries shared with the portal

def test_portal_search_on_name_reference_and_entity_number(app, tenant, program, population):
    from app.entities import queries
    actor = actor_for(tenant)
    with app.app_context():
        def search(term):
            params = queries.list_params({"q": term, "sort": "created_at"}, search=True)
            return [str(e.uuid) for e in queries.list_entities(actor, uuid.UUID(program["uuid"]), params).items]
        assert search("acme") == [population[1]]
        assert search("a1") == [population[0]]
        assert search("o") == [population[0], population[3], population[4]]  # Carol Young, Bob Brown, Manor House
        assert search("100%") == []
        number = tenant.api.get(f"/entities/{population[2]}").get_json()["data"]["entity_number"]
        assert search(number) == [population[2]]
        params = queries.list_params({}, search=True)
        params.filters["entity_number"] = number
        assert [str(e.uuid) for e in queries.list_entities(actor, uuid.UUID(program["uuid"]), params).items] \
            == [population[2]]


def test_restore_brings_back_the_entity_and_the_notes_deleted_with_it(app, tenant, program):
    from app.core.transactions import commit
    from app.entities import queries, services
    e = tenant.entity(program["uuid"], reference_number="BACK")
    earlier = add_note(app, e["uuid"])
    with app.app_context():
        from app.extensions import db
        from app.notes.models import Note
        from app.core.types import utcnow
        db.session.get(Note, earlier).deleted_at = utcnow() - timedelta(days=1)  # deleted on its own before
        commit()
    cascaded = add_note(app, e["uuid"])
    tenant.api.delete(f"/entities/{e['uuid']}")
    actor = actor_for(tenant)
    with app.app_context():
        assert [str(x.uuid) for x in queries.list_deleted_entities(actor)] == [e["uuid"]]
        restored = services.restore_entity(actor, uuid.UUID(e["uuid"]))
        commit()
        assert restored.deleted_at is None
    assert tenant.api.get(f"/entities/{e['uuid']}").status_code == 200
    assert note_state(app, cascaded)[1] is None
    assert note_state(app, earlier)[1] is not None
    assert [a for a, _, _ in audit_rows(app, e["uuid"])][-1] == "entity.restored"
    with app.app_context():
        assert queries.list_deleted_entities(actor) == []


def test_restore_window_and_reference_conflict(app, tenant, other_tenant, program):
    from app.core.errors import Conflict, NotFound
    from app.core.transactions import commit, rollback
    from app.core.types import utcnow
    from app.entities import queries, services
    from app.entities.models import Entity
    from app.extensions import db
    old = tenant.entity(program["uuid"])
    clash = tenant.entity(program["uuid"], reference_number="DUP")
    tenant.api.delete(f"/entities/{old['uuid']}")
    tenant.api.delete(f"/entities/{clash['uuid']}")
    tenant.entity(program["uuid"], reference_number="DUP")
    with app.app_context():
        db.session.scalar(select(Entity).where(Entity.uuid == uuid.UUID(old["uuid"]))).deleted_at = \
            utcnow() - timedelta(days=31)
        commit()
        actor = actor_for(tenant)
        assert [str(x.uuid) for x in queries.list_deleted_entities(actor)] == [clash["uuid"]]
        with pytest.raises(NotFound):
            services.restore_entity(actor, uuid.UUID(old["uuid"]))
        with pytest.raises(Conflict):
            services.restore_entity(actor, uuid.UUID(clash["uuid"]))
        rollback()
        with pytest.raises(NotFound):  # another account cannot restore it
            services.restore_entity(actor_for(other_tenant), uuid.UUID(clash["uuid"]))
        assert queries.list_deleted_entities(actor_for(other_tenant)) == []


def test_viewers_cannot_write(app, tenant, program):
    from app.core.errors import Forbidden
    from app.entities import services
    e = tenant.entity(program["uuid"])
    viewer = actor_for(tenant, role="viewer")
    with app.app_context():
        for call in (lambda: services.create_entity(viewer, uuid.UUID(program["uuid"]), {}),
                     lambda: services.update_entity(viewer, uuid.UUID(e["uuid"]), {}),
                     lambda: services.archive_entity(viewer, uuid.UUID(e["uuid"])),
                     lambda: services.delete_entity(viewer, uuid.UUID(e["uuid"])),
                     lambda: services.bulk_import(viewer, uuid.UUID(program["uuid"]), "entity_type\n")):
            with pytest.raises(Forbidden):
                call()


def test_entity_routes_are_in_the_openapi_document(client):
    doc = client.get("/api/v1/openapi.json").get_json()
    for path, method in [("/programs/{program_uuid}/entities", "post"), ("/programs/{program_uuid}/entities", "get"),
                         ("/programs/{program_uuid}/entities/bulk", "post"), ("/entities/{entity_uuid}", "get"),
                         ("/entities/{entity_uuid}", "patch"), ("/entities/{entity_uuid}", "delete"),
                         ("/entities/{entity_uuid}/archive", "post")]:
        assert method in doc["paths"][path], (path, method)
    create = doc["paths"]["/programs/{program_uuid}/entities"]["post"]
    ref = create["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    schemas = doc["components"]["schemas"]
    entity_in = schemas[ref]
    assert entity_in["discriminator"]["propertyName"] == "entity_type"
    variants = {k: schemas[v.rsplit("/", 1)[1]] for k, v in entity_in["discriminator"]["mapping"].items()}
    assert variants["business"]["required"] == ["entity_type", "business_name"]
    assert variants["vessel"]["required"] == ["entity_type", "vessel_name"]
    assert variants["individual"]["anyOf"] == [{"required": ["first_name"]}, {"required": ["last_name"]}]
    assert "business_name" not in variants["individual"]["properties"]
    assert variants["business"]["dependentRequired"]["business_number"] == ["business_number_type"]
