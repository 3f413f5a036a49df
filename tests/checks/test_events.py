"""Events: separate and grouped raising, re-screen suppression, dismissals, review through PATCH."""
from __future__ import annotations

from tests.checks.conftest import pep, sanctioned, save_lists


def launch(tenant, entity_uuid, *types, config=None):
    body = {"check_types": list(types), **({"config": config} if config else {})}
    r = tenant.api.post(f"/entities/{entity_uuid}/checks", json=body)
    assert r.status_code == 202, r.get_json()
    return r.get_json()["data"]


def events_of(tenant, entity_uuid):
    return tenant.api.get(f"/entities/{entity_uuid}/events?sort=created_at").get_json()["data"]


def test_separate_events_one_per_alert_capped(app, tenant, work):
    save_lists(app, sanctions_records=[
        sanctioned(),
        sanctioned().__class__(id="s-2", schema="Person", caption="Bartholomew QUENNEVILLE", topics=["sanction"],
                               birth_dates=["1970-01-01"])])
    program = tenant.program(event_grouping="separate", max_separate_events=5)
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    check = launch(tenant, entity["uuid"], "pep_sanction_check")
    work()
    shown = tenant.api.get(f"/checks/{check['uuid']}").get_json()["data"]
    alerts = [r for r in shown["results_overview"] if r["status"] != "pass"]
    events = events_of(tenant, entity["uuid"])
    assert len(alerts) == 2 and len(events) == 2
    assert sorted(e["check_response_index"] for e in events) == [0, 1]
    assert sorted(e["check_result_ids"][0] for e in events) == sorted(int(a["alert_ids"][0]) for a in alerts)


def test_grouped_program_gets_one_event_per_check(app, tenant, work):
    save_lists(app)
    program = tenant.program(event_grouping="grouped")
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                           phone1="+61 1900 654 321")
    launch(tenant, entity["uuid"], "pep_sanction_check", "phone_check")
    work()
    events = events_of(tenant, entity["uuid"])
    assert sorted(e["check_type"] for e in events) == ["pep_sanction_check", "phone_check"]
    assert all(e["check_response_index"] is None for e in events)


def test_rescreen_raises_only_new_or_changed_alerts_and_dismissed_stays_quiet(app, tenant, work):
    save_lists(app)
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    launch(tenant, entity["uuid"], "pep_sanction_check")
    work()
    [first] = events_of(tenant, entity["uuid"])

    launch(tenant, entity["uuid"], "pep_sanction_check")  # nothing changed: no new event
    work()
    assert len(events_of(tenant, entity["uuid"])) == 1

    r = tenant.api.patch(f"/events/{first['uuid']}", json={"status": "closed_dismissed",
                                                           "note": "Different person: date of birth differs."})
    assert r.status_code == 200, r.get_json()

    save_lists(app, sanctions_records=[sanctioned()], pep_records=[pep()], checksum="v1b")  # same facts
    launch(tenant, entity["uuid"], "pep_sanction_check")
    work()
    assert len(events_of(tenant, entity["uuid"])) == 1  # dismissed, unchanged: quiet

    save_lists(app, sanctions_records=[sanctioned(alias="Bart Quenneville")], checksum="v2")  # a new alias
    launch(tenant, entity["uuid"], "pep_sanction_check")
    work()
    events = events_of(tenant, entity["uuid"])
    assert len(events) == 2 and events[1]["status"] == "new"
    assert events[1]["check_result_ids"] == first["check_result_ids"]  # the same listed party, changed


