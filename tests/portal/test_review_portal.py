"""The review loop's portal pages through the test client: launch (errors on the form, roles, credit),
the checks list polling, the inbox's filters, counts and CSV export, triage (one, bulk), the event page, adhoc
checks, credit and prices, report e-mails, search and the entity history PDF."""
from __future__ import annotations

import csv
import io
import re
import subprocess

import pytest

from tests.checks.conftest import fresh_index_holder, save_lists  # noqa: F401 (fixtures)
from tests.portal.conftest import text


@pytest.fixture
def screened(app, tenant, work):
    """Three entities screened through the API: two raise an event each (sanctions), one is clean."""
    save_lists(app)
    program = tenant.program(program_name="Retail")
    hits = [tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                          reference_number=f"=HYPERLINK(\"x\")-{n}") for n in range(2)]
    clean = tenant.entity(program["uuid"], first_name="Jane", last_name="Citizen")
    for entity in hits + [clean]:
        r = tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
        assert r.status_code == 202
    work()
    events = tenant.api.get("/events").get_json()["data"]
    assert len(events) == 2
    return {"program": program, "hits": hits, "clean": clean, "events": events}


def _events(tenant, **filters):
    query = "&".join(f"filter[{k}]={v}" for k, v in filters.items())
    return tenant.api.get(f"/events?{query}").get_json()["data"]


# ------------------------------------------------------------------ launch

def test_launch_from_the_entity_page_charges_and_lists_the_check(app, analyst, tenant, work):
    save_lists(app)
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    page = text(analyst.get(f"/entities/{entity['uuid']}"))
    assert 'name="check_types" value="pep_sanction_check" data-price="1"' in page
    assert 'name="config.pep_sanction_check.similarity_threshold"' in page
    balance = tenant.api.get("/credit").get_json()["data"]["balance"]
    r = analyst.htmx_post(f"/entities/{entity['uuid']}/checks", {
        "check_types": "pep_sanction_check", "config.pep_sanction_check.similarity_threshold": "90",
        "config.pep_sanction_check.search_type": "narrow_search",
        "config.pep_sanction_check.sanction_countries": "us, gb",
        "config.pep_sanction_check.max_results": "10"})
    assert r.status_code == 200
    fragment = text(r)
    assert 'data-polling' in fragment and "PEP &amp; Sanctions" in fragment  # polls while it runs
    assert tenant.api.get("/credit").get_json()["data"]["balance"] == balance - 1
    [check] = tenant.api.get(f"/entities/{entity['uuid']}/checks").get_json()["data"]
    assert check["config"] == {
        "search_type": "narrow_search", "similarity_threshold": "90", "pep_countries": [],
        "sanction_countries": ["US", "GB"], "max_results": 10, "pep_sanction_extended_result": False}
    work()
    done = text(analyst.htmx_get(f"/entities/{entity['uuid']}/checks"))
    assert "data-polling" not in done and 'data-check-status="complete"' in done
    assert 'hx-swap-oob="innerHTML"' in done and "Sanctions match" in done  # the events card follows


def test_launch_errors_land_on_the_form_and_nothing_is_charged(app, analyst, tenant):
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Ada", last_name="Lovelace")
    balance = tenant.api.get("/credit").get_json()["data"]["balance"]
    r = analyst.htmx_post(f"/entities/{entity['uuid']}/checks", {
        "check_types": "pep_sanction_check", "config.pep_sanction_check.similarity_threshold": "85"})
    assert r.status_code == 422 and r.headers["HX-Retarget"] == "#run-checks"
    assert re.search(r'id="config-pep_sanction_check-similarity_threshold-error"', text(r))
    r = analyst.htmx_post(f"/entities/{entity['uuid']}/checks", {"check_types": "phone_check"})
    assert r.status_code == 422 and "phone_check needs phone" in text(r)  # the entity lacks a phone
    r = analyst.htmx_post(f"/entities/{entity['uuid']}/checks", {})
    assert r.status_code == 422 and 'id="check_types-error"><li>Give at least one.' in text(r)  # the API's rule
    assert tenant.api.get("/credit").get_json()["data"]["balance"] == balance
    assert tenant.api.get(f"/entities/{entity['uuid']}/checks").get_json()["data"] == []


