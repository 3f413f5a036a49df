"""Four-eyes review of strong hits (issue 18 §5): under `four_eyes_strong` no single person closes a strong hit,
by any path (API PATCH, bulk, the portal's form, the triage keys, the approval itself); an API key and the user
who created it are one person; under any policy dismissing a strong hit needs a reason."""
from __future__ import annotations

import re
import uuid

import pytest
from sqlalchemy import select

from tests.checks.conftest import save_lists
from tests.factories import ApiClient
from tests.portal.conftest import _fresh_rate_limits, login, text  # noqa: F401 (fixtures)


def launch(tenant, entity_uuid):
    r = tenant.api.post(f"/entities/{entity_uuid}/checks", json={"check_types": ["pep_sanction_check"]})
    assert r.status_code == 202, r.get_json()


@pytest.fixture
def strong(app, tenant, work):
    """A four_eyes_strong program with one event on a sanctions hit (score 1.00)."""
    save_lists(app)
    program = tenant.program(review_policy="four_eyes_strong")
    assert program["review_policy"] == "four_eyes_strong" and program["strong_hit_score"] == 0.9
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                           birth_date="1961-03-14")
    launch(tenant, entity["uuid"])
    work()
    [event] = tenant.api.get(f"/entities/{entity['uuid']}/events").get_json()["data"]
    return {"program": program, "entity": entity, "event": event}


def key_of(app, tenant, *, by_user_email: str | None = None, label: str = "Second key") -> ApiClient:
    """Another API key of the account: created by the CLI (its own person), or by a portal user."""
    from app.accounts.models import Account, User
    from app.accounts.services import cli_actor, create_api_key, user_actor
    from app.core.transactions import commit
    from app.extensions import db
    with app.app_context():
        if by_user_email:
            creator = user_actor(db.session.scalar(select(User).where(User.email == by_user_email)))
        else:
            creator = cli_actor(db.session.get(Account, tenant.account_id))
        _key, secret = create_api_key(creator, label=label)
        commit()
    return ApiClient(app, secret)


def shown(tenant, event):
    return tenant.api.get(f"/events/{event['uuid']}").get_json()["data"]


def test_a_closing_waits_for_a_second_person(app, tenant, strong):
    event = strong["event"]
    url = f"/events/{event['uuid']}"
    r = tenant.api.patch(url, json={"status": "closed_dismissed", "note": "Different person."})
    assert r.status_code == 200
    data = r.get_json()["data"]
    assert data["status"] == "new"  # unchanged until approved
    pending = data["pending_approval"]
    assert pending["requested_status"] == "closed_dismissed" and pending["note"] == "Different person."
    assert pending["requested_by"]["type"] == "api_key" and pending["requested_at"]
    assert tenant.api.get("/events?filter[awaiting_review]=true").get_json()["meta"]["total"] == 1
    # While pending: another change is refused, the maker cannot approve, a reason note is immutable.
    assert tenant.api.patch(url, json={"status": "closed_error"}).status_code == 409
    assert tenant.api.post(f"{url}/approval", json={"decision": "approve"}).status_code == 403
    assert tenant.api.post(f"{url}/approval", json={"decision": "maybe"}).status_code == 400
    checker = key_of(app, tenant)
    r = checker.post(f"{url}/approval", json={"decision": "approve", "note": "Agreed."})
    assert r.status_code == 200, r.get_json()
    data = r.get_json()["data"]
    assert data["status"] == "closed_dismissed" and data["pending_approval"] is None
    change = data["status_history"][-1]
    assert change["to_status"] == "closed_dismissed" and change["changed_by"]["label"] == "Second key"
    assert change["reason"] == "Different person."
    approval = change["approval"]
    assert approval["requested_by"]["label"] == "Default key" and approval["decided_by"]["label"] == "Second key"
    assert approval["decision"] == "approved" and approval["decision_note"] == "Agreed."
    assert data["decision"]["approval"]["decided_at"]
    assert checker.post(f"{url}/approval", json={"decision": "approve"}).status_code == 409  # nothing pending


def test_reject_drops_the_request_and_the_maker_may_withdraw(app, tenant, strong):
    url = f"/events/{strong['event']['uuid']}"
    tenant.api.patch(url, json={"status": "closed_confirmed", "note": "Same person."})
    r = tenant.api.post(f"{url}/approval", json={"decision": "reject", "note": "Withdrawn: asked for more."})
    assert r.status_code == 200
    data = r.get_json()["data"]
    assert data["status"] == "new" and data["pending_approval"] is None
    assert [a["decision"] for a in data["approvals"]] == ["rejected"]
    assert tenant.api.patch(url, json={"status": "investigating"}).get_json()["data"]["status"] == "investigating"


