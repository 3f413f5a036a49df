"""The operator's decision on a held list version: accept (apply it) or reject (drop it).

A publication that would remove too much of a list is stored held (`store.save_list`); nothing of it is in use
until the platform operator decides here, from the portal's Lists page or `flask lists accept|reject`."""
from __future__ import annotations

import logging

from app import jobs
from app.billing.services import is_operator
from app.core import audit
from app.core.actor import Actor
from app.core.errors import Conflict, Forbidden
from app.extensions import db
from app.screening import store

log = logging.getLogger(__name__)

# The job that builds the screening index holding an accepted version, then announces it (app/lists/jobs.py).
ANNOUNCE_JOB = "announce_list_version"


def can_decide(actor: Actor) -> bool:
    """Held versions are the platform's, not an account's: only the operator accepts or rejects them (the
    command line, or an admin of an operator account)."""
    return is_operator(actor)


def require_decider(actor: Actor) -> None:
    if not can_decide(actor):
        raise Forbidden("Only the platform operator accepts or rejects a held list version.")


def decide_held_version(actor: Actor, list_name: str, version: int, accept: bool) -> store.ImportSummary:
    """Apply or drop the held `version` of a list, audited in the operator's account. On accept, once the
    transaction commits, a background job builds the screening index holding the version and then announces it
    (`signals.list_version_stored`: monitors re-screen the customers concerned). Flushes, never commits.

    Forbidden for anyone but the operator; Conflict when the list has no such held version, or when a newer
    version came after it (only a list's newest version can be applied: import again)."""
    require_decider(actor)
    if accept:
        jobs.ensure_queue_available()  # its index build needs the job queue: refuse before anything changes
    try:
        summary = store.decide_held(db.session, list_name, version, accept)
    except store.HeldVersionError as exc:
        raise Conflict(f"{exc}; nothing was changed.") from None
    decision = "accepted" if accept else "rejected"
    if actor.account_id:  # the operator's command line has no account to write the entry to (it prints it)
        audit.record(actor, f"list_version.{decision}", "screening_list", None,
                     {"list": list_name, "version": version, "records": summary.records, "added": summary.added,
                      "changed": summary.changed, "removed": summary.removed})
    log.info("%s v%s %s by %s (%s)", list_name, version, decision, actor.name, actor.via)
    if accept:
        jobs.enqueue(ANNOUNCE_JOB, list_name, version)
    return summary
