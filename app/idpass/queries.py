"""IDPass reads: one IDPass of the account, and the account's IDPasses (`GET /idpasses`: filters by status,
verification status, source, entity, program and creation dates; sorts by creation, completion and status). An
entity's IDPasses go with it: archived with it, gone when it is deleted."""
from __future__ import annotations

from typing import Mapping

from sqlalchemy import func, or_, select

from app.core.actor import Actor
from app.core.errors import NotFound
from app.core.listing import (ListParams, Page, archived_conditions, choice, datetime_value, paginate,
                              parse_list_params, upper_bound_value, uuid_value)
from app.entities.models import Entity
from app.entities.queries import get_entity
from app.extensions import db
from app.idpass.models import SOURCES, STATUSES, VERIFICATION_STATUSES, IdPass
from app.programs.models import Program

FILTERS = {"status": choice(*STATUSES), "verification_status": choice(*VERIFICATION_STATUSES),
           "source": choice(*SOURCES), "program_uuid": uuid_value, "entity_uuid": uuid_value,
           "created_after": datetime_value, "created_before": upper_bound_value,
           "completed_after": datetime_value, "completed_before": upper_bound_value}
SORTS = ("created_at", "completed_at", "status")
COLUMNS = {"created_at": IdPass.created_at, "completed_at": IdPass.completed_at, "status": IdPass.status}


def list_params(args: Mapping[str, str]) -> ListParams:
    return parse_list_params(args, filters=FILTERS, sorts=SORTS, default_sort="-created_at")


def _live():
    return or_(IdPass.entity_id.is_(None), IdPass.entity_id.in_(select(Entity.id).where(Entity.deleted_at.is_(None))))


def get_idpass(actor: Actor, idpass_uuid, *, for_update: bool = False) -> IdPass:
    stmt = select(IdPass).where(IdPass.uuid == idpass_uuid, IdPass.account_id == actor.account_id, _live())
    idpass = db.session.scalar(stmt.with_for_update(of=IdPass) if for_update else stmt)
    if idpass is None:
        raise NotFound("IDPass not found.")
    return idpass


def _conditions(params: ListParams) -> list:
    f = params.filters
    conditions = []
    if "program_uuid" in f:
        conditions.append(IdPass.program_id == select(Program.id).where(Program.uuid == f["program_uuid"])
                          .scalar_subquery())
    if "entity_uuid" in f:
        conditions.append(IdPass.entity_id == select(Entity.id).where(Entity.uuid == f["entity_uuid"])
                          .scalar_subquery())
    for key in ("status", "verification_status", "source"):
        if key in f:
            conditions.append(getattr(IdPass, key) == f[key])
    for key, column in (("created", IdPass.created_at), ("completed", IdPass.completed_at)):
        if f"{key}_after" in f:
            conditions.append(column >= f[f"{key}_after"])
        if f"{key}_before" in f:
            conditions.append(column <= f[f"{key}_before"])
    conditions += archived_conditions(IdPass.archived_at, params)
    return conditions


def _page(conditions: list, params: ListParams) -> Page:
    column = COLUMNS[params.sort_key]
    if params.descending:
        order = (column.desc().nulls_last(), IdPass.id.desc())
    else:
        order = (column.asc().nulls_last(), IdPass.id.asc())
    return paginate(select(IdPass).order_by(*order), params,
                    count_stmt=select(func.count(IdPass.id)).where(*conditions),
                    ids_stmt=select(IdPass.id).where(*conditions).order_by(*order))


def list_idpasses(actor: Actor, params: ListParams) -> Page:
    return _page([IdPass.account_id == actor.account_id, _live(), *_conditions(params)], params)


def list_entity_idpasses(actor: Actor, entity_uuid, params: ListParams | None = None) -> Page:
    entity = get_entity(actor, entity_uuid)
    params = params or ListParams(sort="-created_at", per_page=100)
    return _page([IdPass.entity_id == entity.id, *_conditions(params)], params)