def test_insufficient_credit_and_entitlements_are_refused_on_the_form(app, analyst, tenant):
    from app.accounts.models import Account
    from app.billing.services import adjust
    from app.core.actor import Actor
    from app.extensions import db
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Ada", last_name="Lovelace")
    with app.app_context():
        account = db.session.get(Account, tenant.account_id)
        actor = Actor(account_id=account.id, kind="system", id=None, uuid=None, name="test", role="admin",
                      via="cli")
        balance = tenant.api.get("/credit").get_json()["data"]["balance"]
        adjust(actor, -balance, "Test: empty the balance")
        account.enabled_check_types = ["pep_sanction_check"]
        db.session.commit()
    page = text(analyst.get(f"/entities/{entity['uuid']}"))
    assert 'value="court_check"' not in page  # not entitled: not offered
    r = analyst.htmx_post(f"/entities/{entity['uuid']}/checks", {"check_types": "pep_sanction_check"})
    assert r.status_code == 422 and "Insufficient credit" in text(r)
    r = analyst.htmx_post(f"/entities/{entity['uuid']}/checks", {"check_types": "court_check"})
    assert r.status_code == 422 and "not entitled to: court_check" in text(r)  # forced: refused


def test_viewers_read_but_cannot_launch_or_triage(viewer, tenant, screened):
    entity = screened["hits"][0]
    page = text(viewer.get(f"/entities/{entity['uuid']}"))
    assert "Run checks" not in page and "Sanctions match" in page
    inbox = text(viewer.get("/"))
    assert "bulk-form" not in inbox and 'data-key="d"' not in inbox and "Quenneville" in inbox
    event = screened["events"][0]
    assert viewer.post(f"/entities/{entity['uuid']}/checks", {"check_types": "pep_sanction_check"}).status_code == 403
    assert viewer.post(f"/events/{event['uuid']}/status", {"status": "closed_dismissed"}).status_code == 403
    assert viewer.post("/events/bulk", {"event_uuids": event["uuid"], "status": "closed_error"}).status_code == 403
    assert _events(tenant, status="new").__len__() == 2


# ------------------------------------------------------------------ inbox and triage

def test_inbox_counts_filters_and_the_url(analyst, tenant, screened):
    page = text(analyst.get("/"))
    assert re.search(r'data-testid="tab-open">Open <span class="tab-count">2</span>', page)
    assert page.count("data-event-row") == 2
    other = tenant.program(program_name="Other")
    assert text(analyst.get(f"/?program={other['uuid']}")).count("data-event-row") == 0
    assert text(analyst.get(f"/?program={screened['program']['uuid']}&type=pep_sanction_check")).count(
        "data-event-row") == 2
    assert text(analyst.get("/?from=2000-01-01&to=2000-01-02")).count("data-event-row") == 0
    r = analyst.get("/?from=not-a-date&type=nonsense")
    assert r.status_code == 200 and "Some filters were not valid" in text(r)
    assert text(analyst.get("/?mine=1")).count("data-event-row") == 0  # nothing taken up yet
    event = screened["events"][0]
    analyst.post(f"/events/{event['uuid']}/status", {"status": "investigating"})
    assert text(analyst.get("/?mine=1")).count("data-event-row") == 1  # "investigating" assigns it to me


def test_one_status_from_the_inbox_swaps_the_row(analyst, tenant, screened):
    event = screened["events"][0]
    # A sanctions hit is strong: one key does not dismiss it without a reason (a toast says so).
    r = analyst.htmx_post(f"/events/{event['uuid']}/status", {"status": "closed_dismissed", "from": "inbox"})
    from urllib.parse import unquote
    assert r.status_code == 400 and "reason is required" in unquote(r.headers["X-Portal-Message"])
    r = analyst.htmx_post(f"/events/{event['uuid']}/status", {"status": "closed_confirmed", "from": "inbox"})
    assert r.status_code == 200 and text(r).lstrip().startswith("<tr") and 'data-status="closed_confirmed"' in text(r)
    assert r.headers["X-Portal-Notice"]
    [shown] = [e for e in _events(tenant) if e["uuid"] == event["uuid"]]
    assert shown["status"] == "closed_confirmed"
    shown = tenant.api.get(f"/events/{event['uuid']}").get_json()["data"]
    assert shown["notes"] == [] and shown["notes_count"] == 0  # a status change is history, not a note
    [change] = shown["status_history"]
    assert (change["from_status"], change["to_status"], change["changed_by"]["type"]) == \
        ("new", "closed_confirmed", "user")
    r = analyst.htmx_post(f"/events/{event['uuid']}/status", {"status": "closed_sideways", "from": "inbox"})
    assert r.status_code == 400  # a toast, not a 500