def test_event_review(app, tenant, work, factory):
    save_lists(app)
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    launch(tenant, entity["uuid"], "pep_sanction_check")
    work()
    [event] = events_of(tenant, entity["uuid"])
    url = f"/events/{event['uuid']}"

    neither = tenant.api.patch(url, json={})
    assert neither.status_code == 400 and set(neither.get_json()["errors"]) == {"status", "note"}
    assert "no updates to apply" in neither.get_json()["message"]
    assert tenant.api.patch(url, json={"status": "closed_maybe"}).get_json()["errors"]["status"]

    r = tenant.api.patch(url, json={"status": "investigating"})
    assert r.status_code == 200
    shown = r.get_json()["data"]
    # A status change is history, in the status_history, not a note: the note count counts people's notes.
    assert shown["status"] == "investigating" and shown["notes_count"] == 0 and shown["notes"] == []
    [change] = shown["status_history"]
    assert (change["from_status"], change["to_status"], change["reason"]) == ("new", "investigating", None)
    assert change["api_reference"] == r.headers["X-Request-Id"] and change["changed_by"]["type"] == "api_key"
    assert shown["decision"] is None  # open

    r = tenant.api.patch(url, json={"note": "Requested a passport copy."})
    shown = r.get_json()["data"]
    assert shown["status"] == "investigating" and shown["notes_count"] == 1
    assert [n["is_immutable"] for n in shown["notes"]] == [False]  # a note alone decides nothing
    note = tenant.api.get(f"/notes/{shown['notes'][0]['uuid']}").get_json()["data"]
    assert note["event_uuid"] == event["uuid"]

    listed = tenant.api.get("/events?filter[status]=investigating").get_json()
    assert [e["uuid"] for e in listed["data"]] == [event["uuid"]] and listed["data"][0]["notes_count"] == 1
    assert tenant.api.get("/events?filter[status]=closed").get_json()["meta"]["total"] == 0
    assert tenant.api.get("/events?filter[check_type]=phone_check").get_json()["meta"]["total"] == 0
    assert tenant.api.get("/events?filter[status]=sleeping").status_code == 400


def test_event_list_filters_and_sorts(app, tenant, work):
    """DECISIONS "Endpoints": GET /events filters by program, entity, status, check type and creation time, and
    sorts by created_at (default -created_at) or status; `filter[assigned_to]=me` finds nothing for an API key."""
    save_lists(app)
    first, second = tenant.program(), tenant.program()
    a = tenant.entity(first["uuid"], first_name="Bartholomew", last_name="Quenneville")
    b = tenant.entity(second["uuid"], first_name="Bartholomew", last_name="Quenneville")
    launch(tenant, a["uuid"], "pep_sanction_check")
    work()
    launch(tenant, b["uuid"], "pep_sanction_check")
    work()
    ea, eb = events_of(tenant, a["uuid"])[0], events_of(tenant, b["uuid"])[0]

    def uuids(query: str) -> list[str]:
        r = tenant.api.get(f"/events?{query}")
        assert r.status_code == 200, r.get_json()
        return [e["uuid"] for e in r.get_json()["data"]]

    assert uuids("") == [eb["uuid"], ea["uuid"]]                                  # newest first
    assert uuids("sort=created_at") == [ea["uuid"], eb["uuid"]]
    assert uuids(f"filter[program_uuid]={first['uuid']}") == [ea["uuid"]]
    assert uuids(f"filter[entity_uuid]={b['uuid']}") == [eb["uuid"]]
    tenant.api.patch(f"/events/{ea['uuid']}", json={"status": "closed_dismissed"})
    assert uuids("sort=status") == [ea["uuid"], eb["uuid"]]                       # closed_dismissed < new
    assert uuids("sort=-status") == [eb["uuid"], ea["uuid"]]
    created = eb["created_at"]
    assert uuids(f"filter[created_at_from]={created}") == [eb["uuid"]]
    assert uuids("filter[created_at_to]=2000-01-01T00:00:00Z") == []
    bad = tenant.api.get(f"/events?filter[created_at_from]={created}&filter[created_at_to]=2000-01-01T00:00:00Z")
    assert bad.status_code == 400 and "filter[created_at_from]" in bad.get_json()["errors"]
    tenant.api.patch(f"/events/{eb['uuid']}", json={"status": "investigating"})
    assert uuids("filter[assigned_to]=me") == []                                  # an API key is nobody
    assert tenant.api.get("/events?filter[assigned_to]=you").status_code == 400