def test_a_key_and_the_user_who_created_it_are_one_person(app, tenant, strong, factory):
    from app.accounts.models import User
    from app.accounts.services import user_actor
    from app.core.errors import Forbidden
    from app.events import services
    from app.extensions import db
    analyst = factory.user(tenant, "admin")
    own_key = key_of(app, tenant, by_user_email=analyst, label="Analyst's key")
    url = f"/events/{strong['event']['uuid']}"
    assert own_key.patch(url, json={"status": "closed_dismissed", "note": "No."}).status_code == 200
    with app.app_context():
        person = user_actor(db.session.scalar(select(User).where(User.email == analyst)))
        with pytest.raises(Forbidden):
            services.decide_approval(person, uuid.UUID(strong["event"]["uuid"]), {"decision": "approve"})
        db.session.rollback()
    assert tenant.api.post(f"{url}/approval", json={"decision": "approve"}).status_code == 200  # another person


def test_dismissing_a_strong_hit_needs_a_reason_under_any_policy(app, tenant, work):
    save_lists(app)
    program = tenant.program()  # single
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    launch(tenant, entity["uuid"])
    work()
    [event] = tenant.api.get(f"/entities/{entity['uuid']}/events").get_json()["data"]
    r = tenant.api.patch(f"/events/{event['uuid']}", json={"status": "closed_dismissed"})
    assert r.status_code == 400 and "note" in r.get_json()["errors"]
    r = tenant.api.patch(f"/events/{event['uuid']}", json={"status": "closed_dismissed", "note": "Other man."})
    assert r.get_json()["data"]["status"] == "closed_dismissed"  # single: one person decides


def test_no_single_person_path_closes_a_strong_hit(app, tenant, strong, factory, login):
    """Every path that can close an event, taken by one person, leaves the strong hit open."""
    event = strong["event"]
    url = f"/events/{event['uuid']}"
    analyst_email = factory.user(tenant, "admin")  # may create API keys: one person, two doors
    portal = login(analyst_email)

    def still_open():
        data = shown(tenant, event)
        assert data["status"] in ("new", "investigating"), data["status"]
        return data

    def withdraw():
        data = still_open()
        if data["pending_approval"]:
            assert portal.post(f"/events/{event['uuid']}/approval", {"decision": "reject"}).status_code in (302, 200)
        assert still_open()["pending_approval"] is None

    # 1. API PATCH (and the same key approving).
    tenant.api.patch(url, json={"status": "closed_confirmed", "note": "Match."})
    assert tenant.api.post(f"{url}/approval", json={"decision": "approve"}).status_code == 403
    tenant.api.post(f"{url}/approval", json={"decision": "reject"})
    still_open()
    # 2. The portal's decision form, then its approve button by the same user.
    portal.post(f"/events/{event['uuid']}/status", {"status": "closed_dismissed", "note": "Not him."})
    assert still_open()["pending_approval"]["requested_by"]["username"] == analyst_email
    assert portal.post(f"/events/{event['uuid']}/approval", {"decision": "approve"}).status_code == 403
    withdraw()
    # 3. The triage keys (the inbox row's buttons, htmx).
    portal.htmx_post(f"/events/{event['uuid']}/status", {"status": "closed_confirmed", "from": "inbox"})
    assert portal.htmx_post(f"/events/{event['uuid']}/approval", {"decision": "approve", "from": "inbox"}) \
        .status_code == 403
    withdraw()
    # 4. Bulk (selected, and all matching).
    portal.post("/events/bulk", {"event_uuids": [event["uuid"]], "status": "closed_error", "note": "Test."})
    notice = text(portal.get("/"))  # the flash says what happened: nothing was set, one closing waits
    assert "1 closing awaits a second person" in notice and "set to" not in notice
    withdraw()
    portal.post("/events/bulk?status=all", {"scope": "all", "status": "closed_duplicate", "note": "Dup."})
    withdraw()
    # The same person through the API key they created: still one person.
    own = key_of(app, tenant, by_user_email=analyst_email, label="Analyst's key")
    own.patch(url, json={"status": "closed_dismissed", "note": "Not him."})
    assert portal.post(f"/events/{event['uuid']}/approval", {"decision": "approve"}).status_code == 403
    still_open()