def test_event_page_decision_moves_to_the_next_event_of_the_filter(analyst, tenant, screened):
    first, second = screened["events"]  # newest first
    page = text(analyst.get(f"/events/{first['uuid']}?status=all"))
    assert f'/events/{second["uuid"]}?status=all' in page and 'data-testid="compare"' in page
    r = analyst.htmx_post(f"/events/{first['uuid']}/status?status=all",
                          {"status": "closed_confirmed", "note": "Same person: passport matches.",
                           "advance": "1"})
    assert f'/events/{second["uuid"]}?status=all' in r.headers["HX-Location"]
    notes = tenant.api.get(f"/events/{first['uuid']}").get_json()["data"]["notes"]
    assert [n["note_text"] for n in notes][-1] == "Same person: passport matches."
    history = text(analyst.get(f"/events/{first['uuid']}"))
    assert 'data-testid="status-history"' in history and "Confirmed" in history


def test_bulk_sets_one_status_and_one_note_in_one_transaction(analyst, tenant, screened, other_tenant):
    uuids = [e["uuid"] for e in screened["events"]]
    r = analyst.post("/events/bulk", {"event_uuids": uuids, "status": "closed_error", "note": "Test data."})
    assert r.status_code == 302
    for uuid in uuids:
        event = tenant.api.get(f"/events/{uuid}").get_json()["data"]
        assert event["status"] == "closed_error"
        assert [n["note_text"] for n in event["notes"]][-1] == "Test data."
        assert [n["is_immutable"] for n in event["notes"]] == [True]  # each event's decision, with its reason
    # One foreign (or unknown) uuid: a 404 for the whole request and nothing changes.
    import uuid as uuid_mod
    r = analyst.post("/events/bulk", {"event_uuids": [uuids[0], str(uuid_mod.uuid4())], "status": "new"})
    assert r.status_code == 302
    assert {tenant.api.get(f"/events/{u}").get_json()["data"]["status"] for u in uuids} == {"closed_error"}
    r = analyst.post("/events/bulk", {"status": "new"})  # nothing selected
    assert r.status_code == 302
    assert "Select at least one event." in text(analyst.get("/"))


def test_bulk_all_matching_the_filter(analyst, tenant, screened, monkeypatch):
    from app.events import services
    monkeypatch.setattr(services, "BULK_MAX", 1)  # more events match than one request may change: refused whole
    assert analyst.post("/events/bulk?status=new", {"scope": "all", "status": "closed_duplicate"}).status_code == 302
    assert "More than 1 events match this filter" in text(analyst.get("/"))
    assert {e["status"] for e in _events(tenant)} == {"new"}
    monkeypatch.undo()
    r = analyst.post("/events/bulk?status=new", {"scope": "all", "status": "closed_duplicate"})
    assert r.status_code == 302
    assert {e["status"] for e in _events(tenant)} == {"closed_duplicate"}


def test_csv_export_follows_the_filter_and_neutralises_formulas(analyst, tenant, screened):
    r = analyst.get("/events/export.csv?status=all")
    assert r.status_code == 200 and r.mimetype == "text/csv"
    rows = list(csv.reader(io.StringIO(r.get_data(as_text=True))))
    assert rows[0][:3] == ["event_number", "status", "created_at"] and len(rows) == 3
    references = {row[rows[0].index("reference_number")] for row in rows[1:]}
    assert all(ref.startswith("'=HYPERLINK") for ref in references), references
    assert len(list(csv.reader(io.StringIO(text(analyst.get("/events/export.csv?status=closed")))))) == 1


# ------------------------------------------------------------------ other pages

def test_check_page_and_pdf(analyst, tenant, screened):
    check = tenant.api.get(f"/entities/{screened['hits'][0]['uuid']}/checks").get_json()["data"][0]
    page = text(analyst.get(f"/checks/{check['uuid']}"))
    assert 'data-testid="hit"' in page and "data-polling" not in page and "test_sanctions" in page
    r = analyst.get(f"/checks/{check['uuid']}/pdf")
    assert r.status_code == 200 and r.mimetype == "application/pdf"
    history = analyst.get(f"/entities/{screened['hits'][0]['uuid']}/history.pdf")
    assert history.status_code == 200
    content = subprocess.run(["pdftotext", "-layout", "-", "-"], input=history.get_data(), capture_output=True,
                             check=True).stdout.decode()
    assert "Screening history" in content and "Bartholomew Quenneville" in content and "Events (1)" in content