def test_a_group_check_lists_the_events_of_its_checks(app, tenant, work):
    """Events come from the operations (the group's children); the group's uuid finds them, in the API's
    filter[check_uuid] and on the portal's check page."""
    save_lists(app)
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="sandbox-hit")
    group = launch(tenant, entity["uuid"], "adverse_media", "court_check")
    work()
    events = tenant.api.get(f"/events?filter[check_uuid]={group['uuid']}").get_json()["data"]
    children = {c["uuid"] for c in group["children"]}
    assert len(events) == 2 and {e["check_uuid"] for e in events} == children
    one = tenant.api.get(f"/events?filter[check_uuid]={group['children'][0]['uuid']}").get_json()["data"]
    assert [e["check_uuid"] for e in one] == [group["children"][0]["uuid"]]


def test_a_dismissal_is_kept_for_an_alert_whose_provider_id_is_not_a_number(app, factory, work):
    """Issue 18 §4: a vendor's own result ids ("MEDIA-ART-991") used to be dropped from the event, so its
    dismissal was never remembered and the alert came back after one clean run."""
    from tests.providers.vendor import LabelledVendor
    live = factory.tenant(name="Live Corp", sandbox=False)
    program = live.program()
    entity = live.entity(program["uuid"], first_name="Jane", last_name="Citizen")
    app.config["PROVIDER_CLASSES"] = {"adverse_media": "tests.providers.vendor:LabelledVendor"}
    try:
        check = launch(live, entity["uuid"], "adverse_media")
        work()
        [event] = events_of(live, entity["uuid"])
        alert_ids = live.api.get(f"/checks/{check['uuid']}").get_json()["data"]["results_overview"][0]["alert_ids"]
        assert event["check_result_ids"] == [int(alert_ids[0])]
        assert live.api.patch(f"/events/{event['uuid']}", json={"status": "closed_dismissed"}).status_code == 200
        LabelledVendor.quiet = True
        launch(live, entity["uuid"], "adverse_media")  # the article is gone for a run ...
        work()
        LabelledVendor.quiet = False
        launch(live, entity["uuid"], "adverse_media")  # ... and back, unchanged: still dismissed
        work()
    finally:
        LabelledVendor.quiet = False
        app.config["PROVIDER_CLASSES"] = {}
    assert len(events_of(live, entity["uuid"])) == 1


# ------------------------------------------------------------------ issue 18: the trail an auditor can trust

def _one_event(app, tenant, work, **program_fields):
    save_lists(app)
    program = tenant.program(**program_fields)
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    launch(tenant, entity["uuid"], "pep_sanction_check")
    work()
    [event] = events_of(tenant, entity["uuid"])
    return program, entity, event


def test_a_decisions_reason_is_immutable_and_kept_with_the_history(app, tenant, work):
    """The note sent with a status change is the decision's reason: PATCH and DELETE /notes answer 403, and the
    event (show, list, history) keeps it; a note sent alone stays an ordinary, editable note."""
    _program, _entity, event = _one_event(app, tenant, work)
    url = f"/events/{event['uuid']}"
    r = tenant.api.patch(url, json={"status": "closed_dismissed", "note": "Different date of birth."})
    shown = r.get_json()["data"]
    [reason] = shown["notes"]
    assert reason["is_immutable"] and reason["note_text"] == "Different date of birth."
    assert tenant.api.patch(f"/notes/{reason['uuid']}", json={"note_text": "Looked fine."}).status_code == 403
    assert tenant.api.delete(f"/notes/{reason['uuid']}").status_code == 403
    shown = tenant.api.get(url).get_json()["data"]
    assert shown["status_history"][-1]["reason"] == "Different date of birth."
    assert shown["decision"]["reason"] == "Different date of birth." and shown["decision"]["to_status"] == \
        "closed_dismissed"

    plain = tenant.api.patch(url, json={"note": "Customer sent a passport copy."}).get_json()["data"]["notes"][-1]
    assert not plain["is_immutable"]
    assert tenant.api.patch(f"/notes/{plain['uuid']}", json={"note_text": "Passport copy received."}).status_code \
        == 200
    from app.extensions import db
    from app.notes.models import Note, NoteRevision
    import uuid
    from sqlalchemy import select
    with app.app_context():  # the edit kept the text it replaced, and who replaced it
        note_id = db.session.scalar(select(Note.id).where(Note.uuid == uuid.UUID(plain["uuid"])))
        [revision] = db.session.scalars(select(NoteRevision).where(NoteRevision.note_id == note_id)).all()
        assert revision.previous_text == "Customer sent a passport copy."
        assert revision.edited_by_type == "api_key" and revision.edited_by_label.endswith("(API key)")


