"""Rules tested at the service level: services called directly with an Actor, no HTTP in between.

Each test works in one app context and rolls back at the end (nothing is committed, so no job leaves: the
enqueues wait for a commit that never comes)."""
from __future__ import annotations

import dataclasses
import uuid

import pytest
from sqlalchemy import select

from app.accounts.models import Account, User
from app.accounts.services import cli_actor, user_actor
from app.checks import services as checks
from app.checks.models import Check
from app.core.errors import Forbidden, InsufficientCredit, Invalid, NotFound
from app.core.transactions import rollback
from app.entities.services import create_entity
from app.events import services as events
from app.events.models import Event
from app.extensions import db
from app.programs.services import create_program
from app.providers import ProviderError
from app.providers.base import ProviderResult, ResultRow


@pytest.fixture
def actor(app, tenant):
    """The tenant's admin as a portal user; the test runs in an app context and rolls back at the end."""
    with app.app_context():
        admin = db.session.scalar(select(User).where(User.account_id == tenant.account_id))
        yield user_actor(admin, api_reference=str(uuid.uuid4()))
        rollback()


def _entity(actor, **program_fields):
    program = create_program(actor, {"program_name": f"Program {uuid.uuid4().hex[:6]}", **program_fields})
    return create_entity(actor, program.uuid, {"entity_type": "individual", "first_name": "Ada",
                                               "last_name": "Lovelace", "phone1": "+61412345678",
                                               "email1": "ada@example.com"})


def _completed(actor, entity, rows: list[tuple[str, str, list[str], str]]) -> Check:
    """A complete pep_sanction_check of the entity with these results_overview rows (title, status, ids, fp)."""
    check = Check(account_id=actor.account_id, kind="entity", entity_id=entity.id, program_id=entity.program_id,
                  check_type="pep_sanction_check", status="complete", subject={}, credits=0,
                  results_overview=[{"title": t, "status": s, "alert_ids": ids, "fingerprint": fp}
                                    for t, s, ids, fp in rows])
    db.session.add(check)
    db.session.flush()
    return check


# ------------------------------------------------------------------ new-or-changed alerts

def test_a_rescreen_raises_events_only_for_new_or_changed_alerts(actor):
    entity = _entity(actor)
    first = events.raise_events(_completed(actor, entity, [("A", "warning", ["1"], "fa"), ("B", "fail", ["2"], "fb"),
                                                           ("C", "pass", [], "")]))
    assert [e.top_title for e in first] == ["A", "B"]
    same = events.raise_events(_completed(actor, entity, [("A", "warning", ["1"], "fa"),
                                                          ("B", "fail", ["2"], "fb")]))
    assert same == []
    changed = events.raise_events(_completed(actor, entity, [("A", "warning", ["1"], "fa2"),
                                                             ("B", "fail", ["2"], "fb"),
                                                             ("D", "warning", ["3"], "fd")]))
    assert [e.top_title for e in changed] == ["A", "D"]


def test_a_dismissed_alert_stays_quiet_until_its_facts_change(actor):
    entity = _entity(actor)
    [event] = events.raise_events(_completed(actor, entity, [("A", "warning", ["1"], "fa")]))
    events.update_event(actor, event.uuid, {"status": "closed_dismissed", "note": "Not the listed person."})
    assert events.raise_events(_completed(actor, entity, [("A", "warning", ["1"], "fa")])) == []
    _completed(actor, entity, [])  # absent from one screening, back with the same facts: still quiet
    assert events.raise_events(_completed(actor, entity, [("A", "warning", ["1"], "fa")])) == []
    assert [e.top_title for e in events.raise_events(
        _completed(actor, entity, [("A", "warning", ["1"], "fa-new")]))] == ["A"]


def test_grouped_programs_get_one_event_per_check(actor):
    entity = _entity(actor, event_grouping="grouped")
    [event] = events.raise_events(_completed(actor, entity, [("A", "warning", ["1"], "fa"),
                                                             ("B", "fail", ["2"], "fb")]))
    assert event.check_response_index is None and event.check_result_ids == [1, 2]


