"""Event reads: one event, lists with the filters and sorts of DECISIONS.md, notes and status history."""
from __future__ import annotations


from dataclasses import replace
from typing import Any, Iterator, Mapping

from sqlalchemy import Select, Uuid, column, false, func, or_, select, table
from sqlalchemy.orm import contains_eager, lazyload, selectinload

from app.accounts.models import User
from app.checks.models import Check
from app.core.actor import Actor
from app.core.errors import Invalid, NotFound
from app.core.listing import (ListParams, Page, archived_conditions, choice, datetime_value, paginate,
                              parse_list_params, uuid_value)
from app.entities.models import Entity
from app.entities.queries import get_entity
from app.events import alerts
from app.events.models import IDPASS_CHECK_TYPE, Event, EventApproval, EventStatusChange
from app.events.statuses import CLOSED_STATUSES, OPEN_STATUSES, STATUSES
from app.extensions import db
from app.idchecks.models import IdCheck
from app.notes.models import Note
from app.programs.models import Program
from app.providers.registry import CHECK_TYPES

# What raises events: the screening operations, and an IDPass whose verdict is `review` (app/events/services.py).
CHECK_TYPE_FILTER = (*CHECK_TYPES, IDPASS_CHECK_TYPE)
FILTERS = {
    "program_uuid": uuid_value,
    "entity_uuid": uuid_value,
    "check_uuid": uuid_value,
    "status": choice(*STATUSES, "open", "closed"),
    "check_type": choice(*CHECK_TYPE_FILTER),
    "created_at_from": datetime_value,
    "created_at_to": datetime_value,
    "assigned_to": choice("me"),
    "awaiting_review": choice("true"),
    "reason": choice("new_match", "match_changed", "delisted"),
    "monitor_uuid": uuid_value,
    "monitor_run_uuid": uuid_value,
}
# The monitors' tables, named without importing the monitors domain (it raises events through this one).
_monitors = table("monitors", column("id"), column("uuid", Uuid), column("account_id"))
_monitor_runs = table("monitor_runs", column("id"), column("uuid", Uuid), column("monitor_id"), column("account_id"))
SORTS = ("created_at", "status")
DEFAULT_SORT = "-created_at"


def list_params(args: Mapping[str, str], **kw) -> ListParams:
    params = parse_list_params(args, filters=FILTERS, sorts=SORTS, default_sort=DEFAULT_SORT, **kw)
    lower, upper = params.filters.get("created_at_from"), params.filters.get("created_at_to")
    if lower is not None and upper is not None and lower > upper:
        raise Invalid.field("filter[created_at_from]", "Must not be after filter[created_at_to].")
    return params


def _live(actor: Actor) -> Select:
    return select(Event).where(Event.account_id == actor.account_id, Event.deleted_at.is_(None))


def sources(*, whole: bool = False) -> tuple:
    """Loader options for the sources of a list of events, read for all rows at once (one query per kind): only
    their keys (the API's `check_uuid`, the numbers), or `whole` (the inbox's strong-hit rule reads a check's
    details). The actors of the sources are not read."""
    if whole:
        return (selectinload(Event.check).lazyload("*"), selectinload(Event.id_check).lazyload("*"))
    return (selectinload(Event.check).load_only(Check.id, Check.uuid).lazyload("*"),
            selectinload(Event.id_check).load_only(IdCheck.id, IdCheck.uuid).lazyload("*"))


def get_event(actor: Actor, event_uuid, *, for_update: bool = False) -> Event:
    """A live event of a live entity of the account, or NotFound; `for_update` locks its row (a review). The
    entity is read from the join that checks it is live (one join, not two)."""
    stmt = (_live(actor).join(Event.entity).options(contains_eager(Event.entity))
            .where(Event.uuid == event_uuid, Entity.deleted_at.is_(None)))
    if for_update:
        stmt = stmt.with_for_update(of=Event)
    event = db.session.scalar(stmt)
    if event is None:
        raise NotFound("Event not found.")
    return event


