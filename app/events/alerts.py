"""The alert memory: which alerts of a screening raise events, and why (one rule for manual checks and monitors).

Per (entity, operation, alert id) `AlertState` remembers the fingerprint of the alert's deciding facts when last
seen, those facts (for "what changed": before → after), whether the alert was in the entity's latest result for
the operation (`present`), the fingerprint it had when its event was closed as dismissed, and its last event.

A screening's alerts raise an event when they are
- `new_match`: never seen for this entity and operation, or seen, gone, and back (unless dismissed with the same
  facts);
- `match_changed`: the listed record's deciding facts changed since the entity's previous result (a dismissal no
  longer applies);
and an alert that was in the previous result and is not in this one raises
- `delisted`: when its record has left its list, or lost its sanction programmes and PEP positions, and its last
  event is open or was confirmed (the analyst may lift the relationship's restriction with evidence).
Anything else (the same alert, facts unchanged; a list re-published with new timestamps only) raises nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from sqlalchemy import select

from app.events.models import AlertState, Event
from app.events.statuses import OPEN_STATUSES
from app.extensions import db
from app.screening import store

NEW_MATCH, MATCH_CHANGED, DELISTED = "new_match", "match_changed", "delisted"
REASONS = (NEW_MATCH, MATCH_CHANGED, DELISTED)
REASON_LABELS = {NEW_MATCH: "New match", MATCH_CHANGED: "Match changed", DELISTED: "Delisted"}
FACT_LABELS = {"name": "Name", "aliases": "Aliases", "birth_date": "Dates of birth", "nationality": "Nationality",
               "identifiers": "Identifiers", "programmes": "Sanction programmes", "positions": "PEP positions",
               "sanctioned": "Sanctioned", "pep": "PEP", "listed": "On the list"}
MAX_LISTED = 25  # items kept per fact list (aliases of a large record)


@dataclass
class Alert:
    """One alert row of a result: its position, the row, the alert ids, fingerprint and deciding facts."""
    index: int
    row: dict
    facts: dict


@dataclass
class Fresh:
    """An alert that raises an event, and why."""
    index: int | None               # the row of the result (None: a delisting, not in the result)
    row: dict | None
    alert_ids: list[str]
    reason: str
    changes: list[dict] = field(default_factory=list)   # [{"field", "label", "before", "after"}]
    title: str | None = None


def alert_facts(result: dict[str, Any] | None) -> dict[str, Any]:
    """The deciding facts of a screening result (a `details.results` item), as they are shown before → after."""
    if not isinstance(result, dict):
        return {}
    props = result.get("properties") or {}
    record = result.get("record") or {}

    def listed(values) -> list[str]:
        return sorted({str(v) for v in values or () if v})[:MAX_LISTED]

    programmes = [p for s in result.get("sanction_matches") or () for p in (s.get("programs") or [])] or \
        [s.get("authority") for s in result.get("sanction_matches") or () if s.get("authority")]
    positions = [p.get("position") for p in result.get("pep_matches") or () if p.get("position")] + \
        list(props.get("positions") or ())
    return {"record_id": record.get("id") or result.get("record_id"),
            "list": (result.get("explanation") or {}).get("list") or result.get("register"),
            "name": result.get("name"), "aliases": listed(props.get("aliases")),
            "birth_date": listed(props.get("birth_date")), "nationality": listed(props.get("nationality")),
            "programmes": listed(programmes), "positions": listed(positions),
            "sanctioned": bool(result.get("is_sanctioned", True)), "pep": bool(result.get("is_pep", False))}


def result_alerts(results_overview: list[dict], details: dict | None) -> list[Alert]:
    """The alert rows of a result with their deciding facts (from `details.results`, when it lines up)."""
    results = (details or {}).get("results")
    aligned = isinstance(results, list) and len(results) == len(results_overview or [])
    out = []
    for index, row in enumerate(results_overview or []):
        if row.get("status") in ("warning", "fail"):
            out.append(Alert(index, row, alert_facts(results[index]) if aligned else {}))
    return out


def changes_between(before: dict | None, after: dict | None) -> list[dict]:
    """The deciding facts that differ, before → after (lists as text)."""
    out = []
    for key, label in FACT_LABELS.items():
        old, new = (before or {}).get(key), (after or {}).get(key)
        if old != new and key in (after or {}) and before:
            out.append({"field": key, "label": label, "before": _shown(old), "after": _shown(new)})
    return out


def _shown(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "; ".join(value) if value else "—"
    return "—" if value in (None, "") else str(value)


def states_for(entity_ids: Iterable[int], check_type: str) -> dict[int, dict[str, AlertState]]:
    """{entity id: {alert id: AlertState}} for many entities at once (a monitor's chunk)."""
    ids = list(entity_ids)
    out: dict[int, dict[str, AlertState]] = {}
    for i in range(0, len(ids), 5000):
        for state in db.session.scalars(select(AlertState).where(AlertState.entity_id.in_(ids[i:i + 5000]),
                                                                  AlertState.check_type == check_type)):
            out.setdefault(state.entity_id, {})[state.alert_id] = state
    return out


def still_listed(facts: list[dict]) -> set[str]:
    """Which of these records (by record id) are still on their lists with what made them listed."""
    return store.still_listed(db.session, [f.get("record_id") for f in facts])


def judge(entity_id: int, check_type: str, alerts: list[Alert], states: dict[str, AlertState],
          still_listed: Callable[[list[dict]], set[str]] = still_listed, check_id: int | None = None) -> list[Fresh]:
    """The alerts of a new result that raise events (and the delistings), updating the memory in `states` (new
    states are added to the session). `still_listed(facts)` answers which of these records (by record id) are
    still on their lists with a sanction programme or a PEP position."""
    fresh: list[Fresh] = []
    seen: set[str] = set()
    for alert in alerts:
        fingerprint = alert.row.get("fingerprint") or ""
        reason: str | None = None
        changes: list[dict] = []
        for alert_id in alert.row.get("alert_ids") or [f"row-{alert.index}"]:
            seen.add(alert_id)
            state = states.get(alert_id)
            if state is None:
                state = states[alert_id] = AlertState(entity_id=entity_id, check_type=check_type, alert_id=alert_id,
                                                      fingerprint=fingerprint, last_check_id=check_id or 0,
                                                      present=True, facts=alert.facts or None)
                db.session.add(state)
                reason = reason or NEW_MATCH
                continue
            changed = state.fingerprint != fingerprint
            dismissed_same = state.dismissed_fingerprint == fingerprint
            if changed:
                reason = reason or MATCH_CHANGED
                changes = changes or changes_between(state.facts, alert.facts)
                state.dismissed_fingerprint = None  # new deciding facts: an earlier dismissal no longer applies
            elif not state.present and not dismissed_same:
                reason = reason or NEW_MATCH
            if changed or not state.present or (alert.facts and state.facts != alert.facts):
                state.fingerprint, state.present = fingerprint, True
                state.facts = alert.facts or state.facts
            if check_id is not None:
                state.last_check_id = check_id
        if reason is not None:
            fresh.append(Fresh(alert.index, alert.row, list(alert.row.get("alert_ids") or []), reason, changes,
                               alert.row.get("title")))
    gone = [s for alert_id, s in states.items() if alert_id not in seen and s.present]
    if gone:
        fresh.extend(_delistings(gone, still_listed))
        for state in gone:
            state.present = False
    return fresh


def _delistings(gone: list[AlertState], still_listed: Callable[[list[dict]], set[str]]) -> list[Fresh]:
    """The vanished alerts whose record left its list (or lost its programmes) and whose last event is open or
    confirmed."""
    with_event = [s for s in gone if s.last_event_id is not None and (s.facts or {}).get("record_id")]
    if not with_event:
        return []
    statuses = dict(db.session.execute(select(Event.id, Event.status).where(
        Event.id.in_([s.last_event_id for s in with_event]), Event.deleted_at.is_(None))).all())
    live = [s for s in with_event if statuses.get(s.last_event_id) in (*OPEN_STATUSES, "closed_confirmed")]
    if not live:
        return []
    listed = still_listed([s.facts for s in live])
    out = []
    for state in live:
        facts = state.facts or {}
        if facts.get("record_id") in listed:
            continue
        change = {"field": "listed", "label": FACT_LABELS["listed"], "before": facts.get("list") or "listed",
                  "after": "removed, or no sanction programme or PEP position left"}
        out.append(Fresh(None, None, [state.alert_id], DELISTED, [change],
                         f"Delisted: {facts.get('name') or 'a listed party'}"))
    return out
