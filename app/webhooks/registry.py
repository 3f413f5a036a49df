"""The webhook event types: one registry that the schemas, the OpenAPI document, the portal's form and the outbox
read. Each type names the API resource its payload carries (`data`: the API's own shape of the record, as the
list endpoints show it) and how that shape is chosen for a record; lower domains announce a change by its name
(`app.signals.announce`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from pydantic import BaseModel

from app.checks.schemas import AdhocCheckOut, CheckOut
from app.events import queries as event_queries
from app.events.schemas import EventOut
from app.idpass.schemas import IdPassOut
from app.monitors.schemas import MonitorRunOut


@dataclass(frozen=True)
class EventType:
    name: str
    label: str
    description: str
    schemas: tuple[type[BaseModel], ...]          # the payload's `data` shapes, for the OpenAPI document
    shape: Callable[[Any], type[BaseModel]]       # the shape of one record
    prepare: Callable[[list], None] | None = None  # loads what the shape reads beyond the row, for many at once


def _prepare_events(events: list) -> None:
    """What the API's event lists attach: note counts, the closing decision, a pending four-eyes request."""
    event_queries.attach_note_counts(events)
    event_queries.attach_decisions(events)
    event_queries.attach_pending(events)


def _check_shape(check) -> type[BaseModel]:
    return AdhocCheckOut if check.kind == "adhoc" else CheckOut


class TestPing(BaseModel):
    """The `data` of a test delivery (POST /webhook-endpoints/{uuid}/test)."""
    endpoint_uuid: str
    message: str


TEST = "webhook.test"

EVENT_TYPES: dict[str, EventType] = {t.name: t for t in (
    EventType("check.completed", "Check completed",
              "A check (entity or adhoc, or a group of them) completed; data is the check as GET /checks/{uuid} "
              "lists it (without details: fetch them when needed). Checks written by a monitor run announce "
              "their events and the run instead.",
              (CheckOut, AdhocCheckOut), _check_shape),
    EventType("check.failed", "Check failed",
              "A check failed (its credits refunded); failed_reason says why.", (CheckOut, AdhocCheckOut),
              _check_shape),
    EventType("event.created", "Event raised",
              "A screening or an IDPass raised an event for the analysts (its review starts in status new).",
              (EventOut,), lambda _: EventOut, _prepare_events),
    EventType("event.updated", "Event updated",
              "An event's status changed, a note was added, or a four-eyes closing was requested or decided "
              "(one delivery per event and transaction, with the state after it).", (EventOut,),
              lambda _: EventOut, _prepare_events),
    EventType("monitor_run.completed", "Monitor run ended",
              "A monitor's run (or a one-off run over a program) ended: status complete or failed.",
              (MonitorRunOut,), lambda _: MonitorRunOut),
    EventType("idpass.updated", "IDPass progressed",
              "The person opened the IDPass link (status opened) or gave consent and started (in_progress).",
              (IdPassOut,), lambda _: IdPassOut),
    EventType("idpass.completed", "IDPass ended",
              "An IDPass reached a terminal status (complete, expired, failed, cancelled) with its verdict.",
              (IdPassOut,), lambda _: IdPassOut),
    EventType(TEST, "Test delivery",
              "Sent by POST /webhook-endpoints/{uuid}/test to that endpoint only (whatever it subscribes to).",
              (TestPing,), lambda _: TestPing),
)}
NAMES = tuple(EVENT_TYPES)


def label(name: str) -> str:
    kind = EVENT_TYPES.get(name)
    return kind.label if kind is not None else name