def id_check_event(actor: Actor, id_check_id: int | None) -> Event | None:
    """The live event raised for an ID check (an IDPass under review), if any."""
    if id_check_id is None:
        return None
    return db.session.scalar(_live(actor).where(Event.id_check_id == id_check_id).order_by(Event.id.desc()).limit(1))


def conditions_for(actor: Actor, params: ListParams, *, entity_id: int | None = None) -> list:
    f = params.filters
    conditions = [Event.account_id == actor.account_id, Event.deleted_at.is_(None)]
    if entity_id is not None:
        conditions.append(Event.entity_id == entity_id)
    if "program_uuid" in f:
        conditions.append(Event.program_id.in_(select(Program.id).where(
            Program.uuid == f["program_uuid"], Program.account_id == actor.account_id)))
    if "entity_uuid" in f:
        conditions.append(Event.entity_id.in_(select(Entity.id).where(
            Entity.uuid == f["entity_uuid"], Entity.account_id == actor.account_id)))
    if "reason" in f:
        conditions.append(Event.reason == f["reason"])
    if "monitor_uuid" in f:
        conditions.append(Event.monitor_run_id.in_(select(_monitor_runs.c.id).where(
            _monitor_runs.c.monitor_id.in_(select(_monitors.c.id).where(
                _monitors.c.uuid == f["monitor_uuid"], _monitors.c.account_id == actor.account_id)))))
    if "monitor_run_uuid" in f:
        conditions.append(Event.monitor_run_id.in_(select(_monitor_runs.c.id).where(
            _monitor_runs.c.uuid == f["monitor_run_uuid"], _monitor_runs.c.account_id == actor.account_id)))
    if "check_uuid" in f:  # the check's events; for a group, its children's (events come from the operations);
        # or the event of an IDPass under review, by its ID check's uuid
        named = select(Check.id).where(Check.uuid == f["check_uuid"], Check.account_id == actor.account_id)
        conditions.append(or_(
            Event.check_id.in_(select(Check.id).where(
                Check.account_id == actor.account_id, or_(Check.id.in_(named), Check.parent_id.in_(named)))),
            Event.id_check_id.in_(select(IdCheck.id).where(IdCheck.uuid == f["check_uuid"],
                                                           IdCheck.account_id == actor.account_id))))
    if "status" in f:
        status = f["status"]
        if status == "open":
            conditions.append(Event.status.in_(OPEN_STATUSES))
        elif status == "closed":
            conditions.append(Event.status.in_(CLOSED_STATUSES))
        else:
            conditions.append(Event.status == status)
    if "check_type" in f:
        conditions.append(Event.check_type == f["check_type"])
    if "created_at_from" in f:
        conditions.append(Event.created_at >= f["created_at_from"])
    if "created_at_to" in f:
        conditions.append(Event.created_at <= f["created_at_to"])
    if f.get("awaiting_review") == "true":  # a closing waits for a second person (four eyes)
        conditions.append(Event.id.in_(_pending_ids()))
    if f.get("assigned_to") == "me":  # taken up (investigating) by the caller; an API key has no user
        conditions.append(Event.assigned_user_id == actor.user_id if actor.user_id is not None else false())
    conditions += archived_conditions(Event.archived_at, params)
    return conditions


def _pending_ids():
    return select(EventApproval.event_id).where(EventApproval.decision.is_(None))


def _order(params: ListParams):
    column = Event.status if params.sort_key == "status" else Event.created_at
    return (column.desc(), Event.id.desc()) if params.descending else (column.asc(), Event.id.asc())


def list_events(actor: Actor, params: ListParams, *, entity_id: int | None = None,
                whole_sources: bool = False) -> Page:
    """A page of events with what their shapes show (note counts, decisions, pending closings), each read for the
    whole page at once; `whole_sources`: their checks with details (the inbox), else only the checks' keys."""
    conditions = conditions_for(actor, params, entity_id=entity_id)
    order = _order(params)
    page = paginate(select(Event).options(*sources(whole=whole_sources)).order_by(*order), params,
                    count_stmt=select(func.count(Event.id)).where(*conditions),
                    ids_stmt=select(Event.id).where(*conditions).order_by(*order))
    attach_note_counts(page.items)
    attach_decisions(page.items)
    attach_pending(page.items)
    return page


