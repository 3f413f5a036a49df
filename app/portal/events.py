"""Events in the portal: the inbox (the analyst's home page), the event page, triage (status keys, notes, bulk
decisions with one note), and the CSV export of the current filter.

Filters live in the URL with short names (`status`, `program`, `type`, `from`, `to`, `mine`, `entity`, `sort`,
`page`) and go through the events service's `list_params`, so the inbox, the API's `GET /events` and the next /
previous links of the event page agree. Dates are days in the user's time zone."""
from __future__ import annotations

import uuid
from datetime import datetime, time, timedelta
from urllib.parse import quote

from flask import Response, flash, redirect, request, stream_with_context, url_for
from flask_login import login_required

from app.core.csvsafe import csv_lines
from app.core.errors import DomainError, Invalid
from app.core.transactions import commit, rollback
from app.events import exports, queries, rules, services, statuses
from app.events.schemas import BULK_MAX
from app.portal import bp
from app.portal import idpass as idpass_portal
from app.portal.base import (error_text, go_htmx, is_htmx, parse_listing, portal_actor, query_string, render,
                             role_required)
from app.portal.forms import NoteForm
from app.portal.jobs import job_redirect
from app.portal.limits import heavy_limits
from app.portal.profile import display_zone
from app.programs import queries as program_queries
from app.programs.models import RISK_LEVELS
from app.providers.registry import check_type_label

INBOX_ARGS = ("status", "program", "type", "from", "to", "mine", "entity", "reason", "monitor", "run", "sort",
              "page")
STATUS_TABS = [("open", "Open"), ("new", "New"), ("investigating", "Investigating"),
               ("review", "Awaiting second review"), ("closed", "Closed"), ("all", "All")]
STATUS_LABELS = statuses.LABELS
# The keys of the triage shortcuts and the status each sets (the buttons show the same keys).
STATUS_KEYS = statuses.KEYS
INBOX_PER_PAGE = 50
# Inbox parameter -> the events service's list parameter (dates and `mine` are translated first).
INBOX_TO_LIST = {"status": "filter[status]", "program": "filter[program_uuid]", "type": "filter[check_type]",
                 "entity": "filter[entity_uuid]", "from": "filter[created_at_from]", "to": "filter[created_at_to]",
                 "mine": "filter[assigned_to]", "reason": "filter[reason]", "monitor": "filter[monitor_uuid]",
                 "run": "filter[monitor_run_uuid]", "sort": "sort", "page": "page"}


@bp.record_once
def _status_registry(state) -> None:
    """Templates (the status badge, the decision buttons, the keyboard help) read the statuses' registry."""
    state.app.jinja_env.globals["event_statuses"] = statuses


def inbox_args(args) -> dict[str, str]:
    """The inbox's URL parameters that are set (the defaults stay out of the URL)."""
    out = {k: args.get(k, "").strip() for k in INBOX_ARGS if args.get(k, "").strip()}
    if out.get("status") == "open":
        out.pop("status")
    return out


def _day(raw: str, end: bool) -> str:
    day = datetime.strptime(raw, "%Y-%m-%d").date()
    local = datetime.combine(day + timedelta(days=1) if end else day, time.min, tzinfo=display_zone())
    if end:
        local -= timedelta(microseconds=1)
    return local.isoformat()


def inbox_params(args: dict[str, str], *, with_args: bool = False):
    """The events service's list parameters for the inbox arguments; a bad value is dropped with a notice."""
    portal = {k: v for k, v in args.items() if k in INBOX_TO_LIST}
    status = portal.pop("status", "open")
    if status == "review":  # the closings that wait for a second person (four eyes), whatever their status
        portal["review"] = "true"
    elif status != "all":
        portal["status"] = status
    if portal.get("mine"):
        portal["mine"] = "me"
    bad_dates = set()
    for short, end in (("from", False), ("to", True)):
        if portal.get(short):
            try:
                portal[short] = _day(portal[short], end)
            except (ValueError, OverflowError):  # not a date; 9999-12-31's next day
                bad_dates.add(short)
    if bad_dates:
        flash("Some filters were not valid and were reset.", "warning")
        portal = {k: v for k, v in portal.items() if k not in bad_dates}
    mapping = {**INBOX_TO_LIST, "per_page": "per_page", "review": "filter[awaiting_review]"}
    params, kept = parse_listing(queries.list_params, {**portal, "per_page": str(INBOX_PER_PAGE)}, mapping)
    if with_args:  # and the list's own parameters (an export job reads them again)
        return params, {mapping[k]: v for k, v in kept.items()}
    return params


def _inbox_context(actor, args: dict[str, str]) -> dict:
    params = inbox_params(args)
    page = queries.list_events(actor, params, whole_sources=True)  # rows ask is_strong (the check's details)
    return {"page": page, "args": args, "counts": queries.status_counts(actor, params),
            "current_status": args.get("status", "open"), "tabs": STATUS_TABS, "status_labels": STATUS_LABELS,
            "programs": program_queries.all_programs(actor), "check_types": queries.CHECK_TYPE_FILTER,
            "check_type_name": check_type_label, "status_keys": STATUS_KEYS, "bulk_max": BULK_MAX,
            "can_approve": lambda e: rules.can_approve(actor, e, e.pending_approval), "is_strong": rules.is_strong,
            "filtered": any(k in args for k in ("program", "type", "from", "to", "mine", "entity"))}


