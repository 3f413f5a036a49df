"""Whether an event may be reviewed, and by whom: asked by the events services (which refuse) and the portal's
templates (which then offer no decision buttons, no note box, no approve button). The four-eyes rules of §5 of
issue 18 (strong hits, second review, one person behind a key and its creator) live here too."""
from __future__ import annotations

from app.accounts.models import ApiKey
from app.core.actor import Actor
from app.core.errors import Conflict
from app.entities import rules as entity_rules
from app.events.models import Event
from app.events.queries import event_hits
from app.events.statuses import is_closed
from app.extensions import db


def review_conflict(event: Event) -> str | None:
    """Why the event takes no review now (None: it does): an archived event, or an event of an archived entity or
    program, is read-only like every record archived with it (409)."""
    if event.archived_at is not None:
        return "The event is archived and read-only."
    return entity_rules.write_conflict(event.entity)


def can_review(actor: Actor, event: Event) -> bool:
    """Whether `actor` may change the event's status or add a note to it now."""
    return actor.can("analyst") and review_conflict(event) is None


def require_reviewable(actor: Actor, event: Event) -> None:
    actor.require("analyst")
    conflict = review_conflict(event)
    if conflict:
        raise Conflict(conflict)


# ------------------------------------------------------------------ strong hits and four-eyes review (§5)

def hit_facts(event: Event) -> dict:
    """What the event's hits say, for the review rules: the best score, whether a sanctions list or a PEP list
    is concerned, and whether a hit matches the name exactly with the same date of birth."""
    hits = [r for _i, r in event_hits(event) if isinstance(r, dict)]
    scores = [r["similarity"] for r in hits if isinstance(r.get("similarity"), (int, float))]
    if event.top_score is not None:
        scores.append(event.top_score)

    def exact(r: dict) -> bool:
        ex = r.get("explanation") or {}
        dob = [q for q in ex.get("qualifiers") or [] if q.get("qualifier") == "date_of_birth"]
        return (ex.get("name_score") or 0) >= 0.999 and any(q.get("outcome") == "exact" for q in dob)

    return {"score": max(scores) if scores else None,
            "sanctions": any(r.get("is_sanctioned") for r in hits),
            "pep": any(r.get("is_pep") for r in hits),
            "exact": any(exact(r) for r in hits)}


def is_strong(event: Event, facts: dict | None = None) -> bool:
    """A strong hit: its best score reaches the program's `strong_hit_score`, or it concerns a sanctions list."""
    facts = facts or hit_facts(event)
    return bool(facts["sanctions"]) or (facts["score"] is not None
                                        and facts["score"] >= event.program.strong_hit_score - 1e-9)


def needs_second_review(event: Event, status: str) -> bool:
    """Whether moving the event to `status` waits for a second person (the program's `review_policy`)."""
    policy = event.program.review_policy
    if not is_closed(status) or policy == "single":
        return False
    return policy == "four_eyes_all" or is_strong(event)


def dismissal_needs_reason(event: Event, status: str) -> bool:
    """Under any policy, dismissing a strong hit needs a reason (no silent one-key dismissal)."""
    return status == "closed_dismissed" and is_strong(event)


def person(kind: str | None, user_id: int | None, api_key_id: int | None) -> tuple[str, int] | None:
    """Who stands behind an action: a user, or for an API key the user who created it (a key and its creator
    count as one person for four eyes); a key without a known creator is its own person."""
    if kind == "user" and user_id is not None:
        return ("user", user_id)
    if kind == "api_key" and api_key_id is not None:
        key = db.session.get(ApiKey, api_key_id)
        if key is not None and key.created_by_user_id is not None:
            return ("user", key.created_by_user_id)
        return ("api_key", api_key_id)
    return None


def is_maker(actor: Actor, approval) -> bool:
    """Whether `actor` is the person who asked for the closing (who may not approve it)."""
    return person(actor.kind, actor.user_id, actor.api_key_id) == person(
        approval.requested_by_type, approval.requested_by_user_id, approval.requested_by_api_key_id)


def can_approve(actor: Actor, event: Event, approval) -> bool:
    """Whether `actor` may approve the pending closing: a second person who may review the event."""
    return approval is not None and can_review(actor, event) and not is_maker(actor, approval)