def list_entity_events(actor: Actor, entity_uuid, params: ListParams) -> Page:
    entity = get_entity(actor, entity_uuid)
    return list_events(actor, params, entity_id=entity.id)


def _note_counts(event_ids: list[int]) -> dict[int, int]:
    """Live notes per event: the notes people wrote (a status change writes none; it is in the history)."""
    if not event_ids:
        return {}
    return dict(db.session.execute(
        select(Note.event_id, func.count(Note.id)).where(Note.event_id.in_(event_ids), Note.deleted_at.is_(None))
        .group_by(Note.event_id)).all())


def attach_note_counts(events: list[Event]) -> None:
    counts = _note_counts([e.id for e in events])
    for event in events:
        event.notes_count = counts.get(event.id, 0)


def _closing(changes: list[EventStatusChange], status: str) -> EventStatusChange | None:
    """The change that closed an event now in `status` (the last one into it), or None while it is open."""
    if status not in CLOSED_STATUSES:
        return None
    return next((c for c in reversed(changes) if c.to_status == status), None)


def _decisions(events: list[Event]) -> dict[int, EventStatusChange]:
    """The change that closed each closed event (who decided, when, why), by event id."""
    closed = [e for e in events if e.status in CLOSED_STATUSES]
    changes: dict[int, list[EventStatusChange]] = {}
    if closed:
        for change in db.session.scalars(select(EventStatusChange).options(*_change_loads()).where(
                EventStatusChange.event_id.in_([e.id for e in closed])).order_by(EventStatusChange.id)):
            changes.setdefault(change.event_id, []).append(change)
    return {e.id: c for e in closed if (c := _closing(changes.get(e.id, []), e.status)) is not None}


def attach_decisions(events: list[Event]) -> None:
    """`decision` on each event: the status change that closed it, or None while it is open."""
    decisions = _decisions(events)
    for event in events:
        event.decision = decisions.get(event.id)


def _quiet_note(relationship, in_session: bool = False) -> tuple:
    """A reason or review note read with its change or request: its text only; its entity and program (the
    event's, already in the session) and author are read if ever asked for. `in_session`: the event's live notes
    were just read, so each is found in the session when asked for (a deleted one is read then)."""
    return (lazyload(relationship),) if in_session else (selectinload(relationship).lazyload("*"),)


def _approval_loads(in_session: bool = False) -> tuple:
    return (*_quiet_note(EventApproval.request_note_row, in_session),
            *_quiet_note(EventApproval.decision_note_row, in_session))


def _change_loads(in_session: bool = False) -> tuple:
    """What a status change shows: its reason (a note) and, for an approved closing, the request it carries out."""
    return (*_quiet_note(EventStatusChange.note, in_session),
            selectinload(EventStatusChange.approval).options(*_approval_loads(in_session)))


def event_notes(event: Event) -> list[Note]:
    """The live notes of the event, oldest first, with their authors; their entity and program are the event's."""
    return list(db.session.scalars(select(Note).options(lazyload(Note.entity), lazyload(Note.program))
                                   .where(Note.event_id == event.id, Note.deleted_at.is_(None))
                                   .order_by(Note.created_at, Note.id)))


def pending_for(event_ids: list[int]) -> dict[int, EventApproval]:
    """The closing that awaits a second person, per event id (at most one each), with the maker's note."""
    if not event_ids:
        return {}
    return {a.event_id: a for a in db.session.scalars(
        select(EventApproval).options(*_quiet_note(EventApproval.request_note_row))
        .where(EventApproval.event_id.in_(event_ids), EventApproval.decision.is_(None)))}


def attach_pending(events: list[Event]) -> None:
    """`pending_approval` on each event: the closing that awaits a second person, or None."""
    found = pending_for([e.id for e in events])
    for event in events:
        event.pending_approval = found.get(event.id)