def test_adhoc_checks_page_launches_and_lists(app, analyst, tenant, work):
    save_lists(app)
    r = analyst.post("/adhoc-checks", {"check_types": "pep_sanction_check", "data.first_name": "Bartholomew",
                                       "data.last_name": "Quenneville", "data.dob": "1961-03-14"})
    assert r.status_code == 302 and "/adhoc-checks/" in r.headers["Location"]
    work()
    page = text(analyst.get(r.headers["Location"]))
    assert 'data-testid="hit"' in page and "Adhoc" in page
    listing = text(analyst.get("/adhoc-checks"))
    assert "1 potential match" in listing
    r = analyst.post("/adhoc-checks", {"check_types": "pep_sanction_check", "data.last_name": "Lee",
                                       "data.dob": "1961-13-40"})
    assert r.status_code == 422 and 'id="adhoc-dob-error"' in text(r)
    r = analyst.post("/adhoc-checks", {"check_types": "phone_check", "data.last_name": "Lee"})
    assert r.status_code == 422 and "phone_check needs phone" in text(r)


def test_credit_page_and_prices_for_the_operator_only(app, admin, analyst, tenant, screened):
    page = text(analyst.get("/credit"))
    assert 'data-testid="ledger"' in page and "Charge" in page and 'data-testid="prices"' in page
    assert "Save prices" not in text(admin.get("/credit"))  # not an operator account
    r = admin.post("/credit/prices", {"price.pep_sanction_check": "5"})
    assert r.status_code == 302 and tenant.api.get("/credit").get_json()["data"]["prices"]["pep_sanction_check"] == 1
    from app.accounts.models import Account
    from app.extensions import db
    with app.app_context():
        db.session.get(Account, tenant.account_id).is_operator = True
        db.session.commit()
    assert "Save prices" in text(admin.get("/credit"))
    r = admin.post("/credit/prices", {"price.pep_sanction_check": "5", "price.court_check": "-2"})
    assert r.status_code == 422 and "nothing was saved" in text(r)
    assert tenant.api.get("/credit").get_json()["data"]["prices"]["pep_sanction_check"] == 1
    r = admin.post("/credit/prices", {"price.pep_sanction_check": "5"})
    assert r.status_code == 302
    assert tenant.api.get("/credit").get_json()["data"]["prices"]["pep_sanction_check"] == 5
    assert analyst.post("/credit/prices", {"price.pep_sanction_check": "0"}).status_code == 403


def test_report_emails_page_for_admins(admin, analyst, tenant):
    assert analyst.get("/admin/report-emails").status_code == 403
    assert admin.get("/admin/report-emails").status_code == 200


def test_search_finds_entities_checks_and_events(analyst, tenant, screened):
    event = screened["events"][0]
    r = analyst.get(f"/search?q={event['event_number'].lower()}")
    assert r.status_code == 302 and r.headers["Location"].endswith(f"/events/{event['uuid']}")
    page = text(analyst.get("/search?q=quenne"))
    assert page.count("Bartholomew Quenneville") >= 2
    assert "Nothing found" in text(analyst.get("/search?q=%25%25"))  # % is literal


def test_all_checks_of_an_entity_are_paginated(analyst, tenant, screened):
    entity = screened["hits"][0]
    page = text(analyst.get(f"/entities/{entity['uuid']}/checks"))
    assert 'data-testid="entity-checks-all"' in page and "1 potential match" in page
    assert analyst.get(f"/entities/{entity['uuid']}/checks?page=abc").status_code == 400


def test_hostile_input_on_the_review_pages(app, analyst, tenant, other_tenant, work):
    """Markup in names is escaped, writes need the CSRF token, oversized and foreign bulk requests change
    nothing, and filters naming another account's program find nothing."""
    save_lists(app)
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="<img src=x onerror=alert(1)>",
                           last_name="sandbox-hit", reference_number="<script>x</script>")
    r = tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["adverse_media"]})
    assert r.status_code == 202
    work()
    [event] = _events(tenant)
    for url in ("/", f"/entities/{entity['uuid']}", f"/events/{event['uuid']}", "/search?q=sandbox&go=0",
                "/search?q=<script>"):
        html = text(analyst.get(url))
        assert "<img src=x" not in html and "<script>x" not in html, url
        assert "&lt;img src=x" in html or url.startswith("/search?q=<"), url
    assert analyst.post(f"/events/{event['uuid']}/status", {"status": "closed_error"}, csrf=False).status_code == 400
    assert analyst.post("/events/bulk", {"event_uuids": [event["uuid"]] * 501, "status": "closed_error"}
                        ).status_code == 302
    assert "Nothing was changed: At most 500 items are allowed." in text(analyst.get("/"))
    assert _events(tenant)[0]["status"] == "new"
    foreign = other_tenant.program()
    assert text(analyst.get(f"/?program={foreign['uuid']}&status=all")).count("data-event-row") == 0
    assert analyst.get("/?page=-3&sort=evil&per_page=99999").status_code == 200


