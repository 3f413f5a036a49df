"""Note reads shared by the portal and the API."""
from __future__ import annotations

from typing import Mapping

from sqlalchemy import Select, func, select
from sqlalchemy.orm import contains_eager

from app.accounts.models import ApiKey, User
from app.core.actor import Actor
from app.core.errors import Invalid, NotFound
from app.core.listing import (ListParams, Page, archived_conditions, choice, datetime_value, paginate,
                              parse_list_params, upper_bound_value, uuid_value)
from app.core.softdelete import recovery_cutoff
from app.entities.models import Entity
from app.entities.queries import get_entity
from app.extensions import db
from app.notes.models import Note, NoteCount
from app.notes.rules import can_restore
from app.programs.models import Program

CREATED_BY_KINDS = ("user", "api_key")


FILTERS = {
    "entity_uuid": uuid_value,
    "event_uuid": uuid_value,
    "program_uuid": uuid_value,
    "created_by": choice(*CREATED_BY_KINDS),
    "created_by_user_uuid": uuid_value,
    "created_by_api_key_uuid": uuid_value,
    "created_at_from": datetime_value,
    "created_at_to": upper_bound_value,  # a bare date covers its whole day
}
SORTS = ("created_at", "updated_at")
DEFAULT_SORT = "-created_at"




def list_params(args: Mapping[str, str], **kw) -> ListParams:
    params = parse_list_params(args, filters=FILTERS, sorts=SORTS, default_sort=DEFAULT_SORT, **kw)
    lower = params.filters.get("created_at_from")
    upper = params.filters.get("created_at_to")
    if lower is not None and upper is not None and lower > upper:
        raise Invalid.field("filter[created_at_from]", "Must not be after filter[created_at_to].")
    return params


def _scoped(actor: Actor) -> Select:
    """Notes of the actor's account whose entity is live (a deleted entity takes its notes with it)."""
    return (select(Note)
            .join(Note.entity)
            .options(contains_eager(Note.entity))
            .where(Note.account_id == actor.account_id, Entity.deleted_at.is_(None)))


def _live(actor: Actor) -> Select:
    return _scoped(actor).where(Note.deleted_at.is_(None))


def get_note(actor: Actor, note_uuid) -> Note:
    """A live note of the actor's account, or NotFound (another account's note is not found either)."""
    note = db.session.scalar(_live(actor).where(Note.uuid == note_uuid))
    if note is None:
        raise NotFound("Note not found.")
    return note


def get_deleted_note(actor: Actor, note_uuid) -> Note:
    """A soft-deleted note of the account (for restore), or NotFound."""
    note = db.session.scalar(_scoped(actor).where(Note.uuid == note_uuid, Note.deleted_at.is_not(None)))
    if note is None:
        raise NotFound("Note not found.")
    return note


def list_notes(actor: Actor, params: ListParams) -> Page:
    """The conditions are on the notes table alone, so that a page's ids and most totals come from its indexes;
    a live note always has a live entity (deleting an entity or a program soft-deletes its notes with it)."""
    f = params.filters
    conditions = [Note.account_id == actor.account_id, Note.deleted_at.is_(None)]
    program_ids = user_ids = key_ids = None
    if "entity_uuid" in f:
        conditions.append(Note.entity_id.in_(select(Entity.id).where(
            Entity.uuid == f["entity_uuid"], Entity.account_id == actor.account_id, Entity.deleted_at.is_(None))))
    if "event_uuid" in f:
        conditions.append(Note.event_uuid == f["event_uuid"])
    if "program_uuid" in f:
        program_ids = select(Program.id).where(Program.uuid == f["program_uuid"],
                                               Program.account_id == actor.account_id)
        conditions.append(Note.program_id.in_(program_ids))
    if "created_by" in f:
        conditions.append(Note.created_by_type == f["created_by"])
    if "created_by_user_uuid" in f:
        user_ids = select(User.id).where(User.uuid == f["created_by_user_uuid"], User.account_id == actor.account_id)
        conditions += [Note.created_by_type == "user", Note.created_by_user_id.in_(user_ids)]
    if "created_by_api_key_uuid" in f:
        key_ids = select(ApiKey.id).where(ApiKey.uuid == f["created_by_api_key_uuid"],
                                          ApiKey.account_id == actor.account_id)
        conditions += [Note.created_by_type == "api_key", Note.created_by_api_key_id.in_(key_ids)]
    if "created_at_from" in f:
        conditions.append(Note.created_at >= f["created_at_from"])
    if "created_at_to" in f:
        conditions.append(Note.created_at <= f["created_at_to"])
    conditions += archived_conditions(Note.archived_at, params)
    if params.search:
        conditions.append(Note.note_text.ilike(f"%{_escape_like(params.search)}%", escape="\\"))
    column = getattr(Note, params.sort_key)
    order = (column.desc(), Note.id.desc()) if params.descending else (column.asc(), Note.id.asc())
    total = None
    if set(f) <= COUNTED_FILTERS and not params.search and db.session.get_bind().dialect.name == "postgresql":
        counted = [NoteCount.account_id == actor.account_id]
        if program_ids is not None:
            counted.append(NoteCount.program_id.in_(program_ids))
        if "created_by" in f:
            counted.append(NoteCount.created_by_type == f["created_by"])
        if user_ids is not None:
            counted += [NoteCount.created_by_type == "user", NoteCount.created_by_id.in_(user_ids)]
        if key_ids is not None:
            counted += [NoteCount.created_by_type == "api_key", NoteCount.created_by_id.in_(key_ids)]
        if params.archived is not None:
            counted.append(NoteCount.archived.is_(params.archived))
        total = db.session.scalar(select(func.coalesce(func.sum(NoteCount.n), 0)).where(*counted))
    return paginate(_live(actor).order_by(*order), params, total=total,
                    count_stmt=select(func.count(Note.id)).where(*conditions),
                    ids_stmt=select(Note.id).where(*conditions).order_by(*order))


# Filters whose total the trigger-kept note_counts answer (PostgreSQL); the others count rows.
COUNTED_FILTERS = {"program_uuid", "created_by", "created_by_user_uuid", "created_by_api_key_uuid"}


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def notes_for_entity(actor: Actor, entity_uuid) -> list[Note]:
    """Every live note of a live entity of the account, oldest first (archived notes included)."""
    entity = get_entity(actor, entity_uuid)
    return list(db.session.scalars(
        _live(actor).where(Note.entity_id == entity.id).order_by(Note.created_at.asc(), Note.id.asc())))


def list_deleted_notes(actor: Actor, entity_uuid=None) -> list[Note]:
    """Soft-deleted notes still inside the recovery window that this actor may restore, newest deletion first."""
    cutoff = recovery_cutoff()
    stmt = _scoped(actor).where(Note.deleted_at.is_not(None), Note.deleted_at >= cutoff)
    if entity_uuid is not None:
        stmt = stmt.where(Entity.uuid == entity_uuid)
    notes = db.session.scalars(stmt.order_by(Note.deleted_at.desc(), Note.id.desc()))
    return [note for note in notes if can_restore(actor, note)]