def test_a_completed_check_raises_its_events_through_the_signal(actor):
    """complete_check announces the check; the events domain raises the events in the same transaction."""
    entity = _entity(actor)
    check = _completed(actor, entity, [])
    check.status = "processing"
    db.session.flush()
    checks.complete_check(check.id, ProviderResult(
        results_overview=[ResultRow(title="A", status="warning", alert_ids=["7"], fingerprint="f")],
        details={}, check_summary="1 alert", provider="test"))
    assert [e.check_result_ids for e in db.session.scalars(select(Event).where(Event.check_id == check.id))] == [[7]]


# ------------------------------------------------------------------ bulk updates

def test_bulk_update_changes_every_event_or_none(actor):
    entity = _entity(actor)
    raised = events.raise_events(_completed(actor, entity, [("A", "warning", ["1"], "fa"),
                                                            ("B", "warning", ["2"], "fb")]))
    uuids = [str(e.uuid) for e in raised]
    with pytest.raises(NotFound):
        events.bulk_update(actor, {"event_uuids": [*uuids, str(uuid.uuid4())], "status": "investigating"})
    assert {e.status for e in raised} == {"new"}
    changed = events.bulk_update(actor, {"event_uuids": uuids, "status": "closed_duplicate"})
    assert {e.status for e in changed} == {"closed_duplicate"} and len(changed) == 2
    viewer = dataclasses.replace(actor, role="viewer")
    with pytest.raises(Forbidden):
        events.bulk_update(viewer, {"event_uuids": uuids, "status": "new"})


# ------------------------------------------------------------------ launches: config, prices, credit

def test_launch_resolves_each_config_with_the_defaults(actor):
    entity = _entity(actor)
    group = checks.launch_entity_checks(actor, entity.uuid, {
        "check_types": ["pep_sanction_check", "phone_check"],
        "config": {"pep_sanction_check": {"similarity_threshold": "90"}}})
    pep, phone = group.children
    assert str(pep.config["similarity_threshold"]) == "90" and pep.config["search_type"] == "medium_search"
    assert phone.config is None  # an operation without options
    with pytest.raises(Invalid) as stray:
        checks.launch_entity_checks(actor, entity.uuid, {"check_types": ["phone_check"],
                                                          "config": {"pep_sanction_check": {}}})
    assert "config.pep_sanction_check" in stray.value.errors


def test_launch_charges_the_current_price_and_refuses_what_credit_cannot_cover(actor):
    from app.billing import services as billing
    entity = _entity(actor)
    operator = cli_actor(db.session.get(Account, actor.account_id))
    billing.set_price(operator, "phone_check", 7)
    assert billing.prices()["phone_check"] == 7
    before = billing.balance(actor)
    check = checks.launch_entity_checks(actor, entity.uuid, {"check_types": ["phone_check"]})
    assert check.credits == 7 and billing.balance(actor) == before - 7
    billing.adjust(actor, -(before - 7) + 6, "leave six credits")
    assert billing.balance(actor) == 6
    assert billing.prices_and_balance(actor.account_id) == ({**billing.prices(), "phone_check": 7}, 6)
    assert billing.prices_and_balance(10 ** 9) == (billing.prices(), 0)  # no ledger row: nothing
    with pytest.raises(InsufficientCredit):
        checks.launch_entity_checks(actor, entity.uuid, {"check_types": ["phone_check"]})


def test_credit_adjustments_need_a_reason_and_never_go_below_zero(actor):
    from app.billing import services as billing
    balance = billing.balance(actor)
    with pytest.raises(Invalid):
        billing.adjust(actor, -1, "  ")
    with pytest.raises(Invalid):
        billing.adjust(actor, 0, "nothing")
    with pytest.raises(InsufficientCredit):
        billing.adjust(actor, -(balance + 1), "more than there is")
    entry = billing.adjust(actor, -balance, "back to zero")
    assert entry.balance_after == 0 == billing.balance(actor)
    assert billing.top_up(actor, 5, "invoice 1").balance_after == 5


# ------------------------------------------------------------------ runs: a group follows its children