@bp.get("/")
@login_required
def inbox():
    actor = portal_actor()
    return render("events/inbox.html", "events/_inbox_body.html", **_inbox_context(actor, inbox_args(request.args)))


@bp.get("/events/export.csv")
@login_required
@heavy_limits
def events_export():
    """A small export streams now; a large one is written by a job, whose page shows its progress (303)."""
    actor = portal_actor()
    params, api_args = inbox_params(inbox_args(request.args), with_args=True)
    stamp = datetime.now(display_zone()).strftime("%Y%m%d-%H%M")
    job = exports.export_request(actor, api_args, f"events-{stamp}.csv")
    if job is not None:
        commit()
        return job_redirect(job)
    return Response(stream_with_context(csv_lines(queries.export_rows(actor, params))), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="events-{stamp}.csv"'})


# ---------------------------------------------------------------- one event

def _event_context(actor, event, args: dict[str, str]) -> dict:
    params = inbox_params(args)
    previous, following = queries.neighbours(actor, event, params)
    check = event.check
    idpass = event.idpass
    event = queries.with_notes(event)
    pending = event.pending_approval
    return {"event": event, "idpass_review": idpass_portal.review_context(idpass) if idpass is not None else None, "history": event.status_history, "args": args,
            "previous": previous, "following": following, "check": check, "hits": queries.event_hits(event),
            "status_labels": STATUS_LABELS, "status_keys": STATUS_KEYS, "note_form": NoteForm(formdata=None),
            "qs": query_string(args), "can_review": rules.can_review(actor, event), "facts": rules.hit_facts(event),
            "strong": rules.is_strong(event), "second_review": rules.needs_second_review(event, "closed_dismissed"),
            "can_approve": rules.can_approve(actor, event, pending),
            "is_maker": pending is not None and rules.is_maker(actor, pending), "risk_levels": RISK_LEVELS}


@bp.get("/events/<uuid:event_uuid>")
@login_required
def events_show(event_uuid: uuid.UUID):
    actor = portal_actor()
    event = queries.get_event(actor, event_uuid)
    return render("events/show.html", **_event_context(actor, event, inbox_args(request.args)))


def _row(actor, event, args: dict[str, str]):
    """One inbox row after a change, with the status tabs' counts (out of band) kept true."""
    event = queries.get_event(actor, event.uuid)
    queries.attach_note_counts([event])
    queries.attach_pending([event])
    return render("events/_row.html", "events/_row.html", e=event, args=args, status_labels=STATUS_LABELS,
                  check_type_name=check_type_label, status_keys=STATUS_KEYS, focused=True,
                  can_approve=lambda e: rules.can_approve(actor, e, e.pending_approval), is_strong=rules.is_strong,
                  counts=queries.status_counts(actor, inbox_params(args)), tabs=STATUS_TABS,
                  current_status=args.get("status", "open"), row_oob=True)


def _saved(write):
    """Run a review write and commit; a refusal becomes the toast "Not saved: <its reasons>"."""
    try:
        result = write()
        commit()
    except Invalid as exc:
        rollback()
        raise Invalid(f"Not saved: {error_text(exc)}") from None
    return result


def _status_notice(event, status: str) -> str:
    return f"{event.event_number}: {STATUS_LABELS.get(status, status)}."


@bp.post("/events/<uuid:event_uuid>/status")
@role_required("analyst")
def events_set_status(event_uuid: uuid.UUID):
    """One event's status (and an optional note). From the inbox the row is swapped; from the event page the
    analyst moves on to the next event of the filter when `advance` is set and the status changed (the current
    status again, with a note, only adds the note: the analyst stays on the event)."""
    actor = portal_actor()
    args = inbox_args(request.args)
    status = request.form.get("status", "")
    note = (request.form.get("note") or "").strip() or None
    data = {"status": status, **({"note": note} if note else {})}
    before = queries.get_event(actor, event_uuid).status
    entity_changes = None
    if status == "closed_confirmed" and request.form.get("entity_update"):  # confirm and rate in one step
        entity_changes = {"risk_level": request.form.get("entity_risk_level") or None,
                          "add_flags": request.form.getlist("entity_flags")}
    event = _saved(lambda: services.update_event(actor, event_uuid, data, entity_changes=entity_changes))
    pending = services.pending_approval(event)
    notice = (f"{event.event_number}: {STATUS_LABELS[pending.requested_status]} awaits a second person's approval."
              if pending is not None and event.status == before else _status_notice(event, event.status))
    if request.form.get("from") == "inbox" and is_htmx():
        response = _row(actor, event, args)
        response.headers["X-Portal-Notice"] = quote(notice)
        return response
    if event.status == before and pending is None:  # no decision: stay on the event
        flash("Note added; the status was already " + STATUS_LABELS.get(before, before) + "." if note else notice,
              "success")
        return go_htmx(url_for("portal.events_show", event_uuid=event.uuid) + _qs(args) + "#event-notes")
    if request.form.get("advance"):
        following = queries.neighbours(actor, event, inbox_params(args))[1]
        if following is not None:
            flash(notice + " Next event.", "success")
            return go_htmx(url_for("portal.events_show", event_uuid=following.uuid) + _qs(args))
        flash(notice + " That was the last event of this list.", "success")
        return go_htmx(url_for("portal.inbox") + _qs(args))
    flash(notice, "success")
    return go_htmx(url_for("portal.events_show", event_uuid=event.uuid) + _qs(args))


def _qs(args: dict[str, str]) -> str:
    text = query_string(args)
    return "" if text == "?" else text


@bp.post("/events/<uuid:event_uuid>/notes")
@role_required("analyst")
def events_add_note(event_uuid: uuid.UUID):
    actor = portal_actor()
    args = inbox_args(request.args)
    note = request.form.get("note_text") or ""
    try:
        event = services.update_event(actor, event_uuid, {"note": note})
        commit()
    except Invalid as exc:
        rollback()
        message = error_text(exc)
        if is_htmx():
            raise Invalid(f"Note not added: {message}") from None
        flash(f"Note not added: {message}", "error")
        return redirect(url_for("portal.events_show", event_uuid=event_uuid) + _qs(args) + "#event-notes")
    if is_htmx() and request.form.get("from") == "inbox":
        response = _row(actor, event, args)
        response.headers["X-Portal-Notice"] = quote(f"Note added to {event.event_number}.")
        return response
    if is_htmx():
        context = _event_context(actor, queries.get_event(actor, event.uuid), args)
        response = render("events/_notes.html", "events/_notes.html", **context)
        response.headers["X-Portal-Notice"] = quote("Note added.")
        return response
    flash("Note added.", "success")
    return redirect(url_for("portal.events_show", event_uuid=event.uuid) + _qs(args) + "#event-notes")


def _bulk_refusal(exc: DomainError) -> str:
    """The service's reason, in the inbox's words."""
    if isinstance(exc, services.NoEventsSelected):
        return "Select at least one event."
    if isinstance(exc, services.TooManyEvents) or not isinstance(exc, Invalid):
        return exc.message
    return error_text(exc)


@bp.post("/events/bulk")
@role_required("analyst")
def events_bulk():
    """One status and one note for the selected events, or for all events of the filter (at most BULK_MAX)."""
    actor = portal_actor()
    args = inbox_args(request.args)
    note = (request.form.get("note") or "").strip() or None
    data = {"status": request.form.get("status", ""), **({"note": note} if note else {})}
    try:
        if request.form.get("scope") == "all":
            events = services.bulk_update_matching(actor, inbox_params({**args, "page": ""}), data)
        else:
            events = services.bulk_update(actor, {**data, "event_uuids": request.form.getlist("event_uuids")})
        commit()
    except DomainError as exc:
        rollback()
        flash(f"Nothing was changed: {_bulk_refusal(exc)}", "error")
        return go_htmx(url_for("portal.inbox") + _qs(args))
    flash(_bulk_notice(events, data["status"], note), "success")
    return go_htmx(url_for("portal.inbox") + _qs(args))


def _bulk_notice(events: list, status: str, note: str | None) -> str:
    """What a bulk change did: the events now in the status, and those whose closing awaits a second person."""
    waiting = sum(1 for e in events if e.status != status and services.pending_approval(e) is not None)
    done = len(events) - waiting
    parts = [f"{done} event{'s' if done != 1 else ''} set to {STATUS_LABELS.get(status, status)}"
             f"{' with a note' if note else ''}"] if done or not waiting else []
    if waiting:
        parts.append(f"{waiting} closing{'s' if waiting != 1 else ''} await{'s' if waiting == 1 else ''} a second "
                     "person's approval")
    return "; ".join(parts) + "."


@bp.post("/events/<uuid:event_uuid>/approval")
@role_required("analyst")
def events_decide_approval(event_uuid: uuid.UUID):
    """A second person approves or rejects the closing that awaits them (keys a / r); its maker may only
    withdraw it (403 on approve, whatever the path)."""
    actor = portal_actor()
    args = inbox_args(request.args)
    decision = request.form.get("decision", "")
    note = (request.form.get("note") or "").strip() or None
    event = _saved(lambda: services.decide_approval(actor, event_uuid,
                                                    {"decision": decision, **({"note": note} if note else {})}))
    notice = (f"{event.event_number}: approved, {STATUS_LABELS[event.status]}." if decision == "approve"
              else f"{event.event_number}: the closing was rejected; the event stays {STATUS_LABELS[event.status]}.")
    if request.form.get("from") == "inbox" and is_htmx():
        response = _row(actor, event, args)
        response.headers["X-Portal-Notice"] = quote(notice)
        return response
    flash(notice, "success")
    return go_htmx(url_for("portal.events_show", event_uuid=event.uuid) + _qs(args))
