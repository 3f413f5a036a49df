"""Event reads load what they show (docs/decisions.md, "Event reads"): a page of events takes the same number of
statements for one event as for many (no query per row), an event by uuid is one join of three tables, and the
event page and the API's show read the reasons of the status history from the notes they already hold."""
from __future__ import annotations

import re
from contextlib import contextmanager

import pytest

from tests.checks.conftest import save_lists
from tests.factories import csrf_from


@contextmanager
def statements(app):
    """The SQL statements the app sends inside the block."""
    from sqlalchemy import event as sa_event

    from app.extensions import db
    sent: list[str] = []

    def record(conn, cursor, statement, *args):
        sent.append(statement)
    with app.app_context():
        engine = db.engine
    sa_event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        sa_event.remove(engine, "before_cursor_execute", record)


def raise_events(tenant, work, program_uuid: str, n: int) -> None:
    """n entities of a listed name, each screened: each check raises an event."""
    for _ in range(n):
        entity = tenant.entity(program_uuid, first_name="Bartholomew", last_name="Quenneville")
        r = tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
        assert r.status_code == 202, r.get_json()
    work()


def decide(tenant, uuids: list[str]) -> None:
    """Close each event with a reason (a decision and its note, read by the lists' `decision`)."""
    for u in uuids:
        r = tenant.api.patch(f"/events/{u}", json={"status": "closed_dismissed", "note": f"Not the person ({u})."})
        assert r.status_code == 200, r.get_json()


@pytest.fixture
def portal(app, tenant, factory):
    return factory.login(factory.user(tenant, "analyst"))


def test_a_page_of_events_costs_the_same_statements_for_one_or_many(app, tenant, work, portal):
    save_lists(app)
    program = tenant.program(event_grouping="grouped")
    raise_events(tenant, work, program["uuid"], 1)
    listed = tenant.api.get("/events?per_page=50").get_json()["data"]
    decide(tenant, [listed[0]["uuid"]])

    def costs() -> dict[str, int]:
        out = {}
        for name, get in (("api", lambda: tenant.api.get("/events?per_page=50")),
                          ("api closed", lambda: tenant.api.get("/events?per_page=50&filter[status]=closed")),
                          ("inbox", lambda: portal.get("/?status=all"))):
            with statements(app) as sent:
                r = get()
            assert r.status_code == 200
            out[name] = len(sent)
        return out

    one = costs()
    raise_events(tenant, work, program["uuid"], 4)
    events = tenant.api.get("/events?per_page=50").get_json()["data"]
    assert len(events) == 5 and {e["entity_uuid"] for e in events} and all(e["check_uuid"] for e in events)
    decide(tenant, [e["uuid"] for e in events if e["status"] == "new"][:3])
    many = costs()
    assert many == one, (one, many)  # no statement per row: sources, notes, decisions and reasons per page
    assert one["api"] <= 8 and one["inbox"] <= 12, one  # the key, counts, rows, sources, notes, decisions, ...

    # what the rows show came with those statements
    closed = tenant.api.get("/events?per_page=50&filter[status]=closed").get_json()["data"]
    assert len(closed) == 4 and all(e["decision"]["reason"].startswith("Not the person") for e in closed)
    for e in closed:  # the source's uuid is the check's
        check = tenant.api.get(f"/checks/{e['check_uuid']}").get_json()["data"]
        assert check["entity_uuid"] == e["entity_uuid"]
    page = portal.get("/?status=all").get_data(as_text=True)
    assert page.count('data-event-row') == 5 and page.count("QUENNEVILLE") + page.count("Quenneville") >= 5


def test_an_event_is_read_with_one_join_and_its_history_from_its_notes(app, tenant, work, portal):
    save_lists(app)
    program = tenant.program()
    raise_events(tenant, work, program["uuid"], 1)
    [event] = tenant.api.get("/events").get_json()["data"]
    assert tenant.api.patch(f"/events/{event['uuid']}", json={"note": "Asked for a passport copy."}).status_code == 200
    decide(tenant, [event["uuid"]])

    with statements(app) as sent:
        shown = tenant.api.get(f"/events/{event['uuid']}")
    body = shown.get_json()["data"]
    assert shown.status_code == 200
    assert [h["reason"] for h in body["status_history"]] == [f"Not the person ({event['uuid']})."]
    assert body["decision"]["reason"] == f"Not the person ({event['uuid']})." and body["notes_count"] == 2
    assert str(body["check_uuid"]) == event["check_uuid"]
    # the key, the event (with its entity and program), its notes, its history, its approvals, its check
    assert len(sent) <= 6, sent
    [by_uuid] = [s for s in sent if re.search(r"WHERE events\.account_id = .* AND events\.uuid = ", s)]
    assert len(re.findall(r"\bJOIN\b", by_uuid)) == 2, by_uuid  # entities and programs, nothing else
    assert not any(s.lstrip().startswith("SELECT notes.id") for s in sent), "the reason was read again"

    with statements(app) as sent:
        page = portal.get(f"/events/{event['uuid']}")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and f"Not the person ({event['uuid']})." in html
    assert "Asked for a passport copy." in html
    assert len(sent) <= 10, sent


def test_the_next_event_link_reads_only_keys(app, tenant, work, portal):
    save_lists(app)
    program = tenant.program(event_grouping="grouped")
    raise_events(tenant, work, program["uuid"], 3)
    events = tenant.api.get("/events?sort=created_at").get_json()["data"]
    page = portal.get(f"/events/{events[1]['uuid']}")
    html = page.get_data(as_text=True)
    # newest first: the previous link is the later event, the next one the earlier
    assert re.search(rf'href="/events/{events[2]["uuid"]}[^"]*" rel="prev"', html)
    assert re.search(rf'href="/events/{events[0]["uuid"]}[^"]*" rel="next"', html)
    token = csrf_from(html)
    with statements(app) as sent:
        r = portal.post(f"/events/{events[1]['uuid']}/status", data={"status": "investigating", "advance": "1",
                                                                     "csrf_token": token},
                        headers={"HX-Request": "true", "X-CSRFToken": token})
    assert r.status_code == 200 and events[0]["uuid"] in r.headers["HX-Location"]
    keyed = [" ".join(s.split()) for s in sent if "ORDER BY events" in s and "LIMIT" in s]
    assert len(keyed) == 2 and all(s.startswith("SELECT events.id, events.uuid FROM events") for s in keyed), keyed