def test_a_group_parent_follows_its_children_and_a_failed_child_is_refunded(actor):
    from app.billing import services as billing
    entity = _entity(actor)
    group = checks.launch_entity_checks(actor, entity.uuid, {"check_types": ["phone_check", "email_check"]})
    phone, email = group.children
    charged = billing.balance(actor)
    assert checks.start_check(phone.id).check_type == "phone_check"
    checks.complete_check(phone.id, ProviderResult(results_overview=[ResultRow(title="ok", status="pass")],
                                                   details={}, check_summary="fine", provider="test"))
    assert group.status == "processing"  # one child still open
    checks.start_check(email.id)
    assert checks.finish_run(email.id, None, ProviderError("upstream said no")) == "failed"
    assert group.status == "complete" and group.outcome == "pass"
    assert group.check_summary == "2 checks: 1 complete, 1 failed."
    assert billing.balance(actor) == charged + email.credits  # refunded once
    assert checks.start_check(email.id) is None  # an ended check is not run again


def test_finish_run_retries_a_transient_error_while_attempts_remain(actor):
    entity = _entity(actor)
    check = checks.launch_entity_checks(actor, entity.uuid, {"check_types": ["phone_check"]})
    transient = ProviderError("timeout", retryable=True)
    for attempt in range(1, checks.MAX_ATTEMPTS):
        checks.start_check(check.id)
        assert checks.finish_run(check.id, None, transient) == "retry" and check.status == "pending"
    checks.start_check(check.id)
    assert check.attempts == checks.MAX_ATTEMPTS
    assert checks.finish_run(check.id, None, transient) == "failed" and check.status == "failed"


# ------------------------------------------------------------------ dispatches: only the current job acts

def test_a_superseded_job_neither_starts_nor_finishes_a_check(actor):
    """Each dispatch names a new job; a job the recovery sweeper presumed lost (and dispatched again) that wakes
    up later changes nothing: it does not start the check, and its result is dropped."""
    from app.billing import services as billing
    entity = _entity(actor)
    check = checks.launch_entity_checks(actor, entity.uuid, {"check_types": ["phone_check"]})
    charged = billing.balance(actor)
    first = check.job_id
    assert first and check.enqueued_at is not None
    assert checks.start_check(check.id, first) is not None and check.attempts == 1
    # the sweeper: lost while running, dispatched again under a new job
    assert checks.redispatch_check(check.id, first, "its run did not end") is True
    second = check.job_id
    assert second != first and check.status == "pending"
    assert check.recoveries[-1]["why"] == "its run did not end; queued again" and check.recoveries[-1]["attempt"] == 1
    assert checks.redispatch_check(check.id, first, "again") is False  # a second sweeper saw the old job
    result = ProviderResult(results_overview=[], details={}, check_summary="fine", provider="test")
    assert checks.finish_run(check.id, result, None, first) == "superseded" and check.status == "pending"
    assert checks.start_check(check.id, first) is None  # the old job wakes up: nothing
    assert checks.start_check(check.id, second) is not None and check.attempts == 2
    assert checks.finish_run(check.id, result, None, second) == "complete"
    assert checks.finish_run(check.id, result, None, second) == "superseded"  # a second end changes nothing
    assert checks.give_up_check(check.id, second, "lost") is False and check.status == "complete"
    assert billing.balance(actor) == charged  # one charge, no refund


def test_give_up_fails_and_refunds_once(actor):
    from app.billing import services as billing
    entity = _entity(actor)
    before = billing.balance(actor)
    check = checks.launch_entity_checks(actor, entity.uuid, {"check_types": ["phone_check"]})
    token = check.job_id
    assert checks.give_up_check(check.id, "check-0-stale", "lost") is False and check.status == "pending"
    assert checks.give_up_check(check.id, token, "the run was lost 3 times") is True
    assert check.status == "failed" and check.failed_reason == "the run was lost 3 times"
    assert checks.give_up_check(check.id, token, "the run was lost 3 times") is False
    assert billing.balance(actor) == before  # charged, then refunded exactly once