def test_the_portal_shows_the_second_review(app, tenant, strong, factory, login):
    """The inbox's "Awaiting second review" tab with its count, the event page's card with approve / reject (keys
    a and r, listed in `?`), and the history naming both people."""
    from tests.portal.conftest import text
    event = strong["event"]
    maker, checker = login(factory.user(tenant, "analyst")), login(factory.user(tenant, "analyst"))
    page = text(maker.get(f"/events/{event['uuid']}"))
    assert 'data-testid="second-review-hint"' in page and "required to dismiss this strong hit" in page
    assert 'data-testid="exact-match"' in page  # exact name and date of birth: Confirm is the primary action
    confirm = re.search(r'<button class="([^"]*)"[^>]*data-testid="decide-closed_confirmed"', page).group(1)
    dismiss = re.search(r'<button class="([^"]*)"[^>]*data-testid="decide-closed_dismissed"', page).group(1)
    assert "btn-primary" in confirm and "btn-primary" not in dismiss
    maker.post(f"/events/{event['uuid']}/status", {"status": "closed_dismissed", "note": "Other man."})
    inbox = text(checker.get("/?status=review"))
    assert re.search(r'data-testid="tab-review"[^>]*>Awaiting second review <span class="tab-count">1<', inbox)
    assert 'data-testid="awaiting-review"' in inbox and 'data-key="a"' in inbox
    assert "<kbd>a</kbd>" in inbox and "<kbd>r</kbd>" in inbox  # the keyboard help
    mine = text(maker.get(f"/events/{event['uuid']}"))
    assert 'data-testid="pending-approval"' in mine and "Withdraw my request" in mine and 'value="approve"' not in mine
    theirs = text(checker.get(f"/events/{event['uuid']}"))
    assert 'value="approve"' in theirs
    r = checker.htmx_post(f"/events/{event['uuid']}/approval?status=review",
                          {"decision": "approve", "note": "Agreed.", "from": "inbox"})
    assert r.status_code == 200 and text(r).lstrip().startswith("<tr")
    page = text(checker.get(f"/events/{event['uuid']}"))
    history = page[page.index('data-testid="status-history"'):]
    assert "asked by " + maker.email in history and "approved by " + checker.email in history
    assert "“Other man.”" in history and "“Agreed.”" in history


def test_confirming_a_sanctions_match_rates_the_entity_in_the_same_step(app, tenant, work, factory, login):
    from tests.portal.conftest import text
    save_lists(app)
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville", risk_level="low")
    launch(tenant, entity["uuid"])
    work()
    [event] = tenant.api.get(f"/entities/{entity['uuid']}/events").get_json()["data"]
    analyst = login(factory.user(tenant, "analyst"))
    page = text(analyst.get(f"/events/{event['uuid']}"))
    assert 'data-testid="confirm-rate"' in page and 'name="entity_flags" value="sanction" checked' in page
    analyst.post(f"/events/{event['uuid']}/status", {"status": "closed_confirmed", "note": "Same man.",
                                                      "entity_update": "1", "entity_risk_level": "high",
                                                      "entity_flags": ["sanction"]})
    rated = tenant.api.get(f"/entities/{entity['uuid']}").get_json()["data"]
    assert rated["risk_level"] == "high" and rated["flags"] == ["sanction"]
    from app.core.models import AuditLog
    from app.extensions import db
    with app.app_context():  # the entity update is audited like any other, by the analyst
        entry = db.session.scalars(select(AuditLog).where(AuditLog.action == "entity.updated")).one()
        assert entry.changes["risk_level"] == ["low", "high"] and entry.actor_type == "user"
    assert tenant.api.get(f"/events/{event['uuid']}").get_json()["data"]["status"] == "closed_confirmed"


def test_the_checks_pdf_names_both_people(app, tenant, strong, tmp_path):
    from tests.checks.test_reports import pdf_text
    url = f"/events/{strong['event']['uuid']}"
    tenant.api.patch(url, json={"status": "closed_dismissed", "note": "Different person."})
    key_of(app, tenant).post(f"{url}/approval", json={"decision": "approve", "note": "Agreed."})
    check_uuid = tenant.api.get(url).get_json()["data"]["check_uuid"]
    flat = " ".join(pdf_text(tenant.api.get(f"/checks/{check_uuid}/pdf").data, tmp_path).split())
    assert "reason: “Different person.”" in flat
    assert "asked by Default key (API key)" in flat and "approved by Second key (API key)" in flat
    assert "“Agreed.”" in flat


@pytest.mark.parametrize("policy, facts, status, waits", [
    ("single", {"sanctions": True, "score": 1.0}, "closed_confirmed", False),          # today's behaviour
    ("four_eyes_strong", {"sanctions": False, "score": 0.89}, "closed_dismissed", False),  # below 0.90
    ("four_eyes_strong", {"sanctions": False, "score": 0.90}, "closed_dismissed", True),   # at the threshold
    ("four_eyes_strong", {"sanctions": True, "score": 0.50}, "closed_error", True),        # a sanctions list
    ("four_eyes_strong", {"sanctions": True, "score": 1.0}, "investigating", False),       # not a closing
    ("four_eyes_all", {"sanctions": False, "score": 0.30}, "closed_duplicate", True),      # every closing
    ("four_eyes_all", {"sanctions": False, "score": 0.30}, "investigating", False),
])
def test_which_closings_wait_for_a_second_person(monkeypatch, policy, facts, status, waits):
    """The policy table of §5: review_policy x strong_hit_score (default 0.90) x sanctions x closing."""
    from types import SimpleNamespace

    from app.events import rules
    monkeypatch.setattr(rules, "hit_facts", lambda event: {"pep": False, "exact": False, **facts})
    event = SimpleNamespace(program=SimpleNamespace(review_policy=policy, strong_hit_score=0.90))
    assert rules.needs_second_review(event, status) is waits
    assert rules.dismissal_needs_reason(event, "closed_dismissed") is rules.is_strong(event)