def test_event_list_items_carry_the_decision_and_the_hit(app, tenant, work):
    _program, _entity, event = _one_event(app, tenant, work)
    [item] = tenant.api.get("/events").get_json()["data"]
    assert item["top_title"] and 0 < item["top_score"] <= 1 and item["decision"] is None
    tenant.api.patch(f"/events/{event['uuid']}", json={"status": "closed_confirmed", "note": "Same person."})
    [item] = tenant.api.get("/events").get_json()["data"]
    decision = item["decision"]
    assert decision["to_status"] == "closed_confirmed" and decision["reason"] == "Same person."
    assert decision["changed_by"]["type"] == "api_key" and decision["changed_at"]


def test_review_of_an_archived_event_is_refused_explicitly(app, tenant, work):
    import uuid
    from sqlalchemy import update
    from app.events.models import Event
    from app.extensions import db
    _program, entity, event = _one_event(app, tenant, work)
    with app.app_context():  # an event archived on its own (its entity is not): read-only too
        db.session.execute(update(Event).where(Event.uuid == uuid.UUID(event["uuid"])).values(archived_at=Event.created_at))
        db.session.commit()
    r = tenant.api.patch(f"/events/{event['uuid']}", json={"status": "investigating"})
    assert r.status_code == 409 and "archived" in r.get_json()["message"]
    with app.app_context():
        db.session.execute(update(Event).where(Event.uuid == uuid.UUID(event["uuid"])).values(archived_at=None))
        db.session.commit()
    assert tenant.api.post(f"/entities/{entity['uuid']}/archive").status_code == 200
    url = f"/events/{event['uuid']}"
    r = tenant.api.patch(url, json={"status": "closed_dismissed"})  # no note: today's path wrote it anyway
    assert r.status_code == 409 and "archived" in r.get_json()["message"]
    assert tenant.api.get(url).get_json()["data"]["status"] == "new"


def test_review_rules_of_the_service(app, tenant, work):
    """`set_status(note=...)` keeps the note as the reason; `update_event` locks the row; an API key's change
    clears the portal's attribution (spec "Event status"); `can_review` is what the service enforces."""
    import uuid
    from sqlalchemy import select
    from app.accounts.models import ApiKey, User
    from app.accounts.services import api_key_actor, user_actor
    from app.core.transactions import commit
    from app.events import queries, rules, services
    from app.events.models import Event
    from app.extensions import db

    _program, entity, event = _one_event(app, tenant, work)
    with app.app_context():
        user = db.session.scalar(select(User).where(User.email == tenant.email))
        key = db.session.scalar(select(ApiKey).where(ApiKey.uuid == uuid.UUID(tenant.api_key_uuid)))
        person, machine = user_actor(user), api_key_actor(key)
        row = queries.get_event(person, uuid.UUID(event["uuid"]))
        change = services.set_status(person, row, "investigating", note="Taking this one.")
        assert change.reason == "Taking this one." and change.note.is_immutable
        assert row.assigned_user_id == user.id and rules.can_review(person, row)
        services.update_event(machine, row.uuid, {"status": "closed_error"})
        assert row.assigned_user_id is None  # the API's change clears "assigned to" (the portal's attribution)
        commit()

    statements: list[str] = []
    from sqlalchemy import event as sa_event
    with app.app_context():
        engine = db.engine
        listen = lambda conn, cursor, statement, *a: statements.append(statement)  # noqa: E731
        sa_event.listen(engine, "before_cursor_execute", listen)
        try:
            services.update_event(machine, uuid.UUID(event["uuid"]), {"note": "locked"})
            db.session.rollback()
        finally:
            sa_event.remove(engine, "before_cursor_execute", listen)
    assert any("FOR UPDATE" in s and "events" in s for s in statements)
