"""Events: list, show (with notes), review (status and/or note)."""
from __future__ import annotations

import uuid

from flask import request

from app.api.base import actor, bp, endpoint, listing, single
from app.core.transactions import commit
from app.events import queries, services
from app.events.schemas import ApprovalDecision, EventOut, EventShowOut, EventUpdate

TAG = "Events"
LIST_QUERY = {"filter[program_uuid]": "events of the program", "filter[entity_uuid]": "events of the entity",
              "filter[check_uuid]": "events raised by the check (a group: by its checks)",
              "filter[status]": "new, investigating, closed_dismissed, closed_duplicate, closed_error, "
                                "closed_confirmed; or open / closed",
              "filter[check_type]": "the operation of the check", "filter[created_at_from]": "ISO 8601 date-time",
              "filter[created_at_to]": "ISO 8601 date-time",
              "filter[assigned_to]": "me: the events the calling user took up (investigating); none for an "
                                     "API key",
              "filter[awaiting_review]": "true: the events whose closing awaits a second person's approval",
              "filter[reason]": "new_match, match_changed, delisted: why the screening raised it",
              "filter[monitor_uuid]": "events raised by the monitor's runs",
              "filter[monitor_run_uuid]": "events raised by one run (a monitor's or a one-off run)",
              "sort": "created_at, status (- for descending; "
                                                                     "default -created_at)",
              "archived": "true / false"}


@bp.get("/events")
@endpoint(summary="List events", tag=TAG, response=EventOut, is_list=True, errors=[400], query=LIST_QUERY)
def list_events():
    return listing(EventOut, queries.list_events(actor(), queries.list_params(request.args)))


@bp.get("/entities/<uuid:entity_uuid>/events")
@endpoint(summary="List an entity's events", tag=TAG, response=EventOut, is_list=True, errors=[400, 404],
          query={k: v for k, v in LIST_QUERY.items() if k != "filter[entity_uuid]"})
def list_entity_events(entity_uuid: uuid.UUID):
    return listing(EventOut, queries.list_entity_events(actor(), entity_uuid, queries.list_params(request.args)))


@bp.get("/events/<uuid:event_uuid>")
@endpoint(summary="Show an event with its notes and status history", tag=TAG, response=EventShowOut, errors=[404])
def show_event(event_uuid: uuid.UUID):
    return single(EventShowOut, queries.with_notes(queries.get_event(actor(), event_uuid)))


@bp.patch("/events/<uuid:event_uuid>")
@endpoint(summary="Review an event: status and/or note", tag=TAG, body=EventUpdate, response=EventShowOut,
          errors=[400, 403, 404, 409],
          description="Neither status nor note: 400 (there are no updates to apply). A status change is recorded "
                      "in the event's status_history (who, from, to, when, api_reference); a note sent with it is "
                      "the decision's reason, an immutable note (403 on PATCH and DELETE /notes). A note sent "
                      "alone is an ordinary note of the event (event_uuid). An archived event, or one of an "
                      "archived entity or program: 409. A change by an API key clears the portal's "
                      "assignment (assigned to me). Under the program's review_policy four_eyes_* a closing "
                      "(closed_*) that needs a second person is recorded as pending_approval and the status "
                      "stays; while one is pending other status changes answer 409. Dismissing a strong hit "
                      "(score >= the program's strong_hit_score, or a sanctions list) without a note: 400.")
def update_event(event_uuid: uuid.UUID, body: dict):
    return _reviewed(services.update_event, event_uuid, body)


def _reviewed(write, event_uuid: uuid.UUID, body: dict):
    """A review write, committed; the event answered as shown (notes, history, approvals)."""
    event = write(actor(), event_uuid, body)
    commit()
    return single(EventShowOut, queries.with_notes(queries.get_event(actor(), event.uuid)))


@bp.post("/events/<uuid:event_uuid>/approval")
@endpoint(summary="Approve or reject a closing that awaits a second review", tag=TAG, body=ApprovalDecision,
          response=EventShowOut, errors=[400, 403, 404, 409, 422],
          description="Four-eyes review (program review_policy): approve applies the pending_approval's status "
                      "(the status history names the approver, and the request's maker, time and note), reject "
                      "drops it; the note is kept as an immutable note of the event. The person who asked for "
                      "the closing cannot approve it (403): an API key and the portal user who created it count "
                      "as one person. No pending closing: 409.")
def decide_approval(event_uuid: uuid.UUID, body: dict):
    return _reviewed(services.decide_approval, event_uuid, body)
