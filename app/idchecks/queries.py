"""ID-check reads: one ID check (entity or adhoc), the account's ID checks (`GET /id-checks`: entity-bound ones, with
the spec's filters and sorts), an entity's. Soft-deleted adhoc ID checks are gone (404); an entity's ID checks are
archived with it (`archived` as in every list)."""
from __future__ import annotations

from typing import Mapping

from sqlalchemy import func, select

from app.core.actor import Actor
from app.core.errors import NotFound
from app.core.listing import (ListParams, Page, archived_conditions, choice, datetime_value, paginate,
                              parse_list_params, upper_bound_value, uuid_value)
from app.entities.models import Entity
from app.entities.queries import get_entity
from app.extensions import db
from app.idchecks.models import OUTCOMES, IdCheck
from app.programs.models import Program
from app.providers.id_types import CHECK_TYPE_LABELS, ID_TYPES

FILTERS = {"program_uuid": uuid_value, "entity_uuid": uuid_value, "id_type": choice(*ID_TYPES, "idpass"),
           "check_type": choice(*CHECK_TYPE_LABELS), "outcome": choice(*OUTCOMES),
           "checked_after": datetime_value, "checked_before": upper_bound_value}
SORTS = ("checked_at", "outcome", "id_type")
COLUMNS = {"checked_at": IdCheck.checked_at, "outcome": IdCheck.outcome, "id_type": IdCheck.id_type}


def list_params(args: Mapping[str, str]) -> ListParams:
    return parse_list_params(args, filters=FILTERS, sorts=SORTS, default_sort="-checked_at")


def get_id_check(actor: Actor, id_check_uuid, *, kind: str) -> IdCheck:
    check = db.session.scalar(select(IdCheck).where(
        IdCheck.uuid == id_check_uuid, IdCheck.account_id == actor.account_id, IdCheck.kind == kind,
        IdCheck.deleted_at.is_(None)))
    if check is None or (check.entity is not None and check.entity.deleted_at is not None):
        raise NotFound("ID check not found.")
    return check


def _conditions(params: ListParams) -> list:
    f = params.filters
    conditions = []
    if "program_uuid" in f:
        conditions.append(IdCheck.program_id == select(Program.id).where(Program.uuid == f["program_uuid"])
                          .scalar_subquery())
    if "entity_uuid" in f:
        conditions.append(IdCheck.entity_id == select(Entity.id).where(Entity.uuid == f["entity_uuid"])
                          .scalar_subquery())
    for key in ("id_type", "check_type", "outcome"):
        if key in f:
            conditions.append(getattr(IdCheck, key) == f[key])
    if "checked_after" in f:
        conditions.append(IdCheck.checked_at >= f["checked_after"])
    if "checked_before" in f:
        conditions.append(IdCheck.checked_at <= f["checked_before"])
    conditions += archived_conditions(IdCheck.archived_at, params)
    return conditions


def _page(conditions: list, params: ListParams) -> Page:
    column = COLUMNS[params.sort_key]
    order = (column.desc(), IdCheck.id.desc()) if params.descending else (column.asc(), IdCheck.id.asc())
    return paginate(select(IdCheck).order_by(*order), params,
                    count_stmt=select(func.count(IdCheck.id)).where(*conditions),
                    ids_stmt=select(IdCheck.id).where(*conditions).order_by(*order))


def _live_entities():
    return IdCheck.entity_id.in_(select(Entity.id).where(Entity.deleted_at.is_(None)))


def list_id_checks(actor: Actor, params: ListParams) -> Page:
    """The account's entity-bound ID checks (IDPass shells are not listed here in v1: spec)."""
    return _page([IdCheck.account_id == actor.account_id, IdCheck.kind == "entity", IdCheck.id_type != "idpass",
                  IdCheck.deleted_at.is_(None), _live_entities(), *_conditions(params)], params)


def list_entity_id_checks(actor: Actor, entity_uuid, params: ListParams | None = None) -> Page:
    entity = get_entity(actor, entity_uuid)
    params = params or ListParams(sort="-checked_at", per_page=100)
    return _page([IdCheck.entity_id == entity.id, IdCheck.deleted_at.is_(None), *_conditions(params)], params)


def list_adhoc_id_checks(actor: Actor, params: ListParams) -> Page:
    return _page([IdCheck.account_id == actor.account_id, IdCheck.kind == "adhoc", IdCheck.deleted_at.is_(None),
                  *_conditions(params)], params)