# ------------------------------------------------------------------ issue 18

def test_a_note_on_the_event_page_stays_on_the_event(analyst, tenant, screened):
    """A note is not a decision: the note box answers the notes fragment (htmx), or the event page again; the
    current status sent again with a reason adds the note and stays too (no move to the next event)."""
    event = screened["events"][0]
    r = analyst.htmx_post(f"/events/{event['uuid']}/notes?status=all", {"note_text": "Asked for a passport."},
                          headers={"HX-Target": "event-notes"})
    assert r.status_code == 200 and "<html" not in text(r) and "Asked for a passport." in text(r)
    assert "HX-Location" not in r.headers
    r = analyst.post(f"/events/{event['uuid']}/notes", {"note_text": "Second note."})
    assert r.status_code == 302 and f"/events/{event['uuid']}" in r.headers["Location"]
    analyst.post(f"/events/{event['uuid']}/status", {"status": "investigating"})
    r = analyst.htmx_post(f"/events/{event['uuid']}/status?status=all",
                          {"status": "investigating", "note": "Still waiting.", "advance": "1"})
    assert f"/events/{event['uuid']}" in r.headers["HX-Location"]
    shown = tenant.api.get(f"/events/{event['uuid']}").get_json()["data"]
    assert [n["note_text"] for n in shown["notes"]] == ["Asked for a passport.", "Second note.", "Still waiting."]
    assert shown["notes_count"] == 3 and not any(n["is_immutable"] for n in shown["notes"])


def test_event_page_shows_history_in_words_and_the_decision(analyst, tenant, screened):
    event = screened["events"][0]
    tenant.api.patch(f"/events/{event['uuid']}", json={"status": "closed_dismissed", "note": "Other person."})
    page = text(analyst.get(f"/events/{event['uuid']}"))
    history = page[page.index('data-testid="status-history"'):]
    assert "Dismissed" in history and "closed_dismissed</" not in history and "“Other person.”" in history
    assert "(API key)" in history and "decided by" in page
    rows = list(csv.reader(io.StringIO(text(analyst.get("/events/export.csv?status=all")))))
    header, row = rows[0], next(r for r in rows[1:] if r[-1] == event["uuid"])
    assert row[header.index("decision_reason")] == "Other person." and row[header.index("decided_by")].endswith(
        "(API key)") and row[header.index("decided_at")] and row[header.index("top_title")]
    assert row[header.index("top_score")]


def test_status_keys_come_from_the_registry(analyst, screened):
    from app.events.statuses import KEYED
    page = text(analyst.get("/"))
    from app.events.statuses import DECISION_KEYS
    keys = " ".join(DECISION_KEYS)
    assert f'data-status-keys="{keys}"' in page
    for st in KEYED:
        assert f'data-key="{st.key}"' in page
    import pathlib
    js = pathlib.Path("static/js/triage.js").read_text()
    assert '"i"' not in js and '"d"' not in js and '"c"' not in js  # no status key written in the script


def test_bulk_refusals_are_typed(app, tenant, screened, monkeypatch):
    """The service says why it refuses with a type (the inbox words it), not with a message to parse."""
    from sqlalchemy import select
    from app.accounts.models import User
    from app.accounts.services import user_actor
    from app.events import queries, services
    from app.extensions import db
    with app.app_context():
        actor = user_actor(db.session.scalar(select(User).where(User.email == tenant.email)))
        with pytest.raises(services.NoEventsSelected):
            services.bulk_update(actor, {"status": "closed_error", "event_uuids": []})
        monkeypatch.setattr(services, "BULK_MAX", 1)
        with pytest.raises(services.TooManyEvents):
            services.bulk_update_matching(actor, queries.list_params({}), {"status": "closed_error"})
        db.session.rollback()
