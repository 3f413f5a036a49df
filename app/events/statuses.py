"""The six event statuses, in one place: which are open and which closed, how they read, which key sets them.

Models, schemas, list filters and counts (`queries.conditions_for`, `status_counts`), the portal's templates and
`static/js/triage.js` (through data attributes rendered from here) all read this registry."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class EventStatus:
    code: str
    label: str  # how the status reads in the portal, PDFs and CSVs
    closed: bool
    key: str | None = None  # the triage key that sets it (inbox and event page)
    short: str | None = None  # the inbox row's button
    action: str | None = None  # the event page's button
    help: str | None = None  # the line of the keyboard help


REGISTRY: tuple[EventStatus, ...] = (
    EventStatus("new", "New", closed=False),
    EventStatus("investigating", "Investigating", closed=False, key="i", short="Investigate",
                action="Investigating", help="Investigating (takes the event: assigned to you)"),
    EventStatus("closed_dismissed", "Dismissed", closed=True, key="d", short="Dismiss",
                action="Dismiss: not a match", help="Close as dismissed (not a match)"),
    EventStatus("closed_duplicate", "Duplicate", closed=True),
    EventStatus("closed_error", "Error", closed=True),
    EventStatus("closed_confirmed", "Confirmed match", closed=True, key="c", short="Confirm",
                action="Confirm match", help="Close as confirmed match"),
)

BY_CODE: dict[str, EventStatus] = {s.code: s for s in REGISTRY}
STATUSES: tuple[str, ...] = tuple(s.code for s in REGISTRY)
OPEN_STATUSES: tuple[str, ...] = tuple(s.code for s in REGISTRY if not s.closed)
CLOSED_STATUSES: tuple[str, ...] = tuple(s.code for s in REGISTRY if s.closed)
LABELS: dict[str, str] = {s.code: s.label for s in REGISTRY}
KEYS: dict[str, str] = {s.key: s.code for s in REGISTRY if s.key}  # key -> status, in registry order
KEYED: tuple[EventStatus, ...] = tuple(s for s in REGISTRY if s.key)
INITIAL = "new"

# The keys of a second review (four eyes): approve or reject the closing that awaits it.
APPROVAL_KEYS: dict[str, dict[str, str]] = {
    "a": {"decision": "approve", "short": "Approve", "help": "Approve the closing that awaits your second review"},
    "r": {"decision": "reject", "short": "Reject", "help": "Reject that closing (its maker: withdraw it)"},
}
# Every key that acts on an event (the triage script learns them from `data-status-keys`).
DECISION_KEYS: tuple[str, ...] = tuple(KEYS) + tuple(APPROVAL_KEYS)

# The API's type of a status (pydantic and OpenAPI read the six values from here).
StatusCode = Literal[STATUSES]  # type: ignore[valid-type]


def label(code: str | None) -> str:
    return LABELS.get(code or "", code or "")


def is_closed(code: str | None) -> bool:
    return code in CLOSED_STATUSES
