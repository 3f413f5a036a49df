"""Program writes. Plain values and an actor in, Program out; flush, never commit."""
from __future__ import annotations

from typing import Any, Mapping

from sqlalchemy import select

from app import signals
from app.core import audit
from app.core.actor import Actor
from app.core.errors import Conflict, Invalid, NotFound
from app.core.softdelete import restorable
from app.core.schemas import validate
from app.core.types import utcnow
from app.extensions import db
from app.programs.models import Program
from app.programs.queries import get_program
from app.programs.schemas import ProgramCreate, ProgramUpdate


def _settle_grouping(values: dict[str, Any], supplied: set[str], current: Program | None) -> None:
    grouping = values.get("event_grouping", current.event_grouping if current else "separate")
    if grouping == "grouped":
        values["max_separate_events"] = None  # ignored when grouped
    elif "max_separate_events" in supplied and values.get("max_separate_events") is None:
        raise Invalid.field("max_separate_events", "Required when event_grouping is separate (5 to 100).")
    elif current is not None and current.max_separate_events is None and "max_separate_events" not in supplied:
        values["max_separate_events"] = 10


def create_program(actor: Actor, data: Mapping[str, Any]) -> Program:
    actor.require("analyst")
    body = validate(ProgramCreate, data)
    values = body.model_dump()
    values["report_emails"] = values["report_emails"] or []
    _settle_grouping(values, body.model_fields_set, None)
    program = Program(account_id=actor.account_id, **values)
    db.session.add(program)
    db.session.flush()
    audit.record(actor, "program.created", "program", program.uuid, values)
    return program


def update_program(actor: Actor, program_uuid, data: Mapping[str, Any]) -> Program:
    actor.require("analyst")
    program = get_program(actor, program_uuid)
    body = validate(ProgramUpdate, data)
    supplied = body.model_fields_set
    values = {name: getattr(body, name) for name in supplied}
    for required in ("program_name", "status", "data_retention_months", "event_grouping", "review_policy",
                     "strong_hit_score"):
        if required in values and values[required] is None:
            raise Invalid.field(required, "May not be null.")
    if "report_emails" in values:
        values["report_emails"] = values["report_emails"] or []
    if program.is_archived and set(values) - {"status"}:
        raise Conflict("The program is archived and read-only: change its status first.")
    _settle_grouping(values, supplied, program)
    changes = audit.apply_changes(program, values)
    if changes:
        program.updated_at = utcnow()
        audit.record(actor, "program.updated", "program", program.uuid, changes)
    return program


def delete_program(actor: Actor, program_uuid) -> Program:
    """Soft-delete the program with its entities and notes (recoverable for 30 days in the portal)."""
    actor.require("analyst")
    program = get_program(actor, program_uuid)
    now = utcnow()
    program.deleted_at = now
    signals.program_deleted.send(program, when=now)  # entities and notes are stamped with the same time
    audit.record(actor, "program.deleted", "program", program.uuid)
    return program


def require_writable(program: Program) -> None:
    """Writes into an archived program are refused (DECISIONS.md)."""
    if program.is_archived:
        raise Conflict("The program is archived and read-only.")


def restore_program(actor: Actor, program_uuid) -> Program:
    """Portal-only restore within the recovery window; brings back what was deleted with the program."""
    actor.require("analyst")
    program = db.session.scalar(select(Program).where(
        Program.uuid == program_uuid, Program.account_id == actor.account_id, Program.deleted_at.is_not(None)))
    if program is None or not restorable(program.deleted_at):
        raise NotFound("No deleted program to restore.")
    deleted_at = program.deleted_at
    program.deleted_at = None
    signals.program_restored.send(program, when=deleted_at)  # exactly the rows deleted with it come back
    audit.record(actor, "program.restored", "program", program.uuid)
    return program
