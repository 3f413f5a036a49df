"""Events: raised when an entity's check completes with alerts, reviewed by analysts (status and notes).

Raising (DECISIONS "Checks, credit, events"): an alert is a `warning` / `fail` row of the check's
`results_overview`. A re-screen raises events only for alerts that are new or whose record's deciding facts
changed since the entity's previous result for that operation; an alert whose event was closed as
`closed_dismissed` stays quiet until those facts change (`AlertState` remembers, per entity, operation and alert
id, the last fingerprint seen, and the fingerprint at dismissal). `separate` programs get one event per alert (at
most `max_separate_events`); `grouped` programs one event per entity per check.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app import signals
from app.checks.models import Check
from app.core import audit
from app.core.actor import Actor
from app.core.errors import Conflict, Forbidden, Invalid, NotFound
from app.core.schemas import validate
from app.core.types import set_actor, utcnow
from app.entities.services import update_entity
from app.events import alerts, rules
from app.events.models import IDPASS_CHECK_TYPE, AlertState, Event, EventApproval, EventStatusChange
from app.events.queries import get_event, matching_uuids, pending_for
from app.events.schemas import BULK_MAX, ApprovalDecision, EventBulkUpdate, EventUpdate
from app.events.statuses import STATUSES
from app.extensions import db
from app.idpass import services as idpass_services
from app.idpass.rules import DESCRIPTIONS as REASON_DESCRIPTIONS  # the wording of an IDPass's reasons
from app.notes.models import Note
from app.notes.services import create_note

DEFAULT_MAX_SEPARATE = 10


def screening_delta(check: Check, states: dict | None = None) -> list[alerts.Fresh]:
    """The alerts of a completed entity check that raise events, and why (app/events/alerts.py); updates the
    alert memory. `states`: the entity's memory for the operation, when the caller loaded it (a monitor's chunk)."""
    if states is None:
        states = alerts.states_for([check.entity_id], check.check_type).get(check.entity_id, {})
    found = alerts.result_alerts(check.results_overview or [], check.details)
    fresh = alerts.judge(check.entity_id, check.check_type, found, states, check_id=check.id)
    db.session.flush()
    return fresh


def _score(check: Check, index: int | None) -> float | None:
    results = (check.details or {}).get("results")
    if index is None:
        return None
    if isinstance(results, list) and len(results) == len(check.results_overview or []) and index < len(results):
        value = results[index].get("similarity") if isinstance(results[index], dict) else None
        return float(value) if isinstance(value, (int, float)) else None
    return None


def _ids(alert_ids) -> list[int]:
    return [int(a) for a in alert_ids if str(a).isdigit()]


def raise_events(check: Check, fresh: list[alerts.Fresh] | None = None, *, monitor_run_id: int | None = None,
                 notify: bool = True) -> list[Event]:
    """Events for a completed entity check (`fresh`: its delta, when the caller computed it); a report e-mail is
    queued when any were raised (unless `notify` is off: a monitor run sends one of its own)."""
    if check.kind != "entity" or check.entity_id is None:
        return []
    if fresh is None:
        fresh = screening_delta(check)
    if not fresh:
        return []
    program = check.program
    common = dict(account_id=check.account_id, program_id=check.program_id, entity_id=check.entity_id,
                  check_id=check.id, check_type=check.check_type, check_summary=(check.check_summary or "")[:1000],
                  monitor_run_id=monitor_run_id)
    matches = [f for f in fresh if f.reason != alerts.DELISTED]
    delisted = [f for f in fresh if f.reason == alerts.DELISTED]
    events: list[Event] = []
    if matches and program.event_grouping == "grouped":
        best = max(matches, key=lambda f: (_score(check, f.index) or 0.0))
        reason = alerts.NEW_MATCH if any(f.reason == alerts.NEW_MATCH for f in matches) else alerts.MATCH_CHANGED
        events.append(Event(**common, check_response_index=None,
                            check_result_ids=[i for f in matches for i in _ids(f.alert_ids)],
                            top_title=(best.title or "")[:500], top_score=_score(check, best.index), reason=reason,
                            changes=[c for f in matches for c in f.changes] or None))
    else:
        limit = program.max_separate_events or DEFAULT_MAX_SEPARATE
        for f in matches[:limit]:
            events.append(Event(**common, check_response_index=f.index, check_result_ids=_ids(f.alert_ids),
                                top_title=(f.title or "")[:500], top_score=_score(check, f.index), reason=f.reason,
                                changes=f.changes or None))
    for f in delisted:
        events.append(Event(**common, check_response_index=None, check_result_ids=_ids(f.alert_ids),
                            top_title=(f.title or "")[:500], top_score=None, reason=f.reason, changes=f.changes))
    db.session.add_all(events)
    db.session.flush()
    for event in events:
        signals.announce(event, "event.created")
        for alert_id in (str(i) for i in event.check_result_ids):
            state = db.session.get(AlertState, (check.entity_id, check.check_type, alert_id))
            if state is not None:
                state.last_event_id = event.id
    if notify:
        signals.events_raised.send(check, events=events)  # the report e-mail (app.notify)
    return events


def raise_idpass_event(idpass) -> Event | None:
    """An event for an entity's IDPass that finished with the verdict `review`, so analysts decide it in the same
    inbox as screening alerts (issue 20 §4). Its source is the IDPass's ID check; the title names why a person must
    look. `passed` and `failed` are decided by the rules (app/idpass/rules.py) and raise nothing; an adhoc IDPass
    has no entity to attach an event to (as adhoc checks)."""
    shell = idpass.shell_check
    if idpass.verification_status != "review" or idpass.entity_id is None or shell is None:
        return None
    reasons = [REASON_DESCRIPTIONS.get(code, code) for code in idpass.reasons or []]
    title = "Identity verification needs review" + (f": {reasons[0]}" if reasons else "")
    if len(reasons) > 1:
        title += f" (+{len(reasons) - 1} more)"
    event = Event(account_id=idpass.account_id, program_id=idpass.program_id, entity_id=idpass.entity_id,
                  id_check_id=shell.id, check_type=IDPASS_CHECK_TYPE,
                  check_summary=(shell.outcome_summary or "")[:1000],
                  check_response_index=None, check_result_ids=[], top_title=title[:500], top_score=None)
    db.session.add(event)
    db.session.flush()
    signals.announce(event, "event.created")
    return event


# ------------------------------------------------------------------ review

NO_UPDATES = "There are no updates to apply: send a status, a note, or both."


class NoEventsSelected(Invalid):
    """A bulk decision without any event."""


class TooManyEvents(Invalid):
    """A bulk decision on a filter that matches more than BULK_MAX events (refused rather than cut)."""


def update_event(actor: Actor, event_uuid, data: Any, *, entity_changes: dict | None = None) -> Event:
    """Change the status and/or add a note (neither: 400). The event row is locked for the change, as in the
    bulk update. A note sent with a status change is the decision's reason: immutable, like the history.

    `entity_changes` (the portal's "confirm and rate" step: `risk_level`, `add_flags`) updates the event's
    entity in the same transaction when a match is confirmed (requested, under four eyes): audited as an
    entity update, flags only added."""
    actor.require("analyst")
    event = get_event(actor, event_uuid, for_update=True)
    body = validate(EventUpdate, data)
    if body.status is None and body.note is None:
        raise Invalid(NO_UPDATES, errors={"status": [NO_UPDATES], "note": [NO_UPDATES]})
    rules.require_reviewable(actor, event)
    if body.status is not None:
        set_status(actor, event, body.status, note=body.note)
        if entity_changes and body.status == "closed_confirmed":
            _rate_entity(actor, event, entity_changes)
    else:
        add_note(actor, event, body.note)
    db.session.flush()
    return event


def _rate_entity(actor: Actor, event: Event, changes: dict) -> None:
    entity = event.entity
    values: dict = {}
    if changes.get("risk_level"):
        values["risk_level"] = changes["risk_level"]
    added = [f for f in changes.get("add_flags") or [] if f not in (entity.flags or [])]
    if added:
        values["flags"] = [*(entity.flags or []), *added]
    if values:
        update_entity(actor, entity.uuid, values)


def add_note(actor: Actor, event: Event, text: str, *, reason: bool = False) -> Note:
    """A note of the event (`event_uuid` set); a decision's `reason` is immutable."""
    rules.require_reviewable(actor, event)
    signals.announce(event, "event.updated")
    return create_note(actor, event.entity.uuid, {"note_text": text}, event=event, is_immutable=reason)


PENDING = "A closing of this event awaits a second review: approve or reject it first."


def pending_approval(event: Event) -> EventApproval | None:
    return pending_for([event.id]).get(event.id)


def set_status(actor: Actor, event: Event, status: str, *, note: str | None = None) -> EventStatusChange | None:
    """Move the event to `status`, recording who, when, with which request and why (`note`, kept as the change's
    immutable reason). The same status again changes nothing; its note is then an ordinary note.

    Under the program's four-eyes policy a closing that needs a second person is only requested: a pending
    approval (maker, status, note) is recorded and the status stays (None is returned). While one is pending,
    other status changes are refused (409). Dismissing a strong hit needs a reason under any policy."""
    if status not in STATUSES:
        raise Invalid.field("status", f"Must be one of: {', '.join(STATUSES)}.")
    rules.require_reviewable(actor, event)
    before = event.status
    if before == status:
        if note is not None:
            add_note(actor, event, note)
        return None
    if pending_approval(event) is not None:
        raise Conflict(PENDING)
    if note is None and rules.dismissal_needs_reason(event, status):
        raise Invalid(f"{event.event_number} is a strong hit: give the reason for dismissing it.",
                      errors={"note": ["A reason is required to dismiss a strong hit (a high score or a "
                                       "sanctions list)."]})
    reason = add_note(actor, event, note, reason=True) if note is not None else None
    if rules.needs_second_review(event, status):
        _request_approval(actor, event, status, reason)
        return None
    return _apply_status(actor, event, status, reason)


def _apply_status(actor: Actor, event: Event, status: str, reason: Note | None,
                  approval: EventApproval | None = None) -> EventStatusChange:
    before = event.status
    event.status = status
    signals.announce(event, "event.updated")
    if status == "investigating" and actor.user_id is not None:
        event.assigned_user_id = actor.user_id  # taking an event up makes it yours ("assigned to me")
    elif actor.kind == "api_key":
        event.assigned_user_id = None  # spec "Event status": an API change clears the portal's attribution
    change = EventStatusChange(event_id=event.id, from_status=before, to_status=status,
                               api_reference=actor.api_reference,
                               note_id=reason.id if reason is not None else None, note=reason,
                               approval_id=approval.id if approval is not None else None, approval=approval)
    set_actor(change, "actor", actor)
    db.session.add(change)
    _remember_dismissal(event, status)
    _settle_id_check(actor, event, status)
    audit.record(actor, "event.status_changed", "event", event.uuid,
                 {"status": [before, status], **({"note_uuid": reason.uuid} if reason is not None else {}),
                  **({"approval": _approval_ref(approval)} if approval is not None else {})})
    return change


def _approval_ref(approval: EventApproval) -> dict:
    return {"requested_status": approval.requested_status, "requested_by": approval.requested_by_label,
            "requested_at": approval.requested_at, "request_reference": approval.request_reference,
            "decision": approval.decision, "decided_by": approval.decided_by_label if approval.decision else None}


def _request_approval(actor: Actor, event: Event, status: str, reason: Note | None) -> EventApproval:
    approval = EventApproval(event_id=event.id, requested_status=status, requested_at=utcnow(),
                             request_note_id=reason.id if reason is not None else None, request_note_row=reason,
                             request_reference=actor.api_reference)
    set_actor(approval, "requested_by", actor)
    db.session.add(approval)
    db.session.flush()
    signals.announce(event, "event.updated")
    audit.record(actor, "event.approval_requested", "event", event.uuid,
                 {"requested_status": status, "status": event.status,
                  **({"note_uuid": reason.uuid} if reason is not None else {})})
    return approval


def decide_approval(actor: Actor, event_uuid, data: Any) -> Event:
    """The second person's decision on a pending closing: `approve` applies the requested status (the change's
    actor is the approver, its reason the maker's note, `approval_id` the request), `reject` drops it. The maker
    may withdraw (reject) their own request, never approve it (403): an API key and the user who created it are
    one person. No pending request: 409."""
    actor.require("analyst")
    event = get_event(actor, event_uuid, for_update=True)
    body = validate(ApprovalDecision, data)
    rules.require_reviewable(actor, event)
    approval = pending_approval(event)
    if approval is None:
        raise Conflict("No closing of this event awaits a second review.")
    if body.decision == "approve" and rules.is_maker(actor, approval):
        raise Forbidden("You asked for this closing: a second person must approve it.")
    note = add_note(actor, event, body.note, reason=True) if body.note is not None else None
    approval.decision = "approved" if body.decision == "approve" else "rejected"
    approval.decided_at = utcnow()
    approval.decision_note_id, approval.decision_note_row = (note.id, note) if note is not None else (None, None)
    approval.decision_reference = actor.api_reference
    set_actor(approval, "decided_by", actor)
    db.session.flush()
    signals.announce(event, "event.updated")
    audit.record(actor, f"event.approval_{approval.decision}", "event", event.uuid,
                 {**_approval_ref(approval), **({"note_uuid": note.uuid} if note is not None else {})})
    if approval.decision == "approved":
        _apply_status(actor, event, approval.requested_status, approval.request_note_row, approval)
    db.session.flush()
    return event


def bulk_update(actor: Actor, data: Any) -> list[Event]:
    """One status (and optionally one note) for several events, in one transaction: every event is locked,
    changed and audited as if reviewed one by one (its own history row, and the note as its reason). An event
    not on the account makes the whole request a 404; nothing is written."""
    actor.require("analyst")
    try:
        body = validate(EventBulkUpdate, data)
    except Invalid as exc:
        if "event_uuids" in (exc.errors or {}) and not (data or {}).get("event_uuids"):
            raise NoEventsSelected(exc.message, errors=exc.errors) from None
        raise
    wanted = list(dict.fromkeys(body.event_uuids))
    events = list(db.session.scalars(
        select(Event).where(Event.account_id == actor.account_id, Event.uuid.in_(wanted),
                            Event.deleted_at.is_(None)).order_by(Event.id).with_for_update(of=Event)))
    if len(events) != len(wanted):
        raise NotFound("One or more events were not found; nothing was changed.")
    for event in events:
        if event.entity.deleted_at is not None:
            raise NotFound("One or more events were not found; nothing was changed.")
        set_status(actor, event, body.status, note=body.note)
    db.session.flush()
    return events


def bulk_update_matching(actor: Actor, params, data: Any) -> list[Event]:
    """`bulk_update` for every event of a list filter (`queries.list_params`), in list order; more than
    BULK_MAX matching events are refused (400) rather than cut."""
    uuids = matching_uuids(actor, params, BULK_MAX + 1)
    if len(uuids) > BULK_MAX:
        raise TooManyEvents(f"More than {BULK_MAX} events match this filter: narrow it down, or select events one "
                            "by one.", errors={"event_uuids": [f"At most {BULK_MAX} events at once."]})
    return bulk_update(actor, {**data, "event_uuids": [str(u) for u in uuids]})


def _settle_id_check(actor: Actor, event: Event, status: str) -> None:
    """An IDPass review decided: its ID check follows the analyst (dismissed, the concern does not hold: accepted;
    confirmed, it does: not accepted; reopened, or closed as a duplicate or an error: the verdict's `pending` again)
    and the IDPass's timeline says who decided (app/idpass/services.py settle_shell)."""
    if event.idpass is None:
        return
    accepted = {"closed_dismissed": True, "closed_confirmed": False}.get(status)
    idpass_services.settle_shell(event.idpass, accepted=accepted, by=actor.name, reference=event.event_number)


def _remember_dismissal(event: Event, status: str) -> None:
    """closed_dismissed keeps the event's alerts quiet until their deciding facts change; reopening lifts it."""
    for alert_id in (str(i) for i in event.check_result_ids or []):
        state = db.session.get(AlertState, (event.entity_id, event.check_type, alert_id))
        if state is None:
            continue
        state.dismissed_fingerprint = state.fingerprint if status == "closed_dismissed" else None


# ------------------------------------------------------------------ reactions to other domains (app.signals)

@signals.check_completed.connect
def _raise_for_check(check, **_) -> None:
    raise_events(check)


@signals.idpass_closed.connect
def _raise_for_idpass(idpass, **_) -> None:
    raise_idpass_event(idpass)


signals.follow(signals.entity_archived, signals.entity_unarchived, Event.archived_at, Event.entity_id, "events",
               unless=Event.deleted_at)