def approvals(event: Event, *, notes_read: bool = False) -> list[EventApproval]:
    return list(db.session.scalars(select(EventApproval).options(*_approval_loads(notes_read))
                                   .where(EventApproval.event_id == event.id)
                                   .order_by(EventApproval.requested_at, EventApproval.id)))


def with_notes(event: Event) -> Event:
    """The event with its notes, status history, decision and four-eyes requests (the show endpoint and the
    event page)."""
    event.notes = event_notes(event)
    event.notes_count = len(event.notes)
    # reasons and review notes are notes of the event: the live ones are in the session now
    event.status_history = status_history(event, notes_read=True)
    event.decision = _closing(event.status_history, event.status)
    event.approvals = approvals(event, notes_read=True)
    event.pending_approval = next((a for a in event.approvals if a.decision is None), None)
    return event


def event_hits(event: Event) -> list[tuple[int, dict]]:
    """The check results an event is about, as (row index, result): its own row for a `separate` event, every
    alerting row for a `grouped` one (only where the operation's details list its results row by row)."""
    check = event.check
    if check is None:  # an IDPass under review: its findings are the IDPass's (the event page shows them)
        return []
    results = (check.details or {}).get("results")
    if not isinstance(results, list):
        return []
    if event.check_response_index is not None:
        index = event.check_response_index
        return [(index, results[index])] if index < len(results) else []
    return [(i, results[i]) for i, row in enumerate(check.results_overview or [])
            if row["status"] in ("warning", "fail") and i < len(results)]


def status_history(event: Event, *, notes_read: bool = False) -> list[EventStatusChange]:
    """The event's status changes, oldest first, with their reasons (and approvals); `notes_read`: the event's
    notes are in the session (`with_notes`), so the reasons are found there."""
    return list(db.session.scalars(select(EventStatusChange).options(*_change_loads(notes_read))
                                   .where(EventStatusChange.event_id == event.id)
                                   .order_by(EventStatusChange.created_at, EventStatusChange.id)))


def _utc_text(value) -> str | None:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value else None


def _approval_entry(approval: EventApproval | None) -> dict | None:
    if approval is None:
        return None
    return {"status": approval.requested_status, "requested_by": approval.requested_by_label,
            "requested_at": _utc_text(approval.requested_at), "note": approval.note, "decision": approval.decision,
            "decided_by": approval.decided_by_label if approval.decision else None,
            "decided_at": _utc_text(approval.decided_at), "decision_note": approval.decision_note}


def report_entry(event: Event) -> dict:
    """An event as printed in a check's or an entity's PDF (the auditor's copy): its status, the hit, every status
    change with who, when and why, and the notes people wrote, with the same names and words as the portal."""
    history = status_history(event)
    trail = approvals(event)
    # Reasons and review notes are printed with their change or review, not again as notes.
    reasons = {h.note_id for h in history} | {a.request_note_id for a in trail} | {a.decision_note_id for a in trail}
    return {"event_number": event.event_number, "uuid": str(event.uuid), "status": event.status,
            "check_type": event.check_type, "title": event.top_title, "score": event.top_score,
            "created_at": _utc_text(event.created_at), "reason": event.reason,
            "reason_label": alerts.REASON_LABELS.get(event.reason) if event.reason else None,
            "changes": [{"label": c.get("label"), "before": c.get("before"), "after": c.get("after")}
                        for c in event.changes or []],
            "history": [{"from": h.from_status, "to": h.to_status, "by": h.actor_label, "at": _utc_text(h.created_at),
                         "reason": h.reason, "approval": _approval_entry(h.approval)} for h in history],
            "approvals": [_approval_entry(a) for a in trail if a.decision != "approved"],
            "notes": [{"text": n.note_text, "by": n.created_by_label, "immutable": n.is_immutable,
                       "at": _utc_text(n.created_at)} for n in event_notes(event) if n.id not in reasons]}


