"""Program reads shared by the portal and the API."""
from __future__ import annotations

from typing import Mapping

from sqlalchemy import select

from app.core.actor import Actor
from app.core.errors import NotFound
from app.core.listing import ListParams, Page, choice, paginate, parse_list_params, text_value
from app.core.softdelete import recovery_cutoff
from app.extensions import db
from app.programs.models import PROGRAM_STATUSES, Program

FILTERS = {"status": choice(*PROGRAM_STATUSES), "program_name": text_value}
SORTS = ("created_at", "updated_at", "program_name")


def list_params(args: Mapping[str, str], **kw) -> ListParams:
    return parse_list_params(args, filters=FILTERS, sorts=SORTS, default_sort="-created_at", **kw)


def get_program(actor: Actor, program_uuid) -> Program:
    """A live program of the actor's account, or NotFound (another account's program is not found either)."""
    program = db.session.scalar(select(Program).where(
        Program.uuid == program_uuid, Program.account_id == actor.account_id, Program.deleted_at.is_(None)))
    if program is None:
        raise NotFound("Program not found.")
    return program


def list_programs(actor: Actor, params: ListParams) -> Page:
    stmt = select(Program).where(Program.account_id == actor.account_id, Program.deleted_at.is_(None))
    status = params.filters.get("status")
    if status:
        stmt = stmt.where(Program.status == status)
    elif params.archived is None or params.archived is False:
        # Archived programs are hidden from default lists (spec: Program status).
        stmt = stmt.where(Program.status != "archived")
    if params.archived is True:
        stmt = stmt.where(Program.status == "archived")
    if params.filters.get("program_name"):
        stmt = stmt.where(Program.program_name.icontains(params.filters["program_name"], autoescape=True))
    if params.search:
        stmt = stmt.where(Program.program_name.icontains(params.search, autoescape=True))
    column = getattr(Program, params.sort_key)
    stmt = stmt.order_by(column.desc() if params.descending else column.asc(),
                         Program.id.desc() if params.descending else Program.id.asc())
    return paginate(stmt, params)


def all_programs(actor: Actor) -> list[Program]:
    """Every live, non-archived program of the account, by name (for pickers)."""
    return list(db.session.scalars(select(Program).where(
        Program.account_id == actor.account_id, Program.deleted_at.is_(None), Program.status != "archived")
        .order_by(Program.program_name)))


def list_deleted_programs(actor: Actor) -> list[Program]:
    """Soft-deleted programs still inside the recovery window, newest deletion first."""
    cutoff = recovery_cutoff()
    return list(db.session.scalars(select(Program).where(
        Program.account_id == actor.account_id, Program.deleted_at.is_not(None), Program.deleted_at >= cutoff)
        .order_by(Program.deleted_at.desc())))