def neighbours(actor: Actor, event: Event, params: ListParams) -> tuple[Any | None, Any | None]:
    """The previous and next event of the current filter and order (for the review page): their `id` and `uuid`
    (the links), not the events."""
    conditions = conditions_for(actor, params)
    column = Event.status if params.sort_key == "status" else Event.created_at
    key = (getattr(event, "status" if params.sort_key == "status" else "created_at"), event.id)
    after = (column > key[0]) | ((column == key[0]) & (Event.id > key[1]))
    before = (column < key[0]) | ((column == key[0]) & (Event.id < key[1]))
    keys = select(Event.id, Event.uuid)
    if params.descending:
        nxt = keys.where(*conditions, before).order_by(column.desc(), Event.id.desc()).limit(1)
        prv = keys.where(*conditions, after).order_by(column.asc(), Event.id.asc()).limit(1)
    else:
        nxt = keys.where(*conditions, after).order_by(column.asc(), Event.id.asc()).limit(1)
        prv = keys.where(*conditions, before).order_by(column.desc(), Event.id.desc()).limit(1)
    return db.session.execute(prv).first(), db.session.execute(nxt).first()




def status_counts(actor: Actor, params: ListParams) -> dict[str, int]:
    """Events per status for the list's other filters (the inbox's tabs), with `open`, `closed`, `all` and
    `review` (a closing awaits a second person)."""
    without_status = replace(params, filters={k: v for k, v in params.filters.items()
                                              if k not in ("status", "awaiting_review")})
    rows = dict(db.session.execute(select(Event.status, func.count(Event.id))
                                   .where(*conditions_for(actor, without_status)).group_by(Event.status)).all())
    counts = {status: int(rows.get(status, 0)) for status in STATUSES}
    counts["open"] = sum(counts[s] for s in OPEN_STATUSES)
    counts["closed"] = sum(counts[s] for s in CLOSED_STATUSES)
    counts["all"] = counts["open"] + counts["closed"]
    counts["review"] = int(db.session.scalar(select(func.count(Event.id)).where(
        *conditions_for(actor, without_status), Event.id.in_(_pending_ids()))) or 0)
    return counts


def matching_uuids(actor: Actor, params: ListParams, limit: int) -> list:
    """The uuids of the events of a filter, in list order, at most `limit` (a bulk action on "all matching")."""
    return list(db.session.scalars(select(Event.uuid).where(*conditions_for(actor, params))
                                   .order_by(*_order(params)).limit(limit)))


EXPORT_LIMIT = 50_000
EXPORT_COLUMNS = ("event_number", "status", "created_at", "program", "entity_number", "entity_name",
                  "reference_number", "check_number", "check_type", "top_title", "top_score", "notes_count",
                  "assigned_to", "decided_at", "decided_by", "decision_reason", "event_uuid")


def _utc(value) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else ""


def export_rows(actor: Actor, params: ListParams, limit: int = EXPORT_LIMIT) -> Iterator[list]:
    """The events of a filter as CSV rows (header first), in list order, at most `limit`, read in batches; a
    closed event carries its decision (when, who, the reason given)."""
    yield list(EXPORT_COLUMNS)
    conditions = conditions_for(actor, params)
    stmt = (select(Event, User.email).outerjoin(User, User.id == Event.assigned_user_id).options(*sources())
            .where(*conditions).order_by(*_order(params)).limit(limit).execution_options(yield_per=1000))
    batch: list = []

    def flush(rows: list) -> Iterator[list]:
        counts = _note_counts([e.id for e, _ in rows])
        decisions = _decisions([e for e, _ in rows])
        for event, assignee in rows:
            decision = decisions.get(event.id)
            yield [event.event_number, event.status, _utc(event.created_at),
                   event.program.program_name, event.entity.entity_number, event.entity.entity_name or "",
                   event.entity.reference_number or "", event.check_number, event.check_type,
                   event.top_title or "", "" if event.top_score is None else f"{event.top_score:.2f}",
                   counts.get(event.id, 0), assignee or "",
                   _utc(decision.created_at) if decision else "", decision.actor_label if decision else "",
                   (decision.reason or "") if decision else "", str(event.uuid)]

    for row in db.session.execute(stmt):
        batch.append(tuple(row))
        if len(batch) == 1000:
            yield from flush(batch)
            batch = []
    if batch:
        yield from flush(batch)
